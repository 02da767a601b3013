//! NTT kernels over Fr (algorithm and geometry in `crate::ntt`):
//! - `ntt_pass_dif`, `ntt_pass_dit`: one pass of up to 10 radix-2 stages in shared memory, scaling folded in;
//!   `ntt_pass_dif_inv`, `ntt_pass_dit_inv`: the same for inverse transforms (the twiddle table read mirrored);
//! - `ntt_bit_reverse_tiled` (sizes >= 2^8) and `ntt_bit_reverse` (any size): in-place bit-reversal permutation of
//!   every transform of a batch;
//! - `ntt_fill_table`: builds a twiddle table `out[e] = hi[e >> s] * lo[e mod 2^s]`;
//! - `ntt_h_pointwise`, `ntt_h_subtract`: the Groth16 H-term steps `a[i] = a[i] b[i] z` (on the coset) and
//!   `a[i] = a[i] - c[i] z` (on the coefficients).
use crate::device::{
    SharedArena, block_dim_x, block_idx_x, copy16_shared_to_global, cp_async_wait_all, cp_async16, for_each_index, sync_threads,
    sync_warp, thread_idx_x,
};
use crate::field::{Field, Fr};
use crate::ntt::{
    PERMUTE_EDGE_BITS, PERMUTE_MIN_LOG_N, PERMUTE_PITCH, PassParams, PermuteBlock, ScaleMode, bit_reverse, butterfly,
    scale_factor,
};

/// An Fr with 32-byte alignment, so a load or store is two 128-bit accesses (device buffers and the shared
/// tile are 32-byte aligned: allocations are 256-byte aligned and elements are 32 bytes).
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Fr32([u32; 8]);

/// # Safety
/// `p` is valid for a read of one element and 32-byte aligned.
#[inline(always)]
unsafe fn load(p: *const Fr) -> Fr {
    // SAFETY: forwarded to the caller.
    Fr::from_limbs(unsafe { p.cast::<Fr32>().read() }.0)
}

/// # Safety
/// `p` is valid for a write of one element and 32-byte aligned.
#[inline(always)]
unsafe fn store(p: *mut Fr, x: Fr) {
    // SAFETY: forwarded to the caller.
    unsafe { p.cast::<Fr32>().write(Fr32(x.limbs())) }
}

/// Half an Fr, 16-byte aligned: one 128-bit shared-memory access.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
struct Half([u32; 4]);

/// The shared tile of a pass: element `slot`'s two 16-byte halves live in two planes (`[0, len)` and
/// `[len, 2·len)` in 16-byte units), so a warp's 128-bit accesses to consecutive slots are consecutive
/// 16-byte words (conflict-free) instead of 32-byte strided ones (two-way bank conflicts). Measured on the
/// H200 with 128 threads per block: 2^24 DIF 4.27 -> 4.05 ms (docs/log/kernels-notes.md, "NTT").
#[derive(Clone, Copy)]
struct Tile {
    base: *mut Half,
    len: usize,
}

impl Tile {
    /// # Safety
    /// `slot < len`; `base` valid for `2·len` 16-byte words.
    #[inline(always)]
    unsafe fn get(self, slot: u32) -> Fr {
        // SAFETY: forwarded to the caller.
        let (Half(lo), Half(hi)) = unsafe { (self.base.add(slot as usize).read(), self.base.add(self.len + slot as usize).read()) };
        Fr::from_limbs([lo[0], lo[1], lo[2], lo[3], hi[0], hi[1], hi[2], hi[3]])
    }

    /// Starts copying the element at `src` into `slot` without registers (`cp.async`); it lands at this
    /// thread's `cp_async_wait_all`.
    ///
    /// # Safety
    /// As [`Tile::get`]; `src` is 32 readable bytes of global memory, 32-byte aligned; nobody reads the slot
    /// before this thread's `cp_async_wait_all` and a barrier after it.
    #[inline(always)]
    unsafe fn copy_async(self, slot: u32, src: *const Fr) {
        let src = src.cast::<[u32; 4]>();
        // SAFETY: forwarded to the caller.
        unsafe {
            cp_async16(self.base.add(slot as usize).cast(), src);
            cp_async16(self.base.add(self.len + slot as usize).cast(), src.add(1));
        }
    }

