//! The embedded PTX modules and the rule that picks one for a device.
//!
//! `build.rs` writes one PTX file per target architecture into `OUT_DIR` (built from `kernels/` with the
//! pinned nightly, or copied from the committed `kernels/ptx/`); both are embedded here. PTX is forward
//! compatible: the driver JIT-compiles sm_80 PTX for any later GPU, and sm_90 PTX for sm_90 and later.
//!
//! That JIT takes minutes for the production module on a cold driver cache. A folder of cubins assembled
//! from exactly the embedded PTX (`cargo xtask bundle` ships one) skips it: set [`CUBIN_DIR_ENV`]. Each file
//! is named by a fingerprint of the PTX text it was assembled from, so a stale cubin is never loaded; one
//! that is missing or does not load (another architecture) falls back to the PTX.

use std::ffi::CString;
use std::path::Path;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use crate::error::{Error, Result};
use crate::raw;

/// PTX for compute capability 9.0 and later (H100, H200, ...).
pub static PTX_SM90: PtxModule = PtxModule {
    stem: "zkgpu_sm_90",
    arch: "sm_90",
    deflated: include_bytes!(concat!(env!("OUT_DIR"), "/zkgpu_sm_90.ptx.deflate")),
};
/// PTX for compute capability 8.x (A100, A10, RTX 30xx, L4/L40 (8.9), ...).
pub static PTX_SM80: PtxModule = PtxModule {
    stem: "zkgpu_sm_80",
    arch: "sm_80",
    deflated: include_bytes!(concat!(env!("OUT_DIR"), "/zkgpu_sm_80.ptx.deflate")),
};
/// The test module for sm_90: single-operation kernels (`arith_*`, `device_api_*`) used only by the test
/// suite, loaded on first use. Empty when the crate was built from the committed PTX (no kernel toolchain).
pub static TEST_PTX_SM90: PtxModule = PtxModule {
    stem: "zkgpu_test_sm_90",
    arch: "sm_90",
    deflated: include_bytes!(concat!(env!("OUT_DIR"), "/zkgpu_test_sm_90.ptx.deflate")),
};
/// The test module for sm_80 (see [`TEST_PTX_SM90`]).
pub static TEST_PTX_SM80: PtxModule = PtxModule {
    stem: "zkgpu_test_sm_80",
    arch: "sm_80",
    deflated: include_bytes!(concat!(env!("OUT_DIR"), "/zkgpu_test_sm_80.ptx.deflate")),
};

/// One embedded PTX module. The text is stored deflate-compressed (build.rs): PTX of fully inlined field
/// arithmetic is large (megabytes) and compresses about 20x, which keeps every binary that links zkgpu small.
#[derive(Debug, PartialEq, Eq)]
pub struct PtxModule {
    /// File stem, e.g. "zkgpu_sm_90" (names its cubin, see [`cubin_file_name`]).
    pub stem: &'static str,
    /// The architecture it was compiled for, e.g. "sm_90".
    pub arch: &'static str,
    /// The PTX text, deflate-compressed.
    deflated: &'static [u8],
}

impl PtxModule {
    /// True for a module this build does not carry (the test module of a build from the committed PTX).
    pub fn is_empty(&self) -> bool {
        self.deflated.is_empty()
    }

    /// The PTX text (decompressed on each call; a few milliseconds).
    pub fn text(&self) -> Result<String> {
        let bytes = miniz_oxide::inflate::decompress_to_vec(self.deflated).map_err(|e| Error::ModuleLoad {
            arch: self.arch,
            source: cudarc::driver::DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_PTX),
            log: format!("\nthe embedded PTX does not decompress: {e:?}"),
        })?;
        String::from_utf8(bytes).map_err(|_| Error::ModuleLoad {
            arch: self.arch,
            source: cudarc::driver::DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_PTX),
            log: "\nthe embedded PTX is not UTF-8".to_string(),
        })
    }
}

