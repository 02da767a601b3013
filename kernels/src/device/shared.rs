//! A bump arena over a block's shared memory: typed, aligned, non-overlapping slices, bounds-checked
//! against the region's real size.
//!
//! On the GPU, `SharedArena::dynamic` covers the launch-sized dynamic shared memory
//! (`gpu_launch_sized_workgroup_mem`, i.e. CUDA's `extern __shared__`) and reads its size from
//! `%dynamic_smem_size`, so a launch with too little shared memory gets `None` from [`SharedArena::alloc`]
//! instead of out-of-bounds accesses. (More than 48 KiB needs the host to raise the function's
//! `MAX_DYNAMIC_SHARED_SIZE_BYTES` attribute first: `zkgpu::Gpu::allow_dynamic_shared`.)
//!
//! Every thread of a block builds its own arena and must make the same sequence of `alloc` calls, so that
//! all threads see the same slices at the same addresses. The memory is shared by the block: element reads
//! and writes are `unsafe`, and threads order them with barriers (`sync_threads`).

use core::marker::PhantomData;
use core::mem::{align_of, size_of};

/// A zero-sized type with 16-byte alignment, to ask for a 16-byte aligned dynamic shared region.
#[cfg(target_arch = "nvptx64")]
#[repr(C, align(16))]
struct Align16([u8; 0]);

/// Carves typed slices out of one region of shared memory, front to back.
#[derive(Debug)]
pub struct SharedArena {
    base: *mut u8,
    size: usize,
    used: usize,
}

impl SharedArena {
    /// An arena over `size` bytes at `base`.
    ///
    /// # Safety
    /// `base..base + size` must be memory the calling thread may read and write for as long as the slices
    /// handed out are used, and nothing else may use it meanwhile except through the same arena sequence on
    /// other threads of the block.
    pub unsafe fn from_raw(base: *mut u8, size: usize) -> SharedArena {
        SharedArena { base, size, used: 0 }
    }

    /// The whole dynamic shared memory of this launch (its size read from `%dynamic_smem_size`).
    #[cfg(target_arch = "nvptx64")]
    #[inline(always)]
    pub fn dynamic() -> SharedArena {
        // The alignment of the extern shared symbol comes from the type asked for: 16 bytes covers every
        // type the kernels keep there (the arena aligns each slice itself in any case).
        let base = core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<Align16>().cast::<u8>();
        let size = super::index::dynamic_shared_size() as usize;
        // SAFETY: the driver gives this block exactly `size` bytes of dynamic shared memory at `base`.
        unsafe { SharedArena::from_raw(base, size) }
    }

    /// Bytes of the region not yet handed out (alignment padding of the next slice not counted).
    pub fn remaining(&self) -> usize {
        self.size - self.used
    }

    /// Total size of the region in bytes.
    pub fn capacity(&self) -> usize {
        self.size
    }

    /// The next `len` values of `T`, aligned for `T`; `None` when the region is too small (nothing is
    /// consumed then). Zero-sized requests succeed and consume nothing but alignment.
    #[inline(always)]
    pub fn alloc<T: Copy>(&mut self, len: usize) -> Option<SharedSlice<T>> {
        let addr = (self.base as usize).checked_add(self.used)?;
        let padding = addr.wrapping_neg() & (align_of::<T>() - 1);
        let start = self.used.checked_add(padding)?;
        let bytes = len.checked_mul(size_of::<T>())?;
        let end = start.checked_add(bytes)?;
        if end > self.size {
            return None;
        }
        self.used = end;
        // SAFETY: start <= end <= size, so the pointer stays inside the region.
        let ptr = unsafe { self.base.add(start) }.cast::<T>();
        Some(SharedSlice { ptr, len, _type: PhantomData })
    }
}

/// `len` values of `T` in shared memory, seen by every thread of the block.
#[derive(Debug, Clone, Copy)]
pub struct SharedSlice<T> {
    ptr: *mut T,
    len: usize,
    _type: PhantomData<T>,
}

impl<T: Copy> SharedSlice<T> {
    /// Number of values.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no values.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The first value's address (aligned for `T`).
    #[inline(always)]
    pub fn as_ptr(&self) -> *mut T {
        self.ptr
    }

