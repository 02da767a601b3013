//! Batch addition: the sum of a set of affine points, optionally under a selection bitmap (bit `i` selects
//! point `i`), many independent sets per launch.
//!
//! Groth16 provers send the points whose scalar is 1 here instead of to the MSM. The device-side algorithm is
//! written once, target-independent, so the host build runs exactly the per-lane program the GPU runs
//! ([`model`] replays a whole launch on the CPU for the tests). Kernels are in `entry/batch_add.rs`.
//!
//! # XYZZ accumulation (variant `xyzz`)
//! 1. **Accumulate** (one launch, grid `(blocks_per_set, sets)`): the set's points are cut into 32-point
//!    *windows*; every warp owns a contiguous range of windows. For each window the warp reads the same
//!    selection word (all-ones without a bitmap) and deals its set bits round-robin to the lanes: lane
//!    `fill + j` gets the `j`-th selected point. Whenever all 32 lanes hold a point, every lane adds its point
//!    to its own XYZZ accumulator (mixed add, 8M + 2S). So a 50 % bitmap keeps all lanes busy (no lane idles
//!    on an unselected point), and with all points selected lane `l` adds point `32k + l`: coalesced loads.
//!    The block then sums its accumulators in a shared-memory tree (general XYZZ adds) and writes one
//!    partial per block.
//! 2. **Reduce** levels and a **finish** (one block per set) sum the set's partials and write the result as
//!    Jacobian, which is `blstrs::G1Projective` / `G2Projective`. That tail is a chain of general additions one
//!    after another, so four lanes share each addition ([`quad_add_step`]: 4 product latencies, not 14).
//!
//! # Affine addition with batch inversion (variant `affine`)
//! One *level* halves a list of affine points: `out[i] = in[2i] + in[2i + 1]` (the last point passes through
//! when the count is odd). An affine addition needs `1 / (x2 − x1)`; each lane shares one inversion over all
//! its pairs (Montgomery's trick: prefix products forward, one inversion, then backwards
//! `1/d_i = inv · prefix_{i−1}` and `inv ← inv · d_i`). Per pair that is 3M for the trick plus 2M + 1S for the
//! addition, against 8M + 2S for a mixed XYZZ add, but it reads and writes memory per level. A warp takes
//! blocks of 32 consecutive pairs (6 KiB of G1 points); the kernel copies each block through shared memory
//! in 16-byte chunks, so every global load and store of the level is a whole-warp contiguous access (one
//! lane per pair reading its own 192 bytes would touch 32 cache lines per instruction), and the copy of the
//! next block (`cp.async`) overlaps the work on the current one. The prefix products sit in the block's
//! output space word-interleaved across the lanes.
//! The host runs a few levels and hands the shrunken list to the XYZZ kernels. Under a bitmap the selected
//! points are first compacted into an index list (their count stays on the device, where every level reads
//! it) and the first level gathers its pairs through the indices. Degenerate pairs (an
//! identity operand, `P + P`, `P + (−P)`) are handled per pair: the doubling uses `λ = 3x²/(2y)` (so its
//! denominator `2y` joins the same batch), the others get denominator 1 and a direct result.

use crate::curve::{Affine, Xyzz};
use crate::field::{Field, Fr};

/// Lanes per warp: one window is 32 points, one selection word.
pub const WINDOW: u32 = 32;

/// Threads per block of the G1 accumulate kernel (shared memory: one XYZZ point, 192 B, per thread).
pub const G1_ACCUMULATE_BLOCK: u32 = 128;
/// Threads per block of the G2 accumulate kernel (384 B of shared memory per thread; 255 registers).
pub const G2_ACCUMULATE_BLOCK: u32 = 64;
/// Threads per block of the finish kernels (one block per set): 64 additions in flight, so a finish takes the
/// ~330 partials of a 2^20 sum's one reduce level without a second, nearly empty one.
pub const FINISH_BLOCK: u32 = 256;
/// Threads per block of the affine level kernels.
pub const AFFINE_LEVEL_BLOCK: u32 = 64;

/// Position of the `j`-th set bit of `word` (`j` counted from 0), or 32 when `word` has `j` or fewer set bits.
#[inline(always)]
pub fn nth_set_bit(word: u32, j: u32) -> u32 {
    if word == u32::MAX {
        return j.min(32);
    }
    let mut rest = word;
    let mut k = 0;
    while k < j && rest != 0 {
        rest &= rest - 1;
        k += 1;
    }
    rest.trailing_zeros()
}

