//! The thin layer under the safe API: the few driver calls cudarc's safe API does not offer, and the guard
//! that keeps us from calling cudarc before the driver is known to be present.
//!
//! cudarc loads `libcuda` lazily and **panics** when it is missing (or when a symbol is missing), so every
//! entry point of the safe API calls [`ensure_driver`] first.

use std::ffi::{CStr, c_void};
use std::sync::OnceLock;

use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DriverError, sys};

use crate::error::{Error, Result};

/// Oldest driver accepted: the PTX rustc emits is `.version 7.8`, which CUDA 12.0 drivers load, and the
/// cudarc bindings we use call no entry point newer than that.
pub const MIN_DRIVER_VERSION: i32 = 12000;

/// Whether `libcuda` can be loaded. Probed once per process.
pub fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: `is_culib_present` only tries to dlopen the library names cudarc knows; it has no
    // preconditions and calls no CUDA function.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// `Ok` when the driver is loadable, initialised and recent enough; the typed error otherwise.
/// Must precede every other call into cudarc.
pub fn ensure_driver() -> Result<()> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    let version = driver_version()?;
    if version < MIN_DRIVER_VERSION {
        return Err(Error::DriverTooOld { found: version, required: MIN_DRIVER_VERSION });
    }
    match cudarc::driver::result::init() {
        Ok(()) => Ok(()),
        // cuInit reports "no device" as an error; callers want a count of zero or NoDevice.
        Err(DriverError(sys::CUresult::CUDA_ERROR_NO_DEVICE)) => Err(Error::NoDevice),
        Err(e) => Err(Error::from(e)),
    }
}

/// `cuDriverGetVersion`: e.g. 13000 for a CUDA 13.0 driver. Callable before `cuInit`; the caller has
/// checked that the driver is present.
pub(crate) fn driver_version() -> Result<i32> {
    let mut version: i32 = 0;
    // SAFETY: the library is present (checked by the caller); the out-pointer is valid for one i32.
    unsafe { sys::cuDriverGetVersion(&mut version) }.result()?;
    Ok(version)
}

/// Driver version from which `cuFuncLoad` exists (CUDA 12.4).
const FUNC_LOAD_VERSION: i32 = 12040;

/// `cuFuncLoad`: loads `function`'s code onto its device now rather than at its first launch (the driver's
/// lazy loading). A no-op on drivers older than 12.4, which lack the call (cudarc would panic on the missing
/// symbol); the driver was checked by [`ensure_driver`] before any function existed.
pub(crate) fn load_function(function: &cudarc::driver::CudaFunction) -> Result<()> {
    if driver_version()? < FUNC_LOAD_VERSION {
        return Ok(());
    }
    // SAFETY: the handle comes from a loaded module that `function` keeps alive; the symbol exists on this
    // driver (version checked above).
    unsafe { sys::cuFuncLoad(function.cu_function()) }.result()?;
    Ok(())
}

/// The driver version as "major.minor" (e.g. "13.0"), with the driver's release where Linux shows it.
/// `Err(NoDriver)` without libcuda.
pub fn driver_version_string() -> Result<String> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    let v = driver_version()?;
    let cuda = format!("{}.{}", v / 1000, (v % 1000) / 10);
    // The driver's own release number (e.g. 580.159.04) is not in the CUDA driver API; Linux shows it here.
    let release = std::fs::read_to_string("/proc/driver/nvidia/version").ok().and_then(|text| {
        let first = text.lines().next()?.to_string();
        first
            .split_whitespace()
            .find(|w| w.chars().next().is_some_and(|c| c.is_ascii_digit()) && w.contains('.'))
            .map(str::to_string)
    });
    Ok(match release {
        Some(release) => format!("{release} (CUDA {cuda})"),
        None => format!("CUDA {cuda}"),
    })
}

