//! Fr multiplication on the FP64 pipe (an experiment: bench variant `mul_fr` `fp64`, docs/log/kernels-notes.md
//! "Fr on the FP64 pipe").
//!
//! Why: every Fr product of the NTT and the scalar side runs on the IMAD pipe, which the asm multiplication
//! keeps ~96% busy; the FP64 pipe (64 FMA lanes per SM on an H100/H200, as many as IMAD's) sits idle. A
//! double holds a 52 × 52-bit product exactly when it is split in two with FMAs, so a Montgomery product in
//! radix 2^52 (5 digits, 25 + 25 digit products) moves the products there, and the integer pipe only sums
//! columns.
//!
//! # Splitting one product (a, b < 2^52, exact integers as doubles)
//! - `hi = fma.rz(a, b, 2^104)`: in `[2^104, 2^105)` a double's ulp is 2^52, and rounding towards zero gives
//!   `2^104 + ⌊ab / 2^52⌋·2^52`, so the bit pattern is `bits(2^104) + H`, `H = ⌊ab / 2^52⌋ < 2^52`.
//! - `lo = fma(a, b, (2^104 + 2^52) − hi)`: the subtraction is exact (same binade) and equals
//!   `(1 − H)·2^52`; the FMA's exact result `ab − H·2^52 + 2^52 = L + 2^52` lies in `[2^52, 2^53)`, where
//!   the ulp is 1, so it is exact too and its bit pattern is `bits(2^52) + L`, `L = ab mod 2^52`.
//!
//! Column sums add these bit patterns as 64-bit integers (wrapping); the offsets they carry (`bits(2^104)`,
//! `bits(2^52)` per term) are constants of the unrolled loop, subtracted when a column's value is needed.
//!
//! # The Montgomery product
//! CIOS in radix 2^52: `mont(a, b) = a·b·2^−260 mod r`, five rounds of `t += a_i·b; m = t_0·(−r⁻¹) mod 2^52;
//! t += m·r; t /= 2^52`. Inputs below `2r` and `r` give an output below `2r` (`2r < 2^256 ≪ 2^260`), so a
//! chain needs no subtraction until the end. Fr elements are kept in Montgomery form with `R = 2^256`; with
//! the second factor scaled by 16 (`2^260 / 2^256`), `mont(x, 16·y) = x·y·2^−256`, the same value as
//! `Fr::mul`, so results are bit-identical after the final reduction.
use super::{Field, Fr};

/// Bits per digit.
const DIGIT_BITS: u32 = 52;
/// Digits per element: 5 × 52 = 260 bits for the 255-bit r.
pub const DIGITS: usize = 5;
const MASK: u64 = (1 << DIGIT_BITS) - 1;
/// Bit patterns of 2^52 (doubles in `[2^52, 2^53)` have ulp 1) and of 2^104 (ulp 2^52 in `[2^104, 2^105)`).
const TWO52_BITS: u64 = 0x4330_0000_0000_0000;
const TWO104_BITS: u64 = 0x4670_0000_0000_0000;
/// `2^104 + 2^52`: `C2 − hi = (1 − H)·2^52` exactly. The GPU's split writes these three as immediates
/// (`0d4670000000000000`, `0d4670000000000001`); the tests check them against the constants.
#[cfg(test)]
const C2_BITS: u64 = TWO104_BITS + 1;

/// r as 64-bit words.
const R_WORDS: [u64; 4] = {
    let m = Fr::MODULUS;
    let mut w = [0u64; 4];
    let mut k = 0;
    while k < 4 {
        w[k] = m[2 * k] as u64 | (m[2 * k + 1] as u64) << 32;
        k += 1;
    }
    w
};

/// Digit `k` (bits `[52k, 52k + 52)`) of a 256-bit little-endian integer.
#[inline(always)]
const fn digit(w: &[u64; 4], k: usize) -> u64 {
    let bit = DIGIT_BITS as usize * k;
    let (q, s) = (bit / 64, bit % 64);
    let lo = w[q] >> s;
    let hi = if s + DIGIT_BITS as usize > 64 && q + 1 < 4 { w[q + 1] << (64 - s) } else { 0 };
    (lo | hi) & MASK
}

/// r's digits.
const R_DIGITS: [u64; DIGITS] = {
    let mut d = [0u64; DIGITS];
    let mut k = 0;
    while k < DIGITS {
        d[k] = digit(&R_WORDS, k);
        k += 1;
    }
    d
};

