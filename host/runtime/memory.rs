//! Typed device and pinned host memory.
//!
//! - [`DeviceSafe`]: the marker for types that cross the bus as raw bytes (blstrs's field and curve types go to
//!   the device unconverted).
//! - [`DeviceBuffer<T>`]: `len` values of `T` in device memory, a typed view of a cudarc `CudaSlice<u8>`.
//! - [`PinnedBuffer<T>`] (in [`crate::pinned`]): page-locked host memory used as an ordinary slice, for DMA
//!   transfers at PCIe line rate on the copy stream.
//!
//! Ordering between the two streams of a [`Gpu`] is kept by cudarc's per-buffer read/write events: a kernel
//! launched on the compute stream with a buffer the copy stream is filling waits for that copy.

use std::marker::PhantomData;
use std::mem::size_of;
use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, CudaView, CudaViewMut, DriverError, sys};

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::raw;

pub use crate::pinned::{PinnedBuffer, PinnedMode, PinnedPool}; // also reachable here, as the contract names them

/// Types copied to and from the device as raw bytes.
///
/// # Safety
/// Implement only for types that are `Copy`, contain no padding bytes (so every byte of a value is
/// initialised and may be copied out) and for which **every** bit pattern of `size_of::<T>()` bytes is a valid
/// value (what the device writes back is reinterpreted as `T` without checks). No pointers, references,
/// `bool`s, enums or niches.
pub unsafe trait DeviceSafe: Copy + Send + Sync + 'static {}

// SAFETY: primitive integers: no padding, every bit pattern valid.
unsafe impl DeviceSafe for u8 {}
// SAFETY: as above.
unsafe impl DeviceSafe for u32 {}
// SAFETY: as above.
unsafe impl DeviceSafe for u64 {}
// SAFETY: an array of a DeviceSafe type has no padding between elements (size is a multiple of alignment)
// and each element accepts every bit pattern, so the array does too.
unsafe impl<T: DeviceSafe, const N: usize> DeviceSafe for [T; N] {}

// The blstrs types are `#[repr(transparent)]` wrappers of blst's `#[repr(C)]` structs, whose only fields
// are arrays of `u64` limbs (`limb_t` is u64 on 64-bit targets) or structs of such arrays: no padding, and
// every bit pattern is a valid Rust value. A pattern that is not a reduced Montgomery residue or not a point
// on the curve is still a valid *value*: it is only mathematically meaningless, which is the kernels'
// responsibility, not a memory-safety question. The size assertions below pin the layout.
const _: () = {
    assert!(size_of::<blstrs::Scalar>() == 32);
    assert!(size_of::<blstrs::Fp>() == 48);
    assert!(size_of::<blstrs::Fp2>() == 96);
    assert!(size_of::<blstrs::G1Affine>() == 96);
    assert!(size_of::<blstrs::G2Affine>() == 192);
    assert!(size_of::<blstrs::G1Projective>() == 144);
    assert!(size_of::<blstrs::G2Projective>() == 288);
};
// SAFETY: repr(transparent) over blst_fr { l: [u64; 4] } (see above).
unsafe impl DeviceSafe for blstrs::Scalar {}
// SAFETY: repr(transparent) over blst_fp { l: [u64; 6] }.
unsafe impl DeviceSafe for blstrs::Fp {}
// SAFETY: repr(transparent) over blst_fp2 { fp: [blst_fp; 2] }.
unsafe impl DeviceSafe for blstrs::Fp2 {}
// SAFETY: repr(transparent) over blst_p1_affine { x: blst_fp, y: blst_fp }.
unsafe impl DeviceSafe for blstrs::G1Affine {}
// SAFETY: repr(transparent) over blst_p2_affine { x: blst_fp2, y: blst_fp2 }.
unsafe impl DeviceSafe for blstrs::G2Affine {}
// SAFETY: repr(transparent) over blst_p1 { x, y, z: blst_fp }.
unsafe impl DeviceSafe for blstrs::G1Projective {}
// SAFETY: repr(transparent) over blst_p2 { x, y, z: blst_fp2 }.
unsafe impl DeviceSafe for blstrs::G2Projective {}

/// The bytes of a slice of `T`.
pub(crate) fn as_bytes<T: DeviceSafe>(values: &[T]) -> &[u8] {
    // SAFETY: DeviceSafe types have no padding, so all `size_of_val` bytes are initialised; u8 has
    // alignment 1; the lifetime is tied to `values`.
    unsafe { std::slice::from_raw_parts(values.as_ptr().cast::<u8>(), size_of_val(values)) }
}