    /// # Safety
    /// As [`Tile::get`].
    #[inline(always)]
    unsafe fn set(self, slot: u32, x: Fr) {
        let l = x.limbs();
        // SAFETY: forwarded to the caller.
        unsafe {
            self.base.add(slot as usize).write(Half([l[0], l[1], l[2], l[3]]));
            self.base.add(self.len + slot as usize).write(Half([l[4], l[5], l[6], l[7]]));
        }
    }
}

/// One pass; see `crate::ntt`. Tile = block, `params.threads()` threads per block.
///
/// # Safety
/// As the kernels below.
#[inline(always)]
unsafe fn pass<const DIT: bool, const INVERSE: bool>(
    src: *const Fr,
    dst: *mut Fr,
    twiddles: *const Fr,
    scale_lo: *const Fr,
    scale_hi: *const Fr,
    w0: u32,
    w1: u32,
) {
    let params = PassParams::decode(w0, w1);
    // The thread mapping below assumes exactly `params.threads()` threads (uniform: the whole block returns).
    if !params.is_valid() || block_dim_x() != params.threads() {
        return;
    }
    let tile = block_idx_x() as u64;
    let tid = thread_idx_x();
    let width = params.warp_width();
    let (warp, lane) = (tid / width, tid % width);
    let tile_len = 1u32 << params.log_tile();
    // Trips per thread over its warp's region: slots (load, store) and butterflies (a stage).
    let slot_trips = (tile_len >> params.log_warps()) / width;
    let butterfly_trips = slot_trips / 2;
    // Every thread makes the same allocation, so either all threads return here or none do.
    let Some(shared) = SharedArena::dynamic().alloc::<Fr>(tile_len as usize) else { return };
    let sh = Tile { base: shared.as_ptr().cast::<Half>(), len: tile_len as usize };
    // SAFETY: the caller passes scale tables covering every index `scale_factor` asks for.
    let read = |t: u32, i: u64| unsafe { load(if t == 0 { scale_lo } else { scale_hi }.add(i as usize)) };
    let scaled = params.scale.mode != ScaleMode::None;
    // Orders the tile's shared accesses between two steps (load, stages, store): a block barrier when either
    // step crosses warp regions, otherwise only the warp's own lanes (`PassParams::warp_local`).
    // SAFETY (for every call): `both_local` depends on the launch parameters only, so all threads of the block
    // (or all lanes of the full warp) reach the same barrier; the loops around have uniform bounds and no
    // thread returns after the allocation.
    let sync = |both_local: bool| unsafe {
        if both_local && width == 32 { sync_warp(u32::MAX) } else { sync_threads() }
    };

    // A tile with runs of consecutive lo values (`log_l >= 1`) that needs no scaling on the way in goes global
    // -> shared by `cp.async`: all of a thread's loads are in flight at once (H200: -1 to -2.5% from 2^24 on).
    // Single elements far apart (`log_l = 0` on the top bits: 2^28's former 10-bit first DIF pass) ran 3.7%
    // slower that way; the bottom pass (`log_b = 0`, one contiguous run) keeps plain loads (not tried).
    let copy_async = params.log_l >= 1 && !(scaled && params.scale.on_load);
    for r in 0..slot_trips {
        let e = params.region_slot(warp, lane, r);
        let g = params.global_index(tile, e);
        let from = params.source_index(g) as usize;
        if copy_async {
            // SAFETY: g and its source index < batch * n (the grid has total / tile_len blocks; a reversal stays
            // inside the transform); e < tile_len is this thread's slot alone, and the first stage reads it only
            // after the wait and the barrier below.
            unsafe { sh.copy_async(e, src.add(from)) };
        } else {
            // SAFETY: as above.
            let mut x = unsafe { load(src.add(from)) };
            if scaled && params.scale.on_load {
                x = x.mul(&scale_factor(&params.scale, params.scale_index(g), read));
            }
            // SAFETY: as above.
            unsafe { sh.set(e, x) };
        }
    }
    if copy_async {
        cp_async_wait_all();
    }
    // The load and store take the thread's slots in its warp's region, i.e. they are warp-local steps.
    let mut previous_local = true;
    for stage in 0..params.log_k {
        let local = params.warp_local(DIT, stage);
        sync(previous_local && local);
        previous_local = local;
        // The span-1 stage multiplies by 1 only: skip the twiddle load and the multiplication (1/L of them).
        let unit = params.unit_twiddles(DIT, stage);
        let butterfly_at =
            |r: u32| params.butterfly(DIT, INVERSE, tile, stage, params.region_butterfly(warp, lane, r));
        if !unit && butterfly_trips >= 2 {
            // Two butterflies per trip (trips r and r + 1; the trip count is even): two independent
            // multiplications in one basic block for ptxas to interleave (H200: -1 to -2% from 2^24 on; four
            // at a time took 102 registers and lost 1-6%).
            for r in (0..butterfly_trips).step_by(2) {
                let (b0, b1) = (butterfly_at(r), butterfly_at(r + 1));
                // SAFETY: as for one butterfly below, for the two of this trip (distinct butterflies, so
                // distinct slots).
                unsafe {
                    let (x0, y0, x1, y1) = (sh.get(b0.a), sh.get(b0.b), sh.get(b1.a), sh.get(b1.b));
                    let (w0, w1) = (load(twiddles.add(b0.twiddle as usize)), load(twiddles.add(b1.twiddle as usize)));
                    let (x0, y0) = butterfly(DIT, INVERSE, &x0, &y0, &w0);
                    let (x1, y1) = butterfly(DIT, INVERSE, &x1, &y1, &w1);
                    sh.set(b0.a, x0);
                    sh.set(b0.b, y0);
                    sh.set(b1.a, x1);
                    sh.set(b1.b, y1);
                }
            }
            continue;
        }
        for r in 0..butterfly_trips {
            let bf = butterfly_at(r);
            // SAFETY: a, b < tile_len; within a stage each slot belongs to exactly one butterfly, and butterfly
            // q to one thread; the barrier above orders this against the previous stage (a warp barrier when
            // both stages keep the slots in the warp's region). twiddle <= N/2.
            unsafe {
                let (x, y) = (sh.get(bf.a), sh.get(bf.b));
                let (x, y) = if unit {
                    (x.add(&y), x.sub(&y))
                } else {
                    butterfly(DIT, INVERSE, &x, &y, &load(twiddles.add(bf.twiddle as usize)))
                };
                sh.set(bf.a, x);
                sh.set(bf.b, y);
            }
        }
    }
    // A reversing pass writes other positions than it read: in place (a tile of whole transforms) every warp's
    // loads must be done before any warp stores.
    sync(previous_local && !params.reverse_in && !params.reverse_out);
    for r in 0..slot_trips {
        let e = params.region_slot(warp, lane, r);
        let g = params.global_index(tile, e);
        // SAFETY: slot e was last written before the barrier; g is this tile's element (no other block touches it).
        let mut x = unsafe { sh.get(e) };
        if scaled && !params.scale.on_load {
            x = x.mul(&scale_factor(&params.scale, params.scale_index(g), read));
        }
        // SAFETY: as for the load; the destination index is written by this thread alone (a bijection of g).
        unsafe { store(dst.add(params.destination_index(g) as usize), x) };
    }
}