    /// Reads value `i`; `None` when `i >= len`.
    ///
    /// # Safety
    /// Value `i` has been written (shared memory starts uninitialised), and no other thread writes it
    /// concurrently (separate the write and this read by a barrier, or let one thread own the element).
    #[inline(always)]
    pub unsafe fn get(&self, i: usize) -> Option<T> {
        if i < self.len {
            // SAFETY: in bounds; initialised and race-free by the caller's guarantee.
            Some(unsafe { self.ptr.add(i).read() })
        } else {
            None
        }
    }

    /// Writes value `i`; returns false (and writes nothing) when `i >= len`.
    ///
    /// # Safety
    /// No other thread reads or writes value `i` concurrently.
    #[inline(always)]
    pub unsafe fn set(&self, i: usize, value: T) -> bool {
        if i < self.len {
            // SAFETY: in bounds; race-free by the caller's guarantee.
            unsafe { self.ptr.add(i).write(value) };
            true
        } else {
            false
        }
    }

    /// Reads value `i` without a bounds check.
    ///
    /// # Safety
    /// `i < len`, plus everything [`SharedSlice::get`] requires.
    #[inline(always)]
    pub unsafe fn get_unchecked(&self, i: usize) -> T {
        // SAFETY: forwarded to the caller.
        unsafe { self.ptr.add(i).read() }
    }

    /// Writes value `i` without a bounds check.
    ///
    /// # Safety
    /// `i < len`, plus everything [`SharedSlice::set`] requires.
    #[inline(always)]
    pub unsafe fn set_unchecked(&self, i: usize, value: T) {
        // SAFETY: forwarded to the caller.
        unsafe { self.ptr.add(i).write(value) }
    }

    /// The values as an ordinary slice.
    ///
    /// # Safety
    /// All `len` values are initialised and no thread writes any of them while the slice lives.
    #[inline(always)]
    pub unsafe fn as_slice<'a>(&self) -> &'a [T] {
        // SAFETY: forwarded to the caller; ptr is aligned and in bounds for len values.
        unsafe { core::slice::from_raw_parts(self.ptr, self.len) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_aligned_disjoint_and_bounded() {
        let mut region = [0u64; 16]; // 128 bytes, 8-aligned
        // SAFETY: `region` is ours for the whole test.
        let mut arena = unsafe { SharedArena::from_raw(region.as_mut_ptr().cast(), 128) };
        let bytes = arena.alloc::<u8>(3).unwrap();
        let words = arena.alloc::<u64>(4).unwrap();
        let halves = arena.alloc::<u32>(5).unwrap();
        assert_eq!(words.as_ptr() as usize % 8, 0);
        assert_eq!(halves.as_ptr() as usize % 4, 0);
        assert!(bytes.as_ptr() as usize + 3 <= words.as_ptr() as usize);
        assert_eq!(words.as_ptr() as usize - bytes.as_ptr() as usize, 8);
        assert_eq!(halves.as_ptr() as usize, words.as_ptr() as usize + 32);
        assert_eq!(arena.remaining(), 128 - 60);
        // Too big: None, and nothing consumed.
        assert!(arena.alloc::<u64>(9).is_none());
        assert_eq!(arena.remaining(), 68);
        let rest = arena.alloc::<u32>(17).unwrap();
        assert_eq!(arena.remaining(), 0);
        assert!(arena.alloc::<u8>(1).is_none());
        assert!(arena.alloc::<u64>(0).is_some());
        assert!(arena.alloc::<u8>(usize::MAX).is_none());
        assert!(arena.alloc::<u64>(usize::MAX / 4).is_none(), "overflowing byte count must not wrap");
        // SAFETY: single thread; written before read.
        unsafe {
            assert!(words.set(3, 7));
            assert!(!words.set(4, 7), "out of bounds write refused");
            assert_eq!(words.get(3), Some(7));
            assert_eq!(words.get(4), None);
            assert!(rest.set(16, 1));
            assert!(!rest.set(17, 1));
        }
    }
}