/// `−r⁻¹ mod 2^52` (Newton's iteration doubles the correct low bits of an inverse each step).
const R_PRIME: u64 = {
    let r0 = R_WORDS[0];
    let mut inv = 1u64;
    let mut k = 0;
    while k < 6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(r0.wrapping_mul(inv)));
        k += 1;
    }
    inv.wrapping_neg() & MASK
};

/// An exact integer below 2^52 as a double.
#[inline(always)]
fn to_f64(d: u64) -> f64 {
    f64::from_bits(d | TWO52_BITS) - f64::from_bits(TWO52_BITS)
}

/// An element in radix-2^52 digits held as doubles: the integer `Σ dᵢ·2^(52i)`, below `2r`.
#[derive(Clone, Copy, Debug)]
pub struct FrF64(pub [f64; DIGITS]);

/// `(bits(2^104) + ⌊ab / 2^52⌋, bits(2^52) + ab mod 2^52)` for integers `a, b < 2^52` held as doubles (see the
/// module docs): two FMAs and a subtraction on the GPU.
#[inline(always)]
fn split(a: f64, b: f64) -> (u64, u64) {
    #[cfg(target_arch = "nvptx64")]
    {
        let (hi, lo): (u64, u64);
        // SAFETY: register arithmetic only.
        unsafe {
            core::arch::asm!(
                "{{ .reg .f64 h, s, l;",
                "fma.rz.f64 h, {a}, {b}, 0d4670000000000000;",
                "sub.rn.f64 s, 0d4670000000000001, h;",
                "fma.rn.f64 l, {a}, {b}, s;",
                "mov.b64 {hi}, h;",
                "mov.b64 {lo}, l; }}",
                a = in(reg64) a.to_bits(),
                b = in(reg64) b.to_bits(),
                hi = out(reg64) hi,
                lo = out(reg64) lo,
                options(pure, nomem, nostack),
            );
        }
        (hi, lo)
    }
    #[cfg(not(target_arch = "nvptx64"))]
    {
        // The same two integers, computed exactly (what the FMAs give, by the argument in the module docs).
        let p = (a as u128) * (b as u128);
        (TWO104_BITS + (p >> DIGIT_BITS) as u64, TWO52_BITS + (p as u64 & MASK))
    }
}

/// Column sums: `t[j]` holds digit products' bit patterns at weight `2^(52j)`; `bias[j]` is what those
/// patterns carry beyond the products (constants once the loops are unrolled).
struct Columns {
    t: [u64; DIGITS + 1],
    bias: [u64; DIGITS + 1],
}

impl Columns {
    /// `t += a·b` for a digit `a` and the digits `b`: column `j` takes `L(a·b_j)` and `H(a·b_{j−1})`.
    #[inline(always)]
    fn add_row(&mut self, a: f64, b: &[f64; DIGITS]) {
        let mut h = [0u64; DIGITS];
        let mut l = [0u64; DIGITS];
        unrolled!(j in 0..DIGITS, {
            (h[j], l[j]) = split(a, b[j]);
        });
        self.t[0] = self.t[0].wrapping_add(l[0]);
        self.bias[0] = self.bias[0].wrapping_add(TWO52_BITS);
        unrolled!(j in 1..DIGITS, {
            self.t[j] = self.t[j].wrapping_add(l[j]).wrapping_add(h[j - 1]);
            self.bias[j] = self.bias[j].wrapping_add(TWO52_BITS).wrapping_add(TWO104_BITS);
        });
        self.t[DIGITS] = self.t[DIGITS].wrapping_add(h[DIGITS - 1]);
        self.bias[DIGITS] = self.bias[DIGITS].wrapping_add(TWO104_BITS);
    }

    /// The exact value of column `j`.
    #[inline(always)]
    fn value(&self, j: usize) -> u64 {
        self.t[j].wrapping_sub(self.bias[j])
    }
}

/// r's digits as doubles.
const R_F64: [f64; DIGITS] = {
    let mut d = [0f64; DIGITS];
    let mut k = 0;
    while k < DIGITS {
        d[k] = R_DIGITS[k] as f64;
        k += 1;
    }
    d
};

impl FrF64 {
    /// The Montgomery representation of `x` (the integer blstrs stores), in digits.
    #[inline(always)]
    pub fn from_fr(x: &Fr) -> Self {
        let l = x.limbs();
        let mut w = [0u64; 4];
        unrolled!(k in 0..4, {
            w[k] = l[2 * k] as u64 | (l[2 * k + 1] as u64) << 32;
        });
        let mut d = [0f64; DIGITS];
        unrolled!(k in 0..DIGITS, {
            d[k] = to_f64(digit(&w, k));
        });
        FrF64(d)
    }