/// Defines the pass kernel `$name` as `pass::<$dit, $inverse>`.
///
/// Every pass kernel: one pass over a batch of transforms back to back, from `src` to `dst` (the same buffer for
/// an in-place pass); `(w0, w1)` = `PassParams::encode()`; `twiddles` is the forward table, which the inverse
/// kernels read mirrored.
///
/// # Safety
/// Grid: `batch * n / 2^log_tile` blocks of `params.threads()` threads, `2^log_tile * 32` bytes of dynamic shared
/// memory. Block t owns the 2^log_tile positions `global_index(t, *)` (disjoint between blocks):
/// each thread reads the source indices and writes the destination indices of positions it loaded. `src` and
/// `dst` are valid for `batch * n` elements, 32-byte aligned, and either equal or disjoint; equal only when the
/// pass reverses nothing or its tile holds whole transforms. `twiddles` is valid for `2^(log_table-1) + 1` elements;
/// when scaling, `scale_lo`/`scale_hi` cover every index the mode asks for (Constant: `scale_lo[0]`; Powers:
/// `2^lo_bits` and `n >> lo_bits` entries). The tables do not overlap `src` or `dst`. All values canonical Fr.
macro_rules! pass_kernel {
    ($name:ident, $what:literal, dit: $dit:literal, inverse: $inverse:literal) => {
        #[doc = concat!("Kernel `", stringify!($name), "`: one ", $what, " pass (see `pass_kernel!`).")]
        ///
        /// # Safety
        /// As `pass_kernel!` states for every pass kernel.
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name(
            src: *const Fr,
            dst: *mut Fr,
            twiddles: *const Fr,
            scale_lo: *const Fr,
            scale_hi: *const Fr,
            w0: u32,
            w1: u32,
        ) {
            // SAFETY: forwarded to the caller.
            unsafe { pass::<$dit, $inverse>(src, dst, twiddles, scale_lo, scale_hi, w0, w1) }
        }
    };
}

