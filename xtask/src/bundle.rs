//! `cargo xtask bundle DIR`: a folder that runs the whole test suite (GPU tests included) and the benchmark
//! sweep on an x86-64 Linux host that has an NVIDIA driver but no Rust and no network.
//!
//! Contents: `tests/<package>-<target>.gz` (stripped release test binaries; the PTX is embedded, they read no
//! file of the source tree), `zkgpu-bench.gz` (the bench runner), `cubin/*.cubin.gz` (the sm_90 modules, one
//! per kernel family, assembled by ptxas and named by the fingerprint of the PTX they came from: `run.sh` points
//! `ZKGPU_CUBIN_DIR` at them, so an H100/H200 skips the driver's JIT), `run.sh`. Every binary embeds the sm_90
//! modules only (`ZKGPU_EMBED_ARCHES=sm_90`: the bundle is for H100/H200-class GPUs) and is gzip-compressed;
//! `run.sh` unpacks each into a scratch folder just before running it (needs only bash, gzip and coreutils on
//! the GPU host).
//! `ZKGPU_SANITIZE=memcheck,... run.sh` runs the GPU tests under the host's compute-sanitizer (see `run.sh`).
//! `DIR/run.sh OUT [bench args]` writes logs, results JSON and the plot under OUT. `--bench-only` leaves the
//! test binaries out (an A/B's baseline: built from a worktree of the older commit, carried beside the full
//! bundle, run with `ZKGPU_SKIP_TESTS=1`).
//! The folder must stay under 64 MiB.
use crate::ptxas::{Job, Ptxas};
use crate::util::{self, Result};
use crate::{bench, ptx};
use std::path::{Path, PathBuf};
use std::process::Command;

const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The bundle runs on H100/H200-class GPUs: its binaries embed the sm_90 modules only (`ZKGPU_EMBED_ARCHES`),
/// which halves each one (the modules are most of a test binary, and deflated PTX does not gzip further).
const EMBED_ARCHES: &str = "sm_90";

pub fn run(dir: &Path, bench_only: bool) -> Result<()> {
    if dir.exists() {
        if !dir.join("run.sh").exists() && std::fs::read_dir(dir).map(|mut d| d.next().is_some()).unwrap_or(false) {
            return Err(format!("{} exists and is not an earlier bundle: refusing to empty it", dir.display()));
        }
        std::fs::remove_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir.join("tests")).map_err(|e| format!("{}: {e}", dir.display()))?;

    let built = ptx::build()?;

    assemble_cubins(&built, &dir.join("cubin"))?;

    let strip = strip_tool()?;
    let scratch = util::target_dir().join("zkgpu-bundle-scratch");
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let tests = if bench_only { Vec::new() } else { test_binaries()? };
    let mut binaries = tests.into_iter().map(|(name, exe)| (format!("tests/{name}"), exe)).collect::<Vec<_>>();
    binaries.push(("zkgpu-bench".to_string(), bench::build_runner_embedding(Some(EMBED_ARCHES))?.0));
    for (name, exe) in binaries {
        let stripped = scratch.join(name.replace('/', "-"));
        util::copy(&exe, &stripped)?;
        util::run(Command::new(&strip).arg("--strip-all").arg(&stripped))?;
        gzip(&stripped, &dir.join(format!("{name}.gz")))?;
    }

    let script = dir.join("run.sh");
    std::fs::write(&script, RUN_SH).map_err(|e| format!("{}: {e}", script.display()))?;
    make_executable(&script)?;

    let size = folder_size(dir)?;
    let mib = size as f64 / (1024.0 * 1024.0);
    if size > MAX_BYTES {
        return Err(format!("bundle is {mib:.1} MiB, over the 64 MiB limit"));
    }
    eprintln!(
        "xtask: bundle ready: {} ({mib:.1} MiB). On the GPU host: {}/run.sh OUT_DIR",
        dir.display(),
        dir.display()
    );
    Ok(())
}

