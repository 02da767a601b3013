//! The GPU test harness: open the device, and run the one-thread-per-element test kernels
//! (`kernel(a, b, out, n)` / `kernel(a, out, n)`) on host slices.
//!
//! Tests only: failures panic with a message that says what went wrong (a GPU test must fail, not pass
//! silently, where there is no GPU).
use cudarc::driver::PushKernelArg;
use zkgpu::{DeviceSafe, Gpu};

/// Threads per block for the element-wise test kernels.
pub const BLOCK: u32 = 256;

/// GPU 0. Panics with a clear message when there is no driver or no device.
pub fn gpu() -> Gpu {
    match Gpu::new(0) {
        Ok(gpu) => gpu,
        Err(e) => panic!("this test needs a CUDA GPU and could not open GPU 0: {e}"),
    }
}

/// The element count as the kernels' `u32`.
fn count_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or_else(|_| panic!("{n} elements do not fit the kernels' u32 count"))
}

/// Uploads `a` and `b`, launches `kernel(a, b, out, n)` with one thread per element (blocks of [`BLOCK`],
/// the last one partly idle when n is not a multiple), and downloads `out` (n values of U).
/// n = 0 returns an empty vector without launching.
pub fn run_binary<T: DeviceSafe, U: DeviceSafe>(gpu: &Gpu, kernel: &str, a: &[T], b: &[T]) -> Vec<U> {
    assert_eq!(a.len(), b.len(), "run_binary({kernel}): inputs differ in length");
    let n = a.len();
    if n == 0 {
        return Vec::new();
    }
    let f = gpu.function(kernel).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    let da = gpu.upload(a).unwrap_or_else(|e| panic!("{kernel}: upload a: {e}"));
    let db = gpu.upload(b).unwrap_or_else(|e| panic!("{kernel}: upload b: {e}"));
    let mut out = gpu.alloc_zeroed::<U>(n).unwrap_or_else(|e| panic!("{kernel}: alloc out: {e}"));
    let n32 = count_u32(n);
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(da.raw()).arg(db.raw()).arg(out.raw_mut()).arg(&n32);
    // SAFETY: the test kernels read n values from each input and write n values to out; every buffer
    // holds n values of the kernel's types (T and U are their blstrs twins), and out aliases neither input.
    unsafe { launch.launch(zkgpu::launch_config_1d(n, BLOCK)) }.unwrap_or_else(|e| panic!("{kernel}: launch: {e}"));
    gpu.download(&out).unwrap_or_else(|e| panic!("{kernel}: download: {e}"))
}

/// Uploads `a`, launches `kernel(a, out, n)` with one thread per element, downloads `out`.
/// n = 0 returns an empty vector without launching.
pub fn run_unary<T: DeviceSafe, U: DeviceSafe>(gpu: &Gpu, kernel: &str, a: &[T]) -> Vec<U> {
    let n = a.len();
    if n == 0 {
        return Vec::new();
    }
    let f = gpu.function(kernel).unwrap_or_else(|e| panic!("{kernel}: {e}"));
    let da = gpu.upload(a).unwrap_or_else(|e| panic!("{kernel}: upload a: {e}"));
    let mut out = gpu.alloc_zeroed::<U>(n).unwrap_or_else(|e| panic!("{kernel}: alloc out: {e}"));
    let n32 = count_u32(n);
    let mut launch = gpu.stream().launch_builder(&f);
    launch.arg(da.raw()).arg(out.raw_mut()).arg(&n32);
    // SAFETY: as in run_binary, with one input.
    unsafe { launch.launch(zkgpu::launch_config_1d(n, BLOCK)) }.unwrap_or_else(|e| panic!("{kernel}: launch: {e}"));
    gpu.download(&out).unwrap_or_else(|e| panic!("{kernel}: download: {e}"))
}