/// The windows `[start, end)` warp `warp` of `warps` owns when a set has `windows` windows: contiguous, equal
/// shares (differing by at most one).
#[inline(always)]
pub fn window_range(windows: u32, warp: u32, warps: u32) -> (u32, u32) {
    let share = |w: u32| ((windows as u64 * w as u64) / warps.max(1) as u64) as u32;
    (share(warp), share(warp + 1))
}

/// The selection word of window `window` of a set whose points start at global index `first` and number
/// `set_len`: bit `l` selects the set's point `32·window + l`. Bits past the set are cleared. Without a
/// bitmap (`bitmap_word == None`) every point of the window is selected. `bitmap_word(k)` returns the
/// bitmap's `k`-th 32-bit word; it is only asked for words holding bits of this window.
#[inline(always)]
pub fn selection_word<W: Fn(usize) -> u32>(bitmap_word: Option<W>, first: u32, set_len: u32, window: u32) -> u32 {
    let start = window * WINDOW;
    let valid = set_len.saturating_sub(start).min(WINDOW);
    let mask = if valid >= WINDOW { u32::MAX } else { (1u32 << valid) - 1 };
    let Some(word_at) = bitmap_word else { return mask };
    if valid == 0 {
        return 0;
    }
    let bit = first as usize + start as usize;
    let (word, shift) = (bit / 32, (bit % 32) as u32);
    let mut bits = word_at(word) >> shift;
    if shift != 0 && shift + valid > 32 {
        bits |= word_at(word + 1) << (32 - shift);
    }
    bits & mask
}

/// One lane's share of a warp's windows `[start, end)`: the XYZZ sum of the selected points dealt to it.
///
/// Warp-uniform state: `fill` = how many lanes (from lane 0) hold a pending point. For each window with
/// selection word `w` (`c` set bits), lane `fill + j` takes the `j`-th selected point; if that fills the warp,
/// every lane adds its pending point and the bits that did not fit go to lanes `0..fill + c − 32`. The last,
/// partly filled round adds on lanes `< fill` only. `word_of(window)` and `point_at(index in set)` are the
/// only memory accesses; every lane computes the same words, so all branches on `fill` are uniform.
#[inline(always)]
pub fn accumulate_lane<F: Field>(
    lane: u32,
    (start, end): (u32, u32),
    word_of: impl Fn(u32) -> u32,
    point_at: impl Fn(u32) -> Affine<F>,
) -> Xyzz<F> {
    let mut acc = Xyzz::<F>::IDENTITY;
    let mut pending = 0u32;
    let mut fill = 0u32;
    let mut window = start;
    while window < end {
        let word = word_of(window);
        let count = word.count_ones();
        let base = window * WINDOW;
        let j = lane.wrapping_sub(fill);
        if j < count {
            pending = base + nth_set_bit(word, j);
        }
        if fill + count >= WINDOW {
            // The lane's sum stays lazily reduced until it is returned.
            acc = acc.add_affine_lazy(&point_at(pending));
            let rest = fill + count - WINDOW;
            if lane < rest {
                pending = base + nth_set_bit(word, lane + WINDOW - fill);
            }
            fill = rest;
        } else {
            fill += count;
        }
        window += 1;
    }
    if lane < fill {
        acc = acc.add_affine_lazy(&point_at(pending));
    }
    acc.canonical()
}

/// `a == b` without `PartialEq`, whose derived array comparison becomes a `memcmp` call the PTX cannot link.
#[inline(always)]
fn equal<F: Field>(a: &F, b: &F) -> bool {
    a.sub(b).is_zero()
}

/// Scalar classes for [`classify_scalar`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarClass {
    /// 0: the point contributes nothing.
    Zero,
    /// 1: the point goes to batch addition.
    One,
    /// Anything else: the point goes to the MSM.
    Other,
}

/// Which path a scalar's point takes (scalars are Montgomery form, canonical, as blstrs keeps them).
#[inline(always)]
pub fn classify_scalar(s: &Fr) -> ScalarClass {
    if s.is_zero() {
        ScalarClass::Zero
    } else if s.sub(&Fr::ONE).is_zero() {
        ScalarClass::One
    } else {
        ScalarClass::Other
    }
}

