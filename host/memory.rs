//! Typed device and pinned host memory.
//!
//! - [`DeviceSafe`]: the marker for types that cross the bus as raw bytes (blstrs's field and curve types go to
//!   the device unconverted).
//! - [`DeviceBuffer<T>`]: `len` values of `T` in device memory, a typed view of a cudarc `CudaSlice<u8>`.
//! - [`PinnedBuffer<T>`]: page-locked host memory used as an ordinary slice, for DMA transfers at PCIe line
//!   rate on the copy stream (the lesson of design.md: pageable sources staged through a bounce buffer run at
//!   a fraction of that).
//!
//! Ordering between the two streams of a [`Gpu`] is kept by cudarc's per-buffer read/write events: a kernel
//! launched on the compute stream with a buffer the copy stream is filling waits for that copy.

use std::marker::PhantomData;
use std::mem::size_of;
use std::ptr::NonNull;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use cudarc::driver::{CudaContext, CudaEvent, CudaSlice, CudaStream, CudaView, CudaViewMut, DriverError, PinnedHostSlice, sys};

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::raw;

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
    bytes: CudaSlice<u8>,
    len: usize,
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
        self.bytes.try_slice(bytes).ok_or(Error::LengthMismatch { what: "raw_range", expected: self.len, actual: range.end })
    }

    /// Mutable form of [`DeviceBuffer::raw_range`], for kernels that write the chunk.
    pub fn raw_range_mut(&mut self, range: std::ops::Range<usize>) -> Result<CudaViewMut<'_, u8>> {
        let bytes = self.byte_range(&range)?;
        let len = self.len;
        self.bytes.try_slice_mut(bytes).ok_or(Error::LengthMismatch { what: "raw_range_mut", expected: len, actual: range.end })
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
            Err(e) => Err(Error::Cuda(e)),
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

    /// Copies `host` into a new device buffer on the compute stream, after the work already queued there.
    /// Returns when the copy is complete, so `host` may be reused at once even when it is page-locked
    /// memory (for background copies use [`Gpu::upload_async`] from a [`PinnedBuffer`]).
    pub fn upload<T: DeviceSafe>(&self, host: &[T]) -> Result<DeviceBuffer<T>> {
        let span = tracing::debug_span!("zkgpu.upload", bytes = size_of_val(host));
        let _entered = span.enter();
        let mut buf = DeviceBuffer::<T>::alloc_on(self, &self.compute, host.len())?;
        if host.is_empty() {
            self.compute.memset_zeros(&mut buf.bytes)?;
        } else {
            self.compute.memcpy_htod(as_bytes(host), &mut buf.bytes)?;
            self.compute.synchronize()?;
        }
        Ok(buf)
    }

    /// Copies `host` into an existing buffer of the same length, on the compute stream; returns when done.
    pub fn upload_into<T: DeviceSafe>(&self, host: &[T], buf: &mut DeviceBuffer<T>) -> Result<()> {
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

    /// Allocates a pinned (page-locked) host buffer of `len` zeroed values.
    pub fn alloc_pinned<T: DeviceSafe>(&self, len: usize, mode: PinnedMode) -> Result<PinnedBuffer<T>> {
        PinnedBuffer::new(&self.ctx, len, mode)
    }

    /// A pinned copy of `values` (e.g. to turn a prover's Vec into a DMA-able source once).
    pub fn pin_slice<T: DeviceSafe>(&self, values: &[T], mode: PinnedMode) -> Result<PinnedBuffer<T>> {
        let mut pinned = self.alloc_pinned(values.len(), mode)?;
        pinned.copy_from_slice(values);
        Ok(pinned)
    }

    /// Starts copying `src` into `dst` on the **copy stream** and returns at once. `src` must not be written
    /// until the copy is done: its `DerefMut` (and [`PinnedBuffer::wait`]) waits for that. Kernels launched on
    /// the compute stream with `dst` wait for the copy (cudarc's buffer events).
    pub fn upload_async<T: DeviceSafe>(&self, src: &mut PinnedBuffer<T>, dst: &mut DeviceBuffer<T>) -> Result<()> {
        src.check_context(&self.ctx)?;
        if src.len != dst.len {
            return Err(Error::LengthMismatch { what: "upload_async", expected: dst.len, actual: src.len });
        }
        let span = tracing::debug_span!("zkgpu.upload_async", bytes = dst.byte_len(), write_combined = src.mode == PinnedMode::WriteCombined);
        let _entered = span.enter();
        // The host side must not have a device write to it still in flight (a previous download).
        src.settle_all()?;
        if src.len == 0 {
            return Ok(());
        }
        self.copy.memcpy_htod(src.bytes(), &mut dst.bytes)?;
        src.mark_in_flight(&self.copy, PinnedState::DeviceReading)
    }

    /// Starts copying `src` into `dst` on the **copy stream** and returns at once. Reading or writing `dst`
    /// through `Deref`/`DerefMut` (or [`PinnedBuffer::wait`]) waits for the copy. The copy waits for earlier
    /// kernels that wrote `src` (cudarc's buffer events).
    pub fn download_async<T: DeviceSafe>(&self, src: &DeviceBuffer<T>, dst: &mut PinnedBuffer<T>) -> Result<()> {
        dst.check_context(&self.ctx)?;
        if src.len != dst.len {
            return Err(Error::LengthMismatch { what: "download_async", expected: src.len, actual: dst.len });
        }
        let span = tracing::debug_span!("zkgpu.download_async", bytes = src.byte_len());
        let _entered = span.enter();
        dst.settle_all()?;
        if dst.len == 0 {
            return Ok(());
        }
        // SAFETY: `dst` stays allocated until its Drop, which waits for the recorded event; its Deref/DerefMut
        // wait for the event before handing out a slice (state DeviceWriting), so the host does not touch
        // the bytes while the DMA writes them.
        unsafe { raw::copy_dtoh_async(&self.copy, &src.bytes, dst.ptr.as_ptr().cast(), src.byte_len()) }?;
        dst.mark_in_flight(&self.copy, PinnedState::DeviceWriting)
    }
}