pass_kernel!(ntt_pass_dif, "decimation-in-frequency", dit: false, inverse: false);
pass_kernel!(ntt_pass_dit, "decimation-in-time", dit: true, inverse: false);
pass_kernel!(ntt_pass_dif_inv, "inverse-transform decimation-in-frequency", dit: false, inverse: true);
pass_kernel!(ntt_pass_dit_inv, "inverse-transform decimation-in-time", dit: true, inverse: true);

/// Kernel `ntt_bit_reverse`: permutes each size-`2^log_n` transform of `data` (`total` elements in all) into
/// bit-reversed order, in place.
///
/// # Safety
/// Any 1-D grid (grid-stride loop over positions). Position g swaps with its mirror r only when g < r, so each
/// pair is touched by exactly one thread. `data` valid for `total` elements, 32-byte aligned; `total` a
/// multiple of 2^log_n.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn ntt_bit_reverse(data: *mut Fr, log_n: u32, total: u64) {
    let mask = (1u64 << log_n) - 1;
    for_each_index(total, |g| {
        let p = g & mask;
        let r = bit_reverse(p, log_n);
        if p < r {
            let base = g - p;
            // SAFETY: base + p, base + r < total; the pair belongs to this thread only.
            unsafe {
                let (x, y) = (data.add(g as usize).cast::<u64>(), data.add((base + r) as usize).cast::<u64>());
                let xs = [x.read(), x.add(1).read(), x.add(2).read(), x.add(3).read()];
                let ys = [y.read(), y.add(1).read(), y.add(2).read(), y.add(3).read()];
                for i in 0..4 {
                    x.add(i).write(ys[i]);
                    y.add(i).write(xs[i]);
                }
            }
        }
    });
}

/// Kernel `ntt_bit_reverse_tiled`: permutes each size-`2^log_n` transform of `data` (`log_n >= 8`) into
/// bit-reversed order, in place, through 16 x 16 tiles in shared memory (see `crate::ntt::PermuteBlock`).
/// Elements move as 16-byte halves (`cp.async` in, vector stores out): as plain 32-byte copies LLVM split
/// them into four 8-byte loads and stores, and the kernel moved 2.2 instead of 2.8 TB/s (H200, 2^24..2^28).
///
/// # Safety
/// Grid: `total >> 8` blocks (one per middle value and transform) of 256 threads, at least
/// `2 * 16 * PERMUTE_PITCH * 32` bytes of dynamic shared memory. Thread `e` moves tile element (e / 16, e % 16)
/// of the block's two tiles; a block reads and writes only the two tiles of its pair (middle value `M` and
/// `rev(M)`, handled by the block of the smaller one), all reads before a barrier and all writes after it.
/// `data` valid for `total` elements (a multiple of 2^log_n), 32-byte aligned.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn ntt_bit_reverse_tiled(data: *mut Fr, log_n: u32) {
    if log_n < PERMUTE_MIN_LOG_N || block_dim_x() != 1 << (2 * PERMUTE_EDGE_BITS) {
        return;
    }
    let pb = PermuteBlock::new(block_idx_x() as u64, log_n);
    if !pb.active() {
        return;
    }
    let tile_len = (PERMUTE_PITCH << PERMUTE_EDGE_BITS) as usize;
    // Every thread of the block makes the same allocation: all return here or none.
    let Some(shared) = SharedArena::dynamic().alloc::<Fr>(2 * tile_len) else { return };
    let (first, second) = (shared.as_ptr(), shared.as_ptr().wrapping_add(tile_len));
    let e = thread_idx_x();
    let (row, col) = (e >> PERMUTE_EDGE_BITS, e & ((1 << PERMUTE_EDGE_BITS) - 1));
    let slot = (row * PERMUTE_PITCH + col) as usize;
    let pair = pb.middle != pb.mirror;
    // SAFETY: positions lie in this block's two tiles (inside `data`); slot < tile_len; each thread writes its
    // own slot, which nobody reads before the wait and the barrier.
    unsafe {
        copy_element_async(first.add(slot), data.add(pb.position(log_n, pb.middle, row, col) as usize));
        if pair {
            copy_element_async(second.add(slot), data.add(pb.position(log_n, pb.mirror, row, col) as usize));
        }
        cp_async_wait_all();
        sync_threads();
    }
    let src_row = bit_reverse(col as u64, PERMUTE_EDGE_BITS) as u32;
    let src_col = bit_reverse(row as u64, PERMUTE_EDGE_BITS) as u32;
    let src = (src_row * PERMUTE_PITCH + src_col) as usize;
    // SAFETY: after the barrier the tiles are only read; each global position is written by one thread.
    unsafe {
        copy_element_out(data.add(pb.position(log_n, pb.mirror, row, col) as usize), first.add(src));
        if pair {
            copy_element_out(data.add(pb.position(log_n, pb.middle, row, col) as usize), second.add(src));
        }
    }
}

