//! CPU tests of the host library's error paths and pure logic. They run everywhere (no `#[ignore]`).
//!
//! On a machine without the NVIDIA driver (CI, the build machine) they check that every entry point returns
//! `Error::NoDriver` instead of panicking inside cudarc; on a machine with a driver they check that the same
//! calls succeed or fail with the GPU-side typed errors. Either way each branch asserts.

mod common;

use zkgpu::module::select_ptx;
use zkgpu::{Error, Gpu, launch_config_1d, try_launch_config_1d};

fn driver_present() -> bool {
    let present = zkgpu::raw::driver_present();
    println!("libcuda present: {present}");
    present
}

#[test]
fn no_driver_is_a_typed_error_not_a_panic() {
    // catch_unwind turns a panic inside cudarc into a test failure with a clear message instead of an abort
    // of the whole test binary.
    let count = std::panic::catch_unwind(Gpu::count).expect("Gpu::count panicked");
    let open = std::panic::catch_unwind(|| Gpu::new(0).map(|_| ())).expect("Gpu::new panicked");
    let all = std::panic::catch_unwind(|| Gpu::all().map(|gpus| gpus.len())).expect("Gpu::all panicked");
    if driver_present() {
        let count = count.expect("with a driver, Gpu::count must succeed");
        match (count, open) {
            (0, Err(Error::NoDevice)) => {}
            (0, other) => panic!("no devices but Gpu::new(0) gave {other:?}"),
            (_, Ok(())) => {}
            (_, Err(e)) => panic!("{count} devices but Gpu::new(0) failed: {e}"),
        }
        if count > 0 {
            assert_eq!(all.expect("Gpu::all"), count);
        }
    } else {
        assert!(matches!(count, Err(Error::NoDriver)), "Gpu::count without a driver gave {count:?}");
        assert!(matches!(open, Err(Error::NoDriver)), "Gpu::new(0) without a driver gave {open:?}");
        assert!(matches!(all, Err(Error::NoDriver)), "Gpu::all without a driver gave {all:?}");
        // Asking twice still answers (the driver probe is cached, nothing half-initialised).
        assert!(matches!(Gpu::new(7), Err(Error::NoDriver)));
    }
}

#[test]
fn no_driver_error_message_says_what_to_install() {
    let msg = Error::NoDriver.to_string();
    assert!(msg.contains("driver"), "{msg}");
    let msg = Error::DeviceIndex { ordinal: 999, count: 2 }.to_string();
    assert!(msg.contains("999") && msg.contains('2'), "{msg}");
    let msg = Error::UnsupportedArch { major: 7, minor: 5 }.to_string();
    assert!(msg.contains("7.5"), "{msg}");
    let msg = Error::OutOfMemory { requested: 1 << 40, free: 10, total: 20 }.to_string();
    assert!(msg.contains(&(1u64 << 40).to_string()), "{msg}");
    let msg = Error::MissingKernel("nope".into()).to_string();
    assert!(msg.contains("nope"), "{msg}");
}

#[test]
fn ptx_is_chosen_by_compute_capability() {
    for (major, minor, arch) in
        [(9, 0, "sm_90"), (10, 0, "sm_90"), (12, 1, "sm_90"), (8, 0, "sm_80"), (8, 6, "sm_80"), (8, 9, "sm_80")]
    {
        if !zkgpu::module::EMBEDDED_ARCHES.split(',').any(|a| a == arch) {
            // A build that left this architecture out (ZKGPU_EMBED_ARCHES) refuses such devices.
            assert!(matches!(select_ptx(major, minor), Err(Error::UnsupportedArch { .. })), "{major}.{minor}");
            continue;
        }
        let chosen = select_ptx(major, minor).unwrap_or_else(|e| panic!("{major}.{minor}: {e}"));
        assert_eq!(chosen.arch, arch, "compute capability {major}.{minor}");
        for module in &chosen.families {
            assert_eq!(module.arch, arch);
            let text = module.text().unwrap();
            assert!(text.contains(&format!(".target {arch}")), "{} lacks its .target line", module.stem);
        }
    }
    for (major, minor) in [(7, 5), (7, 0), (6, 1), (0, 0)] {
        match select_ptx(major, minor) {
            Err(Error::UnsupportedArch { major: m, minor: n }) => assert_eq!((m, n), (major, minor)),
            other => panic!("{major}.{minor} should be unsupported, got {other:?}"),
        }
    }
}

