//! Compiles `kernels/` to PTX (the job Rust-CUDA's cuda_builder did) and hands it to the host crate.
//!
//! Policy (`ZKGPU_PTX` environment variable):
//! - `auto` (default): if the pinned nightly (see `rust-toolchain.toml`) is installed with `rust-src`, build
//!   the PTX from source; otherwise use the PTX committed (gzip-compressed) in `kernels/ptx/`. A prover on stable Rust with no
//!   CUDA toolkit therefore builds this crate with no extra setup.
//! - `build`: always build from source; fail if the toolchain is missing.
//! - `prebuilt`: always use the committed PTX.
//!
//! The committed PTX must equal what the sources build: `cargo xtask ptx` refreshes it and `cargo xtask test`
//! (run by CI) fails when it is stale.
//!
//! The PTX is produced with rustc's `nvptx64-nvidia-cuda` target: fat LTO + one codegen unit + `--emit=asm`
//! gives one module holding every kernel; the target's own linker is not needed (`-C linker=/bin/true`).
//! Two modules per architecture: `zkgpu_<arch>.ptx` (production kernels, embedded for every user; the only
//! one committed, as `kernels/ptx/zkgpu_<arch>.ptx.gz`) and `zkgpu_test_<arch>.ptx` (kernels feature `test-kernels`: single-operation kernels for
//! the test suite, built only from source; empty when the PTX is the committed one).
//!
//! The nested cargo uses its own target directory (no lock contention with the outer build).
//! The host embeds the production module split by kernel family (`zkgpu_<arch>_<family>.ptx`, see
//! `zkgpu_kernels::modules`), so a program JIT-compiles only the families it uses, and the test module whole;
//! each deflate-compressed (`<name>.ptx.deflate`): fully inlined field arithmetic makes megabytes of PTX text,
//! which compresses about 20x.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

// The kernels crate is also a build dependency: its per-kernel register caps (`launch_bounds::MAX_REGISTERS`),
// its typed kernel interface (checked against the production PTX) and where its sources and committed PTX
// are (`SOURCE_DIR`: a sibling folder in this repository, another package when both come from a registry).
use zkgpu_kernels::{committed, interface, launch_bounds, modules};

/// The `ptx` profile of the nested kernel build: fat LTO and one codegen unit, so the whole kernel crate (and
/// core) becomes one module. Given on the command line, not in a manifest, so that it exists wherever the
/// kernels' sources are: in this workspace or as a package of their own in a registry.
const PTX_PROFILE: &[&str] = &[
    "profile.ptx.inherits=\"release\"",
    "profile.ptx.lto=\"fat\"",
    "profile.ptx.codegen-units=1",
    "profile.ptx.panic=\"abort\"",
    "profile.ptx.debug=false",
];

/// Must match `rust-toolchain.toml`.
const KERNEL_TOOLCHAIN: &str = "nightly-2026-05-20";
/// The `-C target-cpu` of each build. The host picks the modules by the device's compute capability.
const ARCHES: [&str; 2] = committed::ARCHES;

