//! Per-element bodies of the `arith_g1_*` / `arith_g2_*` test kernels (`entry/curve_ops.rs`), shared with the
//! host so the CPU tests run exactly what a GPU thread runs.
//!
//! Inputs are affine and results Jacobian (the host's `blstrs` types). Lifted inputs are rescaled (`λ = 2` for
//! the left operand, `λ = 3` for the right) so that `ZZ`, `ZZZ` and `Z` are not 1: a formula that confused
//! `ZZ` with `ZZZ` or dropped a `Z` factor would still be right at `Z = 1` and must not pass unnoticed.
use super::{Affine, Jacobian, Xyzz};
use crate::field::Field;

/// Scale for the left operand: 2.
#[inline(always)]
fn lambda_left<F: Field>() -> F {
    F::ONE.double()
}

/// Scale for the right operand: 3.
#[inline(always)]
fn lambda_right<F: Field>() -> F {
    F::ONE.double().add(&F::ONE)
}

/// `p + q`: `p` lifted to XYZZ, mixed addition with affine `q` ([`Xyzz::add_affine`]), then Jacobian.
#[inline(always)]
pub fn add_mixed<F: Field>(p: &Affine<F>, q: &Affine<F>) -> Jacobian<F> {
    Xyzz::from_affine_scaled(p, &lambda_left()).add_affine(q).to_jacobian()
}

/// `p + q`: both lifted to XYZZ, general addition ([`Xyzz::add`]), then Jacobian.
#[inline(always)]
pub fn add_xyzz<F: Field>(p: &Affine<F>, q: &Affine<F>) -> Jacobian<F> {
    let p = Xyzz::from_affine_scaled(p, &lambda_left());
    let q = Xyzz::from_affine_scaled(q, &lambda_right());
    p.add(&q).to_jacobian()
}

/// `p + q`: both lifted to Jacobian, general addition ([`Jacobian::add`]).
#[inline(always)]
pub fn add_jacobian<F: Field>(p: &Affine<F>, q: &Affine<F>) -> Jacobian<F> {
    let p = Jacobian::from_affine_scaled(p, &lambda_left());
    let q = Jacobian::from_affine_scaled(q, &lambda_right());
    p.add(&q)
}

/// `p + q`: `p` lifted to Jacobian, mixed addition with affine `q` ([`Jacobian::add_affine`]).
#[inline(always)]
pub fn add_mixed_jacobian<F: Field>(p: &Affine<F>, q: &Affine<F>) -> Jacobian<F> {
    Jacobian::from_affine_scaled(p, &lambda_left()).add_affine(q)
}

/// `2p` in XYZZ ([`Xyzz::double`]), then Jacobian.
#[inline(always)]
pub fn double<F: Field>(p: &Affine<F>) -> Jacobian<F> {
    Xyzz::from_affine_scaled(p, &lambda_left()).double().to_jacobian()
}

/// `2p` in Jacobian ([`Jacobian::double`]).
#[inline(always)]
pub fn double_jacobian<F: Field>(p: &Affine<F>) -> Jacobian<F> {
    Jacobian::from_affine_scaled(p, &lambda_left()).double()
}

/// `-p` in XYZZ ([`Xyzz::neg`]), then Jacobian.
#[inline(always)]
pub fn neg<F: Field>(p: &Affine<F>) -> Jacobian<F> {
    Xyzz::from_affine_scaled(p, &lambda_left()).neg().to_jacobian()
}

/// `p` lifted to XYZZ and normalized back ([`Xyzz::to_affine`], one inversion): the identity map on points,
/// so the output must equal the input bit for bit.
#[inline(always)]
pub fn xyzz_to_affine<F: Field>(p: &Affine<F>) -> Affine<F> {
    Xyzz::from_affine_scaled(p, &lambda_left()).to_affine()
}

/// `p` lifted to Jacobian and normalized back ([`Jacobian::to_affine`]); output must equal the input.
#[inline(always)]
pub fn jacobian_to_affine<F: Field>(p: &Affine<F>) -> Affine<F> {
    Jacobian::from_affine_scaled(p, &lambda_left()).to_affine()
}
