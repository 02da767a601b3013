//! Inputs for the MSM tests, shared by the CPU and GPU suites: random scalars and bases, and the named edge
//! cases of the MSM issue (sizes around powers of two, zero / one / r − 1 scalars, identity bases, a repeated
//! base, `P` and `−P` together, every scalar equal so one bucket holds every point, window-boundary digits).
use blstrs::Scalar;
use ff::Field;
use group::Group;
use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;

use super::curve_props::CurveUnderTest;
use super::points::distinct_points;

/// `n` uniformly random scalars.
pub fn random_scalars(rng: &mut ChaCha20Rng, n: usize) -> Vec<Scalar> {
    (0..n).map(|_| Scalar::random(&mut *rng)).collect()
}

/// The scalar with canonical 64-bit limbs `limbs` (little-endian), reduced mod r when it is not below r.
pub fn scalar_from_limbs(limbs: [u64; 4]) -> Scalar {
    Option::from(Scalar::from_u64s_le(&limbs)).unwrap_or_else(|| {
        // Not below r: clear the top two bits (then it is below 2^254 < r).
        let mut l = limbs;
        l[3] &= (1 << 62) - 1;
        Option::from(Scalar::from_u64s_le(&l)).unwrap_or(Scalar::ZERO)
    })
}

/// A scalar whose every `c`-bit window holds `value` (low bits of each window), e.g. `2^(c−1)` for digits
/// on the signed recoding's boundary or `2^c − 1` for a carry through every window.
pub fn window_pattern(c: u32, value: u64) -> Scalar {
    let mut limbs = [0u64; 4];
    let mut bit = 0;
    while bit < 254 {
        for k in 0..c.min(254 - bit) {
            if (value >> k) & 1 == 1 {
                let b = bit + k;
                limbs[(b / 64) as usize] |= 1 << (b % 64);
            }
        }
        bit += c;
    }
    scalar_from_limbs(limbs)
}

/// One named MSM input.
pub struct Case<C: CurveUnderTest> {
    pub name: String,
    pub bases: Vec<C::Affine>,
    pub scalars: Vec<Scalar>,
}

/// The edge cases named by the MSM issue, on random distinct bases unless the case is about the bases.
pub fn edge_cases<C: CurveUnderTest>(rng: &mut ChaCha20Rng) -> Vec<Case<C>> {
    let mut cases = Vec::new();
    let mut push = |name: &str, bases: Vec<C::Affine>, scalars: Vec<Scalar>| {
        cases.push(Case { name: name.to_string(), bases, scalars });
    };
    for n in [0usize, 1, 2, 3, 31, 33, 255, 257, 1023, 1025] {
        let bases = distinct_points::<C>(rng, n);
        push(&format!("random n = {n}"), bases, random_scalars(rng, n));
    }
    let n = 100;
    let bases = distinct_points::<C>(rng, n);
    push("all scalars zero", bases.clone(), vec![Scalar::ZERO; n]);
    push("all scalars one", bases.clone(), vec![Scalar::ONE; n]);
    push("all scalars r - 1", bases.clone(), vec![-Scalar::ONE; n]);
    let mixed: Vec<Scalar> = (0..n).map(|i| [Scalar::ZERO, Scalar::ONE, -Scalar::ONE][i % 3]).collect();
    push("scalars 0, 1, r - 1 mixed", bases.clone(), mixed);
    let same = Scalar::random(&mut *rng);
    push("every scalar equal (one bucket per window holds every point)", bases.clone(), vec![same; n]);
    let small: Vec<Scalar> = (0..n).map(|_| Scalar::from(rng.next_u32() as u64 % 300)).collect();
    push("small scalars (high windows empty)", bases.clone(), small);
    let boundary: Vec<Scalar> = (0..n)
        .map(|i| {
            let c = 1 + (i as u32 % 22);
            match i % 3 {
                0 => window_pattern(c, 1 << (c - 1)),
                1 => window_pattern(c, (1 << (c - 1)) + 1),
                _ => window_pattern(c, (1 << c) - 1),
            }
        })
        .collect();
    push("window-boundary digits (2^(c-1), 2^(c-1) + 1, 2^c - 1 in every window)", bases.clone(), boundary);

    let identity = C::Affine::from(C::Projective::identity());
    let mut with_identity = bases.clone();
    for i in (0..n).step_by(3) {
        with_identity[i] = identity;
    }
    push("identity bases", with_identity, random_scalars(rng, n));
    push("all bases identity", vec![identity; n], random_scalars(rng, n));
    let p = distinct_points::<C>(rng, 1)[0];
    push("the same base repeated, random scalars", vec![p; n], random_scalars(rng, n));
    push("the same base repeated, same scalar", vec![p; n], vec![same; n]);
    let mut plus_minus = bases.clone();
    for i in 0..n / 2 {
        plus_minus[2 * i + 1] = -plus_minus[2 * i];
    }
    let mut pair_scalars = random_scalars(rng, n);
    for i in 0..n / 2 {
        if i % 2 == 0 {
            pair_scalars[2 * i + 1] = pair_scalars[2 * i]; // P·s + (−P)·s = 0
        }
    }
    push("P and -P together", plus_minus, pair_scalars);
    cases
}