// ---------------------------------------------------------------------------------------------------------
// Pinned host memory

/// How the CPU will use a pinned buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinnedMode {
    /// Write-combined: the fastest host-to-device source, but CPU **reads** from it are very slow
    /// (uncached). For buffers the CPU only fills.
    WriteCombined,
    /// Ordinary cached page-locked memory: for buffers the CPU reads (download targets) or reads and writes.
    ReadBack,
}

/// What the device may be doing to a pinned buffer's bytes right now.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PinnedState {
    /// No transfer in flight.
    Idle = 0,
    /// An upload is reading it: the host may read but not write.
    DeviceReading = 1,
    /// A download is writing it: the host may neither read nor write.
    DeviceWriting = 2,
}

/// `len` values of `T` in page-locked host memory, usable as an ordinary slice (`Deref<Target = [T]>`).
///
/// Transfers started by [`Gpu::upload_async`] / [`Gpu::download_async`] run in the background on the copy
/// stream; `Deref`/`DerefMut` wait for a transfer that conflicts with the access (a download for any access,
/// an upload for writes), so safe code never sees a half-written buffer. Waiting for a transfer that failed
/// (a broken context) cannot report the error from `Deref`; it is logged, and [`PinnedBuffer::wait`] returns it.
pub struct PinnedBuffer<T: DeviceSafe> {
    ptr: NonNull<T>,
    len: usize,
    mode: PinnedMode,
    state: AtomicU8,
    /// Recorded on the copy stream after the last transfer. `None` for an empty buffer.
    transfer_done: Option<CudaEvent>,
    /// Owns the page-locked allocation (freed by cudarc on drop). `None` for an empty buffer.
    _allocation: Option<PinnedHostSlice<u8>>,
    ctx: Arc<CudaContext>,
}

// SAFETY: the buffer owns its memory like a Box<[T]> does; T is Send + Sync (DeviceSafe); the state is
// atomic and the event/allocation handles are Send + Sync in cudarc.
unsafe impl<T: DeviceSafe> Send for PinnedBuffer<T> {}
// SAFETY: shared access only reads the memory (after waiting for a download) and the atomic state.
unsafe impl<T: DeviceSafe> Sync for PinnedBuffer<T> {}