fn main() {
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let kernels = PathBuf::from(zkgpu_kernels::SOURCE_DIR);
    println!("cargo:rerun-if-env-changed=ZKGPU_PTX");
    println!("cargo:rerun-if-env-changed=ZKGPU_SASS");
    println!("cargo:rerun-if-env-changed=ZKGPU_EMBED_ARCHES");
    println!("cargo:rerun-if-env-changed=ZKGPU_PTXAS");
    for watched in ["src", "Cargo.toml", "ptx"] {
        println!("cargo:rerun-if-changed={}", kernels.join(watched).display());
    }

    let mode = env::var("ZKGPU_PTX").unwrap_or_else(|_| "auto".into());
    let built = match mode.as_str() {
        "prebuilt" => false,
        "build" => {
            if let Err(e) = build_all(&kernels, &out_dir) {
                panic!("ZKGPU_PTX=build: could not build the kernels: {e}");
            }
            true
        }
        "auto" => match toolchain_available() {
            Ok(()) => match build_all(&kernels, &out_dir) {
                Ok(()) => true,
                Err(e) => panic!(
                    "building the kernels with {KERNEL_TOOLCHAIN} failed (set ZKGPU_PTX=prebuilt to use the committed PTX): {e}"
                ),
            },
            Err(why) => {
                println!("cargo:warning=zkgpu: using the committed PTX in kernels/ptx ({why})");
                false
            }
        },
        other => panic!("ZKGPU_PTX must be auto, build or prebuilt, not {other:?}"),
    };
    if !built {
        for arch in ARCHES {
            let text = committed::read(arch).unwrap_or_else(|e| panic!("the committed PTX: {e}"));
            std::fs::write(out_dir.join(format!("zkgpu_{arch}.ptx")), text)
                .unwrap_or_else(|e| panic!("writing OUT_DIR: {e}"));
            // No test module without the kernel toolchain: test kernels then report MissingKernel.
            std::fs::write(out_dir.join(format!("zkgpu_test_{arch}.ptx")), "")
                .unwrap_or_else(|e| panic!("writing OUT_DIR: {e}"));
        }
    }
    check_interface(&out_dir);
    // What the host embeds, per architecture: the production module split by kernel family (each loaded on
    // first use), and the test module whole.
    // `ZKGPU_EMBED_ARCHES=sm_90` embeds one architecture's modules only (the others stay empty: such a build
    // refuses those devices with UnsupportedArch); `cargo xtask bundle` uses it to keep its binaries small.
    let embed_arches: Vec<&str> = match env::var("ZKGPU_EMBED_ARCHES") {
        Ok(list) if !list.trim().is_empty() => {
            let wanted: Vec<&str> =
                ARCHES.iter().copied().filter(|a| list.split(',').any(|w| w.trim() == *a)).collect();
            if wanted.is_empty() || list.split(',').any(|w| !ARCHES.contains(&w.trim())) {
                panic!("ZKGPU_EMBED_ARCHES={list:?}: name some of {ARCHES:?}");
            }
            wanted
        }
        _ => ARCHES.to_vec(),
    };
    println!("cargo:rustc-env=ZKGPU_EMBEDDED_ARCHES={}", embed_arches.join(","));
    let mut embedded = Vec::new();
    let mut family_modules = Vec::new();
    for arch in ARCHES {
        let whole = out_dir.join(format!("zkgpu_{arch}.ptx"));
        let text = std::fs::read_to_string(&whole).unwrap_or_else(|e| panic!("{}: {e}", whole.display()));
        let families = modules::split(&text).unwrap_or_else(|e| panic!("splitting {} by family: {e}", whole.display()));
        for (family, text) in families {
            let name = format!("zkgpu_{arch}_{}", family.stem());
            let path = out_dir.join(format!("{name}.ptx"));
            std::fs::write(&path, &text).unwrap_or_else(|e| panic!("writing OUT_DIR: {e}"));
            family_modules.push((name.clone(), arch, path));
            embedded.push((name, if embed_arches.contains(&arch) { text.into_bytes() } else { Vec::new() }));
        }
        let test = out_dir.join(format!("zkgpu_test_{arch}.ptx"));
        let test = std::fs::read(&test).unwrap_or_else(|e| panic!("{}: {e}", test.display()));
        embedded.push((format!("zkgpu_test_{arch}"), if embed_arches.contains(&arch) { test } else { Vec::new() }));
    }
    // Deflate level 9 takes seconds per large module, and this script runs once per feature set of the package
    // (a `cargo xtask test` runs it three times with the same PTX): the last compression of each module is kept
    // beside the shared kernel build and reused when the PTX is byte-for-byte the same.
    let deflate_cache = out_dir.ancestors().nth(4).unwrap_or(&out_dir).join("zkgpu-ptx").join("deflated");
    for (name, text) in embedded {
        // An absent module stays an empty file (the host reads that as "not in this build").
        let deflated = if text.is_empty() { Vec::new() } else { deflate_cached(&deflate_cache, &name, &text) };
        std::fs::write(out_dir.join(format!("{name}.ptx.deflate")), deflated)
            .unwrap_or_else(|e| panic!("writing the compressed PTX: {e}"));
    }
    embed_sass(&out_dir, &family_modules);
    println!("cargo:rustc-env=ZKGPU_PTX_SOURCE={}", if built { "built" } else { "committed" });
}