/// The batch-inversion denominator of the affine pair `p + q`: `x_q − x_p` for distinct x, `2y_p` for a
/// doubling, 1 when the result needs no division (an identity operand, or `q = −p`). Never zero for points
/// of G1/G2 (no point has `y = 0`), so the running product never collapses.
#[inline(always)]
pub fn pair_denominator<F: Field>(p: &Affine<F>, q: &Affine<F>) -> F {
    pair_denominator_lazy(&p.x, &q.x, || (p.y, q.y))
}

/// [`pair_denominator`] from the x coordinates, asking `ys()` for `(y_p, y_q)` only when they matter (an x is
/// zero, so the point may be the identity, or the x are equal): callers that read points from memory skip
/// the y loads on the common path.
#[inline(always)]
pub fn pair_denominator_lazy<F: Field>(px: &F, qx: &F, ys: impl FnOnce() -> (F, F)) -> F {
    let dx = qx.sub(px);
    if !(px.is_zero() || qx.is_zero() || dx.is_zero()) {
        return dx;
    }
    let (py, qy) = ys();
    if (px.is_zero() && py.is_zero()) || (qx.is_zero() && qy.is_zero()) {
        F::ONE
    } else if !dx.is_zero() {
        dx
    } else if equal(&py, &qy) && !py.is_zero() {
        py.double()
    } else {
        F::ONE
    }
}

/// `p + q` in affine coordinates, given `inv = 1 / pair_denominator(p, q)`. Cost: 2M + 1S (3M + 2S for a
/// doubling).
#[inline(always)]
pub fn pair_sum<F: Field>(p: &Affine<F>, q: &Affine<F>, inv: &F) -> Affine<F> {
    if p.is_identity() {
        return *q;
    }
    if q.is_identity() {
        return *p;
    }
    let lambda = if !equal(&p.x, &q.x) {
        q.y.sub(&p.y).mul(inv)
    } else if equal(&p.y, &q.y) && !p.y.is_zero() {
        let x_sq = p.x.square();
        x_sq.double().add(&x_sq).mul(inv)
    } else {
        return Affine::IDENTITY;
    };
    let x3 = lambda.square().sub(&p.x).sub(&q.x);
    let y3 = lambda.mul(&p.x.sub(&x3)).sub(&p.y);
    Affine { x: x3, y: y3 }
}

/// Pairs per block of an affine level: a warp takes 32 consecutive pairs at a time, lane `l` pair `32k + l`.
pub const LEVEL_BLOCK_PAIRS: u32 = 32;
/// Bytes of the unit the affine levels copy through shared memory (one `ld/st .v4.b32`).
pub const CHUNK_BYTES: usize = 16;

/// Chunks from one slot of `bytes` to the next in a warp's staging area: the slot rounded to an odd number
/// of chunks, so 8 lanes reading one 16-byte chunk each from their own slot hit 8 different bank groups.
pub const fn stage_stride(bytes: usize) -> usize {
    (bytes / CHUNK_BYTES) | 1
}

/// Dynamic shared memory of one `batch_add_{C}_affine_level` block for points of `point_bytes`: two staging
/// areas per warp (the block in use and the next one in flight), one pair slot per lane in each (G1 26 KiB,
/// G2 50 KiB).
pub const fn affine_level_shared_bytes(point_bytes: usize) -> usize {
    2 * AFFINE_LEVEL_BLOCK as usize * stage_stride(2 * point_bytes) * CHUNK_BYTES
}

/// What one lane of an affine level reads and writes. The lane's `j`-th block is block `warp + j·warps` of
/// the level; its pair there is `32·block + lane`. Every lane of a warp makes the same calls in the same
/// order (the GPU's implementation copies each block through shared memory and synchronizes the warp); a
/// lane whose pair is past the end gets `None` and passes `None`.
pub trait LevelLane<F: Field> {
    /// The x coordinates of the lane's pair in block `j`.
    fn xs(&mut self, j: u32) -> Option<(F, F)>;
    /// The y coordinates of the lane's pair in block `j` (only asked when an x is zero or the two are equal).
    fn ys(&self, j: u32) -> (F, F);
    /// Keeps the prefix product of block `j` (in the output's space: it is read back before the sum lands).
    fn store_prefix(&mut self, j: u32, prefix: F);
    /// The lane's pair in block `j`.
    fn pair(&mut self, j: u32) -> Option<(Affine<F>, Affine<F>)>;
    /// The prefix product kept for block `j`.
    fn prefix(&self, j: u32) -> F;
    /// Writes the lane's sum of block `j` (called after `prefix(j)`).
    fn store(&mut self, j: u32, sum: Option<Affine<F>>);
}

