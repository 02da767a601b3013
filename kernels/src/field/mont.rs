//! Portable Montgomery arithmetic on `N` little-endian 32-bit limbs, written once for Fr (N = 8) and Fq (N = 12).
//!
//! Preconditions shared by every function: the modulus `p` is odd and `2p < 2^(32N)` (true for both BLS12-381
//! fields, whose top bits are clear), inputs are `< p`, and `n0 = -p^-1 mod 2^32`. Outputs are `< p`. The
//! exceptions are the lazy forms (`mul_lazy`; `sub` with `2p` as its modulus), which take and give `< 2p`.
//! Selections are branch-free masks so that GPU threads in a warp do not diverge.

/// `a + b + carry`, returning (low word, carry out).
#[inline(always)]
pub const fn adc(a: u32, b: u32, carry: u32) -> (u32, u32) {
    let t = a as u64 + b as u64 + carry as u64;
    (t as u32, (t >> 32) as u32)
}

/// `a - b - borrow`, returning (low word, borrow out as 0 or 1).
#[inline(always)]
pub const fn sbb(a: u32, b: u32, borrow: u32) -> (u32, u32) {
    let t = (a as u64).wrapping_sub(b as u64 + borrow as u64);
    (t as u32, (t >> 63) as u32)
}

/// `acc + a * b + carry`, returning (low word, high word); never overflows 64 bits.
#[inline(always)]
pub const fn mac(acc: u32, a: u32, b: u32, carry: u32) -> (u32, u32) {
    let t = acc as u64 + (a as u64) * (b as u64) + carry as u64;
    (t as u32, (t >> 32) as u32)
}

/// `mask ? x : y` per limb, with `mask` all-ones or all-zeros.
#[inline(always)]
fn select<const N: usize>(mask: u32, x: &[u32; N], y: &[u32; N]) -> [u32; N] {
    let mut out = [0u32; N];
    for k in 0..N {
        out[k] = (x[k] & mask) | (y[k] & !mask);
    }
    out
}

/// `t - p` if `t >= p`, else `t`, for `t < 2p`.
#[inline(always)]
pub fn reduce_once<const N: usize>(t: &[u32; N], p: &[u32; N]) -> [u32; N] {
    let mut d = [0u32; N];
    let mut borrow = 0;
    for k in 0..N {
        (d[k], borrow) = sbb(t[k], p[k], borrow);
    }
    // borrow = 1 means t < p: keep t.
    select(0u32.wrapping_sub(borrow), t, &d)
}

#[inline(always)]
pub fn add<const N: usize>(a: &[u32; N], b: &[u32; N], p: &[u32; N]) -> [u32; N] {
    let mut s = [0u32; N];
    let mut carry = 0;
    for k in 0..N {
        (s[k], carry) = adc(a[k], b[k], carry);
    }
    // a + b < 2p < 2^(32N): no carry out.
    reduce_once(&s, p)
}

#[inline(always)]
pub fn sub<const N: usize>(a: &[u32; N], b: &[u32; N], p: &[u32; N]) -> [u32; N] {
    let mut d = [0u32; N];
    let mut borrow = 0;
    for k in 0..N {
        (d[k], borrow) = sbb(a[k], b[k], borrow);
    }
    // On borrow add p back (masked so no branch).
    let mask = 0u32.wrapping_sub(borrow);
    let mut out = [0u32; N];
    let mut carry = 0;
    for k in 0..N {
        (out[k], carry) = adc(d[k], p[k] & mask, carry);
    }
    out
}

#[inline(always)]
pub fn neg<const N: usize>(a: &[u32; N], p: &[u32; N]) -> [u32; N] {
    let mut d = [0u32; N];
    let mut borrow = 0;
    let mut any = 0;
    for k in 0..N {
        (d[k], borrow) = sbb(p[k], a[k], borrow);
        any |= a[k];
    }
    // -0 = 0, not p.
    let nonzero = 0u32.wrapping_sub((any != 0) as u32);
    let mut out = [0u32; N];
    for k in 0..N {
        out[k] = d[k] & nonzero;
    }
    out
}

/// Montgomery product `a * b * 2^(-32N) mod p` by coarsely integrated operand scanning (CIOS).
#[inline(always)]
pub fn mul<const N: usize>(a: &[u32; N], b: &[u32; N], p: &[u32; N], n0: u32) -> [u32; N] {
    reduce_once(&mul_lazy(a, b, p, n0), p)
}

/// [`mul`] without the final subtraction: `< 2p` for `a, b < 2p` when `4p < 2^(32N)` (Fq; see
/// `field::asm::ptx_lazy`), and for `a < p`, `b < 2p` in any field.
#[inline(always)]
pub fn mul_lazy<const N: usize>(a: &[u32; N], b: &[u32; N], p: &[u32; N], n0: u32) -> [u32; N] {
    // Running value t + t_n * 2^(32N) (< a + p after each round).
    let mut t = [0u32; N];
    let mut t_n = 0u32;
    for i in 0..N {
        let bi = b[i];
        let mut carry = 0;
        for j in 0..N {
            (t[j], carry) = mac(t[j], a[j], bi, carry);
        }
        let (sum_n, t_n1) = adc(t_n, carry, 0);
        // m makes the lowest word vanish; the division by 2^32 is the index shift below.
        let m = t[0].wrapping_mul(n0);
        let (_, mut carry) = mac(t[0], m, p[0], 0);
        for j in 1..N {
            (t[j - 1], carry) = mac(t[j], m, p[j], carry);
        }
        let (top, c) = adc(sum_n, carry, 0);
        t[N - 1] = top;
        t_n = t_n1 + c;
    }
    // t_n is 0 here because the result is < 2p < 2^(32N).
    let _ = t_n;
    t
}

#[inline(always)]
pub fn is_zero<const N: usize>(a: &[u32; N]) -> bool {
    let mut any = 0;
    for k in 0..N {
        any |= a[k];
    }
    any == 0
}

/// `a == b`, limb by limb, without branches (and usable in constants).
#[inline(always)]
pub const fn equal<const N: usize>(a: &[u32; N], b: &[u32; N]) -> bool {
    let mut diff = 0;
    let mut k = 0;
    while k < N {
        diff |= a[k] ^ b[k];
        k += 1;
    }
    diff == 0
}

/// `2a` for a compile-time constant with its top bit clear (the lazy bound `2p`).
pub const fn double_const<const N: usize>(a: [u32; N]) -> [u32; N] {
    let mut out = a;
    let mut carry = 0;
    let mut k = 0;
    while k < N {
        (out[k], carry) = adc(a[k], a[k], carry);
        k += 1;
    }
    out
}

/// `a - small` for a compile-time constant (used for the Fermat exponent p - 2).
pub const fn sub_small<const N: usize>(a: [u32; N], small: u32) -> [u32; N] {
    let mut out = a;
    let mut borrow = small;
    let mut k = 0;
    while k < N {
        let (d, b) = sbb(a[k], borrow, 0);
        out[k] = d;
        borrow = b;
        k += 1;
    }
    out
}
