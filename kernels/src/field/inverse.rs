//! Modular inversion by Bernstein–Yang divsteps ("safegcd"), in batches of 30 steps on 30-bit limbs.
//!
//! Why not Fermat: `a^(p−2)` is ~1.5·log2(p) field products, for Fq 381 squarings and ~190 products (~330 k
//! IMAD), and the batch-inversion paths (affine batch addition, the MSM's precomputation, `to_affine`) pay
//! one per run of points. Divsteps need only shifts, adds and 32×32→64 products: for Fq at most 37 batches
//! of ~2000 integer instructions; on the H200 9.8× (Fq) and 5.8× (Fr) the Fermat throughput (docs/log/kernels-notes.md,
//! "Inversion"). The number of batches is fixed by the Bernstein–Yang bound, every step is a masked
//! select, so all lanes of a warp run the same instructions whatever their inputs (no divergence); the loop
//! only stops early once `g = 0` on the lane, which changes nothing after that point.
//!
//! The algorithm (Bernstein, Yang, "Fast constant-time gcd computation and modular inversion", 2019):
//! start from `δ = 1, f = p, g = a`. One divstep is
//! `δ > 0 and g odd: (δ, f, g) ← (1 − δ, g, (g − f)/2)`, `g odd: (1 + δ, f, (g + f)/2)`,
//! `g even: (1 + δ, f, g/2)`. After `⌊(49d + 57)/17⌋` steps (`d` = bit length of p, d ≥ 46; Theorem 11.2
//! of the paper) `g = 0` and `f = ±gcd = ±1`. Thirty steps depend only on the low 30 bits of f and g, so
//! they run on one machine word and yield a matrix `M` with `2^30·(f', g') = M·(f, g)`; the same matrix
//! updates `d, e` with `d·a ≡ f`, `e·a ≡ g (mod p)`, where the division by 2^30 is made exact mod p by adding
//! a multiple of p. At the end `a⁻¹ = ±d`.
//!
//! Representation: integers as `K` limbs of 30 bits (`i32`), limb `K − 1` signed, so dividing by 2^30 is a
//! limb shift and every product of a limb and a matrix entry (`|entry| ≤ 2^30`) fits an `i64`
//! (two or three products plus a carry stay below 2^62).

/// Bits per limb of the divstep representation.
const LIMB_BITS: u32 = 30;
/// Mask of one limb.
const MASK: i32 = (1 << LIMB_BITS) - 1;
/// Most limbs any loop here handles (`unrolled!` covers indices 0..16).
const MAX_LIMBS: usize = 16;

/// `a · b` as a 64-bit product of 32-bit signed values. On the GPU one `mul.wide.s32`, written out because
/// LLVM, knowing a limb is non-negative, zero-extends it and then emits a full 64 × 64 `mul.lo.s64`.
#[inline(always)]
fn wide(a: i32, b: i32) -> i64 {
    #[cfg(target_arch = "nvptx64")]
    {
        let product: i64;
        // SAFETY: register arithmetic only.
        unsafe {
            core::arch::asm!(
                "mul.wide.s32 {p}, {a}, {b};",
                p = out(reg64) product,
                a = in(reg32) a,
                b = in(reg32) b,
                options(pure, nomem, nostack)
            )
        };
        product
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        a as i64 * b as i64
    }
}

/// The transition matrix of 30 divsteps, scaled by 2^30: `2^30·f' = u·f + v·g`, `2^30·g' = q·f + r·g`.
/// Each row satisfies `|u| + |v| ≤ 2^30` (induction over the steps), which bounds the updates below.
#[derive(Clone, Copy)]
struct Matrix {
    u: i32,
    v: i32,
    q: i32,
    r: i32,
}

/// Thirty divsteps on the low 30 bits of `f` (odd) and `g`, from `delta`. Branch-free: the swap and the
/// addition are masked selects. Returns the new `delta` and the matrix.
#[inline(always)]
fn divsteps_30(mut delta: i32, f_low: u32, g_low: u32) -> (i32, Matrix) {
    let (mut f, mut g) = (f_low, g_low);
    let (mut u, mut v, mut q, mut r) = (1i32, 0i32, 0i32, 1i32);
    let mut step = 0;
    while step < LIMB_BITS {
        // All ones when g is odd, and when additionally δ > 0 (then the step swaps).
        let odd = 0u32.wrapping_sub(g & 1);
        let swap = odd & (delta.wrapping_neg() >> 31) as u32;
        let swap_i = swap as i32;
        // Swap: (f, g) ← (g, −f), (u, v, q, r) ← (q, r, −u, −v), δ ← −δ; then the odd case adds f to g.
        let t = (f ^ g) & swap;
        f ^= t;
        g ^= t;
        g = (g ^ swap).wrapping_sub(swap);
        let t = (u ^ q) & swap_i;
        u ^= t;
        q ^= t;
        q = (q ^ swap_i).wrapping_sub(swap_i);
        let t = (v ^ r) & swap_i;
        v ^= t;
        r ^= t;
        r = (r ^ swap_i).wrapping_sub(swap_i);
        delta = (delta ^ swap_i).wrapping_sub(swap_i);
        // g odd: g ← g + f (then even), q, r follow.
        let odd_i = odd as i32;
        g = g.wrapping_add(f & odd);
        q = q.wrapping_add(u & odd_i);
        r = r.wrapping_add(v & odd_i);
        // Halve g; f's row doubles instead (the matrix carries the factor 2 of each step).
        g >>= 1;
        u = u.wrapping_shl(1);
        v = v.wrapping_shl(1);
        delta = delta.wrapping_add(1);
        step += 1;
    }
    (delta, Matrix { u, v, q, r })
}