/// `len * size_of::<T>()`, or SizeOverflow.
pub(crate) fn byte_len<T>(len: usize) -> Result<usize> {
    len.checked_mul(size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| Error::SizeOverflow(format!("{len} values of {} bytes", size_of::<T>())))
}

// ---------------------------------------------------------------------------------------------------------
// Device memory

/// `len` values of `T` in device memory.
///
/// The storage is a `CudaSlice<u8>` (what kernels receive through [`DeviceBuffer::raw`]); it holds at least
/// `len * size_of::<T>()` bytes (one byte when `len == 0`, since the driver refuses empty allocations).
/// Freed on drop, stream-ordered after every use cudarc has tracked.
#[derive(Debug)]
pub struct DeviceBuffer<T: DeviceSafe> {
    pub(crate) bytes: CudaSlice<u8>,
    pub(crate) len: usize,
    _type: PhantomData<T>,
}

impl<T: DeviceSafe> DeviceBuffer<T> {
    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The ordinal of the GPU the buffer lives on.
    pub fn device(&self) -> usize {
        self.bytes.ordinal()
    }

    /// Size of the values in bytes (`len * size_of::<T>()`).
    pub fn byte_len(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The device bytes, for `LaunchArgs::arg` (the kernel reads them through it).
    pub fn raw(&self) -> &CudaSlice<u8> {
        &self.bytes
    }

    /// The device bytes, for `LaunchArgs::arg` when the kernel writes them.
    pub fn raw_mut(&mut self) -> &mut CudaSlice<u8> {
        &mut self.bytes
    }

    /// The device bytes of values `range` (e.g. one chunk of a batched kernel), for `LaunchArgs::arg`.
    /// `Err(LengthMismatch)` when the range is out of bounds or reversed.
    pub fn raw_range(&self, range: std::ops::Range<usize>) -> Result<CudaView<'_, u8>> {
        let bytes = self.byte_range(&range)?;
        self.bytes.try_slice(bytes).ok_or(Error::LengthMismatch {
            what: "raw_range",
            expected: self.len,
            actual: range.end,
        })
    }

    /// Mutable form of [`DeviceBuffer::raw_range`], for kernels that write the chunk.
    pub fn raw_range_mut(&mut self, range: std::ops::Range<usize>) -> Result<CudaViewMut<'_, u8>> {
        let bytes = self.byte_range(&range)?;
        let len = self.len;
        self.bytes.try_slice_mut(bytes).ok_or(Error::LengthMismatch {
            what: "raw_range_mut",
            expected: len,
            actual: range.end,
        })
    }

    fn byte_range(&self, range: &std::ops::Range<usize>) -> Result<std::ops::Range<usize>> {
        if range.start > range.end || range.end > self.len {
            return Err(Error::LengthMismatch { what: "device buffer range", expected: self.len, actual: range.end });
        }
        Ok(range.start * size_of::<T>()..range.end * size_of::<T>())
    }

    /// Allocates room for `len` values on `stream`, contents unspecified until the first write.
    fn alloc_on(gpu: &Gpu, stream: &Arc<CudaStream>, len: usize) -> Result<Self> {
        let requested = byte_len::<T>(len)?.max(1);
        // SAFETY: the contents are not exposed as `T` before every byte has been written by a copy or memset
        // (all constructors below write the whole buffer), and u8 accepts any byte anyway.
        match unsafe { stream.alloc::<u8>(requested) } {
            Ok(bytes) => Ok(DeviceBuffer { bytes, len, _type: PhantomData }),
            Err(DriverError(sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY)) => Err(gpu.out_of_memory(requested)),
            Err(e) => Err(Error::from(e)),
        }
    }
}

impl Gpu {
    /// The typed error for a failed allocation of `requested` bytes (the context stays usable: running out of
    /// memory is not a sticky CUDA error).
    pub(crate) fn out_of_memory(&self, requested: usize) -> Error {
        let (free, total) = self.ctx.mem_get_info().unwrap_or((0, self.info.total_memory));
        tracing::warn!(requested, free, total, "device allocation failed: out of memory");
        Error::OutOfMemory { requested, free, total }
    }

    /// `Err(WrongDevice)` unless `buf` lives on this GPU: every API that takes a caller's buffer checks this
    /// before it queues anything (`what` names the argument in the error).
    pub fn owns<T: DeviceSafe>(&self, what: &'static str, buf: &DeviceBuffer<T>) -> Result<()> {
        let (buffer_device, gpu) = (buf.device(), self.info.ordinal);
        if buffer_device == gpu { Ok(()) } else { Err(Error::WrongDevice { what, buffer_device, gpu }) }
    }