impl<T: DeviceSafe> PinnedBuffer<T> {
    fn new(ctx: &Arc<CudaContext>, len: usize, mode: PinnedMode) -> Result<Self> {
        let bytes = byte_len::<T>(len)?;
        if bytes == 0 {
            return Ok(PinnedBuffer {
                ptr: NonNull::dangling(),
                len,
                mode,
                state: AtomicU8::new(PinnedState::Idle as u8),
                transfer_done: None,
                _allocation: None,
                ctx: ctx.clone(),
            });
        }
        let flags = match mode {
            PinnedMode::WriteCombined => sys::CU_MEMHOSTALLOC_WRITECOMBINED,
            PinnedMode::ReadBack => 0,
        };
        let span = tracing::debug_span!("zkgpu.alloc_pinned", bytes, ?mode);
        let _entered = span.enter();
        // SAFETY: the memory is uninitialised after this call; it is zeroed below before any read.
        // (`bytes` is checked against overflow and isize::MAX above, so cudarc's own asserts cannot fire.)
        let mut allocation = unsafe { ctx.alloc_pinned_with_flags::<u8>(bytes, flags) }
            .map_err(|source| Error::PinnedAlloc { requested: bytes, source })?;
        let raw = allocation.as_mut_ptr()?;
        // cuMemHostAlloc returns page-aligned memory, so any T is aligned; check rather than assume.
        let ptr = NonNull::new(raw.cast::<T>())
            .filter(|p| p.as_ptr().is_aligned())
            .ok_or(Error::PinnedAlloc { requested: bytes, source: DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE) })?;
        // SAFETY: `raw` is valid for `bytes` writes and exclusively ours.
        unsafe { std::ptr::write_bytes(raw, 0, bytes) };
        let transfer_done = Some(ctx.new_event(None)?);
        Ok(PinnedBuffer {
            ptr,
            len,
            mode,
            state: AtomicU8::new(PinnedState::Idle as u8),
            transfer_done,
            _allocation: Some(allocation),
            ctx: ctx.clone(),
        })
    }

    /// Number of values.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no values.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How it was allocated.
    pub fn mode(&self) -> PinnedMode {
        self.mode
    }

    /// Waits for any transfer in flight on this buffer; returns the driver's error if it failed.
    pub fn wait(&self) -> Result<()> {
        if self.state.load(Ordering::Acquire) == PinnedState::Idle as u8 {
            return Ok(());
        }
        if let Some(event) = &self.transfer_done {
            event.synchronize()?;
        }
        self.state.store(PinnedState::Idle as u8, Ordering::Release);
        Ok(())
    }

    /// Whether a transfer is still running (does not wait).
    pub fn is_busy(&self) -> Result<bool> {
        if self.state.load(Ordering::Acquire) == PinnedState::Idle as u8 {
            return Ok(false);
        }
        match &self.transfer_done {
            Some(event) => Ok(!event.try_is_complete()?),
            None => Ok(false),
        }
    }

    fn check_context(&self, ctx: &Arc<CudaContext>) -> Result<()> {
        if self.ctx.as_ref() != ctx.as_ref() {
            return Err(Error::InvalidLaunch(format!(
                "pinned buffer allocated for GPU {} used with GPU {}",
                self.ctx.ordinal(),
                ctx.ordinal()
            )));
        }
        Ok(())
    }

    /// Waits for every transfer (used before starting another one).
    fn settle_all(&self) -> Result<()> {
        self.wait()
    }

    /// Waits if the device may be writing (for reads), or doing anything (for writes). Errors are logged:
    /// `Deref` cannot return them.
    fn settle_for(&self, host_writes: bool) {
        let state = self.state.load(Ordering::Acquire);
        let conflicts = if host_writes {
            state != PinnedState::Idle as u8
        } else {
            state == PinnedState::DeviceWriting as u8
        };
        if conflicts {
            if let Err(e) = self.wait() {
                tracing::error!(error = %e, "waiting for a pinned-buffer transfer failed");
            }
        }
    }

    /// The bytes, for an upload. Only used right after `settle_all`.
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` initialised values (zeroed at allocation); DeviceSafe has no padding.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast::<u8>(), self.len * size_of::<T>()) }
    }

    fn mark_in_flight(&mut self, stream: &CudaStream, state: PinnedState) -> Result<()> {
        if let Some(event) = &self.transfer_done {
            // Set the state first: should recording fail, accesses still wait (and see the error).
            self.state.store(state as u8, Ordering::Release);
            event.record(stream)?;
        }
        Ok(())
    }
}

impl<T: DeviceSafe> std::ops::Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.settle_for(false);
        // SAFETY: `ptr` is valid (or dangling with len 0) for `len` initialised values, aligned; no device
        // write is in flight (settled above); writes need `&mut self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceSafe> std::ops::DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.settle_for(true);
        // SAFETY: as in `deref`, and no transfer is in flight; `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: DeviceSafe> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        // The memory must outlive any DMA touching it; cudarc frees `_allocation` after this.
        if let Err(e) = self.wait() {
            tracing::error!(error = %e, "waiting for a pinned-buffer transfer before freeing failed");
        }
    }
}

impl<T: DeviceSafe + std::fmt::Debug> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("len", &self.len)
            .field("mode", &self.mode)
            .field("state", &self.state.load(Ordering::Relaxed))
            .finish()
    }
}