/// `(f, g) ← M·(f, g) / 2^30`, exact (the matrix makes the low limb vanish).
#[inline(always)]
fn update_fg<const K: usize>(f: &mut [i32; K], g: &mut [i32; K], m: Matrix) {
    let mut cf = (wide(m.u, f[0]) + wide(m.v, g[0])) >> LIMB_BITS;
    let mut cg = (wide(m.q, f[0]) + wide(m.r, g[0])) >> LIMB_BITS;
    unrolled!(i in 1..K, {
        cf += wide(m.u, f[i]) + wide(m.v, g[i]);
        cg += wide(m.q, f[i]) + wide(m.r, g[i]);
        f[i - 1] = cf as i32 & MASK;
        g[i - 1] = cg as i32 & MASK;
        cf >>= LIMB_BITS;
        cg >>= LIMB_BITS;
    });
    f[K - 1] = cf as i32;
    g[K - 1] = cg as i32;
}

/// `(d, e) ← M·(d, e) / 2^30 mod p`, each result in `[0, p)` again. `n0 = −p⁻¹ mod 2^32` picks the multiple
/// of p that makes each sum divisible by 2^30; the quotient lies in `(−p, 2p)` and one masked add or
/// subtract of p brings it back.
#[inline(always)]
fn update_de<const K: usize>(d: &mut [i32; K], e: &mut [i32; K], m: Matrix, p: &[i32; K], n0: u32) {
    let mut cd = wide(m.u, d[0]) + wide(m.v, e[0]);
    let mut ce = wide(m.q, d[0]) + wide(m.r, e[0]);
    let md = ((cd as u32).wrapping_mul(n0) & MASK as u32) as i32;
    let me = ((ce as u32).wrapping_mul(n0) & MASK as u32) as i32;
    cd = (cd + wide(md, p[0])) >> LIMB_BITS;
    ce = (ce + wide(me, p[0])) >> LIMB_BITS;
    unrolled!(i in 1..K, {
        cd += wide(m.u, d[i]) + wide(m.v, e[i]) + wide(md, p[i]);
        ce += wide(m.q, d[i]) + wide(m.r, e[i]) + wide(me, p[i]);
        d[i - 1] = cd as i32 & MASK;
        e[i - 1] = ce as i32 & MASK;
        cd >>= LIMB_BITS;
        ce >>= LIMB_BITS;
    });
    d[K - 1] = cd as i32;
    e[K - 1] = ce as i32;
    normalize(d, p);
    normalize(e, p);
}

/// `x + (p & mask)` (mask all ones or zero), limbs renormalized.
#[inline(always)]
fn add_masked<const K: usize>(x: &[i32; K], p: &[i32; K], mask: i32) -> [i32; K] {
    let mut out = [0i32; K];
    let mut c = 0i32;
    unrolled!(i in 0..K, {
        c += x[i] + (p[i] & mask);
        if i + 1 < K {
            out[i] = c & MASK;
            c >>= LIMB_BITS;
        } else {
            out[i] = c;
        }
    });
    let _ = c; // the last limb's shift is dead; the unrolled copies past K hide that from the lint
    out
}

/// `x − p`, limbs renormalized (negative results have a negative top limb).
#[inline(always)]
fn sub<const K: usize>(x: &[i32; K], p: &[i32; K]) -> [i32; K] {
    let mut out = [0i32; K];
    let mut c = 0i32;
    unrolled!(i in 0..K, {
        c += x[i] - p[i];
        if i + 1 < K {
            out[i] = c & MASK;
            c >>= LIMB_BITS;
        } else {
            out[i] = c;
        }
    });
    let _ = c; // the last limb's shift is dead; the unrolled copies past K hide that from the lint
    out
}

