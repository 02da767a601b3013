//! ptxas: the binary, and a cache of what it makes of each PTX module.
//!
//! ptxas comes from PyPI's `nvidia-cuda-nvcc` wheel (no CUDA toolkit needed), downloaded once into
//! `.cache/ptxas/<version>/` (git-ignored). `ZKGPU_PTXAS=/path/to/ptxas` uses another copy.
//!
//! ptxas needs minutes for each production module (~30 MB of PTX) on a small machine, and `cargo xtask ptx`,
//! `test`, `bench` and `bundle` all want its results. They are cached by what determines them: the PTX text
//! (its FNV-1a 64 fingerprint, the one `zkgpu::module::cubin_file_name` names cubins by), the ptxas version
//! and the arch. An entry is two files,
//!
//! ```text
//! .cache/ptxas/results/<ptxas version>/<arch>/<stem>-<fingerprint, 16 hex digits>.cubin   the cubin
//! .cache/ptxas/results/<ptxas version>/<arch>/<stem>-<fingerprint, 16 hex digits>.log     `ptxas -v`'s report
//! ```
//!
//! named as the host names cubins, so `ZKGPU_CUBIN_DIR` can point at such a folder. Both files are written
//! under temporary names and renamed into place, the report last: an entry whose report exists is complete.
//! A hit costs reading and hashing the PTX (tens of ms); a miss runs `ptxas -arch=<arch> -v -o <cubin>` with
//! a progress spinner. A failed ptxas run is not cached. Only the newest [`KEEP_PER_MODULE`] entries per
//! (arch, stem) are kept: a hit refreshes an entry's age, a store removes the oldest beyond that.
//! The ptxas version is the pinned wheel's for the cached binary and `ptxas --version`'s for `ZKGPU_PTXAS`.
//!
//! Committed reports. A fresh clone has no results cache, and the PTX check would run ptxas on every module
//! (minutes each on a 2-core CI machine) to learn what the committed sources already determine. So `cargo xtask
//! ptx` also writes each module's `-v` report, the only thing the check and the resource tables read, into
//! the repository:
//!
//! ```text
//! xtask/ptxas-reports/<ptxas version>/<arch>/<stem>-<SHA-256 of the PTX text, 64 hex digits>.log
//! ```
//!
//! and [`Ptxas::reports`] takes a module's report from there when the results cache lacks it. This cannot
//! hand out a stale report: the file is found only by the SHA-256 of the exact PTX text being checked, the
//! ptxas version and the arch, and ptxas's report is a function of those three (its options, `-arch=<arch>
//! -v`, are fixed in [`Ptxas::run_and_store`]; whoever changes them must empty `xtask/ptxas-reports/` and
//! `.cache/ptxas/results/`). A cryptographic hash here, not the cache's FNV-1a, because these files are
//! trusted by CI: PTX made to collide with a committed report's name is not a practical attack on SHA-256.
//! Any other PTX (changed kernels, the report not committed) misses and ptxas runs as before. Cubins are not
//! committed (megabytes each; only `cargo xtask bundle` needs them, through [`Ptxas::assemble`]).
//!
//! Not used: `--split-compile N` (ptxas 13.0.88 has it: "maximum amount of concurrent threads ... when running
//! compiler optimizations"). Measured on the 2-core build machine (2026-12-04), the sm_90 production module
//! alone: 161 s without, 170 s with `--split-compile 2` (user time equal to wall time: no parallelism gained),
//! peak memory 1.8 -> 2.8 GB, and a different cubin (same `-v` resources); the misses run side by side anyway.
use crate::progress::Step;
use crate::util::{self, Result};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The PyPI release ptxas is taken from (CUDA 13.0: accepts the PTX the H200's 580 driver loads).
pub const PTXAS_WHEEL: &str = "nvidia-cuda-nvcc==13.0.88";
const PTXAS_VERSION: &str = "13.0.88";
/// Cache entries kept per (arch, module stem): a few kernel revisions (e.g. two branches) stay warm.
pub const KEEP_PER_MODULE: usize = 3;
/// The committed `-v` reports (see the module docs), relative to the repository root.
pub const COMMITTED_REPORTS: &str = "xtask/ptxas-reports";

/// FNV-1a (64-bit) of the PTX text: the same function as `zkgpu::module::ptx_fingerprint` (this binary does
/// not link the host crate); this file's test and tests/host_errors.rs check both on the published vectors.
pub fn ptx_fingerprint(text: &[u8]) -> u64 {
    text.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The results cache of one ptxas (its version): where entries are, lookups, and ptxas runs that fill it.
pub struct Ptxas {
    /// The ptxas executable (may not exist yet for the pinned wheel: lookups do not need it).
    program: PathBuf,
    /// Version, e.g. `13.0.88`: part of the cache key.
    version: String,
    /// `.cache/ptxas/results`.
    results: PathBuf,
    /// `xtask/ptxas-reports`: the committed reports (see the module docs).
    committed: PathBuf,
    /// Fetch the wheel before the first run (the pinned copy), or not (`ZKGPU_PTXAS`, tests).
    fetch: bool,
}

/// One module to assemble: its arch and PTX file (`<stem>.ptx`).
#[derive(Clone, Copy, Debug)]
pub struct Job<'a> {
    pub arch: &'static str,
    pub ptx: &'a Path,
}

/// ptxas's results for one module.
#[derive(Clone, Debug)]
pub struct Assembled {
    pub arch: &'static str,
    /// The cubin in the cache, named `<stem>-<fingerprint>.cubin` as `zkgpu::module::cubin_file_name` names it.
    pub cubin: PathBuf,
    /// `ptxas -v`'s output (stdout then stderr).
    pub report: String,
    /// Taken from the cache (true) or made by a ptxas run now (false).
    #[cfg_attr(not(test), allow(dead_code))] // the tests check it; `assemble` says what came from where
    pub cached: bool,
}

impl Ptxas {
    /// The ptxas this checkout uses: `$ZKGPU_PTXAS` (version from `--version`), else the pinned wheel's copy
    /// in `.cache/ptxas/<version>/` (fetched on its first run, not before: a cache lookup needs no binary).
    pub fn locate() -> Result<Ptxas> {
        let results = util::root().join(".cache/ptxas/results");
        let committed = util::root().join(COMMITTED_REPORTS);
        if let Some(p) = std::env::var_os("ZKGPU_PTXAS") {
            let program = PathBuf::from(p);
            let version = version_of(&program)?;
            return Ok(Ptxas { program, version, results, committed, fetch: false });
        }
        let program = util::root().join(".cache/ptxas").join(PTXAS_VERSION).join("ptxas");
        Ok(Ptxas { program, version: PTXAS_VERSION.to_string(), results, committed, fetch: true })
    }

    /// A cache at `results` for `program` of `version` (tests: a fake ptxas in a scratch folder); committed
    /// reports in `results/../committed`.
    #[cfg(test)]
    fn with(program: PathBuf, version: &str, results: PathBuf) -> Ptxas {
        let committed = results.parent().unwrap_or(&results).join("committed");
        Ptxas { program, version: version.to_string(), results, committed, fetch: false }
    }

    /// The committed report of a module: `<committed>/<version>/<arch>/<stem>-<SHA-256 of its PTX text>.log`.
    pub fn committed_entry(&self, arch: &str, stem: &str, text: &[u8]) -> PathBuf {
        let sha: String = Sha256::digest(text).iter().map(|b| format!("{b:02x}")).collect();
        self.committed.join(&self.version).join(arch).join(format!("{stem}-{sha}.log"))
    }

    /// `ptxas -v`'s report for every job, in order: from the results cache, else from the committed reports,
    /// else by running ptxas ([`Ptxas::assemble`], which caches it). For the check and the resource tables,
    /// which need no cubin.
    pub fn reports(&self, jobs: &[Job], what: &str) -> Result<Vec<(&'static str, String)>> {
        let mut found: Vec<Option<(&'static str, String)>> = Vec::with_capacity(jobs.len());
        let mut committed = 0;
        for job in jobs {
            let text = std::fs::read(job.ptx).map_err(|e| format!("{}: {e}", job.ptx.display()))?;
            let report = match self.lookup_text(*job, &text) {
                Some(hit) => Some(hit.report),
                None => {
                    let report = std::fs::read_to_string(self.committed_entry(job.arch, &stem(job.ptx), &text)).ok();
                    committed += usize::from(report.is_some());
                    report
                }
            };
            found.push(report.map(|r| (job.arch, r)));
        }
        if committed > 0 {
            eprintln!(
                "xtask: ptxas {}: {committed} module(s) from the committed reports ({}; keyed by the PTX's SHA-256)",
                self.version,
                self.committed.display()
            );
        }
        let misses: Vec<usize> = (0..jobs.len()).filter(|&i| found[i].is_none()).collect();
        if !misses.is_empty() {
            let missed: Vec<Job> = misses.iter().map(|&i| jobs[i]).collect();
            for (&i, assembled) in misses.iter().zip(self.assemble(&missed, what)?) {
                found[i] = Some((assembled.arch, assembled.report));
            }
        }
        Ok(found.into_iter().flatten().collect())
    }

    /// The report of `job` from the results cache or the committed reports, without running ptxas.
    pub fn lookup_report(&self, job: Job) -> Result<Option<String>> {
        let text = std::fs::read(job.ptx).map_err(|e| format!("{}: {e}", job.ptx.display()))?;
        if let Some(hit) = self.lookup_text(job, &text) {
            return Ok(Some(hit.report));
        }
        Ok(std::fs::read_to_string(self.committed_entry(job.arch, &stem(job.ptx), &text)).ok())
    }

    /// Write the reports of `jobs` (from the cache or a ptxas run: [`Ptxas::reports`]) as the committed reports
    /// of their modules, replacing the older committed reports of the same (version, arch, stem).
    pub fn commit_reports(&self, jobs: &[Job], reports: &[(&'static str, String)]) -> Result<()> {
        for (job, (_, report)) in jobs.iter().zip(reports) {
            let text = std::fs::read(job.ptx).map_err(|e| format!("{}: {e}", job.ptx.display()))?;
            let stem = stem(job.ptx);
            let path = self.committed_entry(job.arch, &stem, &text);
            let dir = path.parent().ok_or("committed report without a folder")?;
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            if let Ok(entries) = std::fs::read_dir(dir) {
                let prefix = format!("{stem}-");
                for old in entries.filter_map(|e| e.ok()).map(|e| e.path()) {
                    let name = old.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    let is_entry = name
                        .strip_prefix(&prefix)
                        .and_then(|r| r.strip_suffix(".log"))
                        .is_some_and(|sha| sha.len() == 64 && sha.bytes().all(|b| b.is_ascii_hexdigit()));
                    if is_entry && old != path {
                        std::fs::remove_file(&old).map_err(|e| format!("{}: {e}", old.display()))?;
                    }
                }
            }
            std::fs::write(&path, report).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(())
    }

    /// The cache entry of a module: (cubin, report) paths. The key is (`version`, `arch`, `fingerprint`); the
    /// stem only names the files as the host names cubins.
    pub fn entry(&self, arch: &str, stem: &str, fingerprint: u64) -> (PathBuf, PathBuf) {
        let dir = self.results.join(&self.version).join(arch);
        let name = format!("{stem}-{fingerprint:016x}");
        (dir.join(format!("{name}.cubin")), dir.join(format!("{name}.log")))
    }

    /// The cached results for `job`, without running ptxas; `None` on a miss.
    #[cfg(test)] // the commands read reports through `lookup_report`
    pub fn lookup(&self, job: Job) -> Result<Option<Assembled>> {
        let text = std::fs::read(job.ptx).map_err(|e| format!("{}: {e}", job.ptx.display()))?;
        Ok(self.lookup_text(job, &text))
    }

    fn lookup_text(&self, job: Job, text: &[u8]) -> Option<Assembled> {
        let (cubin, log) = self.entry(job.arch, &stem(job.ptx), ptx_fingerprint(text));
        let report = std::fs::read_to_string(&log).ok()?;
        if !cubin.is_file() {
            return None;
        }
        touch(&log);
        Some(Assembled { arch: job.arch, cubin, report, cached: true })
    }

    /// Results for every job: from the cache, else by running ptxas (misses side by side, under a progress
    /// spinner) and storing them. `what` says what the results are for, in the step's label.
    pub fn assemble(&self, jobs: &[Job], what: &str) -> Result<Vec<Assembled>> {
        let mut found: Vec<Option<Assembled>> = Vec::with_capacity(jobs.len());
        let mut texts = Vec::with_capacity(jobs.len());
        for job in jobs {
            let text = std::fs::read(job.ptx).map_err(|e| format!("{}: {e}", job.ptx.display()))?;
            found.push(self.lookup_text(*job, &text));
            texts.push(text);
        }
        let misses: Vec<usize> = (0..jobs.len()).filter(|&i| found[i].is_none()).collect();
        if misses.is_empty() {
            eprintln!(
                "xtask: ptxas {}: {} module(s) from the cache ({})",
                self.version,
                jobs.len(),
                self.results.display()
            );
            return Ok(found.into_iter().flatten().collect());
        }
        if self.fetch && !self.program.exists() {
            fetch_wheel(&self.program)?;
        }
        let names: Vec<String> = misses.iter().map(|&i| format!("{} {}", stem(jobs[i].ptx), jobs[i].arch)).collect();
        let mb: f64 = misses.iter().map(|&i| texts[i].len() as f64).sum::<f64>() / 1e6;
        let step = Step::start(format!("ptxas {}: {} module(s), {mb:.0} MB of PTX", self.version, misses.len()));
        step.eprintln(&format!(
            "xtask: ptxas for {what}: {} (minutes per module on a small machine; then cached in {})",
            names.join(", "),
            self.results.display()
        ));
        let finished = AtomicUsize::new(0);
        let results: Vec<Result<Assembled>> = std::thread::scope(|scope| {
            let handles: Vec<_> = misses
                .iter()
                .map(|&i| {
                    let (job, text, step, finished, total) = (jobs[i], &texts[i], &step, &finished, misses.len());
                    scope.spawn(move || {
                        let result = self.run_and_store(job, text);
                        let n = finished.fetch_add(1, Ordering::SeqCst) + 1;
                        step.set_message(format!("{n} of {total} done (last: {} {})", stem(job.ptx), job.arch));
                        result
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a ptxas thread panicked".into()))).collect()
        });
        let failed = results.iter().any(Result::is_err);
        step.finish(if failed { "FAILED" } else { "done" });
        for (&i, result) in misses.iter().zip(results) {
            found[i] = Some(result?);
        }
        Ok(found.into_iter().flatten().collect())
    }

    /// Run ptxas on one module and store its cubin and report atomically (temporary names, then renames; the
    /// report last). A failure stores nothing.
    fn run_and_store(&self, job: Job, text: &[u8]) -> Result<Assembled> {
        let (cubin, log) = self.entry(job.arch, &stem(job.ptx), ptx_fingerprint(text));
        let dir = cubin.parent().ok_or("cache entry without a folder")?;
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let tmp = |path: &Path| {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), unique()))
        };
        let (tmp_cubin, tmp_log) = (tmp(&cubin), tmp(&log));
        let mut cmd = Command::new(&self.program);
        cmd.arg(format!("-arch={}", job.arch)).arg("-v").arg("-o").arg(&tmp_cubin).arg(job.ptx);
        let out = output_when_not_busy(&mut cmd).map_err(|e| format!("cannot run {}: {e}", self.program.display()))?;
        let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() || !tmp_cubin.is_file() {
            std::fs::remove_file(&tmp_cubin).ok();
            return Err(format!("ptxas -arch={} rejected {} ({}):\n{report}", job.arch, job.ptx.display(), out.status));
        }
        let stored = std::fs::write(&tmp_log, &report)
            .and_then(|()| std::fs::rename(&tmp_cubin, &cubin))
            .and_then(|()| std::fs::rename(&tmp_log, &log));
        if let Err(e) = stored {
            std::fs::remove_file(&tmp_cubin).ok();
            std::fs::remove_file(&tmp_log).ok();
            return Err(format!("storing ptxas results in {}: {e}", dir.display()));
        }
        prune(dir, &stem(job.ptx), KEEP_PER_MODULE);
        Ok(Assembled { arch: job.arch, cubin, report, cached: false })
    }
}

/// `zkgpu_sm_90` for `.../zkgpu_sm_90.ptx`.
fn stem(ptx: &Path) -> String {
    ptx.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

fn unique() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// Mark an entry as just used (its report's modification time), for [`prune`].
fn touch(path: &Path) {
    if let Ok(file) = std::fs::OpenOptions::new().append(true).open(path) {
        let _ = file.set_modified(std::time::SystemTime::now());
    }
}

/// Keep the `keep` most recently used complete entries of `stem` in `dir`; remove older ones (and their
/// cubins). Best effort: a file that cannot be removed stays.
fn prune(dir: &Path, stem: &str, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let prefix = format!("{stem}-");
    let mut logs: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            name.strip_prefix(&prefix)
                .and_then(|rest| rest.strip_suffix(".log"))
                .is_some_and(|fp| fp.len() == 16 && fp.bytes().all(|b| b.is_ascii_hexdigit()))
        })
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .collect();
    logs.sort_by_key(|b| std::cmp::Reverse(b.0));
    for (_, log) in logs.into_iter().skip(keep) {
        std::fs::remove_file(&log).ok();
        std::fs::remove_file(log.with_extension("cubin")).ok();
    }
}

/// `cmd.output()`, tried again for up to a second while the program is "busy" (ETXTBSY): a program written
/// just before (a freshly unpacked ptxas, the tests' fake one) can still be open for writing in a child that
/// another thread forked meanwhile, until that child's exec closes it.
fn output_when_not_busy(cmd: &mut Command) -> std::io::Result<std::process::Output> {
    let mut tries = 0;
    loop {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 100 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            other => return other,
        }
    }
}

/// `ptxas --version` -> `13.0.88` (from `Cuda compilation tools, release 13.0, V13.0.88`).
fn version_of(program: &Path) -> Result<String> {
    let out = output_when_not_busy(Command::new(program).arg("--version"))
        .map_err(|e| format!("cannot run {} --version: {e}", program.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    parse_version(&text).ok_or_else(|| format!("{} --version printed no version:\n{text}", program.display()))
}

fn parse_version(text: &str) -> Option<String> {
    text.split(|c: char| c.is_whitespace() || c == ',')
        .filter_map(|word| word.strip_prefix('V'))
        .find(|v| v.starts_with(|c: char| c.is_ascii_digit()) && v.chars().all(|c| c.is_ascii_digit() || c == '.'))
        .map(str::to_string)
}

/// Download the pinned wheel and take `bin/ptxas` out of it into `bin`.
fn fetch_wheel(bin: &Path) -> Result<()> {
    let cache = bin.parent().ok_or("ptxas path without a folder")?;
    if bin.file_name().is_none_or(|name| name != "ptxas") {
        return Err(format!("{} is not named ptxas", bin.display()));
    }
    util::fetch_wheel_members(
        &format!("fetching ptxas from PyPI ({PTXAS_WHEEL}, ~37 MB)"),
        PTXAS_WHEEL,
        cache,
        &[("nvidia/cu13/bin/ptxas", cache)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_is_fnv1a_64() {
        assert_eq!(ptx_fingerprint(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(ptx_fingerprint(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(ptx_fingerprint(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn parses_ptxas_version() {
        let text = "ptxas: NVIDIA (R) Ptx optimizing assembler\nCopyright (c) 2005-2025 NVIDIA Corporation\n\
                    Built on Wed_Aug_20_01:55:12_PM_PDT_2025\nCuda compilation tools, release 13.0, V13.0.88\n\
                    Build cuda_13.0.r13.0/compiler.36424714_0\n";
        assert_eq!(parse_version(text).as_deref(), Some("13.0.88"));
        assert_eq!(parse_version("no version here"), None);
    }

    #[test]
    fn entry_is_keyed_by_version_arch_and_fingerprint() {
        let p = Ptxas::with("ptxas".into(), "13.0.88", "/c/results".into());
        let (cubin, log) = p.entry("sm_90", "zkgpu_sm_90", 0x0123_4567_89ab_cdef);
        assert_eq!(cubin, Path::new("/c/results/13.0.88/sm_90/zkgpu_sm_90-0123456789abcdef.cubin"));
        assert_eq!(log, Path::new("/c/results/13.0.88/sm_90/zkgpu_sm_90-0123456789abcdef.log"));
        // The cubin is named as the host looks it up: `<stem>-<FNV-1a of the PTX text, 16 hex digits>.cubin`.
        let (cubin, _) = p.entry("sm_90", "zkgpu_sm_90", ptx_fingerprint(b"foobar"));
        assert!(cubin.ends_with("zkgpu_sm_90-85944171f73967e8.cubin"));
        assert_ne!(p.entry("sm_80", "zkgpu_sm_90", 1).0, p.entry("sm_90", "zkgpu_sm_90", 1).0);
        let other = Ptxas::with("ptxas".into(), "12.9.1", "/c/results".into());
        assert_ne!(other.entry("sm_90", "m", 1).0, p.entry("sm_90", "m", 1).0);
    }

    /// A scratch folder holding a fake ptxas (a shell script) that counts its runs, writes a cubin made of
    /// its arguments and prints a `-v`-style report; it fails on PTX containing `BAD`.
    struct Fake {
        dir: PathBuf,
    }

    impl Fake {
        fn new(name: &str) -> Fake {
            let dir = std::env::temp_dir().join(format!("xtask-ptxas-test-{name}-{}", std::process::id()));
            std::fs::remove_dir_all(&dir).ok();
            std::fs::create_dir_all(&dir).unwrap();
            let script = dir.join("ptxas");
            std::fs::write(
                &script,
                r#"#!/bin/sh
echo run >> "$(dirname "$0")/runs"
arch="$1"; out="$4"; ptx="$5"
if grep -q BAD "$ptx"; then echo "ptxas fatal   : bad PTX" >&2; exit 1; fi
echo "cubin $arch $(cat "$ptx")" > "$out"
echo "ptxas info    : Compiling entry function 'k' for '${arch#-arch=}'" >&2
echo "ptxas info    : Used 40 registers, used 0 barriers" >&2
"#,
            )
            .unwrap();
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            Fake { dir }
        }
        fn ptxas(&self, version: &str) -> Ptxas {
            Ptxas::with(self.dir.join("ptxas"), version, self.dir.join("results"))
        }
        fn ptx(&self, stem: &str, text: &str) -> PathBuf {
            let path = self.dir.join(format!("{stem}.ptx"));
            std::fs::write(&path, text).unwrap();
            path
        }
        fn runs(&self) -> usize {
            std::fs::read_to_string(self.dir.join("runs")).map(|s| s.lines().count()).unwrap_or(0)
        }
    }

    impl Drop for Fake {
        fn drop(&mut self) {
            std::fs::remove_dir_all(&self.dir).ok();
        }
    }

    #[test]
    fn miss_runs_ptxas_and_stores_then_hit_does_not() {
        let fake = Fake::new("hit-miss");
        let p = fake.ptxas("13.0.88");
        let ptx = fake.ptx("zkgpu_sm_90", "version 1");
        let job = Job { arch: "sm_90", ptx: &ptx };
        assert!(p.lookup(job).unwrap().is_none(), "empty cache");

        let first = p.assemble(&[job], "a test").unwrap();
        assert_eq!(fake.runs(), 1);
        assert!(!first[0].cached);
        assert!(first[0].report.contains("Used 40 registers"));
        assert_eq!(std::fs::read_to_string(&first[0].cubin).unwrap(), "cubin -arch=sm_90 version 1\n");
        assert_eq!(first[0].cubin, p.entry("sm_90", "zkgpu_sm_90", ptx_fingerprint(b"version 1")).0);

        let second = p.assemble(&[job], "a test").unwrap();
        assert_eq!(fake.runs(), 1, "a hit runs no ptxas");
        assert!(second[0].cached);
        assert_eq!((&second[0].cubin, &second[0].report), (&first[0].cubin, &first[0].report));
        assert!(p.lookup(job).unwrap().is_some_and(|a| a.cached));
        let leftovers = std::fs::read_dir(first[0].cubin.parent().unwrap())
            .unwrap()
            .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".tmp"))
            .count();
        assert_eq!(leftovers, 0, "no temporary files stay behind");
    }

    #[test]
    fn text_arch_and_version_are_the_key() {
        let fake = Fake::new("key");
        let ptx = fake.ptx("m", "one");
        let p = fake.ptxas("13.0.88");
        p.assemble(&[Job { arch: "sm_90", ptx: &ptx }], "a test").unwrap();
        p.assemble(&[Job { arch: "sm_80", ptx: &ptx }], "a test").unwrap();
        assert_eq!(fake.runs(), 2, "another arch is a miss");
        fake.ptxas("13.1.0").assemble(&[Job { arch: "sm_90", ptx: &ptx }], "a test").unwrap();
        assert_eq!(fake.runs(), 3, "another ptxas version is a miss");
        std::fs::write(&ptx, "two").unwrap();
        p.assemble(&[Job { arch: "sm_90", ptx: &ptx }], "a test").unwrap();
        assert_eq!(fake.runs(), 4, "another PTX text is a miss");
        std::fs::write(&ptx, "one").unwrap();
        let again =
            p.assemble(&[Job { arch: "sm_90", ptx: &ptx }, Job { arch: "sm_80", ptx: &ptx }], "a test").unwrap();
        assert_eq!(fake.runs(), 4, "the first text is still cached for both arches");
        assert!(again.iter().all(|a| a.cached));
    }

    #[test]
    fn failures_and_partial_entries_are_not_hits() {
        let fake = Fake::new("fail");
        let p = fake.ptxas("13.0.88");
        let bad = fake.ptx("bad", "BAD ptx");
        let err = p.assemble(&[Job { arch: "sm_90", ptx: &bad }], "a test").unwrap_err();
        assert!(err.contains("bad PTX"), "{err}");
        assert!(p.lookup(Job { arch: "sm_90", ptx: &bad }).unwrap().is_none(), "a failure is not cached");

        let ptx = fake.ptx("m", "fine");
        let job = Job { arch: "sm_90", ptx: &ptx };
        let made = p.assemble(&[job], "a test").unwrap();
        std::fs::remove_file(&made[0].cubin).unwrap();
        assert!(p.lookup(job).unwrap().is_none(), "a report without its cubin is a miss");
        p.assemble(&[job], "a test").unwrap();
        assert_eq!(fake.runs(), 3);
        let (_, log) = p.entry("sm_90", "m", ptx_fingerprint(b"fine"));
        std::fs::remove_file(log).unwrap();
        assert!(p.lookup(job).unwrap().is_none(), "a cubin without its report (an interrupted store) is a miss");
    }

    #[test]
    fn committed_reports_are_keyed_by_the_sha256_of_the_text() {
        let fake = Fake::new("committed");
        let p = fake.ptxas("13.0.88");
        let ptx = fake.ptx("zkgpu_sm_90", "version 1");
        let job = Job { arch: "sm_90", ptx: &ptx };
        let made = p.reports(&[job], "a test").unwrap();
        assert_eq!(fake.runs(), 1, "no cache, no committed report: ptxas runs");
        p.commit_reports(&[job], &made).unwrap();
        let path = p.committed_entry("sm_90", "zkgpu_sm_90", b"version 1");
        // sha256("version 1"), as `printf 'version 1' | sha256sum` prints it.
        assert!(path.ends_with(
            "13.0.88/sm_90/zkgpu_sm_90-b19f8edae2ee6c225b7278b289c2823ab9accfa225c5d67c4bef270b88ea55f0.log"
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), made[0].1);

        // A fresh clone: no results cache. The committed report answers; ptxas does not run.
        std::fs::remove_dir_all(fake.dir.join("results")).unwrap();
        let again = p.reports(&[job], "a test").unwrap();
        assert_eq!(fake.runs(), 1, "the committed report is used");
        assert_eq!(again, made);
        assert_eq!(p.lookup_report(job).unwrap().as_deref(), Some(made[0].1.as_str()));

        // Other PTX text, another arch or another ptxas version: no committed report applies, ptxas runs.
        std::fs::write(&ptx, "version 2").unwrap();
        assert!(p.lookup_report(job).unwrap().is_none());
        let changed = p.reports(&[job], "a test").unwrap();
        assert_eq!(fake.runs(), 2, "changed PTX misses the committed report");
        assert!(changed[0].1.contains("sm_90"));
        std::fs::write(&ptx, "version 1").unwrap();
        assert!(p.lookup_report(Job { arch: "sm_80", ptx: &ptx }).unwrap().is_none());
        assert!(fake.ptxas("13.1.0").lookup_report(job).unwrap().is_none());

        // Committing the new text's report replaces the old one of the same module.
        std::fs::write(&ptx, "version 2").unwrap();
        p.commit_reports(&[job], &changed).unwrap();
        assert!(!path.exists(), "the older committed report is removed");
        assert!(p.committed_entry("sm_90", "zkgpu_sm_90", b"version 2").is_file());
    }

    #[test]
    fn keeps_the_newest_entries_per_module() {
        let fake = Fake::new("prune");
        let p = fake.ptxas("13.0.88");
        let ptx = fake.ptx("m", "");
        let other = fake.ptx("other", "kept");
        p.assemble(&[Job { arch: "sm_90", ptx: &other }], "a test").unwrap();
        for i in 0..KEEP_PER_MODULE + 2 {
            std::fs::write(&ptx, format!("revision {i}")).unwrap();
            p.assemble(&[Job { arch: "sm_90", ptx: &ptx }], "a test").unwrap();
            // Modification times can tie within a filesystem's resolution: make the order explicit (in the past,
            // increasing, so the entry stored next is the newest).
            let (_, log) = p.entry("sm_90", "m", ptx_fingerprint(format!("revision {i}").as_bytes()));
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i as u64);
            std::fs::OpenOptions::new().append(true).open(log).unwrap().set_modified(when).unwrap();
        }
        let dir = fake.dir.join("results/13.0.88/sm_90");
        let mut names: Vec<String> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(names.len(), 2 * (KEEP_PER_MODULE + 1), "{names:?}");
        assert!(names.iter().any(|n| n.starts_with("other-")), "other modules are not pruned");
        for i in 0..2 {
            let gone = format!("m-{:016x}", ptx_fingerprint(format!("revision {i}").as_bytes()));
            assert!(!names.iter().any(|n| n.starts_with(&gone)), "oldest entries removed: {names:?}");
        }
    }
}