    /// `16·y`, the factor for which [`FrF64::mul`] equals `Fr::mul` by `y` (see the module docs).
    #[inline(always)]
    pub fn factor(y: &Fr) -> Self {
        let y16 = y.double().double().double().double();
        Self::from_fr(&y16)
    }

    /// Back to a canonical `Fr` (one conditional subtraction of r).
    #[inline(always)]
    pub fn to_fr(&self) -> Fr {
        let mut w = [0u64; 4];
        unrolled!(k in 0..DIGITS, {
            let d = self.0[k] as u64;
            let bit = DIGIT_BITS as usize * k;
            let (q, s) = (bit / 64, bit % 64);
            w[q] |= d << s;
            if s + DIGIT_BITS as usize > 64 && q + 1 < 4 {
                w[q + 1] |= d >> (64 - s);
            }
        });
        // w < 2r: subtract r when that does not borrow.
        let mut diff = [0u64; 4];
        let mut borrow = false;
        unrolled!(k in 0..4, {
            let (d1, b1) = w[k].overflowing_sub(R_WORDS[k]);
            let (d2, b2) = d1.overflowing_sub(borrow as u64);
            diff[k] = d2;
            borrow = b1 | b2;
        });
        let w = if borrow { w } else { diff };
        let mut l = [0u32; 8];
        unrolled!(k in 0..4, {
            l[2 * k] = w[k] as u32;
            l[2 * k + 1] = (w[k] >> 32) as u32;
        });
        Fr::from_limbs(l)
    }

    /// `a·b·2^−260 mod r`, below `2r` for `a < 2r`, `b < r`.
    #[inline(always)]
    pub fn mul(&self, b: &Self) -> Self {
        let mut c = Columns { t: [0; DIGITS + 1], bias: [0; DIGITS + 1] };
        unrolled!(i in 0..DIGITS, {
            c.add_row(self.0[i], &b.0);
            let m = c.value(0).wrapping_mul(R_PRIME) & MASK;
            c.add_row(to_f64(m), &R_F64);
            // Column 0 is now a multiple of 2^52: shift one digit down, carrying its top bits.
            let carry = c.value(0) >> DIGIT_BITS;
            unrolled!(j in 0..DIGITS, {
                c.t[j] = c.t[j + 1];
                c.bias[j] = c.bias[j + 1];
            });
            c.t[DIGITS] = 0;
            c.bias[DIGITS] = 0;
            c.t[0] = c.t[0].wrapping_add(carry);
        });
        // Digits from the column values (the result is below 2r < 2^256, so the top digit takes the last carry).
        let mut d = [0f64; DIGITS];
        let mut carry = 0u64;
        unrolled!(j in 0..DIGITS - 1, {
            let v = c.value(j) + carry;
            d[j] = to_f64(v & MASK);
            carry = v >> DIGIT_BITS;
        });
        d[DIGITS - 1] = to_f64(c.value(DIGITS - 1) + carry);
        FrF64(d)
    }
}

#[cfg(all(test, not(target_arch = "nvptx64")))]
mod tests {
    use super::*;

    #[test]
    fn constants() {
        // r' · r ≡ −1 mod 2^52, and the digits rebuild r.
        assert_eq!(R_PRIME.wrapping_mul(R_WORDS[0]) & MASK, MASK);
        let mut back = [0u128; 3];
        for (k, d) in R_DIGITS.iter().enumerate() {
            assert!(*d <= MASK);
            let bit = 52 * k;
            back[bit / 128] |= (*d as u128) << (bit % 128);
            if bit % 128 + 52 > 128 {
                back[bit / 128 + 1] |= (*d as u128) >> (128 - bit % 128);
            }
        }
        assert_eq!(back[0], R_WORDS[0] as u128 | (R_WORDS[1] as u128) << 64);
        assert_eq!(back[1], R_WORDS[2] as u128 | (R_WORDS[3] as u128) << 64);
        assert_eq!(f64::from_bits(TWO52_BITS), 4503599627370496.0);
        assert_eq!(f64::from_bits(TWO104_BITS), 2f64.powi(104));
        assert_eq!(f64::from_bits(C2_BITS), 2f64.powi(104) + 2f64.powi(52));
    }
}