/// Brings `x ∈ (−p, 2p)` into `[0, p)`.
#[inline(always)]
fn normalize<const K: usize>(x: &mut [i32; K], p: &[i32; K]) {
    let nonneg = add_masked(x, p, x[K - 1] >> 31);
    let less = sub(&nonneg, p);
    let keep = less[K - 1] >> 31; // all ones when nonneg < p
    unrolled!(i in 0..K, {
        x[i] = (nonneg[i] & keep) | (less[i] & !keep);
    });
}

/// 32-bit limbs → 30-bit limbs (the value must fit `30·K` bits; `K` limbs cover the `N` words).
#[inline(always)]
const fn to_limbs30<const N: usize, const K: usize>(a: &[u32; N]) -> [i32; K] {
    let mut out = [0i32; K];
    unrolled!(i in 0..K, {
        let bit = LIMB_BITS as usize * i;
        let (word, shift) = (bit / 32, (bit % 32) as u32);
        let mut limb = if word < N { a[word] >> shift } else { 0 };
        if shift > 32 - LIMB_BITS && word + 1 < N {
            limb |= a[word + 1] << (32 - shift);
        }
        out[i] = (limb & MASK as u32) as i32;
    });
    out
}

/// 30-bit limbs (non-negative, all below 2^30) → 32-bit limbs.
#[inline(always)]
fn to_limbs32<const N: usize, const K: usize>(x: &[i32; K]) -> [u32; N] {
    let mut out = [0u32; N];
    unrolled!(j in 0..N, {
        let bit = 32 * j;
        let (limb, shift) = (bit / LIMB_BITS as usize, (bit % LIMB_BITS as usize) as u32);
        // 32j mod 30 is even, so two limbs always cover a word.
        let mut word = if limb < K { (x[limb] as u32) >> shift } else { 0 };
        if limb + 1 < K {
            word |= (x[limb + 1] as u32) << (LIMB_BITS - shift);
        }
        out[j] = word;
    });
    out
}

/// Divsteps guaranteeing `g = 0` for a modulus of `bits` bits and any `0 ≤ a < p` (Theorem 11.2, d ≥ 46).
pub const fn divstep_bound(bits: u32) -> u32 {
    (49 * bits + 57) / 17
}

/// Bit length of an `N`-limb integer.
const fn bit_length<const N: usize>(a: &[u32; N]) -> u32 {
    let mut k = N;
    while k > 0 {
        k -= 1;
        if a[k] != 0 {
            return 32 * k as u32 + 32 - a[k].leading_zeros();
        }
    }
    0
}

/// Precomputed modulus data for [`invert`].
pub struct Modulus<const N: usize, const K: usize> {
    p30: [i32; K],
    n0: u32,
    batches: u32,
}

impl<const N: usize, const K: usize> Modulus<N, K> {
    /// `p` odd with `2p < 2^(30(K − 1)) · 2^29` (room for `(−p, 2p)` and the sign in `K` limbs); `n0 = −p⁻¹ mod
    /// 2^32`.
    pub const fn new(p: [u32; N], n0: u32) -> Self {
        let bits = bit_length(&p);
        assert!(bits >= 46 && bits + 2 <= LIMB_BITS * K as u32, "K too small for this modulus");
        assert!(K <= MAX_LIMBS && N <= MAX_LIMBS, "more limbs than the unrolled loops cover");
        Self { p30: to_limbs30(&p), n0, batches: divstep_bound(bits).div_ceil(LIMB_BITS) }
    }
}

/// The integer `a⁻¹ mod p` of `a < p` (not Montgomery form: the caller converts), `0` for `a = 0`.
#[inline(always)]
pub fn invert<const N: usize, const K: usize>(a: &[u32; N], m: &Modulus<N, K>) -> [u32; N] {
    let mut f = m.p30;
    let mut g: [i32; K] = to_limbs30(a);
    let mut d = [0i32; K];
    let mut e = [0i32; K];
    e[0] = 1;
    let mut delta = 1i32;
    let mut batch = 0;
    while batch < m.batches {
        let (next, matrix) = divsteps_30(delta, f[0] as u32, g[0] as u32);
        delta = next;
        update_fg(&mut f, &mut g, matrix);
        update_de(&mut d, &mut e, matrix, &m.p30, m.n0);
        batch += 1;
        // Once g = 0 the remaining steps only halve g = 0: f and d stay as they are.
        let mut any = 0;
        unrolled!(i in 0..K, {
            any |= g[i];
        });
        if any == 0 {
            break;
        }
    }
    // f = ±1 (a ≠ 0) or p (a = 0, where d = 0); a⁻¹ = −d when f = −1.
    let negate = f[K - 1] >> 31;
    let neg_d = sub(&m.p30, &d);
    unrolled!(i in 0..K, {
        d[i] = (neg_d[i] & negate) | (d[i] & !negate);
    });
    to_limbs32(&d)
}
