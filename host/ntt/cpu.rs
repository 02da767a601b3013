//! The CPU reference for [`crate::ntt`]: a plain radix-2 NTT on `blstrs::Scalar`, a naive O(n^2) DFT, and
//! single outputs by direct summation (for spot checks at sizes where a full reference is too slow).
//!
//! Definitions (what the GPU must match), for a transform of size n = 2^L with w = w_n (a primitive n-th root
//! of unity, `ROOT_OF_UNITY^(2^(32-L))`) and g = `MULTIPLICATIVE_GENERATOR` (7):
//! - forward: `X[k] = sum_j x[j] w^(jk)`; coset forward: `X[k] = sum_j x[j] (g w^k)^j`;
//! - inverse: `x[j] = n^-1 sum_k X[k] w^(-jk)`; coset inverse: that times `g^-j` (undoes the coset forward);
//! - orders: a bit-reversed input (output) array holds logical element `i` at position `bit_reverse(i)`.
use blstrs::Scalar;
use ff::{Field, PrimeField};

use crate::error::{Error, Result};
use crate::ntt::{Direction, NttConfig, Order, checked_log_n};

/// A primitive 2^log_n-th root of unity (log_n <= 32).
pub fn root_of_unity(log_n: u32) -> Scalar {
    let mut w = Scalar::ROOT_OF_UNITY;
    for _ in log_n..Scalar::S {
        w = w.square();
    }
    w
}

/// The coset generator g (7).
pub fn coset_generator() -> Scalar {
    Scalar::MULTIPLICATIVE_GENERATOR
}

/// `x`'s low `bits` bits reversed.
pub fn bit_reverse_index(x: usize, bits: u32) -> usize {
    if bits == 0 { 0 } else { x.reverse_bits() >> (usize::BITS - bits) }
}

/// Permutes `data` (length 2^L) into bit-reversed order (an involution).
pub fn bit_reverse_permute<T>(data: &mut [T]) {
    let bits = data.len().trailing_zeros();
    for i in 0..data.len() {
        let r = bit_reverse_index(i, bits);
        if i < r {
            data.swap(i, r);
        }
    }
}

/// `base^0, base^1, ..., base^(count-1)`.
pub fn powers(base: Scalar, count: usize) -> Vec<Scalar> {
    let mut out = Vec::with_capacity(count);
    let mut x = Scalar::ONE;
    for _ in 0..count {
        out.push(x);
        x *= base;
    }
    out
}

/// One transform in place on the CPU (radix-2 DIT after a bit-reversal). `Err(NttSize)` unless the length
/// is a power of two; `Err(NttTooLarge)` past 2^32.
pub fn ntt(data: &mut [Scalar], cfg: NttConfig) -> Result<()> {
    let log_n = checked_log_n(data.len())?;
    if log_n > Scalar::S {
        return Err(Error::NttTooLarge { log_n, max_log_n: Scalar::S });
    }
    let n = data.len();
    if cfg.input == Order::BitReversed {
        bit_reverse_permute(data);
    }
    let g = coset_generator();
    if cfg.coset && cfg.direction == Direction::Forward {
        let mut s = Scalar::ONE;
        for x in data.iter_mut() {
            *x *= s;
            s *= g;
        }
    }
    let w = match cfg.direction {
        Direction::Forward => root_of_unity(log_n),
        Direction::Inverse => root_of_unity(log_n).invert().unwrap_or(Scalar::ONE),
    };
    bit_reverse_permute(data);
    let mut half = 1;
    while half < n {
        let step = w.pow_vartime([(n / (2 * half)) as u64]);
        let tw = powers(step, half);
        for block in data.chunks_mut(2 * half) {
            let (lo, hi) = block.split_at_mut(half);
            for ((a, b), t) in lo.iter_mut().zip(hi.iter_mut()).zip(&tw) {
                let y = *b * t;
                *b = *a - y;
                *a += y;
            }
        }
        half *= 2;
    }
    if cfg.direction == Direction::Inverse {
        let n_inv = Scalar::from(n as u64).invert().unwrap_or(Scalar::ONE);
        let g_inv = g.invert().unwrap_or(Scalar::ONE);
        let mut s = n_inv;
        for x in data.iter_mut() {
            *x *= s;
            if cfg.coset {
                s *= g_inv;
            }
        }
    }
    if cfg.output == Order::BitReversed {
        bit_reverse_permute(data);
    }
    Ok(())
}

/// A batch of transforms of size `n` back to back, each with [`ntt`].
pub fn ntt_batch(data: &mut [Scalar], n: usize, cfg: NttConfig) -> Result<()> {
    crate::ntt::check_shape(data.len(), n)?;
    for chunk in data.chunks_mut(n) {
        ntt(chunk, cfg)?;
    }
    Ok(())
}

/// Logical output `k` of the transform of `input` (given in the config's input order), by direct summation
/// (Horner): O(n). For spot checks of large GPU transforms.
pub fn output_at(input: &[Scalar], cfg: NttConfig, k: usize) -> Result<Scalar> {
    let log_n = checked_log_n(input.len())?;
    let n = input.len();
    if k >= n {
        return Err(Error::LengthMismatch { what: "ntt output index", expected: n, actual: k });
    }
    let w = root_of_unity(log_n);
    let g = coset_generator();
    let logical = |i: usize| match cfg.input {
        Order::Natural => input[i],
        Order::BitReversed => input[bit_reverse_index(i, log_n)],
    };
    let horner = |z: Scalar| polynomial_at(n, z, &logical);
    Ok(match cfg.direction {
        Direction::Forward => {
            let z = w.pow_vartime([k as u64]);
            horner(if cfg.coset { g * z } else { z })
        }
        Direction::Inverse => {
            let z = w.invert().unwrap_or(Scalar::ONE).pow_vartime([k as u64]);
            let n_inv = Scalar::from(n as u64).invert().unwrap_or(Scalar::ONE);
            let mut x = horner(z) * n_inv;
            if cfg.coset {
                x *= g.invert().unwrap_or(Scalar::ONE).pow_vartime([k as u64]);
            }
            x
        }
    })
}

/// `Σ_{j<n} coeff(j)·z^j` by Horner. From 2^16 terms on, chunks are evaluated on all cores (a 2^28 spot check
/// is ~8 s on one core) and joined with `z^start` per chunk.
fn polynomial_at(n: usize, z: Scalar, coeff: &(impl Fn(usize) -> Scalar + Sync)) -> Scalar {
    let horner = |lo: usize, hi: usize| (lo..hi).rev().fold(Scalar::ZERO, |acc, j| acc * z + coeff(j));
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    if n < 1 << 16 || threads == 1 {
        return horner(0, n);
    }
    let chunk = n.div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = (0..n)
            .step_by(chunk)
            .map(|lo| scope.spawn(move || horner(lo, (lo + chunk).min(n)) * z.pow_vartime([lo as u64])))
            .collect();
        // A worker can only panic if the caller's closure does; re-raise that panic here unchanged.
        parts.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).sum()
    })
}

/// The whole transform by the O(n^2) definition (outputs in the config's output order). For n <= 2^10.
pub fn dft_naive(input: &[Scalar], cfg: NttConfig) -> Result<Vec<Scalar>> {
    let log_n = checked_log_n(input.len())?;
    let mut out = (0..input.len()).map(|k| output_at(input, cfg, k)).collect::<Result<Vec<_>>>()?;
    if cfg.output == Order::BitReversed && log_n > 0 {
        bit_reverse_permute(&mut out);
    }
    Ok(out)
}
