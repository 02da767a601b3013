//! Page-locked (pinned) host memory: [`PinnedBuffer<T>`], used as an ordinary slice and transferred with DMA
//! on the copy stream, and [`PinnedPool`], which recycles pinned blocks so a prover pins its working set once.
//!
//! Why: a pageable source is staged by the driver through a small pinned bounce buffer at a fraction of PCIe
//! speed, and pinning memory (`cuMemHostAlloc`) is itself slow (page-table work, tens of ms per GiB). A prover
//! that writes its vectors straight into pooled pinned buffers gets line-rate transfers that overlap kernels.
//!
//! Safety model: a transfer started by [`Gpu::upload_async`] / [`Gpu::download_async`] leaves the buffer
//! marked busy; `Deref` waits for a download in flight, `DerefMut` for any transfer, `Drop` for any transfer
//! (the memory must outlive the DMA). So safe code never observes a half-written buffer or frees memory the
//! device is still reading.

use std::mem::size_of;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};

use cudarc::driver::{CudaContext, CudaEvent, CudaStream, DriverError, PinnedHostSlice, sys};

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::memory::{DeviceBuffer, DeviceSafe, byte_len};
use crate::raw;

/// How the CPU will use a pinned buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PinnedMode {
    /// Write-combined: the fastest host-to-device source, but CPU **reads** from it are very slow
    /// (uncached). For buffers the CPU only fills.
    WriteCombined,
    /// Ordinary cached page-locked memory: for buffers the CPU reads (download targets) or reads and writes.
    ReadBack,
}

impl PinnedMode {
    /// Every block is portable: pinned for every context, so a buffer filled for one GPU can feed another's
    /// transfers at DMA speed (a multi-GPU prover shares one pool).
    fn flags(self) -> u32 {
        sys::CU_MEMHOSTALLOC_PORTABLE
            | match self {
                PinnedMode::WriteCombined => sys::CU_MEMHOSTALLOC_WRITECOMBINED,
                PinnedMode::ReadBack => 0,
            }
    }
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

/// One page-locked allocation and the event that marks the end of the last transfer touching it.
#[derive(Debug)]
struct PinnedBlock {
    /// Owns the memory (cudarc frees it on drop).
    _allocation: PinnedHostSlice<u8>,
    base: NonNull<u8>,
    capacity: usize,
    transfer_done: CudaEvent,
}

// SAFETY: the block is an owned allocation plus cudarc handles that are Send + Sync; the raw base pointer is
// only dereferenced by the PinnedBuffer that owns the block.
unsafe impl Send for PinnedBlock {}
// SAFETY: as above; shared access never dereferences `base`.
unsafe impl Sync for PinnedBlock {}

impl PinnedBlock {
    /// Pins `capacity` (> 0) fresh bytes, zeroed.
    fn allocate(ctx: &Arc<CudaContext>, capacity: usize, mode: PinnedMode) -> Result<PinnedBlock> {
        let span = tracing::debug_span!("zkgpu.alloc_pinned", bytes = capacity, ?mode);
        let _entered = span.enter();
        // SAFETY: the memory is uninitialised after this call; it is zeroed below before any read.
        // (`capacity` was checked against overflow and isize::MAX by `byte_len`, so cudarc's asserts hold.)
        let mut allocation = unsafe { ctx.alloc_pinned_with_flags::<u8>(capacity, mode.flags()) }
            .map_err(|source| Error::PinnedAlloc { requested: capacity, source })?;
        let base = NonNull::new(allocation.as_mut_ptr()?).ok_or(Error::PinnedAlloc {
            requested: capacity,
            source: DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE),
        })?;
        // SAFETY: `base` is valid for `capacity` writes and exclusively ours.
        unsafe { std::ptr::write_bytes(base.as_ptr(), 0, capacity) };
        let transfer_done = ctx.new_event(None)?;
        Ok(PinnedBlock { _allocation: allocation, base, capacity, transfer_done })
    }
}

