//! The embedded PTX modules and the rule that picks one for a device.
//!
//! `build.rs` writes one PTX file per target architecture into `OUT_DIR` (built from `kernels/` with the
//! pinned nightly, or copied from the committed `kernels/ptx/`); both are embedded here. PTX is forward
//! compatible: the driver JIT-compiles sm_80 PTX for any later GPU, and sm_90 PTX for sm_90 and later.

use std::ffi::CString;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaModule};
use cudarc::nvrtc::Ptx;

use crate::error::{Error, Result};
use crate::raw;

/// PTX for compute capability 9.0 and later (H100, H200, ...).
pub static PTX_SM90: PtxModule =
    PtxModule { arch: "sm_90", deflated: include_bytes!(concat!(env!("OUT_DIR"), "/zkgpu_sm_90.ptx.deflate")) };
/// PTX for compute capability 8.x (A100, A10, RTX 30xx, L4/L40 (8.9), ...).
pub static PTX_SM80: PtxModule =
    PtxModule { arch: "sm_80", deflated: include_bytes!(concat!(env!("OUT_DIR"), "/zkgpu_sm_80.ptx.deflate")) };
/// The test module for sm_90: single-operation kernels (`arith_*`, `device_api_*`) used only by the test
/// suite, loaded on first use. Empty when the crate was built from the committed PTX (no kernel toolchain).
pub static TEST_PTX_SM90: PtxModule =
    PtxModule { arch: "sm_90", deflated: include_bytes!(concat!(env!("OUT_DIR"), "/zkgpu_test_sm_90.ptx.deflate")) };
/// The test module for sm_80 (see [`TEST_PTX_SM90`]).
pub static TEST_PTX_SM80: PtxModule =
    PtxModule { arch: "sm_80", deflated: include_bytes!(concat!(env!("OUT_DIR"), "/zkgpu_test_sm_80.ptx.deflate")) };

/// One embedded PTX module. The text is stored deflate-compressed (build.rs): PTX of fully inlined field
/// arithmetic is large (megabytes) and compresses about 20x, which keeps every binary that links zkgpu small.
#[derive(Debug, PartialEq, Eq)]
pub struct PtxModule {
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

/// Loads `module` into `ctx` (the driver JIT-compiles it for the device). On failure the error carries
/// the JIT compiler's log.
pub fn load(ctx: &Arc<CudaContext>, module: &PtxModule) -> Result<Arc<CudaModule>> {
    let ptx = module.text()?;
    let span = tracing::info_span!("zkgpu.module_load", ordinal = ctx.ordinal(), arch = module.arch, ptx_bytes = ptx.len());
    let _entered = span.enter();
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
            Ok(loaded)
        }
        Err(source) => {
            let log = raw::jit_error_log(&c_ptx);
            tracing::error!(%source, %log, "PTX module failed to load");
            Err(Error::ModuleLoad { arch: module.arch, source, log })
        }
    }
}