/// Chooses the embedded PTX for a compute capability: >= 9.0 -> sm_90, 8.x -> sm_80, anything older is
/// unsupported (the kernels use instructions and limits of sm_80+).
pub fn select_ptx(major: u32, minor: u32) -> Result<&'static PtxModule> {
    match major {
        9.. => Ok(&PTX_SM90),
        8 => Ok(&PTX_SM80),
        _ => Err(Error::UnsupportedArch { major, minor }),
    }
}

/// The test module matching a production module chosen by [`select_ptx`].
pub fn test_module_for(production: &PtxModule) -> &'static PtxModule {
    if production.arch == "sm_80" { &TEST_PTX_SM80 } else { &TEST_PTX_SM90 }
}

/// Environment variable naming a folder of cubins for the embedded modules (see the module docs).
pub const CUBIN_DIR_ENV: &str = "ZKGPU_CUBIN_DIR";

/// FNV-1a (64-bit) of a module's PTX text: the fingerprint in its cubin's file name. `cargo xtask bundle`
/// computes the same function (xtask/src/bundle.rs) when it names the cubins it assembles.
pub fn ptx_fingerprint(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The cubin file for `module` whose PTX is `text`: `<stem>-<fingerprint as 16 hex digits>.cubin`.
pub fn cubin_file_name(module: &PtxModule, text: &str) -> String {
    format!("{}-{:016x}.cubin", module.stem, ptx_fingerprint(text))
}

/// How [`load`] got a module onto the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleImage {
    /// The embedded PTX, JIT-compiled by the driver (or taken from its cache).
    Ptx,
    /// A cubin from the folder in [`CUBIN_DIR_ENV`], assembled from exactly the embedded PTX.
    Cubin,
}

/// Loads `module` into `ctx`: its cubin from `$ZKGPU_CUBIN_DIR` when one matches the embedded PTX and loads,
/// else the PTX (the driver JIT-compiles it for the device). On failure the error carries the JIT
/// compiler's log.
pub fn load(ctx: &Arc<CudaContext>, module: &PtxModule) -> Result<(Arc<CudaModule>, ModuleImage)> {
    let ptx = module.text()?;
    let span =
        tracing::info_span!("zkgpu.module_load", ordinal = ctx.ordinal(), arch = module.arch, ptx_bytes = ptx.len());
    let _entered = span.enter();
    if let Some(dir) = std::env::var_os(CUBIN_DIR_ENV) {
        let path = Path::new(&dir).join(cubin_file_name(module, &ptx));
        match std::fs::read(&path) {
            Ok(cubin) => match ctx.load_module(Ptx::from_binary(cubin)) {
                Ok(loaded) => {
                    tracing::debug!(path = %path.display(), "cubin loaded");
                    return Ok((loaded, ModuleImage::Cubin));
                }
                Err(e) => tracing::warn!(path = %path.display(), %e, "cubin did not load; using the PTX"),
            },
            Err(e) => tracing::debug!(path = %path.display(), %e, "no cubin for this PTX; using the PTX"),
        }
    }
    // cudarc turns the PTX into a C string and unwraps: refuse interior NULs here instead of panicking there.
    let c_ptx = CString::new(ptx.as_str()).map_err(|_| Error::ModuleLoad {
        arch: module.arch,
        source: cudarc::driver::DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_PTX),
        log: "\nthe embedded PTX contains a NUL byte".to_string(),
    })?;
    let started = std::time::Instant::now();
    match ctx.load_module(Ptx::from_src(ptx)) {
        Ok(loaded) => {
            tracing::debug!(elapsed_ms = started.elapsed().as_secs_f64() * 1e3, "PTX module loaded");
            Ok((loaded, ModuleImage::Ptx))
        }
        Err(source) => {
            let log = raw::jit_error_log(&c_ptx);
            tracing::error!(%source, %log, "PTX module failed to load");
            Err(Error::ModuleLoad { arch: module.arch, source, log })
        }
    }
}
