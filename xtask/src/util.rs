//! Process helpers: the workspace root, cargo/rustup commands with a clean environment, JSON message parsing.
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

/// Totals of the libtest summaries (`test result: ok. 3 passed; 0 failed; 1 ignored; ...`) a run printed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TestCounts {
    pub passed: u64,
    pub failed: u64,
    pub ignored: u64,
}

impl TestCounts {
    /// Add one libtest summary line; other lines are ignored.
    pub fn add_line(&mut self, line: &str) {
        let Some(rest) = line.trim().strip_prefix("test result: ") else { return };
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
}

/// Run a command (normally `cargo test`), echoing its stdout while adding up the test summaries in it.
pub fn run_counting(cmd: &mut Command, counts: &mut TestCounts) -> Result<()> {
    use std::io::{BufRead, BufReader, Write};
    eprintln!("xtask: $ {}", describe(cmd));
    let mut child = cmd.stdout(Stdio::piped()).spawn().map_err(|e| format!("cannot run {}: {e}", describe(cmd)))?;
    if let Some(out) = child.stdout.take() {
        let stdout = std::io::stdout();
        for line in BufReader::new(out).lines() {
            let line = line.map_err(|e| e.to_string())?;
            counts.add_line(&line);
            let _ = writeln!(stdout.lock(), "{line}");
        }
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() { Ok(()) } else { Err(format!("`{}` failed ({status})", describe(cmd))) }
}

/// Run a cargo command with `--message-format=json-render-diagnostics`: diagnostics go to the terminal as
/// usual, the JSON messages are returned.
pub fn cargo_json(cmd: &mut Command) -> Result<Vec<serde_json::Value>> {
    cmd.arg("--message-format=json-render-diagnostics").stdout(Stdio::piped()).stderr(Stdio::inherit());
    eprintln!("xtask: $ {}", describe(cmd));
    let out = cmd.output().map_err(|e| format!("cannot run {}: {e}", describe(cmd)))?;
    if !out.status.success() {
        return Err(format!("`{}` failed ({})", describe(cmd), out.status));
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

/// A command line as text, for messages.
pub fn describe(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    parts.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
    let envs: Vec<String> = cmd
        .get_envs()
        .filter_map(|(k, v)| Some(format!("{}={}", k.to_string_lossy(), v?.to_string_lossy())))
        .collect();
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

#[cfg(test)]
mod tests {
    use super::TestCounts;

    #[test]
    fn adds_libtest_summaries() {
        let mut c = TestCounts::default();
        c.add_line("test result: ok. 12 passed; 0 failed; 3 ignored; 0 measured; 0 filtered out; finished in 0.01s");
        c.add_line("test result: FAILED. 1 passed; 2 failed; 0 ignored; 0 measured; 5 filtered out; finished in 1s");
        c.add_line("test foo ... ok");
        c.add_line("running 3 tests");
        assert_eq!(c, TestCounts { passed: 13, failed: 2, ignored: 3 });
    }
}