/// One lane of an affine level over its `blocks` blocks, sharing one inversion (Montgomery's trick): forward
/// `prefix_j = d_0 · … · d_{j−1}`, one inversion, then backwards `1/d_j = inv · prefix_j`, `inv ← inv · d_j`.
#[inline(always)]
pub fn affine_level_lane<F: Field>(blocks: u32, lane: &mut impl LevelLane<F>) {
    let mut running = F::ONE;
    let mut j = 0;
    while j < blocks {
        if let Some((px, qx)) = lane.xs(j) {
            lane.store_prefix(j, running);
            running = running.mul(&pair_denominator_lazy(&px, &qx, || lane.ys(j)));
        }
        j += 1;
    }
    let mut inv = running.inverse();
    while j > 0 {
        j -= 1;
        let sum = match lane.pair(j) {
            Some((p, q)) => {
                let inv_d = inv.mul(&lane.prefix(j));
                inv = inv.mul(&pair_denominator(&p, &q));
                Some(pair_sum(&p, &q, &inv_d))
            }
            None => None,
        };
        lane.store(j, sum);
    }
}

/// Points in the input of an affine level that halves a list of `count` points `shift` times before it:
/// `ceil(count / 2^shift)` (each level leaves `ceil(n / 2)`). The levels read `count` from device memory, so a
/// list whose length only the GPU knows (the points a bitmap selects) needs no round trip to the host.
#[inline(always)]
pub fn level_input_len(count: u32, shift: u32) -> u32 {
    let shift = shift.min(32);
    ((count as u64 + (1u64 << shift) - 1) >> shift) as u32
}

/// Blocks of `pairs` pairs that warp `warp` of `warps` takes (warp-uniform).
pub fn level_blocks_of_warp(pairs: u32, warp: u32, warps: u32) -> u32 {
    let blocks = pairs.div_ceil(LEVEL_BLOCK_PAIRS);
    if warp < blocks && warps > 0 { (blocks - 1 - warp) / warps + 1 } else { 0 }
}

/// Lanes that share one general XYZZ addition in the reduce and finish kernels ([`quad_add_step`]).
pub const QUAD: u32 = 4;

/// The workspace of a quad addition, one field element per slot: `P1 = (X1, Y1, ZZ1, ZZZ1)` (also the result),
/// `P2`, then the intermediate values of add-2008-s.
pub mod quad_slot {
    pub const X1: usize = 0;
    pub const ZZ1: usize = 2;
    pub const ZZZ1: usize = 3;
    pub const X2: usize = 4;
    pub const Y2: usize = 5;
    pub const ZZ2: usize = 6;
    pub const ZZZ2: usize = 7;
    pub const U1: usize = 8;
    pub const U2: usize = 9;
    pub const S1: usize = 10;
    pub const S2: usize = 11;
    pub const ZZ12: usize = 12;
    pub const ZZZ12: usize = 13;
    pub const PP: usize = 14;
    pub const RR: usize = 15;
    pub const PPP: usize = 16;
    pub const ZZ3: usize = 17;
    pub const Q1: usize = 18;
    pub const ZZZ3: usize = 19;
    pub const S1PPP: usize = 20;
    pub const RQX: usize = 21;
    /// Slots per workspace.
    pub const COUNT: usize = 22;
}

/// What a group of [`QUAD`] lanes does after a step of [`quad_add_step`] (the same for all four: it depends
/// only on workspace values every lane read after the same barrier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuadFlow {
    /// Run step `step + 1`.
    Next,
    /// `P1` is the identity: run [`QUAD_COPY_STEP`] (`P1 ← P2`).
    Copy,
    /// The workspace's `P1` holds the sum.
    Done,
}

/// The step that copies `P2` into `P1` (lane `k` copies coordinate `k`).
pub const QUAD_COPY_STEP: u32 = 5;

/// Dynamic shared memory of a reduce or finish block of `block` threads over a field of `field_bytes` bytes:
/// one quad workspace per group of [`QUAD`] threads.
pub const fn quad_shared_bytes(block: u32, field_bytes: usize) -> usize {
    (block / QUAD) as usize * quad_slot::COUNT * field_bytes
}