/// `len` values of `T` in page-locked host memory, usable as an ordinary slice (`Deref<Target = [T]>`).
///
/// From [`Gpu::alloc_pinned`] (zeroed) or [`PinnedPool::take`] (contents left from earlier use). Transfers
/// started by [`Gpu::upload_async`] / [`Gpu::download_async`] run in the background on the copy stream;
/// `Deref`/`DerefMut` wait for a transfer that conflicts with the access (a download for any access, an
/// upload for writes). Waiting for a transfer that failed (a broken context) cannot report the error from
/// `Deref`; it is logged, and [`PinnedBuffer::wait`] returns it.
pub struct PinnedBuffer<T: DeviceSafe> {
    ptr: NonNull<T>,
    len: usize,
    mode: PinnedMode,
    state: AtomicU8,
    /// `None` for an empty buffer (nothing pinned).
    block: Option<PinnedBlock>,
    ctx: Arc<CudaContext>,
    /// Where the block goes back on drop, if it came from a pool that still exists.
    pool: Option<Weak<PoolShared>>,
}

// SAFETY: the buffer owns its memory like a Box<[T]> does; T is Send + Sync (DeviceSafe); the state is
// atomic and the block's handles are Send + Sync.
unsafe impl<T: DeviceSafe> Send for PinnedBuffer<T> {}
// SAFETY: shared access only reads the memory (after waiting for a download) and the atomic state.
unsafe impl<T: DeviceSafe> Sync for PinnedBuffer<T> {}