/// Writes `prebuilt_sass.rs` into OUT_DIR: the table of SASS embedded for the architectures `ZKGPU_SASS` names
/// (e.g. `sm_80,sm_86,sm_89,sm_90`; unset or empty: none), each family module assembled by ptxas
/// (`ZKGPU_PTXAS`, else `ptxas` on PATH; `cargo xtask` fetches one into `.cache/ptxas/`). A device whose
/// compute capability is listed loads these and never JIT-compiles. Assembling all families takes minutes
/// per architecture, so results are kept in the shared kernel-build folder by (PTX text, target, ptxas
/// version) and reused.
fn embed_sass(out_dir: &Path, family_modules: &[(String, &str, PathBuf)]) {
    let spec = env::var("ZKGPU_SASS").unwrap_or_default();
    let targets = modules::sass_targets(&spec).unwrap_or_else(|e| panic!("{e}"));
    let mut table = String::from("&[\n");
    if !targets.is_empty() {
        let ptxas = env::var_os("ZKGPU_PTXAS").map_or_else(|| PathBuf::from("ptxas"), PathBuf::from);
        let version = Command::new(&ptxas)
            .arg("--version")
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).lines().last().unwrap_or("").to_string())
            .unwrap_or_else(|| {
                panic!("ZKGPU_SASS={spec} needs ptxas: {} does not run (set ZKGPU_PTXAS)", ptxas.display())
            });
        let cache = out_dir.ancestors().nth(4).unwrap_or(out_dir).join("zkgpu-ptx").join("sass");
        std::fs::create_dir_all(&cache).unwrap_or_else(|e| panic!("{}: {e}", cache.display()));
        let mut jobs = Vec::new();
        for target in targets {
            let (major, minor) = target.compute_capability;
            for (stem, _, ptx) in family_modules.iter().filter(|(_, arch, _)| *arch == target.ptx_arch) {
                let text = std::fs::read(ptx).unwrap_or_else(|e| panic!("{}: {e}", ptx.display()));
                let key = modules::fingerprint(
                    &[text.as_slice(), format!("sm_{major}{minor} {version}").as_bytes()].concat(),
                );
                let cubin = cache.join(format!("{stem}-sm_{major}{minor}-{key:016x}.cubin"));
                jobs.push((stem.clone(), (major, minor), ptx.clone(), cubin));
            }
        }
        assemble(&ptxas, &jobs);
        for (stem, (major, minor), _, cubin) in &jobs {
            let image = std::fs::read(cubin).unwrap_or_else(|e| panic!("{}: {e}", cubin.display()));
            let deflated = out_dir.join(format!("{stem}.sm_{major}{minor}.cubin.deflate"));
            std::fs::write(&deflated, miniz_oxide::deflate::compress_to_vec(&image, 9))
                .unwrap_or_else(|e| panic!("writing OUT_DIR: {e}"));
            table.push_str(&format!(
                "    PrebuiltSass {{ stem: {stem:?}, compute_capability: ({major}, {minor}), deflated: include_bytes!({:?}) }},\n",
                deflated.display().to_string()
            ));
        }
    }
    table.push_str("]\n");
    std::fs::write(out_dir.join("prebuilt_sass.rs"), table).unwrap_or_else(|e| panic!("writing OUT_DIR: {e}"));
}

