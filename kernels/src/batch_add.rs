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
//! 2. **Finish** (one block per set): sums the set's partials (strided, then the same tree) and writes the
//!    result as Jacobian, which is `blstrs::G1Projective` / `G2Projective`.
//!
//! # Affine addition with batch inversion (variant `affine`)
//! One *level* halves a list of affine points: `out[i] = in[2i] + in[2i + 1]` (the last point passes through
//! when the count is odd). An affine addition needs `1 / (x2 − x1)`; each thread takes a run of pairs and
//! shares one inversion over the run (Montgomery's trick: prefix products forward, one inversion, then
//! backwards `1/d_i = inv · prefix_{i−1}` and `inv ← inv · d_i`). Per pair that is 3M for the trick plus
//! 2M + 1S for the addition, against 8M + 2S for a mixed XYZZ add, but it reads and writes memory per level.
//! The host runs a few levels and hands the shrunken list to the XYZZ kernels. Degenerate pairs (an
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
/// Threads per block of the finish kernels (one block per set).
pub const FINISH_BLOCK: u32 = 64;
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
            acc = acc.add_affine(&point_at(pending));
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
        acc = acc.add_affine(&point_at(pending));
    }
    acc
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

/// One thread of an affine level: pairs `[start, end)` of `input` (pair `i` is `input[2i], input[2i+1]`; the
/// pair index `pairs_total` of an odd count is the lone last point, passed through). `prefix` is scratch
/// written and read at the same indices as the output (the output's x may serve), so `store(i, point)` must
/// come after `load_prefix(i)`, which this function guarantees.
#[inline(always)]
pub fn affine_level_run<F: Field>(
    (start, end): (u32, u32),
    load_pair: impl Fn(u32) -> (Affine<F>, Affine<F>),
    store_prefix: impl Fn(u32, F),
    load_prefix: impl Fn(u32) -> F,
    store: impl Fn(u32, Affine<F>),
) {
    if start >= end {
        return;
    }
    // Forward: prefix_i = d_start · … · d_{i−1}.
    let mut running = F::ONE;
    let mut i = start;
    while i < end {
        let (p, q) = load_pair(i);
        store_prefix(i, running);
        running = running.mul(&pair_denominator(&p, &q));
        i += 1;
    }
    // One inversion for the run, then backwards: 1/d_i = inv · prefix_i, inv ← inv · d_i.
    let mut inv = running.inverse();
    let mut i = end;
    while i > start {
        i -= 1;
        let (p, q) = load_pair(i);
        let d = pair_denominator(&p, &q);
        let inv_d = inv.mul(&load_prefix(i));
        inv = inv.mul(&d);
        store(i, pair_sum(&p, &q, &inv_d));
    }
}

/// `acc + other` for the shared-memory trees (general XYZZ addition, 12M + 2S).
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

    /// The finish kernel for one set: thread `t` sums partials `t, t + block, …`, then the tree.
    pub fn finish<F: Field>(partials: &[Xyzz<F>], block: u32) -> Jacobian<F> {
        let accs = (0..block as usize)
            .map(|t| partials.iter().skip(t).step_by(block as usize).fold(Xyzz::IDENTITY, |a, p| combine(&a, p)))
            .collect();
        tree(accs).to_jacobian()
    }

    /// One affine level with runs of `run` pairs per thread.
    pub fn affine_level<F: Field>(input: &[Affine<F>], run: u32) -> Vec<Affine<F>> {
        use core::cell::RefCell;
        let pairs = (input.len() / 2) as u32;
        let out = RefCell::new(vec![Affine::<F>::IDENTITY; input.len().div_ceil(2)]);
        let prefix = RefCell::new(vec![F::ZERO; pairs as usize]);
        let threads = pairs.div_ceil(run.max(1));
        for t in 0..threads {
            let range = (t * run, ((t + 1) * run).min(pairs));
            affine_level_run(
                range,
                |i| (input[2 * i as usize], input[2 * i as usize + 1]),
                |i, v| prefix.borrow_mut()[i as usize] = v,
                |i| prefix.borrow()[i as usize],
                |i, p| out.borrow_mut()[i as usize] = p,
            );
        }
        let mut out = out.into_inner();
        if input.len() % 2 == 1 {
            out[pairs as usize] = input[input.len() - 1];
        }
        out
    }
}