/// One step of `P1 ← P1 + P2` (XYZZ, add-2008-s, exactly [`Xyzz::add`]'s values) run by lane `lane < 4` of a
/// group that shares the workspace (`get`/`set` slot `i`, [`quad_slot`]). Between two steps the group needs
/// a barrier (its lanes read what the others wrote). Each step gives every lane at most one product, so
/// the addition's 12M + 2S take 4 product latencies instead of 14 in a row: the reduce and finish kernels are
/// a tree of additions one after another, bound by that latency (H200: ~15-22 µs per serial addition there).
///
/// In a step every lane writes only slots that no lane reads in it (checked by the model's lane-by-lane
/// replay, which would disagree with [`Xyzz::add`] otherwise).
#[inline(always)]
pub fn quad_add_step<F: Field>(step: u32, lane: u32, get: impl Fn(usize) -> F, mut set: impl FnMut(usize, F)) -> QuadFlow {
    use quad_slot::*;
    let lane = (lane & 3) as usize;
    let p = || get(U2).sub(&get(U1));
    let r = || get(S2).sub(&get(S1));
    // Each product step selects its lane's two factors and destination, then runs one multiplication (one
    // inlined copy per step keeps the kernels small; lane 3 idles in steps 2 and 3).
    let (a, b, dst) = match step {
        0 => {
            if get(ZZ2).is_zero() {
                return QuadFlow::Done;
            }
            if get(ZZ1).is_zero() {
                return QuadFlow::Copy;
            }
            // U1 = X1·ZZ2, U2 = X2·ZZ1, S1 = Y1·ZZZ2, S2 = Y2·ZZZ1.
            let (a, b) = [(X1, ZZ2), (X2, ZZ1), (X1 + 1, ZZZ2), (Y2, ZZZ1)][lane];
            (get(a), get(b), U1 + lane)
        }
        // ZZ1·ZZ2, ZZZ1·ZZZ2, PP = P², RR = R².
        1 => match lane {
            0 => (get(ZZ1), get(ZZ2), ZZ12),
            1 => (get(ZZZ1), get(ZZZ2), ZZZ12),
            2 => (p(), p(), PP),
            _ => (r(), r(), RR),
        },
        2 => {
            let p = p();
            if p.is_zero() {
                // Same x: the doubling of (U1, S1, ZZ1·ZZ2, ZZZ1·ZZZ2) = P1 when also R = 0, else the identity.
                if r().is_zero() {
                    if lane == 0 {
                        let p1 = Xyzz { x: get(U1), y: get(S1), zz: get(ZZ12), zzz: get(ZZZ12) };
                        let d = crate::curve::outlined::double(&p1);
                        set(X1, d.x);
                        set(X1 + 1, d.y);
                        set(ZZ1, d.zz);
                        set(ZZZ1, d.zzz);
                    }
                } else {
                    set(X1 + lane, F::ZERO);
                }
                return QuadFlow::Done;
            }
            // PPP = P·PP, ZZ3 = ZZ12·PP, Q1 = U1·PP.
            match lane {
                0 => (p, get(PP), PPP),
                1 => (get(ZZ12), get(PP), ZZ3),
                2 => (get(U1), get(PP), Q1),
                _ => return QuadFlow::Next,
            }
        }
        // ZZZ3 = ZZZ12·PPP, S1·PPP, R·(Q1 − X3).
        3 => match lane {
            0 => (get(ZZZ12), get(PPP), ZZZ3),
            1 => (get(S1), get(PPP), S1PPP),
            2 => {
                let x3 = get(RR).sub(&get(PPP)).sub(&get(Q1).double());
                (r(), get(Q1).sub(&x3), RQX)
            }
            _ => return QuadFlow::Next,
        },
        4 => {
            // X3 = RR − PPP − 2·Q1, Y3 = R·(Q1 − X3) − S1·PPP, ZZ3, ZZZ3 into P1.
            let v = match lane {
                0 => get(RR).sub(&get(PPP)).sub(&get(Q1).double()),
                1 => get(RQX).sub(&get(S1PPP)),
                2 => get(ZZ3),
                _ => get(ZZZ3),
            };
            set(X1 + lane, v);
            return QuadFlow::Done;
        }
        _ => {
            set(X1 + lane, get(X2 + lane));
            return QuadFlow::Done;
        }
    };
    set(dst, a.mul(&b));
    QuadFlow::Next
}