/// Runs ptxas for every job whose cubin is not cached yet, as many at a time as the machine has cores. A cubin
/// is written under a temporary name and renamed, so an interrupted build leaves no partial cache entry.
fn assemble(ptxas: &Path, jobs: &[(String, (u32, u32), PathBuf, PathBuf)]) {
    let parallel = std::thread::available_parallelism().map_or(1, usize::from);
    let mut pending: Vec<_> = jobs.iter().filter(|(.., cubin)| !cubin.exists()).collect();
    let mut running: Vec<(std::process::Child, &PathBuf, PathBuf)> = Vec::new();
    while !pending.is_empty() || !running.is_empty() {
        while running.len() < parallel {
            let Some((stem, (major, minor), ptx, cubin)) = pending.pop() else { break };
            let tmp = cubin.with_extension(format!("tmp{}", std::process::id()));
            let child = Command::new(ptxas)
                .arg(format!("-arch=sm_{major}{minor}"))
                .arg(ptx)
                .arg("-o")
                .arg(&tmp)
                .spawn()
                .unwrap_or_else(|e| panic!("running ptxas for {stem}: {e}"));
            running.push((child, cubin, tmp));
        }
        let (mut child, cubin, tmp) = running.remove(0);
        let status = child.wait().unwrap_or_else(|e| panic!("waiting for ptxas: {e}"));
        if !status.success() {
            panic!("ptxas failed ({status}) assembling {}", cubin.display());
        }
        std::fs::rename(&tmp, cubin).unwrap_or_else(|e| panic!("{}: {e}", cubin.display()));
    }
}

/// `text` deflated at level 9, from `cache` when it holds the compression of exactly this text. An entry is
/// `<name>.ptx` (the text) and `<name>.ptx.deflate`; a hit needs the stored text equal to `text` byte for byte,
/// so it cannot be stale. A store removes the old text first and renames the new text into place last: an
/// interrupted store leaves no text, hence no hit. Failures to store are ignored (the result is still right).
fn deflate_cached(cache: &Path, name: &str, text: &[u8]) -> Vec<u8> {
    let (stored_text, stored_deflate) = (cache.join(format!("{name}.ptx")), cache.join(format!("{name}.ptx.deflate")));
    if std::fs::read(&stored_text).is_ok_and(|t| t == text) {
        if let Ok(deflated) = std::fs::read(&stored_deflate) {
            return deflated;
        }
    }
    let deflated = miniz_oxide::deflate::compress_to_vec(text, 9);
    let tmp = |path: &Path| path.with_extension(format!("tmp{}", std::process::id()));
    let _ = std::fs::create_dir_all(cache)
        .and_then(|()| std::fs::write(tmp(&stored_deflate), &deflated))
        .and_then(|()| std::fs::write(tmp(&stored_text), text))
        .and_then(|()| match std::fs::remove_file(&stored_text) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        })
        .and_then(|()| std::fs::rename(tmp(&stored_deflate), &stored_deflate))
        .and_then(|()| std::fs::rename(tmp(&stored_text), &stored_text));
    deflated
}

/// Is the pinned nightly installed, with rust-src (needed by -Zbuild-std)?
fn toolchain_available() -> Result<(), String> {
    let out =
        kernel_cargo().args(["rustc", "--print", "sysroot"]).output().map_err(|e| format!("rustup not found: {e}"))?;
    if !out.status.success() {
        return Err(format!("toolchain {KERNEL_TOOLCHAIN} not installed"));
    }
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let core = Path::new(&sysroot).join("lib/rustlib/src/rust/library/core");
    if !core.exists() {
        return Err(format!("{KERNEL_TOOLCHAIN} lacks the rust-src component"));
    }
    Ok(())
}

