//! `cargo xtask ptx [--check]`: build the kernels' PTX, keep the committed copy in kernels/ptx/ in step with
//! the sources, and report what ptxas makes of each kernel (registers, shared memory, stack, spills).
//!
//! The PTX is built by the host crate's build.rs (ZKGPU_PTX=build): `cargo check -p zkgpu` runs it, and the
//! files are taken from the build script's OUT_DIR, so there is exactly one recipe for the kernel build.
//! There are two modules per arch: the production module `zkgpu_<arch>.ptx` (committed gzip-compressed, as
//! `kernels/ptx/zkgpu_<arch>.ptx.gz`, about 1.4 MB instead of 30) and
//! the test module `zkgpu_test_<arch>.ptx` (test-only kernels, never committed); ptxas checks both.
//!
//! ptxas comes from PyPI's `nvidia-cuda-nvcc` wheel (no CUDA toolkit needed), downloaded once into
//! `.cache/ptxas/<version>/` (git-ignored). `ZKGPU_PTXAS=/path/to/ptxas` uses another copy. Its results (the
//! `-v` report and the cubin) are cached by (PTX text, ptxas version, arch) in `.cache/ptxas/results/`
//! (see [`crate::ptxas`]): only a changed module is assembled again. `cargo xtask ptx` also writes the reports
//! into `xtask/ptxas-reports/` (committed, keyed by the PTX's SHA-256), so the check on a fresh clone with
//! unchanged kernels reads them instead of running ptxas.
//!
//! Check policy (`--check`, run by `cargo xtask test` and CI):
//! - the committed `kernels/ptx/zkgpu_<arch>.ptx.gz` must hold a fresh build's text byte for byte (fix: `cargo xtask ptx`
//!   and commit kernels/ptx/);
//! - ptxas must accept the module for every arch;
//! - a *hot* kernel must not spill. Hot = every kernel except the test-only ones (`arith_*`, `device_api_*`,
//!   `smoke_*`), which exist to check correctness: their spills are reported as warnings, not failures.
//!   Known spills of a hot kernel can be accepted explicitly, with a byte ceiling, in [`ACCEPTED_SPILLS`].
use crate::ptxas::{Job, Ptxas};
use crate::util::{self, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Architectures built, in the order the table shows them (the host picks the module by compute capability).
pub const ARCHES: [&str; 2] = ["sm_90", "sm_80"];
/// Kernel name prefixes of test-only kernels (spills there are reported, not fatal).
pub const TEST_ONLY_PREFIXES: [&str; 3] = ["arith_", "device_api_", "smoke_"];

/// Hot kernels whose spills are known and accepted for now, each with a ceiling (bytes of spill stores and
/// of spill loads, per arch) so that growth still fails the check. Every entry is a performance debt: the
/// table prints these spills on every run. Remove an entry as soon as its kernel stops spilling.
/// (kernel name prefix, max spill-store bytes, max spill-load bytes, why)
pub const ACCEPTED_SPILLS: &[(&str, u32, u32, &str)] = &[
    (
        "batch_add_g2_",
        2048,
        1024,
        "G2 point addition over Fq2 needs more than 255 registers per thread (see DESIGN.md, batch addition)",
    ),
    ("set_sum_g2_", 2048, 1024, "the same G2 addition, in the set sums batch addition and the MSM share"),
    ("bench_batch_add_g2_", 2048, 1024, "the same G2 addition, making benchmark inputs"),
    (
        "msm_g2_",
        6144,
        5120,
        "G2 point addition over Fq2 needs more than 255 registers per thread; the cold G2 kernels are inlined, \
         the reduce (three additions and a doubling per step) spills most (see DESIGN.md, MSM)",
    ),
];

/// PTX freshly built from the sources, per arch: the production module (`files`, committed) and the test
/// module (`test_files`; an empty file when build.rs did not build it).
pub struct BuiltPtx {
    /// The production module per arch, whole (what is committed and what ptxas checks).
    pub files: Vec<(&'static str, PathBuf)>,
    /// The test module per arch (absent when build.rs did not build it).
    pub test_files: Vec<(&'static str, PathBuf)>,
    /// The production module split by kernel family (`zkgpu_<arch>_<family>.ptx`): what the host embeds and
    /// loads, one family at a time, hence what the bundle assembles cubins of.
    pub family_files: Vec<(&'static str, PathBuf)>,
}

/// What ptxas reports for one kernel on one arch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Resources {
    pub registers: u32,
    pub shared_bytes: u32,
    pub stack_bytes: u32,
    pub spill_stores: u32,
    pub spill_loads: u32,
}

/// ptxas results for every arch: arch -> kernel -> resources.
pub struct Report {
    pub per_arch: BTreeMap<&'static str, BTreeMap<String, Resources>>,
}

pub fn is_hot(kernel: &str) -> bool {
    !TEST_ONLY_PREFIXES.iter().any(|p| kernel.starts_with(p))
}

/// The task: build, write or compare kernels/ptx/, run ptxas, print the table, apply the check policy.
pub fn run(check: bool) -> Result<Report> {
    let built = build()?;
    let committed_dir = util::root().join("kernels/ptx");
    let mut problems = Vec::new();
    for (arch, path) in &built.files {
        let committed = committed_dir.join(format!("zkgpu_{arch}.ptx.gz"));
        let fresh = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let stale = compare(&fresh, &committed);
        if check {
            if let Some(why) = stale {
                problems.push(format!(
                    "kernels/ptx/zkgpu_{arch}.ptx.gz is stale ({why}): run `cargo xtask ptx` and commit kernels/ptx/"
                ));
            }
        } else if stale.is_some() {
            // Rewritten only when the text changed: the same text always keeps the same committed bytes.
            std::fs::write(&committed, gzip(fresh.as_bytes())?).map_err(|e| format!("{}: {e}", committed.display()))?;
            eprintln!("xtask: wrote {}", committed.display());
        }
    }
    if !check {
        warn_if_sources_uncommitted();
    }
    let report = ptxas_report(&built, true)?;
    if !check {
        // The reports for this PTX, committed beside it: a fresh clone's check then needs no ptxas run.
        let ptxas = Ptxas::locate()?;
        let jobs = jobs(&built, true);
        ptxas.commit_reports(&jobs, &ptxas.reports(&jobs, "the committed reports")?)?;
        eprintln!(
            "xtask: wrote the ptxas reports in {} (commit them with kernels/ptx/)",
            crate::ptxas::COMMITTED_REPORTS
        );
    }
    print_table(&report, None);
    problems.extend(spill_problems(&report));
    if check {
        if problems.is_empty() {
            eprintln!(
                "xtask: PTX check passed (committed PTX fresh, ptxas clean, no spills in hot kernels beyond ACCEPTED_SPILLS)"
            );
        } else {
            return Err(problems.join("\n"));
        }
    } else if !problems.is_empty() {
        eprintln!("xtask: warning: {}", problems.join("\nxtask: warning: "));
    }
    Ok(report)
}

/// The PTX just written matches the *working tree*; if kernels/ has uncommitted changes, committing
/// kernels/ptx/ alone would leave CI's freshness check red. Say so.
fn warn_if_sources_uncommitted() {
    let status = Command::new("git")
        .args(["status", "--porcelain", "--", "kernels/src", "kernels/Cargo.toml"])
        .current_dir(util::root())
        .output();
    if let Ok(out) = status {
        let changed = String::from_utf8_lossy(&out.stdout);
        if out.status.success() && !changed.trim().is_empty() {
            eprintln!(
                "xtask: warning: kernels/ has uncommitted changes; the PTX written matches them, so commit them \
                 together with kernels/ptx/ and xtask/ptxas-reports/ (or CI's freshness check fails):\n{changed}"
            );
        }
    }
}

/// Build the PTX through build.rs and return where it is.
pub fn build() -> Result<BuiltPtx> {
    let messages = util::cargo_json(
        "building the PTX (cargo check -p zkgpu; minutes when kernels/ changed)",
        util::cargo().args(["check", "-p", "zkgpu"]).env("ZKGPU_PTX", "build"),
    )?;
    from_messages(&messages)
}

/// The PTX a cargo build of the zkgpu package with `ZKGPU_PTX=build` made, found from its JSON messages (the
/// build script's OUT_DIR). Every host profile gets the same PTX (build.rs shares one kernel build).
pub fn from_messages(messages: &[serde_json::Value]) -> Result<BuiltPtx> {
    let out_dir = messages
        .iter()
        .filter(|m| m["reason"] == "build-script-executed")
        .filter(|m| {
            let id = m["package_id"].as_str().unwrap_or("");
            id.contains("#zkgpu@") || id.starts_with("zkgpu ")
        })
        .find_map(|m| m["out_dir"].as_str().map(PathBuf::from))
        .ok_or("cargo reported no build-script run for the zkgpu package")?;
    let module =
        |stem: &str| ARCHES.iter().map(|arch| (*arch, out_dir.join(format!("{stem}_{arch}.ptx")))).collect::<Vec<_>>();
    let (files, test_files) = (module("zkgpu"), module("zkgpu_test"));
    for (_, f) in &files {
        if !f.exists() {
            return Err(format!("build.rs did not produce {}", f.display()));
        }
    }
    let test_files = test_files.into_iter().filter(|(_, f)| f.exists()).collect();
    let listing = std::fs::read_dir(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
    let names: Vec<String> =
        listing.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    let mut family_files = Vec::new();
    for arch in ARCHES {
        let mut found: Vec<PathBuf> = names
            .iter()
            .filter(|name| name.starts_with(&format!("zkgpu_{arch}_")) && name.ends_with(".ptx"))
            .map(|name| out_dir.join(name))
            .collect();
        if found.is_empty() {
            return Err(format!("build.rs wrote no per-family modules for {arch} in {}", out_dir.display()));
        }
        found.sort();
        family_files.extend(found.into_iter().map(|file| (arch, file)));
    }
    Ok(BuiltPtx { files, test_files, family_files })
}

/// `None` if the committed gzip file holds exactly `fresh`, else a short reason (first differing line).
fn compare(fresh: &str, committed: &Path) -> Option<String> {
    let old = match gunzip(committed) {
        Ok(old) => old,
        Err(why) => return Some(why),
    };
    if old == fresh {
        return None;
    }
    let line = old.lines().zip(fresh.lines()).position(|(a, b)| a != b);
    Some(match line {
        Some(i) => format!("first difference at line {}", i + 1),
        None => format!("{} lines committed, {} built", old.lines().count(), fresh.lines().count()),
    })
}

/// The text of a gzip file (a missing or unreadable one is described, for the staleness message).
fn gunzip(path: &Path) -> std::result::Result<String, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file).read_to_string(&mut text).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(text)
}

/// `bytes` gzip-compressed at the best level (no file name or time in the header: the same text, the same
/// bytes).
fn gzip(bytes: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    encoder.write_all(bytes).map_err(|e| e.to_string())?;
    encoder.finish().map_err(|e| e.to_string())
}

/// The modules ptxas checks: the production module per arch, and the test module's if `with_test_module`
/// (when build.rs built it: it is an empty file otherwise).
fn jobs(built: &BuiltPtx, with_test_module: bool) -> Vec<Job<'_>> {
    let test_files: &[(&'static str, PathBuf)] = if with_test_module { &built.test_files } else { &[] };
    built
        .files
        .iter()
        .chain(test_files)
        .filter(|(_, ptx)| std::fs::metadata(ptx).is_ok_and(|m| m.len() > 0))
        .map(|(arch, ptx)| Job { arch, ptx })
        .collect()
}

fn report_of(reports: &[(&'static str, String)]) -> Report {
    let mut per_arch: BTreeMap<&'static str, BTreeMap<String, Resources>> = BTreeMap::new();
    for (arch, report) in reports {
        per_arch.entry(*arch).or_default().extend(parse_ptxas(report));
    }
    Report { per_arch }
}

/// `ptxas -arch=<arch> -v` on the production module (and the test module if `with_test_module`), parsed per
/// kernel: from the results cache or the committed reports (see [`crate::ptxas`]), running ptxas only for
/// modules neither holds.
pub fn ptxas_report(built: &BuiltPtx, with_test_module: bool) -> Result<Report> {
    let what = if with_test_module { "the resource table (all modules)" } else { "the resource table" };
    Ok(report_of(&Ptxas::locate()?.reports(&jobs(built, with_test_module), what)?))
}

/// [`ptxas_report`] of the production modules from the results cache or the committed reports alone (no
/// ptxas run, no download); `None` unless every module is found.
pub fn cached_report(built: &BuiltPtx) -> Result<Option<Report>> {
    let ptxas = Ptxas::locate()?;
    let mut reports = Vec::new();
    for job in jobs(built, false) {
        match ptxas.lookup_report(job)? {
            Some(r) => reports.push((job.arch, r)),
            None => return Ok(None),
        }
    }
    Ok(Some(report_of(&reports)))
}

/// Parse `ptxas -v` output: entry functions with their register count, shared memory, stack and spills.
pub fn parse_ptxas(text: &str) -> BTreeMap<String, Resources> {
    let mut kernels: BTreeMap<String, Resources> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or("").to_string();
            kernels.entry(name.clone()).or_default();
            current = Some(name);
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            // Properties of a non-entry (called) function are not a kernel's: stop attributing.
            let name = rest.trim().to_string();
            current = kernels.contains_key(&name).then_some(name);
        } else if let Some(k) = current.as_ref().and_then(|n| kernels.get_mut(n)) {
            if line.contains("stack frame") {
                k.stack_bytes = number_before(line, "bytes stack frame").unwrap_or(0);
                k.spill_stores = number_before(line, "bytes spill stores").unwrap_or(0);
                k.spill_loads = number_before(line, "bytes spill loads").unwrap_or(0);
            } else if line.contains("Used ") && line.contains("registers") {
                k.registers = number_before(line, "registers").unwrap_or(0);
                k.shared_bytes = number_before(line, "bytes smem").unwrap_or(0);
            }
        }
    }
    kernels
}

/// The integer just before `marker` in `line` ("..., 40 bytes spill stores" -> 40).
fn number_before(line: &str, marker: &str) -> Option<u32> {
    let head = &line[..line.find(marker)?];
    head.trim_end().rsplit(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// Failures under the check policy: a spill in a hot kernel, beyond its ceiling if it is in
/// [`ACCEPTED_SPILLS`].
pub fn spill_problems(report: &Report) -> Vec<String> {
    let mut problems = Vec::new();
    for (arch, kernels) in &report.per_arch {
        for (name, r) in kernels {
            let accepted = ACCEPTED_SPILLS.iter().find(|(prefix, ..)| name.starts_with(prefix));
            let within = accepted.is_some_and(|(_, st, ld, _)| r.spill_stores <= *st && r.spill_loads <= *ld);
            if within {
                continue;
            }
            if (r.spill_stores > 0 || r.spill_loads > 0) && is_hot(name) {
                problems.push(format!(
                    "hot kernel {name} spills on {arch}: {} bytes stores, {} bytes loads",
                    r.spill_stores, r.spill_loads
                ));
            }
        }
    }
    problems
}

/// Print the per-kernel table for all arches; `filter` keeps only kernels it accepts.
pub fn print_table(report: &Report, filter: Option<&dyn Fn(&str) -> bool>) {
    let mut names: Vec<&String> = report.per_arch.values().flat_map(|k| k.keys()).collect();
    names.sort();
    names.dedup();
    names.retain(|n| filter.is_none_or(|f| f(n)));
    let width = names.iter().map(|n| n.len() + 1).max().unwrap_or(6).max(7);
    let arches: Vec<&str> = ARCHES.iter().copied().filter(|a| report.per_arch.contains_key(a)).collect();
    let cell = |a: &str, b: &str, c: &str, d: &str| format!(" | {a:>5} {b:>6} {c:>6} {d:>11}");
    let mut top = format!("{:<width$}", "");
    let mut header = format!("{:<width$}", "kernel");
    for arch in &arches {
        top.push_str(&format!(" | {arch:<31}"));
        header.push_str(&cell("regs", "smem", "stack", "spill st/ld"));
    }
    println!(
        "\nptxas resources per kernel (bytes; * = test-only kernel, spills there are not fatal; + = spills accepted up to a ceiling, see ACCEPTED_SPILLS in xtask/src/ptx.rs)"
    );
    println!("{top}\n{header}\n{}", "-".repeat(header.len()));
    for name in names {
        let mark = if !is_hot(name) {
            "*"
        } else if ACCEPTED_SPILLS.iter().any(|(prefix, ..)| name.starts_with(prefix)) {
            "+"
        } else {
            ""
        };
        let mut line = format!("{:<width$}", format!("{name}{mark}"));
        for arch in &arches {
            match report.per_arch.get(arch).and_then(|k| k.get(name)) {
                Some(r) => line.push_str(&cell(
                    &r.registers.to_string(),
                    &r.shared_bytes.to_string(),
                    &r.stack_bytes.to_string(),
                    &format!("{}/{}", r.spill_stores, r.spill_loads),
                )),
                None => line.push_str(&format!(" | {:>31}", "(absent)")),
            }
        }
        println!("{line}");
    }
    println!();
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = "ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'bench_mul_fq_asm' for 'sm_90'
ptxas info    : Function properties for bench_mul_fq_asm
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 40 registers, used 0 barriers, 384 bytes cmem[0]
ptxas info    : Compile time = 10.899 ms
ptxas info    : Function properties for helper
    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads
ptxas info    : Compiling entry function 'arith_fq2_inv' for 'sm_90'
ptxas info    : Function properties for arith_fq2_inv
    64 bytes stack frame, 12 bytes spill stores, 16 bytes spill loads
ptxas info    : Used 255 registers, used 1 barriers, 4096 bytes smem, 64 bytes cumulative stack size
";

    #[test]
    fn parses_entries_and_ignores_called_functions() {
        let k = parse_ptxas(SAMPLE);
        assert_eq!(k.len(), 2);
        assert_eq!(k["bench_mul_fq_asm"], Resources { registers: 40, ..Default::default() });
        assert_eq!(
            k["arith_fq2_inv"],
            Resources { registers: 255, shared_bytes: 4096, stack_bytes: 64, spill_stores: 12, spill_loads: 16 }
        );
    }

    #[test]
    fn spills_fail_only_in_hot_kernels() {
        let mut kernels = parse_ptxas(SAMPLE);
        let report = Report { per_arch: BTreeMap::from([("sm_90", kernels.clone())]) };
        assert!(spill_problems(&report).is_empty(), "arith_* is test-only");
        kernels.get_mut("bench_mul_fq_asm").unwrap().spill_loads = 8;
        let report = Report { per_arch: BTreeMap::from([("sm_90", kernels)]) };
        let problems = spill_problems(&report);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].contains("bench_mul_fq_asm"));
    }

    #[test]
    fn accepted_spills_have_a_ceiling() {
        let spill = |name: &str, st, ld| Report {
            per_arch: BTreeMap::from([(
                "sm_90",
                BTreeMap::from([(
                    name.to_string(),
                    Resources { spill_stores: st, spill_loads: ld, ..Default::default() },
                )]),
            )]),
        };
        assert!(spill_problems(&spill("batch_add_g2_accumulate", 988, 644)).is_empty());
        assert_eq!(spill_problems(&spill("batch_add_g2_accumulate", 4096, 644)).len(), 1, "over the ceiling");
        assert_eq!(spill_problems(&spill("batch_add_g1_accumulate", 4, 4)).len(), 1, "G1 is not accepted");
    }

    /// The committed gzip file is fresh only when it holds exactly the built text; the same text compresses to
    /// the same bytes (so an unchanged module never shows up in a diff).
    #[test]
    fn committed_gzip_is_compared_by_text() {
        let dir = std::env::temp_dir().join(format!("zkgpu-xtask-gzip-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("m.ptx.gz");
        let text = ".version 7.8\n.target sm_90\n.entry k()\n{\n}\n";
        assert!(compare(text, &file).unwrap().contains("m.ptx.gz"), "a missing file is stale");
        std::fs::write(&file, gzip(text.as_bytes()).unwrap()).unwrap();
        assert_eq!(gzip(text.as_bytes()).unwrap(), gzip(text.as_bytes()).unwrap());
        assert_eq!(compare(text, &file), None);
        assert_eq!(compare(&text.replace("sm_90", "sm_80"), &file).as_deref(), Some("first difference at line 2"));
        assert_eq!(compare(&format!("{text}// more\n"), &file).as_deref(), Some("5 lines committed, 6 built"));
        std::fs::write(&file, text).unwrap();
        assert!(compare(text, &file).is_some(), "an uncompressed file is not the committed form");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn hot_kernel_classification() {
        assert!(is_hot("msm_g1_accumulate"));
        assert!(is_hot("bench_mul_fr_portable"));
        assert!(!is_hot("arith_fr_mul"));
        assert!(!is_hot("smoke_add_u32"));
        assert!(!is_hot("device_api_shuffle"));
    }
}
