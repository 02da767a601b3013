//! `cargo xtask bundle DIR`: a folder that runs the whole test suite (GPU tests included) and the benchmark
//! sweep on an x86-64 Linux host that has an NVIDIA driver but no Rust and no network.
//!
//! Contents: `tests/<package>-<target>` (stripped release test binaries; the PTX is embedded, they read no
//! file of the source tree), `zkgpu-bench` (the bench runner), `ptx/` (the modules, for reference and
//! cuobjdump), `run.sh`. `DIR/run.sh OUT [bench args]` writes logs, results JSON and the plot under OUT.
//! The folder must stay under 64 MiB.
use crate::util::{self, Result};
use crate::{bench, ptx};
use std::path::{Path, PathBuf};
use std::process::Command;

const MAX_BYTES: u64 = 64 * 1024 * 1024;

pub fn run(dir: &Path) -> Result<()> {
    if dir.exists() {
        if !dir.join("run.sh").exists() && std::fs::read_dir(dir).map(|mut d| d.next().is_some()).unwrap_or(false) {
            return Err(format!("{} exists and is not an earlier bundle: refusing to empty it", dir.display()));
        }
        std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir.join("tests")).map_err(|e| format!("{}: {e}", dir.display()))?;

    let built = ptx::build()?;
    for (arch, path) in &built.files {
        util::copy(path, &dir.join("ptx").join(format!("zkgpu_{arch}.ptx")))?;
    }

    let strip = strip_tool()?;
    for (name, exe) in test_binaries()? {
        let dest = dir.join("tests").join(&name);
        util::copy(&exe, &dest)?;
        util::run(Command::new(&strip).arg("--strip-all").arg(&dest))?;
    }
    let runner = bench::build_runner()?;
    let dest = dir.join("zkgpu-bench");
    util::copy(&runner, &dest)?;
    util::run(Command::new(&strip).arg("--strip-all").arg(&dest))?;

    let script = dir.join("run.sh");
    std::fs::write(&script, RUN_SH).map_err(|e| format!("{}: {e}", script.display()))?;
    make_executable(&script)?;

    let size = folder_size(dir)?;
    let mib = size as f64 / (1024.0 * 1024.0);
    if size > MAX_BYTES {
        return Err(format!("bundle is {mib:.1} MiB, over the 64 MiB limit"));
    }
    eprintln!("xtask: bundle ready: {} ({mib:.1} MiB). On the GPU host: {}/run.sh OUT_DIR", dir.display(), dir.display());
    Ok(())
}

/// Release test executables of the library packages (not xtask), named `<package>-<target>`.
fn test_binaries() -> Result<Vec<(String, PathBuf)>> {
    let messages = util::cargo_json(
        util::cargo()
            .args(["test", "--workspace", "--exclude", "xtask", "--release", "--no-run"])
            .env("ZKGPU_PTX", "build"),
    )?;
    let mut found = Vec::new();
    for m in messages.iter().filter(|m| m["reason"] == "compiler-artifact" && m["profile"]["test"] == true) {
        let Some(exe) = m["executable"].as_str() else { continue };
        let target = m["target"]["name"].as_str().unwrap_or("unknown");
        let package = m["package_id"]
            .as_str()
            .and_then(|id| id.rsplit('#').next())
            .and_then(|s| s.split('@').next())
            .unwrap_or("pkg");
        let is_lib = m["target"]["kind"].as_array().is_some_and(|k| k.iter().any(|x| x == "lib"));
        let name = if is_lib { format!("{package}-unit") } else { format!("{package}-{target}") };
        found.push((name, PathBuf::from(exe)));
    }
    if found.is_empty() {
        return Err("cargo test --no-run produced no test executables".into());
    }
    Ok(found)
}

/// llvm-strip from the toolchain's llvm-tools component, else the system `strip`.
fn strip_tool() -> Result<PathBuf> {
    let sysroot = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .args(["--print", "sysroot"])
        .output()
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()))
        .map_err(|e| format!("rustc --print sysroot: {e}"))?;
    let llvm_strip = sysroot.join("lib/rustlib").join(util::host_triple()?).join("bin/llvm-strip");
    if llvm_strip.exists() {
        return Ok(llvm_strip);
    }
    Ok(PathBuf::from("strip"))
}

fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(|e| format!("{}: {e}", path.display()))
}

fn folder_size(dir: &Path) -> Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| e.to_string())?;
        let meta = entry.metadata().map_err(|e| e.to_string())?;
        total += if meta.is_dir() { folder_size(&entry.path())? } else { meta.len() };
    }
    Ok(total)
}

/// The runner script. Tests run from an empty scratch folder so nothing can be read from a source tree.
const RUN_SH: &str = r#"#!/usr/bin/env bash
# zkgpu bundle runner (written by `cargo xtask bundle`).
# usage: run.sh OUT_DIR [bench runner args...]   e.g. run.sh /tmp/out mul --sizes 20..24
# env:   ZKGPU_SKIP_TESTS=1 / ZKGPU_SKIP_BENCH=1 to skip a half.
# Runs every test binary with --include-ignored (GPU tests too), one summary line per binary and a final
# "N passed, N failed" line, then the benchmark sweep. Logs, bench.json and bench.svg go to OUT_DIR.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: run.sh OUT_DIR [bench args...]}"
shift
mkdir -p "$out/logs"
out="$(cd "$out" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

"$here/zkgpu-bench" --probe 2>&1 | tee "$out/logs/device.txt"

passed=0; failed=0; ignored=0; broken=0
if [ "${ZKGPU_SKIP_TESTS:-0}" != 1 ]; then
  for t in "$here"/tests/*; do
    name="$(basename "$t")"
    log="$out/logs/test-$name.log"
    (cd "$scratch" && "$t" --include-ignored) >"$log" 2>&1
    rc=$?
    line="$(grep -E '^test result: ' "$log" | tail -n 1)"
    p="$(sed -nE 's/.* ([0-9]+) passed;.*/\1/p' <<<"$line")"
    f="$(sed -nE 's/.* ([0-9]+) failed;.*/\1/p' <<<"$line")"
    i="$(sed -nE 's/.* ([0-9]+) ignored;.*/\1/p' <<<"$line")"
    p="${p:-0}"; f="${f:-0}"; i="${i:-0}"
    if [ -z "$line" ] || { [ "$rc" != 0 ] && [ "$f" = 0 ]; }; then
      # crashed or exited non-zero without a harness summary: count the binary as one failure
      f=$((f + 1)); broken=$((broken + 1))
      echo "$name: exit $rc without a complete test summary (see $log)"
    fi
    printf '%-40s %5d passed, %3d failed, %3d ignored\n' "$name" "$p" "$f" "$i"
    passed=$((passed + p)); failed=$((failed + f)); ignored=$((ignored + i))
  done
  echo "tests: $passed passed, $failed failed" | tee "$out/logs/test-summary.txt"
fi

bench_rc=0
if [ "${ZKGPU_SKIP_BENCH:-0}" != 1 ]; then
  "$here/zkgpu-bench" --json "$out/bench.json" --plot "$out/bench.svg" "$@" 2>&1 | tee "$out/logs/bench.log"
  bench_rc=${PIPESTATUS[0]}
fi
[ "$failed" = 0 ] && [ "$bench_rc" = 0 ]
"#;