/// The sm_90 modules the host loads (each production family's, and the test module), assembled by ptxas (through its results cache), gzipped into
/// `dest`, each named as `zkgpu::module::cubin_file_name` names it: `<stem>-<FNV-1a 64 of the PTX text, 16
/// hex digits>.cubin` (the cache names its cubins the same way).
fn assemble_cubins(built: &ptx::BuiltPtx, dest: &Path) -> Result<()> {
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let jobs: Vec<Job> = built
        .family_files
        .iter()
        .chain(&built.test_files)
        .filter(|(arch, path)| *arch == "sm_90" && std::fs::metadata(path).is_ok_and(|m| m.len() > 0))
        .map(|(arch, ptx)| Job { arch, ptx })
        .collect();
    for assembled in Ptxas::locate()?.assemble(&jobs, "the bundle's sm_90 cubins")? {
        let name = assembled.cubin.file_name().ok_or("cubin without a file name")?.to_string_lossy().into_owned();
        gzip(&assembled.cubin, &dest.join(format!("{name}.gz")))?;
    }
    Ok(())
}

/// Release test executables of the library packages (not xtask), named `<package>-<target>`.
fn test_binaries() -> Result<Vec<(String, PathBuf)>> {
    let messages = util::cargo_json(
        "building release test binaries (cargo test --no-run)",
        util::cargo()
            .args([
                "test",
                "--workspace",
                "--exclude",
                "xtask",
                "--exclude",
                "zkgpu-bench",
                "--features",
                "zkgpu/bellperson",
                "--release",
                "--no-run",
            ])
            .env("ZKGPU_PTX", "build")
            .env("ZKGPU_EMBED_ARCHES", EMBED_ARCHES),
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

/// `gzip -9 -n` from `src` to `dst` (no timestamps, so bundles are reproducible).
fn gzip(src: &Path, dst: &Path) -> Result<()> {
    let out = std::fs::File::create(dst).map_err(|e| format!("{}: {e}", dst.display()))?;
    let status = Command::new("gzip")
        .args(["-9", "-n", "-c"])
        .arg(src)
        .stdout(out)
        .status()
        .map_err(|e| format!("cannot run gzip: {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("gzip {} failed ({status})", src.display())) }
}

fn make_executable(path: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", path.display()))
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
# zkgpu bundle runner (written by `cargo xtask bundle`). Needs bash, gzip, coreutils, an NVIDIA driver.
# usage: run.sh OUT_DIR [bench runner args...]   e.g. run.sh /tmp/out mul --sizes 20..24
# env:   ZKGPU_SKIP_TESTS=1 / ZKGPU_SKIP_BENCH=1 to skip a half; ZKGPU_SANITIZE=memcheck,... (see below);
#        ZKGPU_TESTS="msm_gpu pipeline_gpu" runs only the test binaries named <package>-<name>, in this
#        order (within a device call's time limit, the tests that matter first).
# Runs every test binary with --include-ignored (GPU tests too), one summary line per binary and a final
# "N passed, N failed" line, then the benchmark sweep. Logs, bench.json and bench.svg go to OUT_DIR.
# Binaries are stored gzip-compressed; each is unpacked into a scratch folder (also the tests' working
# directory, so nothing can be read from a source tree) and removed after it ran.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:?usage: run.sh OUT_DIR [bench args...]}"
shift
mkdir -p "$out/logs"
out="$(cd "$out" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

unpack() { # unpack NAME.gz -> path of the executable
  local dest="$scratch/$(basename "$1" .gz)"
  gzip -dc "$1" >"$dest" && chmod +x "$dest" && echo "$dest"
}

# The sm_90 cubins (named by the fingerprint of their PTX): the host loads them instead of JIT-compiling.
mkdir -p "$scratch/cubin"
for gz in "$here"/cubin/*.cubin.gz; do
  [ -e "$gz" ] && gzip -dc "$gz" >"$scratch/cubin/$(basename "$gz" .gz)"
done
export ZKGPU_CUBIN_DIR="$scratch/cubin"

bench="$(unpack "$here/zkgpu-bench.gz")" || { echo "cannot unpack zkgpu-bench"; exit 1; }
"$bench" --probe 2>&1 | tee "$out/logs/device.txt"
skip=()
gpus="$("$bench" --gpu-count 2>/dev/null || echo 0)"
if [ "${gpus:-0}" -lt 2 ]; then
  skip=(--skip two_gpus_)
  echo "${gpus:-0} GPU visible: skipping the two-GPU tests (two_gpus_*)"
fi

passed=0; failed=0; ignored=0
if [ "${ZKGPU_SKIP_TESTS:-0}" != 1 ]; then
  tests=()
  if [ -n "${ZKGPU_TESTS:-}" ]; then
    for want in $ZKGPU_TESTS; do
      for gz in "$here"/tests/*-"$want".gz; do
        [ -e "$gz" ] && tests+=("$gz")
      done
    done
    if [ "${#tests[@]}" -eq 0 ]; then
      # A misspelt name must not pass as "0 failed".
      echo "ZKGPU_TESTS=$ZKGPU_TESTS names no test binary of this bundle"; failed=1
    fi
  else
    for gz in "$here"/tests/*.gz; do
      [ -e "$gz" ] && tests+=("$gz")
    done
  fi
  for gz in ${tests[@]+"${tests[@]}"}; do
    name="$(basename "$gz" .gz)"
    log="$out/logs/test-$name.log"
    if t="$(unpack "$gz")"; then
      (cd "$scratch" && "$t" --include-ignored ${skip[@]+"${skip[@]}"}) >"$log" 2>&1
      rc=$?
      rm -f "$t"
    else
      echo "cannot unpack $gz" >"$log"; rc=127
    fi
    line="$(grep -E '^test result: ' "$log" | tail -n 1)"
    p="$(sed -nE 's/.* ([0-9]+) passed;.*/\1/p' <<<"$line")"
    f="$(sed -nE 's/.* ([0-9]+) failed;.*/\1/p' <<<"$line")"
    i="$(sed -nE 's/.* ([0-9]+) ignored;.*/\1/p' <<<"$line")"
    p="${p:-0}"; f="${f:-0}"; i="${i:-0}"
    if [ -z "$line" ] || { [ "$rc" != 0 ] && [ "$f" = 0 ]; }; then
      # crashed or exited non-zero without a failing-test summary: count the binary as one failure
      f=$((f + 1))
      echo "$name: exit $rc without a complete test summary (see $log)"
    fi
    printf '%-32s %5d passed, %3d failed, %3d ignored\n' "$name" "$p" "$f" "$i"
    passed=$((passed + p)); failed=$((failed + f)); ignored=$((ignored + i))
  done
  echo "tests: $passed passed, $failed failed" | tee "$out/logs/test-summary.txt"
fi

# compute-sanitizer: ZKGPU_SANITIZE=memcheck,racecheck,synccheck runs each tool over the GPU test binaries
# (ZKGPU_SANITIZE_TESTS, default below), one test thread, the fault tests and the two-GPU tests skipped (a
# deliberate trap is not a finding). Kernels run 10-100x slower under a sanitizer, so the suite runs at small
# sizes: size sweeps stop at 2^ZKGPU_TEST_MAX_LOG_N (default 12 here) and the tests that exist for one large
# size are skipped (ZKGPU_SANITIZE_SKIP, default below; their small-size siblings run); each (tool, binary)
# gets ZKGPU_SANITIZE_TIMEOUT seconds (default 300). ZKGPU_SANITIZE_FILTER passes test-name filters.
# ZKGPU_SANITIZE_JOBS=N runs N (tool, binary) pairs at once (the sanitizers are host-bound: with 14 on the
# 16-core H200 host memcheck and synccheck cover every binary in under 7 minutes; racecheck of the MSM, device
# and Groth16 binaries needs filtered runs); the tests that read the
# whole device's free memory or fill it would then see the other runs' allocations, so they are skipped
# (ZKGPU_SANITIZE_EXCLUSIVE, default below; the plain suite runs them). A finding is a memcheck or synccheck
# "ERROR SUMMARY" or a racecheck "RACECHECK SUMMARY" (errors plus warnings) above zero; a run that ends
# without its summary (a crash, the timeout) counts as one, and so does each test that fails. The sanitizer is the host CUDA toolkit's
# (ZKGPU_SANITIZER, else compute-sanitizer on PATH or under /usr/local/cuda); the PyPI wheel's binary did not
# start its targets on the GPU host (the wheel has no launcher helpers). API errors are not reported: tests
# provoke them on purpose (a missing kernel, an out-of-memory); kernel memory errors are.
sanitize_errors=0
if [ -n "${ZKGPU_SANITIZE:-}" ]; then
  sanitizer="${ZKGPU_SANITIZER:-$(command -v compute-sanitizer || true)}"
  for c in /usr/local/cuda/compute-sanitizer/compute-sanitizer /usr/local/cuda/bin/compute-sanitizer; do
    [ -n "$sanitizer" ] || { [ -x "$c" ] && sanitizer="$c"; }
  done
  if [ -z "$sanitizer" ] || [ ! -x "$sanitizer" ]; then
    echo "ZKGPU_SANITIZE is set but no compute-sanitizer was found (set ZKGPU_SANITIZER)"; exit 2
  fi
  export ZKGPU_TEST_MAX_LOG_N="${ZKGPU_TEST_MAX_LOG_N:-12}"
  jobs="${ZKGPU_SANITIZE_JOBS:-1}"
  skips=(--skip two_gpus_ --skip fault)
  for name in ${ZKGPU_SANITIZE_SKIP:-sizes_2_20 sums_2_20 affine_method_2_22 affine_method_large round_trips_at_2_22 spot_check_2_2 round_trip_2_30 fitted_plans 38_blocks soak_ h_query_streams one_slot_where}; do
    skips+=(--skip "$name")
  done
  if [ "$jobs" -gt 1 ]; then
    for name in ${ZKGPU_SANITIZE_EXCLUSIVE:-jobs_allocate_no_device_memory device_oom_ a_budget_below_the_working_set out_of_memory_is_typed}; do
      skips+=(--skip "$name")
    done
  fi
  sanitize_one() { # TOOL NAME: writes "N F LINE" (N findings, F failed tests) to $out/logs/sanitize-TOOL-NAME.count
    local tool="$1" name="$2" dir="$scratch/sanitize-$1-$2" log="$out/logs/sanitize-$1-$2.log" n
    mkdir -p "$dir/tmp"
    if gzip -dc "$here/tests/zkgpu-$name.gz" >"$dir/$name" 2>/dev/null && chmod +x "$dir/$name"; then
      # Its own working and temporary directory: parallel runs of one binary must not share files.
      (cd "$dir" && TMPDIR="$dir/tmp" timeout "${ZKGPU_SANITIZE_TIMEOUT:-300}" "$sanitizer" --tool "$tool" \
        --report-api-errors no --print-limit 20 "$dir/$name" --include-ignored --test-threads=1 \
        "${skips[@]}" ${ZKGPU_SANITIZE_FILTER:-}) >"$log" 2>&1
    else
      echo "no test binary $name" >"$log"
    fi
    rm -rf "$dir"
    n="$(sed -nE 's/.*ERROR SUMMARY: ([0-9]+) error.*/\1/p' "$log" | tail -n 1)"
    [ -n "$n" ] || n="$(sed -nE 's/.*RACECHECK SUMMARY: .*\(([0-9]+) errors?, ([0-9]+) warnings?\).*/\1 \2/p' "$log" \
      | tail -n 1 | awk '{ print $1 + $2 }')"
    local note="" result failed
    [ -n "$n" ] || { n=1; note=" (no summary: see $log)"; }
    result="$(grep -E '^test result: ' "$log" | tail -n 1)"
    failed="$(sed -nE 's/.* ([0-9]+) failed;.*/\1/p' <<<"$result")"
    printf '%s %s sanitize %-10s %-16s %s findings%s, %s\n' "$n" "${failed:-0}" "$tool" "$name" "$n" "$note" \
      "$result" >"$out/logs/sanitize-$tool-$name.count"
  }
  pairs=()
  for tool in ${ZKGPU_SANITIZE//,/ }; do
    for name in ${ZKGPU_SANITIZE_TESTS:-device_gpu ntt_gpu msm_gpu batch_add_gpu curve_gpu field_gpu pipeline_gpu groth16_gpu modules_gpu}; do
      pairs+=("$tool $name")
    done
  done
  running=0
  for pair in "${pairs[@]}"; do
    sanitize_one $pair &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
  done
  wait
  for pair in "${pairs[@]}"; do
    read -r n f line <"$out/logs/sanitize-${pair// /-}.count"
    echo "$line"
    sanitize_errors=$((sanitize_errors + n + f))
    rm -f "$out/logs/sanitize-${pair// /-}.count"
  done
  echo "sanitize: $sanitize_errors findings and failed tests" | tee "$out/logs/sanitize-summary.txt"
fi

bench_rc=0
if [ "${ZKGPU_SKIP_BENCH:-0}" != 1 ]; then
  "$bench" --json "$out/bench.json" --plot "$out/bench.svg" "$@" 2>&1 | tee "$out/logs/bench.log"
  bench_rc=${PIPESTATUS[0]}
fi
[ "$failed" = 0 ] && [ "$bench_rc" = 0 ] && [ "$sanitize_errors" = 0 ]
"#;

#[cfg(test)]
mod tests {
    use super::*;

    /// A gzipped bash script at `path` that prints `text` (a stand-in for a bundled binary).
    fn fake_binary(path: &Path, text: &str) {
        let script = path.with_extension("");
        std::fs::write(&script, format!("#!/usr/bin/env bash\n{text}\n")).unwrap();
        gzip(&script, path).unwrap();
        std::fs::remove_file(&script).unwrap();
    }

    /// `run.sh` with `ZKGPU_TESTS` runs the named test binaries only, in the order given, and sums their
    /// results; without it, every one; a name that matches no binary fails the run.
    #[test]
    fn run_sh_runs_the_named_tests_in_order() {
        let dir = std::env::temp_dir().join(format!("zkgpu-xtask-run-sh-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tests")).unwrap();
        std::fs::create_dir_all(dir.join("cubin")).unwrap();
        std::fs::write(dir.join("run.sh"), RUN_SH).unwrap();
        let bench = r#"case "$1" in --probe) echo probe;; --gpu-count) echo 1;; *) echo bench "$@";; esac"#;
        fake_binary(&dir.join("zkgpu-bench.gz"), bench);
        for (name, passed) in [("msm_gpu", 3), ("ntt_gpu", 5), ("pipeline_gpu", 7)] {
            let body =
                format!("echo ran {name} >>\"$RAN\"\necho 'test result: ok. {passed} passed; 0 failed; 1 ignored;'");
            fake_binary(&dir.join(format!("tests/zkgpu-{name}.gz")), &body);
        }
        let run = |tests: Option<&str>| {
            let ran = dir.join("ran.txt");
            let _ = std::fs::remove_file(&ran);
            let mut cmd = Command::new("bash");
            cmd.arg(dir.join("run.sh")).arg(dir.join("out")).env("RAN", &ran).env("ZKGPU_SKIP_BENCH", "1");
            match tests {
                Some(t) => cmd.env("ZKGPU_TESTS", t),
                None => cmd.env_remove("ZKGPU_TESTS"),
            };
            let out = cmd.output().unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout).to_string();
            (out.status.success(), std::fs::read_to_string(&ran).unwrap_or_default(), stdout)
        };
        let (ok, ran, stdout) = run(Some("pipeline_gpu msm_gpu"));
        assert!(ok, "{stdout}");
        assert_eq!(ran, "ran pipeline_gpu\nran msm_gpu\n");
        assert!(stdout.contains("tests: 10 passed, 0 failed"), "{stdout}");
        let (ok, ran, stdout) = run(None);
        assert!(ok, "{stdout}");
        assert_eq!(ran.lines().count(), 3, "{ran}");
        assert!(stdout.contains("tests: 15 passed, 0 failed"), "{stdout}");
        let (ok, ran, stdout) = run(Some("groth16_gpu"));
        assert!(!ok, "{stdout}");
        assert_eq!(ran, "");
        assert!(stdout.contains("names no test binary"), "{stdout}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
