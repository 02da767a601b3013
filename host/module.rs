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
pub const PTX_SM90: &str = include_str!(concat!(env!("OUT_DIR"), "/zkgpu_sm_90.ptx"));
/// PTX for compute capability 8.x (A100, A10, RTX 30xx, L4/L40 (8.9), ...).
pub const PTX_SM80: &str = include_str!(concat!(env!("OUT_DIR"), "/zkgpu_sm_80.ptx"));

/// One embedded PTX module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PtxModule {
    /// The architecture it was compiled for, e.g. "sm_90".
    pub arch: &'static str,
    /// The PTX text.
    pub ptx: &'static str,
}

/// Chooses the embedded PTX for a compute capability: >= 9.0 -> sm_90, 8.x -> sm_80, anything older is
/// unsupported (the kernels use instructions and limits of sm_80+).
pub fn select_ptx(major: u32, minor: u32) -> Result<PtxModule> {
    match major {
        9.. => Ok(PtxModule { arch: "sm_90", ptx: PTX_SM90 }),
        8 => Ok(PtxModule { arch: "sm_80", ptx: PTX_SM80 }),
        _ => Err(Error::UnsupportedArch { major, minor }),
    }
}

/// Loads `module` into `ctx` (the driver JIT-compiles it for the device). On failure the error carries
/// the JIT compiler's log.
pub fn load(ctx: &Arc<CudaContext>, module: PtxModule) -> Result<Arc<CudaModule>> {
    let span = tracing::info_span!("zkgpu.module_load", ordinal = ctx.ordinal(), arch = module.arch, ptx_bytes = module.ptx.len());
    let _entered = span.enter();
    // cudarc turns the PTX into a C string and unwraps: refuse interior NULs here instead of panicking there.
    let c_ptx = CString::new(module.ptx).map_err(|_| Error::ModuleLoad {
        arch: module.arch,
        source: cudarc::driver::DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_PTX),
        log: "\nthe embedded PTX contains a NUL byte".to_string(),
    })?;
    let started = std::time::Instant::now();
    match ctx.load_module(Ptx::from_src(module.ptx)) {
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