/// `acc + other` (general XYZZ addition, 12M + 2S) for the model's per-block trees ([`model::tree`]); the GPU's
/// reduce and finish kernels run the same addition as [`quad_add_step`].
#[inline(always)]
pub fn combine<F: Field>(acc: &Xyzz<F>, other: &Xyzz<F>) -> Xyzz<F> {
    crate::curve::outlined::add(acc, other)
}

/// A CPU replay of the launches, in the GPU's order, for tests: the same lane programs, windows, trees.
#[cfg(not(target_arch = "nvptx64"))]
pub mod model {
    use super::*;
    use crate::curve::Jacobian;

    /// The block tree: `v[t] += v[t + stride]` for `stride = len/2, …, 1` (`len` a power of two).
    pub fn tree<F: Field>(mut v: Vec<Xyzz<F>>) -> Xyzz<F> {
        let mut stride = v.len() / 2;
        while stride > 0 {
            for t in 0..stride {
                v[t] = combine(&v[t], &v[t + stride]);
            }
            stride /= 2;
        }
        v.first().copied().unwrap_or(Xyzz::IDENTITY)
    }

    /// The accumulate kernel for one set: `blocks` blocks of `block` threads; returns the per-block partials.
    pub fn accumulate<F: Field>(
        points: &[Affine<F>],
        bitmap: Option<&[u32]>,
        first: u32,
        blocks: u32,
        block: u32,
    ) -> Vec<Xyzz<F>> {
        let set_len = points.len() as u32;
        let windows = set_len.div_ceil(WINDOW);
        let warps_per_block = block / WINDOW;
        let warps = blocks * warps_per_block;
        (0..blocks)
            .map(|b| {
                let accs = (0..block)
                    .map(|t| {
                        let warp = b * warps_per_block + t / WINDOW;
                        let range = window_range(windows, warp, warps);
                        accumulate_lane(
                            t % WINDOW,
                            range,
                            |w| selection_word(bitmap.map(|b| move |k: usize| b[k]), first, set_len, w),
                            |i| points[i as usize],
                        )
                    })
                    .collect();
                tree(accs)
            })
            .collect()
    }

    /// `p1 + p2` by [`quad_add_step`], replayed lane by lane and step by step: every lane reads the workspace
    /// as the step's barrier left it, and the step's writes land after it. Panics if the lanes disagree on the
    /// flow, if two lanes write one slot, or if a lane writes a slot some lane reads in the same step (a race
    /// on the GPU).
    pub fn quad_add<F: Field>(p1: &Xyzz<F>, p2: &Xyzz<F>) -> Xyzz<F> {
        use std::cell::RefCell;
        let mut ws = vec![F::ZERO; quad_slot::COUNT];
        ws[..4].copy_from_slice(&[p1.x, p1.y, p1.zz, p1.zzz]);
        ws[4..8].copy_from_slice(&[p2.x, p2.y, p2.zz, p2.zzz]);
        let mut step = 0;
        loop {
            let reads = RefCell::new(Vec::new());
            let mut writes: Vec<(usize, F)> = Vec::new();
            let flows: Vec<QuadFlow> = (0..QUAD)
                .map(|lane| {
                    quad_add_step(
                        step,
                        lane,
                        |i| {
                            reads.borrow_mut().push(i);
                            ws[i]
                        },
                        |i, v| writes.push((i, v)),
                    )
                })
                .collect();
            assert!(flows.iter().all(|&f| f == flows[0]), "step {step}: lanes disagree: {flows:?}");
            for (k, &(i, _)) in writes.iter().enumerate() {
                assert!(writes[..k].iter().all(|&(j, _)| j != i), "step {step}: slot {i} written twice");
                assert!(!reads.borrow().contains(&i), "step {step}: slot {i} written and read");
            }
            for (i, v) in writes {
                ws[i] = v;
            }
            match flows[0] {
                QuadFlow::Next => step += 1,
                QuadFlow::Copy => step = QUAD_COPY_STEP,
                QuadFlow::Done => return Xyzz { x: ws[0], y: ws[1], zz: ws[2], zzz: ws[3] },
            }
        }
    }

