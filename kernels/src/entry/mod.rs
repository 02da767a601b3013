//! Kernel entry points (`extern "ptx-kernel"`, `#[unsafe(no_mangle)]`), one file per algorithm or purpose.
//! Only compiled for nvptx64. Every kernel documents its thread mapping, bounds and aliasing in `# Safety`.
//!
//! Two PTX modules are built from this crate (see build.rs): the **production** module (algorithms and
//! benchmarks, embedded for every user) and, with feature `test-kernels`, the **test** module (kernels that
//! exist only so tests can run single operations on the GPU; loaded lazily by the host).

// Production module.
#[cfg(not(feature = "test-kernels"))]
mod batch_add;
mod bench_inv;
mod bench_mul;
#[cfg(not(feature = "test-kernels"))]
mod msm;
#[cfg(not(feature = "test-kernels"))]
mod msm_sort;
#[cfg(not(feature = "test-kernels"))]
mod ntt;
#[cfg(not(feature = "test-kernels"))]
mod smoke;

// Test module.
#[cfg(feature = "test-kernels")]
mod curve_ops;
#[cfg(feature = "test-kernels")]
mod device_api;
#[cfg(feature = "test-kernels")]
mod field_ops;

/// A typed slice of the dynamic shared memory, or a trap when the launch gave too little (the host then gets a
/// launch error instead of a wrong result).
#[allow(dead_code)]
#[inline(always)]
pub(crate) fn shared_or_trap<T: Copy>(arena: &mut crate::device::SharedArena, len: u32) -> crate::device::SharedSlice<T> {
    match arena.alloc::<T>(len as usize) {
        Some(slice) => slice,
        // SAFETY: trap ends the kernel; nothing is written.
        None => unsafe { core::arch::nvptx::trap() },
    }
}