    /// Copies `host` into a new device buffer on the compute stream, after the work already queued there.
    /// Returns when the copy is complete, so `host` may be reused at once even when it is page-locked
    /// memory (for background copies use [`Gpu::upload_async`] from a [`PinnedBuffer`]).
    pub fn upload<T: DeviceSafe>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        self.upload_parts(&[host])
    }

    /// [`Gpu::upload`] of the concatenation of `parts`, without concatenating them on the host (a part in
    /// page-locked memory is copied at DMA speed).
    pub fn upload_parts<T: DeviceSafe>(&self, parts: &[&[T]]) -> Result<DeviceBuffer<T>> {
        let len = parts.iter().try_fold(0usize, |sum, p| sum.checked_add(p.len()));
        let len = len.ok_or_else(|| Error::SizeOverflow(format!("{} parts to upload", parts.len())))?;
        let span = tracing::debug_span!("zkgpu.upload", bytes = len * size_of::<T>());
        let _entered = span.enter();
        let mut buf = DeviceBuffer::<T>::alloc_on(self, &self.compute, len)?;
        if len == 0 {
            self.compute.memset_zeros(&mut buf.bytes)?;
            return Ok(buf);
        }
        let mut at = 0;
        for part in parts.iter().filter(|p| !p.is_empty()) {
            let mut dst = buf.raw_range_mut(at..at + part.len())?;
            self.compute.memcpy_htod(as_bytes(part), &mut dst)?;
            at += part.len();
        }
        self.compute.synchronize()?;
        Ok(buf)
    }

    /// Copies `host` into an existing buffer of the same length, on the compute stream; returns when done.
    pub fn upload_into<T: DeviceSafe>(&self, host: &[T], buf: &mut DeviceBuffer<T>) -> Result<()> {
        self.owns("upload_into", buf)?;
        if host.len() != buf.len {
            return Err(Error::LengthMismatch { what: "upload_into", expected: buf.len, actual: host.len() });
        }
        let span = tracing::debug_span!("zkgpu.upload", bytes = size_of_val(host));
        let _entered = span.enter();
        if !host.is_empty() {
            self.compute.memcpy_htod(as_bytes(host), &mut buf.bytes)?;
            self.compute.synchronize()?;
        }
        Ok(())
    }

    /// A device buffer of `len` all-zero values (every DeviceSafe type accepts all-zero bytes).
    pub fn alloc_zeroed<T: DeviceSafe>(&self, len: usize) -> Result<DeviceBuffer<T>> {
        let mut buf = DeviceBuffer::<T>::alloc_on(self, &self.compute, len)?;
        self.compute.memset_zeros(&mut buf.bytes)?;
        Ok(buf)
    }

    /// Copies a device buffer back into a new `Vec`, waiting for the compute stream (and so for every kernel
    /// queued on it) to finish.
    pub fn download<T: DeviceSafe>(&self, buf: &DeviceBuffer<T>) -> Result<Vec<T>> {
        self.owns("download", buf)?;
        let span = tracing::debug_span!("zkgpu.download", bytes = buf.byte_len());
        let _entered = span.enter();
        let mut out: Vec<T> = Vec::with_capacity(buf.len);
        // SAFETY: `out` has capacity for `buf.len` values = `byte_len` bytes; nothing reads or writes it
        // until the stream synchronisation below has completed the copy.
        unsafe { raw::copy_dtoh_async(&self.compute, &buf.bytes, out.as_mut_ptr().cast(), buf.byte_len()) }?;
        self.compute.synchronize()?;
        // SAFETY: the copy has completed and wrote all `buf.len * size_of::<T>()` bytes; every bit pattern is
        // a valid T (DeviceSafe). On an error above, `out` is dropped with length 0.
        unsafe { out.set_len(buf.len) };
        Ok(out)
    }

    /// Copies a device buffer into `host` (same length), waiting for the compute stream. On error `host`
    /// is untouched... except for a copy the driver failed midway, which cannot be undone.
    pub fn download_into<T: DeviceSafe>(&self, buf: &DeviceBuffer<T>, host: &mut [T]) -> Result<()> {
        self.owns("download_into", buf)?;
        if host.len() != buf.len {
            return Err(Error::LengthMismatch { what: "download_into", expected: buf.len, actual: host.len() });
        }
        let span = tracing::debug_span!("zkgpu.download", bytes = buf.byte_len());
        let _entered = span.enter();
        // SAFETY: `host` is exclusively borrowed for the whole call, valid for `byte_len` bytes, and the call
        // returns only after the stream synchronisation.
        unsafe { raw::copy_dtoh_async(&self.compute, &buf.bytes, host.as_mut_ptr().cast(), buf.byte_len()) }?;
        self.compute.synchronize()?;
        Ok(())
    }
}