    /// A reduce or finish block of `block` threads over `inputs` (the block's share of a set): group `g` of
    /// `block / QUAD` sums inputs `g, g + groups, …` by quad additions, then the groups' sums go through the
    /// same tree as [`tree`], with quad additions.
    pub fn quad_block<F: Field>(inputs: &[Xyzz<F>], block: u32) -> Xyzz<F> {
        let groups = (block / QUAD) as usize;
        let mut sums: Vec<Xyzz<F>> =
            (0..groups).map(|g| inputs.iter().skip(g).step_by(groups).fold(Xyzz::IDENTITY, |a, p| quad_add(&a, p))).collect();
        let mut stride = groups / 2;
        while stride > 0 {
            for g in 0..stride {
                sums[g] = quad_add(&sums[g], &sums[g + stride]);
            }
            stride /= 2;
        }
        sums[0]
    }

    /// The finish kernel for one set ([`quad_block`] over all the set's partials), as Jacobian.
    pub fn finish<F: Field>(partials: &[Xyzz<F>], block: u32) -> Jacobian<F> {
        quad_block(partials, block).to_jacobian()
    }

    /// One lane of the model's affine level: the GPU's mapping, plain slices instead of staging.
    struct ModelLane<'a, F> {
        input: &'a [Affine<F>],
        /// The gathered first level: point `k` of the list is `input[indices[k]]`.
        indices: Option<&'a [u32]>,
        out: &'a mut [Affine<F>],
        prefix: &'a mut [F],
        pairs: u32,
        warp: u32,
        warps: u32,
        lane: u32,
    }

    impl<F: Field> ModelLane<'_, F> {
        fn pair_index(&self, j: u32) -> Option<usize> {
            let i = (self.warp + j * self.warps) * LEVEL_BLOCK_PAIRS + self.lane;
            (i < self.pairs).then_some(i as usize)
        }

        fn point(&self, k: usize) -> Affine<F> {
            self.input[self.indices.map_or(k, |ix| ix[k] as usize)]
        }
    }

    impl<F: Field> LevelLane<F> for ModelLane<'_, F> {
        fn xs(&mut self, j: u32) -> Option<(F, F)> {
            self.pair_index(j).map(|i| (self.point(2 * i).x, self.point(2 * i + 1).x))
        }
        fn ys(&self, j: u32) -> (F, F) {
            let i = self.pair_index(j).unwrap_or(0);
            (self.point(2 * i).y, self.point(2 * i + 1).y)
        }
        fn store_prefix(&mut self, j: u32, prefix: F) {
            if let Some(i) = self.pair_index(j) {
                self.prefix[i] = prefix;
            }
        }
        fn pair(&mut self, j: u32) -> Option<(Affine<F>, Affine<F>)> {
            self.pair_index(j).map(|i| (self.point(2 * i), self.point(2 * i + 1)))
        }
        fn prefix(&self, j: u32) -> F {
            self.pair_index(j).map_or(F::ZERO, |i| self.prefix[i])
        }
        fn store(&mut self, j: u32, sum: Option<Affine<F>>) {
            if let (Some(i), Some(sum)) = (self.pair_index(j), sum) {
                self.out[i] = sum;
            }
        }
    }

    /// One affine level launched as the host does for runs of `run` pairs per thread
    /// (`ceil(pairs / run)` threads in blocks of [`AFFINE_LEVEL_BLOCK`]) over the list `input` or, with
    /// `indices`, over the gathered list `input[indices[0]], input[indices[1]], …`.
    pub fn affine_level<F: Field>(input: &[Affine<F>], indices: Option<&[u32]>, run: u32) -> Vec<Affine<F>> {
        let n = indices.map_or(input.len(), <[u32]>::len);
        let pairs = (n / 2) as u32;
        let mut out = vec![Affine::<F>::IDENTITY; n.div_ceil(2)];
        let mut prefix = vec![F::ZERO; pairs as usize];
        let threads = pairs.div_ceil(run.max(1)).max(1);
        let warps = threads.div_ceil(AFFINE_LEVEL_BLOCK) * AFFINE_LEVEL_BLOCK / LEVEL_BLOCK_PAIRS;
        for warp in 0..warps {
            let blocks = level_blocks_of_warp(pairs, warp, warps);
            for lane in 0..LEVEL_BLOCK_PAIRS {
                let mut io = ModelLane { input, indices, out: &mut out, prefix: &mut prefix, pairs, warp, warps, lane };
                affine_level_lane(blocks, &mut io);
            }
        }
        if n % 2 == 1 {
            out[pairs as usize] = input[indices.map_or(n - 1, |ix| ix[n - 1] as usize)];
        }
        out
    }
}