/// Starts copying one element from global `src` to shared `dst` as two 16-byte `cp.async` (lands at
/// `cp_async_wait_all`).
///
/// # Safety
/// `src` 32 readable bytes of global memory, `dst` 32 writable bytes of shared memory, both 32-byte aligned.
#[inline(always)]
unsafe fn copy_element_async(dst: *mut Fr, src: *const Fr) {
    let (dst, src) = (dst.cast::<[u32; 4]>(), src.cast::<[u32; 4]>());
    // SAFETY: forwarded to the caller.
    unsafe {
        cp_async16(dst, src);
        cp_async16(dst.add(1), src.add(1));
    }
}

/// Copies one element from shared `src` to global `dst` in two 16-byte halves.
///
/// # Safety
/// `src` 32 readable bytes of shared memory, `dst` 32 writable bytes of global memory, both 32-byte aligned.
#[inline(always)]
unsafe fn copy_element_out(dst: *mut Fr, src: *const Fr) {
    let (dst, src) = (dst.cast::<[u32; 4]>(), src.cast::<[u32; 4]>());
    // SAFETY: forwarded to the caller.
    unsafe {
        copy16_shared_to_global(dst, src);
        copy16_shared_to_global(dst.add(1), src.add(1));
    }
}

/// Kernel `ntt_fill_table`: `out[e] = hi[e >> lo_bits] * lo[e mod 2^lo_bits]` for `e < count`.
///
/// # Safety
/// Any 1-D grid (grid-stride loop). `out` valid for `count` writes; `lo` for `2^lo_bits` reads and `hi` for
/// `ceil(count / 2^lo_bits)` reads; no overlap with `out`.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn ntt_fill_table(out: *mut Fr, lo: *const Fr, hi: *const Fr, lo_bits: u32, count: u64) {
    for_each_index(count, |e| {
        // SAFETY: indices within the bounds the caller guarantees.
        unsafe {
            let x = load(hi.add((e >> lo_bits) as usize)).mul(&load(lo.add((e & ((1u64 << lo_bits) - 1)) as usize)));
            store(out.add(e as usize), x);
        }
    });
}

/// Kernel `ntt_h_pointwise`: `a[i] = a[i] * b[i] * z[0]` for `i < count` (Groth16: A·B over the vanishing
/// polynomial, which is constant on the coset).
///
/// # Safety
/// Any 1-D grid (grid-stride loop). `a`, `b` valid for `count` elements, `z` for one; `a` does not overlap
/// the others.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn ntt_h_pointwise(a: *mut Fr, b: *const Fr, z: *const Fr, count: u64) {
    // SAFETY: z valid for one element.
    let z = unsafe { load(z) };
    for_each_index(count, |i| {
        // SAFETY: i < count.
        unsafe {
            let i = i as usize;
            let x = load(a.add(i)).mul(&load(b.add(i))).mul(&z);
            store(a.add(i), x);
        }
    });
}

/// Kernel `ntt_h_subtract`: `a[i] = a[i] - c[i] * z[0]` for `i < count` (Groth16: C's share of the
/// quotient, subtracted from the interpolated A·B / Z as coefficients: the coset round trip of C cancels).
///
/// # Safety
/// Any 1-D grid (grid-stride loop). `a`, `c` valid for `count` elements, `z` for one; `a` does not overlap
/// the others.
#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn ntt_h_subtract(a: *mut Fr, c: *const Fr, z: *const Fr, count: u64) {
    // SAFETY: z valid for one element.
    let z = unsafe { load(z) };
    for_each_index(count, |i| {
        // SAFETY: i < count.
        unsafe {
            let i = i as usize;
            let x = load(a.add(i)).sub(&load(c.add(i)).mul(&z));
            store(a.add(i), x);
        }
    });
}