/// Cubins are looked up by a fingerprint of the exact PTX text (FNV-1a 64, checked on its published vectors),
/// so a changed module never picks up an old cubin.
#[test]
fn cubin_names_follow_the_ptx_text() {
    use zkgpu::module::{Family, cubin_file_name, ptx_fingerprint};
    assert_eq!(ptx_fingerprint(""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(ptx_fingerprint("a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(ptx_fingerprint("foobar"), 0x8594_4171_f739_67e8);
    let ntt = zkgpu::SM90.family(Family::Ntt);
    let text = ntt.text().unwrap();
    let name = cubin_file_name(ntt, &text);
    assert_eq!(name, format!("zkgpu_sm_90_ntt-{:016x}.cubin", ptx_fingerprint(&text)));
    assert_ne!(name, cubin_file_name(ntt, &format!("{text}\n")), "one more byte, another cubin");
    assert!(cubin_file_name(zkgpu::SM80.family(Family::Ntt), &text).starts_with("zkgpu_sm_80_ntt-"));
}

/// The embedded modules of each architecture: one per family, in `Family::ALL` order, each holding exactly
/// its family's kernels (the smoke kernel in the bench module), all loadable by a CUDA 13.0 driver.
#[test]
fn embedded_ptx_holds_the_kernels_and_says_where_it_came_from() {
    use zkgpu::module::Family;
    assert!(zkgpu::PTX_SOURCE == "built" || zkgpu::PTX_SOURCE == "committed", "PTX_SOURCE = {}", zkgpu::PTX_SOURCE);
    println!("PTX source: {}", zkgpu::PTX_SOURCE);
    for arch in common::embedded_arches() {
        for (module, family) in arch.families.iter().zip(Family::ALL) {
            assert_eq!(module.family, Some(family), "{}", module.stem);
            assert_eq!(module.stem, format!("zkgpu_{}_{}", arch.arch, family.stem()));
            let ptx = module.text().unwrap();
            let entries = zkgpu_kernels::interface::ptx_entries(&ptx);
            assert!(!entries.is_empty(), "{} holds no kernel", module.stem);
            for (name, _) in entries {
                assert_eq!(Family::of(name), Some(family), "{name} in {}", module.stem);
            }
            assert!(!ptx.as_bytes().contains(&0), "PTX must not contain NUL bytes");
            // The H200's driver (CUDA 13.0) loads PTX ISA <= 9.0.
            let version = ptx.lines().find_map(|l| l.trim().strip_prefix(".version ")).expect("a .version line");
            let (major, minor) = version.split_once('.').expect("x.y");
            let (major, minor): (u32, u32) = (major.parse().unwrap(), minor.trim().parse().unwrap());
            assert!((major, minor) <= (9, 0), "PTX ISA {version} is newer than a CUDA 13.0 driver loads");
        }
        let bench = arch.family(Family::Bench).text().unwrap();
        assert!(bench.contains(".entry smoke_add_u32("), "smoke kernel missing from the bench module");
        for kernel in zkgpu_kernels::interface::kernels() {
            let family = kernel.family().expect("a production family");
            let ptx = arch.family(family).text().unwrap();
            assert!(zkgpu_kernels::interface::check_ptx(&ptx, &[kernel]).is_ok(), "{} not in its module", kernel.name);
        }
    }
}

/// SASS embedded by a `ZKGPU_SASS` build: each entry belongs to a module the host picks for its compute
/// capability and decompresses to an ELF image (cubin). A build without `ZKGPU_SASS` embeds none.
#[test]
fn embedded_sass_matches_its_modules() {
    println!("{} embedded SASS images", zkgpu::module::PREBUILT_SASS.len());
    for sass in zkgpu::module::PREBUILT_SASS {
        let (major, minor) = sass.compute_capability;
        let arch = select_ptx(major, minor).unwrap_or_else(|e| panic!("{}: {e}", sass.stem));
        assert!(arch.families.iter().any(|m| m.stem == sass.stem), "{} is not a module of {}", sass.stem, arch.arch);
        let image = sass.image().unwrap();
        assert!(image.starts_with(b"\x7fELF"), "{} for {major}.{minor} is not an ELF image", sass.stem);
    }
}

/// Each register cap of `zkgpu_kernels::launch_bounds` is in its family's embedded module, right after its
/// kernel's parameter list, and only there (build.rs writes them; rustc has no launch bounds).
#[test]
fn embedded_ptx_carries_the_register_caps() {
    use zkgpu::module::Family;
    assert!(!zkgpu_kernels::launch_bounds::MAX_REGISTERS.is_empty());
    for arch in common::embedded_arches() {
        let mut caps = 0;
        for &(kernel, registers) in zkgpu_kernels::launch_bounds::MAX_REGISTERS {
            let family = Family::of(kernel).unwrap_or_else(|| panic!("{kernel} has no family"));
            let ptx = arch.family(family).text().unwrap();
            let head = format!(".visible .entry {kernel}(");
            let start = ptx.find(&head).unwrap_or_else(|| panic!("{kernel} missing from the embedded PTX"));
            let body = start + ptx[start..].find("\n{").expect("a kernel body");
            let params_end = ptx[..body].rfind(')').expect("a parameter list");
            assert_eq!(ptx[params_end + 1..body].trim(), format!(".maxnreg {registers}"), "{kernel}'s cap");
        }
        for module in &arch.families {
            caps += module.text().unwrap().lines().filter(|l| l.starts_with(".maxnreg")).count();
        }
        assert_eq!(caps, zkgpu_kernels::launch_bounds::MAX_REGISTERS.len(), "a .maxnreg nobody listed");
    }
}

#[test]
fn launch_config_1d_covers_every_element() {
    for (n, block, grid) in
        [(1, 256, 1), (255, 256, 1), (256, 256, 1), (257, 256, 2), (1 << 20, 256, 4096), (1000, 1, 1000)]
    {
        let cfg = launch_config_1d(n, block);
        assert_eq!(cfg.grid_dim, (grid, 1, 1), "n = {n}, block = {block}");
        assert_eq!(cfg.block_dim, (block, 1, 1));
        assert_eq!(cfg.shared_mem_bytes, 0);
        assert!(cfg.grid_dim.0 as usize * block as usize >= n, "too few threads for n = {n}");
        assert!((cfg.grid_dim.0 as usize - 1) * (block as usize) < n, "a whole idle block for n = {n}");
    }
    // n = 0: an empty grid the caller must not launch.
    assert_eq!(launch_config_1d(0, 256).grid_dim.0, 0);
    // Never panics on nonsense: block 0 is clamped to 1, huge blocks to 1024, huge n saturates.
    assert_eq!(launch_config_1d(10, 0).block_dim.0, 1);
    assert_eq!(launch_config_1d(10, 4096).block_dim.0, 1024);
    assert_eq!(launch_config_1d(usize::MAX, 1).grid_dim.0, u32::MAX);
}

#[test]
fn try_launch_config_1d_rejects_bad_shapes() {
    assert!(matches!(try_launch_config_1d(10, 0), Err(Error::InvalidLaunch(_))));
    assert!(matches!(try_launch_config_1d(10, 1025), Err(Error::InvalidLaunch(_))));
    assert!(matches!(try_launch_config_1d(u32::MAX as usize + 1, 256), Err(Error::InvalidLaunch(_))));
    let cfg = try_launch_config_1d(u32::MAX as usize, 1024).expect("u32::MAX elements fit");
    assert_eq!(cfg.grid_dim.0, (u32::MAX as usize).div_ceil(1024) as u32);
    assert_eq!(try_launch_config_1d(0, 256).expect("n = 0 is allowed").grid_dim.0, 0);
}

#[test]
fn device_safe_types_have_the_blstrs_sizes() {
    // The byte sizes the kernels' types must match (layout equality itself is tests/layout.rs's job).
    fn size<T: zkgpu::DeviceSafe>() -> usize {
        std::mem::size_of::<T>()
    }
    assert_eq!(size::<blstrs::Scalar>(), 32);
    assert_eq!(size::<blstrs::Fp>(), 48);
    assert_eq!(size::<blstrs::Fp2>(), 96);
    assert_eq!(size::<blstrs::G1Affine>(), 96);
    assert_eq!(size::<blstrs::G2Affine>(), 192);
    assert_eq!(size::<blstrs::G1Projective>(), 144);
    assert_eq!(size::<blstrs::G2Projective>(), 288);
    assert_eq!(size::<[u32; 12]>(), 48);
}

/// The driver-level helpers a daemon may call before opening a GPU: typed answers without libcuda, never a
/// panic inside cudarc's loader.
#[test]
fn raw_helpers_answer_without_a_driver() {
    let version = std::panic::catch_unwind(zkgpu::raw::driver_version_string).expect("driver_version_string panicked");
    let count = std::panic::catch_unwind(zkgpu::raw::device_count).expect("device_count panicked");
    let ptx = c"not ptx";
    let log = std::panic::catch_unwind(|| zkgpu::raw::jit_error_log(ptx)).expect("jit_error_log panicked");
    if driver_present() {
        let version = version.expect("with a driver, the version string");
        assert!(version.contains("CUDA "), "version string {version:?}");
        count.expect("with a driver, the device count");
    } else {
        assert!(matches!(version, Err(Error::NoDriver)), "driver_version_string without a driver gave {version:?}");
        assert!(matches!(count, Err(Error::NoDriver)), "device_count without a driver gave {count:?}");
        assert_eq!(log, "", "jit_error_log without a driver");
    }
}