impl<T: DeviceSafe> PinnedBuffer<T> {
    /// A buffer of `len` values over `block` (None only when `len * size_of::<T>() == 0`).
    fn over(
        ctx: &Arc<CudaContext>,
        block: Option<PinnedBlock>,
        len: usize,
        mode: PinnedMode,
        pool: Option<Weak<PoolShared>>,
    ) -> Result<Self> {
        let ptr = match &block {
            Some(b) => {
                debug_assert!(b.capacity >= len * size_of::<T>());
                // cuMemHostAlloc returns page-aligned memory, so any T is aligned; check rather than assume.
                let p = b.base.cast::<T>();
                if !p.as_ptr().is_aligned() {
                    return Err(Error::PinnedAlloc {
                        requested: b.capacity,
                        source: DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE),
                    });
                }
                p
            }
            None => NonNull::dangling(),
        };
        Ok(PinnedBuffer {
            ptr,
            len,
            mode,
            state: AtomicU8::new(PinnedState::Idle as u8),
            block,
            ctx: ctx.clone(),
            pool,
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
        if let Some(block) = &self.block {
            block.transfer_done.synchronize()?;
        }
        self.state.store(PinnedState::Idle as u8, Ordering::Release);
        Ok(())
    }

    /// Whether a transfer is still running (does not wait).
    pub fn is_busy(&self) -> Result<bool> {
        if self.state.load(Ordering::Acquire) == PinnedState::Idle as u8 {
            return Ok(false);
        }
        match &self.block {
            Some(block) => Ok(!block.transfer_done.try_is_complete()?),
            None => Ok(false),
        }
    }

    fn check_context(&self, ctx: &Arc<CudaContext>) -> Result<()> {
        if self.ctx.as_ref() != ctx.as_ref() {
            return Err(Error::WrongDevice {
                what: "pinned buffer",
                buffer_device: self.ctx.ordinal(),
                gpu: ctx.ordinal(),
            });
        }
        Ok(())
    }

    /// Waits if the device may be writing (for host reads), or doing anything (for host writes). Errors are
    /// logged: `Deref` cannot return them.
    fn settle_for(&self, host_writes: bool) {
        let state = self.state.load(Ordering::Acquire);
        let conflicts =
            if host_writes { state != PinnedState::Idle as u8 } else { state == PinnedState::DeviceWriting as u8 };
        if conflicts {
            if let Err(e) = self.wait() {
                tracing::error!(error = %e, "waiting for a pinned-buffer transfer failed");
            }
        }
    }

    /// The value bytes, for an upload (called right after `wait`).
    fn bytes(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` initialised values (zeroed at allocation or written since);
        // DeviceSafe has no padding.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().cast::<u8>(), self.len * size_of::<T>()) }
    }

    /// Records that the copies queued on `stream` so far read this buffer (copies of slices of it, e.g. an
    /// MSM's streamed bases): host writes and the buffer's release then wait for them.
    pub(crate) fn mark_read_by(&mut self, stream: &CudaStream) -> Result<()> {
        self.mark_in_flight(stream, PinnedState::DeviceReading)
    }

    fn mark_in_flight(&mut self, stream: &CudaStream, state: PinnedState) -> Result<()> {
        if let Some(block) = &self.block {
            // Set the state first: should recording fail, accesses still wait (and see the error).
            self.state.store(state as u8, Ordering::Release);
            block.transfer_done.record(stream)?;
        }
        Ok(())
    }
}

impl<T: DeviceSafe> std::ops::Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.settle_for(false);
        // SAFETY: `ptr` is valid (or dangling with len 0) for `len` initialised, aligned values; no device
        // write is in flight (settled above) and writes need `&mut self`.
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
        // The memory must outlive any DMA touching it.
        if let Err(e) = self.wait() {
            tracing::error!(error = %e, "waiting for a pinned-buffer transfer before release failed; leaking it");
            // The transfer state is unknown: never free or reuse memory a DMA might still touch.
            if let Some(block) = self.block.take() {
                std::mem::forget(block);
            }
            return;
        }
        let (Some(block), Some(pool)) = (self.block.take(), self.pool.as_ref().and_then(Weak::upgrade)) else {
            return; // unpooled (or the pool is gone): cudarc frees the block here
        };
        pool.give_back(block);
    }
}

impl<T: DeviceSafe> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("len", &self.len)
            .field("mode", &self.mode)
            .field("capacity_bytes", &self.block.as_ref().map_or(0, |b| b.capacity))
            .field("state", &self.state.load(Ordering::Relaxed))
            .field("pooled", &self.pool.is_some())
            .finish()
    }
}

// ---------------------------------------------------------------------------------------------------------
// Pool

/// A pool of pinned blocks of one [`PinnedMode`] on one device, with an optional cap on the bytes pinned.
///
/// [`PinnedPool::take`] hands out a [`PinnedBuffer`] over the smallest free block that fits (pinning a new one
/// when none does); dropping the buffer returns the block once its transfers are done. Contents of a reused
/// block are whatever was left in it (every bit pattern is a valid `DeviceSafe` value). Cloning shares the pool.
#[derive(Clone, Debug)]
pub struct PinnedPool {
    shared: Arc<PoolShared>,
}

#[derive(Debug)]
struct PoolShared {
    ctx: Arc<CudaContext>,
    mode: PinnedMode,
    /// Most bytes pinned at once (free + lent); `usize::MAX` for no cap.
    limit: usize,
    inner: Mutex<PoolInner>,
}

#[derive(Debug, Default)]
struct PoolInner {
    free: Vec<PinnedBlock>,
    /// Bytes pinned in total (free + lent).
    pinned: usize,
}

/// How much a pool holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PoolStats {
    /// Bytes pinned by the pool, free and lent.
    pub pinned_bytes: usize,
    /// Bytes in free blocks.
    pub free_bytes: usize,
    /// Free blocks.
    pub free_blocks: usize,
}

impl PoolShared {
    /// The pool's state. A poisoned lock (a thread panicked while holding it) is taken over: every update
    /// under the lock leaves the free list and the byte count consistent at each step.
    fn lock(&self) -> std::sync::MutexGuard<'_, PoolInner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn give_back(&self, block: PinnedBlock) {
        self.lock().free.push(block);
    }
}

impl PinnedPool {
    /// An empty pool for `gpu` pinning at most `limit_bytes` at once (`None`: no cap).
    pub fn new(gpu: &Gpu, mode: PinnedMode, limit_bytes: Option<usize>) -> PinnedPool {
        PinnedPool {
            shared: Arc::new(PoolShared {
                ctx: gpu.ctx.clone(),
                mode,
                limit: limit_bytes.unwrap_or(usize::MAX),
                inner: Mutex::new(PoolInner::default()),
            }),
        }
    }

    /// A buffer of `len` values. Reuses the smallest free block that is large enough; otherwise unpins the
    /// idle blocks (all too small for this request: a workload whose sizes change does not keep every size it
    /// ever used pinned) and pins a new block ([`plan_take`]). `Err(PinnedPoolExhausted)` when the lent blocks
    /// alone leave no room under the cap.
    pub fn take<T: DeviceSafe>(&self, len: usize) -> Result<PinnedBuffer<T>> {
        let shared = &self.shared;
        let bytes = byte_len::<T>(len)?;
        let weak = Some(Arc::downgrade(shared));
        if bytes == 0 {
            return PinnedBuffer::over(&shared.ctx, None, len, shared.mode, weak);
        }
        let mut inner = shared.lock();
        let capacities: Vec<usize> = inner.free.iter().map(|b| b.capacity).collect();
        match plan_take(&capacities, bytes, inner.pinned, shared.limit) {
            Take::Reuse(i) => {
                let block = inner.free.swap_remove(i);
                drop(inner);
                return PinnedBuffer::over(&shared.ctx, Some(block), len, shared.mode, weak);
            }
            Take::Exhausted => {
                return Err(Error::PinnedPoolExhausted { requested: bytes, pinned: inner.pinned, limit: shared.limit });
            }
            Take::UnpinFreeThenPin => {
                let freed: usize = inner.free.iter().map(|b| b.capacity).sum();
                inner.free.clear();
                inner.pinned -= freed;
            }
        }
        inner.pinned += bytes;
        drop(inner);
        match PinnedBlock::allocate(&shared.ctx, bytes, shared.mode) {
            Ok(block) => PinnedBuffer::over(&shared.ctx, Some(block), len, shared.mode, weak),
            Err(e) => {
                shared.lock().pinned -= bytes;
                Err(e)
            }
        }
    }

    /// Unpins every free block (lent ones come back as usual).
    pub fn release_free(&self) {
        let mut inner = self.shared.lock();
        let freed: usize = inner.free.iter().map(|b| b.capacity).sum();
        inner.free.clear();
        inner.pinned -= freed;
    }

    /// How much the pool holds now.
    pub fn stats(&self) -> PoolStats {
        let inner = self.shared.lock();
        PoolStats {
            pinned_bytes: inner.pinned,
            free_bytes: inner.free.iter().map(|b| b.capacity).sum(),
            free_blocks: inner.free.len(),
        }
    }

    /// The mode of every block in the pool.
    pub fn mode(&self) -> PinnedMode {
        self.shared.mode
    }
}

/// What [`PinnedPool::take`] does for a request (see [`plan_take`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// Lend free block `i` (the smallest that is large enough).
    Reuse(usize),
    /// Unpin every free block (all are too small), then pin a new block.
    UnpinFreeThenPin,
    /// The lent blocks alone leave less than the request under the cap.
    Exhausted,
}

/// The pool's policy, apart from the driver, for a request of `bytes` with free blocks of `free` bytes each,
/// `pinned` bytes pinned in all (free and lent) and at most `limit` pinned at once: reuse the best fit; else
/// unpin the free blocks (every one is too small for this request, and keeping them would let a workload of
/// changing sizes ratchet the pinned total up) and pin a new block, if the lent blocks leave room for it.
pub fn plan_take(free: &[usize], bytes: usize, pinned: usize, limit: usize) -> Take {
    let best = free.iter().enumerate().filter(|&(_, &c)| c >= bytes).min_by_key(|&(_, &c)| c).map(|(i, _)| i);
    match best {
        Some(i) => Take::Reuse(i),
        None if (pinned - free.iter().sum::<usize>()).saturating_add(bytes) > limit => Take::Exhausted,
        None => Take::UnpinFreeThenPin,
    }
}

// ---------------------------------------------------------------------------------------------------------
// Transfers

impl Gpu {
    /// A pinned (page-locked) host buffer of `len` zeroed values, not pooled (freed on drop).
    pub fn alloc_pinned<T: DeviceSafe>(&self, len: usize, mode: PinnedMode) -> Result<PinnedBuffer<T>> {
        let bytes = byte_len::<T>(len)?;
        let block = if bytes == 0 { None } else { Some(PinnedBlock::allocate(&self.ctx, bytes, mode)?) };
        PinnedBuffer::over(&self.ctx, block, len, mode, None)
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
        self.owns("upload_async destination", dst)?;
        if src.len != dst.len {
            return Err(Error::LengthMismatch { what: "upload_async", expected: dst.len, actual: src.len });
        }
        let span = tracing::debug_span!("zkgpu.upload_async", bytes = dst.byte_len(), mode = ?src.mode);
        let _entered = span.enter();
        // The host side must not have a device write to it still in flight (a previous download).
        src.wait()?;
        if src.len == 0 {
            return Ok(());
        }
        self.copy.memcpy_htod(src.bytes(), &mut dst.bytes)?;
        src.mark_in_flight(&self.copy, PinnedState::DeviceReading)
    }

    /// Starts copying `src` into `dst` on the **copy stream** and returns at once. Reading or writing `dst`
    /// through `Deref`/`DerefMut` (or [`PinnedBuffer::wait`]) waits for the copy.
    ///
    /// `src` is borrowed mutably because the copy takes it the way a write would: the copy waits for every
    /// earlier reader and writer of `src` on either stream, and every later use of `src` on either stream
    /// waits for the copy. cudarc keeps one "last read" event per buffer, so a read on the copy stream
    /// recorded as a read would hide an earlier kernel's read on the compute stream from a later write (an
    /// upload could overwrite `src` while that kernel still reads it), and a later kernel writing `src` on the
    /// compute stream would not wait for the copy.
    pub fn download_async<T: DeviceSafe>(&self, src: &mut DeviceBuffer<T>, dst: &mut PinnedBuffer<T>) -> Result<()> {
        dst.check_context(&self.ctx)?;
        self.owns("download_async source", src)?;
        if src.len != dst.len {
            return Err(Error::LengthMismatch { what: "download_async", expected: src.len, actual: dst.len });
        }
        let span = tracing::debug_span!("zkgpu.download_async", bytes = src.byte_len());
        let _entered = span.enter();
        dst.wait()?;
        if dst.len == 0 {
            return Ok(());
        }
        // SAFETY: `dst` stays allocated until its Drop, which waits for the recorded event; its Deref/DerefMut
        // wait for the event before handing out a slice (state DeviceWriting), so the host does not touch the
        // bytes while the DMA writes them. `dst` holds `byte_len` bytes (lengths checked above).
        let bytes = src.byte_len();
        unsafe { raw::copy_dtoh_async_exclusive(&self.copy, &mut src.bytes, dst.ptr.as_ptr().cast(), bytes) }?;
        dst.mark_in_flight(&self.copy, PinnedState::DeviceWriting)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The pool's bookkeeping with byte counts for blocks: what `PinnedPool::take` does, minus the driver.
    #[derive(Default)]
    struct Model {
        free: Vec<usize>,
        lent: Vec<usize>,
        pinned: usize,
        peak_lent: usize,
        pins: usize,
    }

    impl Model {
        fn take(&mut self, bytes: usize, limit: usize) -> Take {
            let decision = plan_take(&self.free, bytes, self.pinned, limit);
            match decision {
                Take::Reuse(i) => self.lent.push(self.free.swap_remove(i)),
                Take::UnpinFreeThenPin => {
                    self.pinned -= self.free.drain(..).sum::<usize>();
                    self.pinned += bytes;
                    self.pins += 1;
                    self.lent.push(bytes);
                }
                Take::Exhausted => {}
            }
            self.peak_lent = self.peak_lent.max(self.lent.iter().sum());
            decision
        }

        fn give_back(&mut self, i: usize) {
            let block = self.lent.swap_remove(i);
            self.free.push(block);
        }
    }

    #[test]
    fn best_fit_then_pin_then_exhausted() {
        assert_eq!(plan_take(&[8, 4, 16], 5, 28, usize::MAX), Take::Reuse(0));
        assert_eq!(plan_take(&[8, 4, 16], 4, 28, usize::MAX), Take::Reuse(1));
        assert_eq!(plan_take(&[8, 4], 9, 12, usize::MAX), Take::UnpinFreeThenPin);
        // 20 bytes lent, the free 12 can go: 20 + 9 fits a cap of 29, not 28.
        assert_eq!(plan_take(&[8, 4], 9, 32, 29), Take::UnpinFreeThenPin);
        assert_eq!(plan_take(&[8, 4], 9, 32, 28), Take::Exhausted);
        assert_eq!(plan_take(&[], 1, 0, 0), Take::Exhausted);
    }

    /// Three partition sizes rotating through one uncapped pool, several jobs in flight: after the first
    /// rotation nothing more is pinned (the soak's pattern, without the driver).
    #[test]
    fn rotating_sizes_stop_pinning() {
        let mut pool = Model::default();
        let sizes = [[4usize << 30, 4 << 30, 1 << 30], [1 << 30, 1 << 30, 256 << 20], [2 << 30, 2 << 30, 512 << 20]];
        let mut after_warm_up = None;
        for job in 0..300 {
            for &bytes in &sizes[job % 3] {
                pool.take(bytes, usize::MAX);
            }
            // Three jobs in flight: the oldest job's three blocks come back.
            if pool.lent.len() > 9 {
                for _ in 0..3 {
                    pool.give_back(0);
                }
            }
            if job == 30 {
                after_warm_up = Some((pool.pins, pool.pinned));
            }
        }
        assert_eq!(after_warm_up, Some((pool.pins, pool.pinned)), "the pool kept pinning after warm-up");
        assert!(pool.pinned <= pool.peak_lent);
    }

    proptest! {
        /// Any sequence of takes and returns, uncapped: the pool never holds more than the most that was ever
        /// lent at once (no ratchet), and with a cap it never holds more than the cap.
        #[test]
        fn pinned_bytes_stay_bounded(
            ops in proptest::collection::vec((0usize..6, any::<bool>(), any::<prop::sample::Index>()), 1..200),
            cap in proptest::option::of(1usize..64),
        ) {
            let limit = cap.unwrap_or(usize::MAX);
            let mut pool = Model::default();
            for (size_class, give_back, which) in ops {
                if give_back && !pool.lent.is_empty() {
                    pool.give_back(which.index(pool.lent.len()));
                } else {
                    let bytes = 1 << size_class;
                    let reusable = pool.free.iter().any(|&c| c >= bytes);
                    let lent_before: usize = pool.lent.iter().sum();
                    let exhausted = pool.take(bytes, limit) == Take::Exhausted;
                    prop_assert_eq!(exhausted, !reusable && lent_before + bytes > limit);
                }
                prop_assert_eq!(pool.pinned, pool.free.iter().sum::<usize>() + pool.lent.iter().sum::<usize>());
                prop_assert!(pool.pinned <= pool.peak_lent);
                prop_assert!(pool.pinned <= limit);
            }
        }
    }
}