/// Number of CUDA devices, zero when the driver sees none.
pub fn device_count() -> Result<usize> {
    match ensure_driver() {
        Ok(()) => {}
        Err(Error::NoDevice) => return Ok(0),
        Err(e) => return Err(e),
    }
    match CudaContext::device_count() {
        Ok(n) => Ok(usize::try_from(n).unwrap_or(0)),
        Err(DriverError(sys::CUresult::CUDA_ERROR_NO_DEVICE)) => Ok(0),
        Err(e) => Err(Error::from(e)),
    }
}

/// Loads `ptx` once more through `cuModuleLoadDataEx` with an error-log buffer, to recover the JIT
/// compiler's message after `CudaContext::load_module` failed (that call does not ask for the log).
/// Returns "\nJIT log:\n" followed by the log text, or an empty string (also without libcuda). The context
/// must be current on this thread.
pub fn jit_error_log(ptx: &CStr) -> String {
    if !driver_present() {
        return String::new();
    }
    const LOG_BYTES: usize = 16 * 1024;
    let mut log = vec![0u8; LOG_BYTES];
    let mut options =
        [sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER, sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES];
    // The driver takes option values as pointer-sized words: a pointer for the buffer, the size cast to one.
    let mut values: [*mut c_void; 2] = [log.as_mut_ptr().cast(), LOG_BYTES as *mut c_void];
    let mut module: sys::CUmodule = std::ptr::null_mut();
    // SAFETY: `ptx` is NUL-terminated; `options`/`values` have two entries each and the log buffer is
    // LOG_BYTES long, as declared. A module that does load is unloaded at once.
    let result = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            ptx.as_ptr().cast(),
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if result == sys::CUresult::CUDA_SUCCESS && !module.is_null() {
        // SAFETY: `module` was just loaded by us and is used by nothing else.
        let _ = unsafe { sys::cuModuleUnload(module) };
        return String::new();
    }
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let text = String::from_utf8_lossy(&log[..end]).trim().to_string();
    if text.is_empty() { text } else { format!("\nJIT log:\n{text}") }
}

/// [`copy_dtoh_async`], ordered as a write to `src` would be: after the last read *and* write of `src` (on any
/// stream), and recorded as `src`'s last write, so every later use of `src` waits for the copy. For copies on
/// a second stream (see `Gpu::download_async`).
///
/// # Safety
/// As for [`copy_dtoh_async`].
pub unsafe fn copy_dtoh_async_exclusive(
    stream: &CudaStream,
    src: &mut CudaSlice<u8>,
    dst: *mut u8,
    bytes: usize,
) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind_to_thread()?;
    // `_done` records the copy on `stream` as `src`'s last write when dropped, after the copy is enqueued.
    let (src_ptr, _done) = src.device_ptr_mut(stream);
    // SAFETY: forwarded from the caller (dst valid for `bytes`); `src` holds at least `bytes` bytes.
    unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), src_ptr, bytes, stream.cu_stream()) }.result()?;
    Ok(())
}

/// Enqueues a device-to-host copy of `bytes` bytes from `src` into `dst` on `stream`, ordered after the
/// last write to `src` (cudarc's event tracking). Does not wait for it.
///
/// # Safety
/// `dst` must be valid for `bytes` writes and stay valid, unread and unwritten by the host until `stream`
/// has passed this copy (e.g. after `stream.synchronize()`). `bytes <= src.len()`.
pub unsafe fn copy_dtoh_async(stream: &CudaStream, src: &CudaSlice<u8>, dst: *mut u8, bytes: usize) -> Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    stream.context().bind_to_thread()?;
    // `_read_done` records the read of `src` on `stream` when dropped, after the copy is enqueued.
    let (src_ptr, _read_done) = src.device_ptr(stream);
    // SAFETY: forwarded from the caller (dst valid for `bytes`); `src` holds at least `bytes` bytes.
    unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), src_ptr, bytes, stream.cu_stream()) }.result()?;
    Ok(())
}