/// `rustup run <nightly> ...` with the outer build's toolchain variables removed.
fn kernel_cargo() -> Command {
    let mut cmd = Command::new("rustup");
    cmd.args(["run", KERNEL_TOOLCHAIN]);
    for var in [
        "RUSTC",
        "RUSTDOC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTUP_TOOLCHAIN",
        "CARGO",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

fn build_all(kernels: &Path, out_dir: &Path) -> Result<(), String> {
    // OUT_DIR = <target>/<profile>/build/<pkg>/out: share one kernel build across host profiles.
    // One directory per kernels source tree: two checkouts sharing a target directory must not overwrite each
    // other's `zkgpu_kernels.s` (the nested cargo would then call its own stale output fresh).
    let tree = {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        kernels.hash(&mut h);
        format!("{:016x}", h.finish())
    };
    let target_root = out_dir.ancestors().nth(4).unwrap_or(out_dir).join("zkgpu-ptx").join(tree);
    // The four builds are independent (own target directories): run them side by side.
    let mut builds = Vec::new();
    for (module, features) in [("zkgpu", None), ("zkgpu_test", Some("test-kernels"))] {
        for arch in ARCHES {
            let target_dir = target_root.join(format!("{module}-{arch}"));
            let mut cmd = kernel_cargo();
            cmd.arg("cargo").args(["rustc", "--quiet", "--lib", "--crate-type", "cdylib", "--profile", "ptx"]);
            for setting in PTX_PROFILE {
                cmd.args(["--config", setting]);
            }
            if let Some(features) = features {
                cmd.args(["--features", features]);
            }
            cmd.args(["--target", "nvptx64-nvidia-cuda", "-Zbuild-std=core"])
                .arg("--manifest-path")
                .arg(kernels.join("Cargo.toml"))
                .arg("--target-dir")
                .arg(&target_dir)
                .args(["--", "--emit=asm", "-C", "linker=/bin/true", "-C"])
                .arg(format!("target-cpu={arch}"));
            let child = cmd.spawn().map_err(|e| format!("running cargo: {e}"))?;
            builds.push((module, arch, target_dir, child));
        }
    }
    let mut failed = Vec::new();
    for (module, arch, target_dir, mut child) in builds {
        let status = child.wait().map_err(|e| format!("waiting for cargo: {e}"))?;
        if !status.success() {
            failed.push(format!("{module} for {arch} ({status})"));
            continue;
        }
        let asm = target_dir.join("nvptx64-nvidia-cuda/ptx/deps/zkgpu_kernels.s");
        let mut text = std::fs::read_to_string(&asm).map_err(|e| format!("{}: {e}", asm.display()))?;
        if module == "zkgpu" {
            text = apply_register_caps(&text).map_err(|e| format!("{module} for {arch}: {e}"))?;
        }
        std::fs::write(out_dir.join(format!("{module}_{arch}.ptx")), text)
            .map_err(|e| format!("writing OUT_DIR: {e}"))?;
    }
    if failed.is_empty() { Ok(()) } else { Err(format!("kernel build failed: {}", failed.join(", "))) }
}

/// Writes `.maxnreg N` after the parameter list of each kernel in `launch_bounds::MAX_REGISTERS` (rustc has
/// no `__launch_bounds__`). A listed kernel must appear exactly once, so a rename cannot drop its cap silently.
fn apply_register_caps(ptx: &str) -> Result<String, String> {
    let mut text = ptx.to_string();
    for &(kernel, registers) in launch_bounds::MAX_REGISTERS {
        let head = format!(".visible .entry {kernel}(");
        let start = match (text.find(&head), text.rfind(&head)) {
            (Some(first), Some(last)) if first == last => first,
            (None, _) => return Err(format!("register cap for {kernel}: no such kernel in the PTX")),
            _ => return Err(format!("register cap for {kernel}: the kernel appears more than once")),
        };
        let body = text[start..].find("\n{").ok_or_else(|| format!("register cap for {kernel}: no body"))? + start;
        text.insert_str(body + 1, &format!(".maxnreg {registers}\n"));
    }
    Ok(text)
}

/// Fails the build unless every kernel of `interface::kernels()` is in each architecture's production module
/// (the PTX chosen above, committed or built) exactly once with exactly its parameter list: a renamed kernel or
/// a changed signature breaks the build instead of a launch on a GPU that CI does not have.
fn check_interface(out_dir: &Path) {
    for arch in ARCHES {
        let ptx = out_dir.join(format!("zkgpu_{arch}.ptx"));
        let text = std::fs::read_to_string(&ptx).unwrap_or_else(|e| panic!("{}: {e}", ptx.display()));
        if let Err(problems) = interface::check_ptx(&text, &interface::kernels()) {
            panic!(
                "the kernel interface (kernels/src/interface.rs) does not match {}:\n{}",
                ptx.display(),
                problems.join("\n")
            );
        }
    }
}
