//! CPU reference for [`crate::pipeline`]: the same job on blstrs, for small sizes (tests compare the GPU
//! engine against it). `h` comes from [`crate::ntt::cpu`] (the same coset recipe as [`crate::Ntt::groth16_h`]),
//! the query sums from [`crate::msm::cpu`] and [`crate::batch_add::cpu`] over the job's own split (batch sum of
//! the `ones` points plus the sparse MSM of `tail`), so a wrong split shows up here as on the GPU.
use blstrs::{G1Affine, G2Affine, Scalar};
use ff::Field;

use crate::batch_add::cpu::batch_add_cpu;
use crate::curve::{Curve, G1, G2};
use crate::error::{Error, Result};
use crate::msm::cpu::{msm_cpu, msm_indexed_cpu};
use crate::ntt::NttConfig;
use crate::ntt::cpu::{coset_generator, ntt};
use crate::pipeline::{AssignmentInput, AssignmentOutput, PartitionJob, PartitionResults, PartitionShape};

/// One assignment's queries on the host (each as long as the assignment).
#[derive(Clone, Copy, Debug)]
pub struct AssignmentQueries<'a> {
    /// The assignment's length.
    pub len: usize,
    pub g1: &'a [&'a [G1Affine]],
    pub g2: &'a [&'a [G2Affine]],
}

/// `h`'s coefficients (natural order) from the evaluations `a`, `b`, `c` on the domain: coefficients, coset
/// evaluations, `(A·B − C) / Z` pointwise with `Z = g^n − 1` on the coset, coset interpolation. What
/// [`crate::Ntt::groth16_h`] leaves in `a`.
pub fn h_coefficients(a: &[Scalar], b: &[Scalar], c: &[Scalar]) -> Result<Vec<Scalar>> {
    let n = a.len();
    for v in [b, c] {
        if v.len() != n {
            return Err(Error::LengthMismatch { what: "h_coefficients", expected: n, actual: v.len() });
        }
    }
    crate::ntt::checked_log_n(n)?;
    let coset_evals = |v: &[Scalar]| -> Result<Vec<Scalar>> {
        let mut v = v.to_vec();
        ntt(&mut v, NttConfig::inverse())?;
        ntt(&mut v, NttConfig::forward().coset())?;
        Ok(v)
    };
    let (ea, eb, ec) = (coset_evals(a)?, coset_evals(b)?, coset_evals(c)?);
    let z_inv = Option::<Scalar>::from((coset_generator().pow_vartime([n as u64]) - Scalar::ONE).invert())
        .ok_or_else(|| Error::Pipeline("Z vanishes on the coset".into()))?;
    let mut h: Vec<Scalar> = (0..n).map(|i| (ea[i] * eb[i] - ec[i]) * z_inv).collect();
    ntt(&mut h, NttConfig::inverse().coset())?;
    Ok(h)
}

/// The sum a query contributes: batch sum of the points selected by `input.ones` plus the sparse MSM of
/// `input.tail` at `input.tail_index`.
fn query_sum<C: Curve>(bases: &[C::Affine], len: usize, input: &AssignmentInput<'_>) -> Result<C::Projective> {
    if bases.len() != len {
        return Err(Error::LengthMismatch { what: "partition query length", expected: len, actual: bases.len() });
    }
    let ones = batch_add_cpu::<C>(bases, Some(&input.ones[..len.div_ceil(32)]))?;
    let tail = msm_indexed_cpu::<C>(bases, input.tail, input.tail_index)?;
    Ok(C::normalize(&C::add_projective(&ones, &tail)))
}

/// The partition job on the CPU: checks `job` against the shape of `h_bases` and `queries` (as the engine
/// does), then computes every result. Returns the results and `h`'s coefficients.
pub fn partition_cpu(
    h_bases: &[G1Affine],
    queries: &[AssignmentQueries<'_>],
    job: &PartitionJob<'_>,
) -> Result<(PartitionResults, Vec<Scalar>)> {
    let shape = PartitionShape { n: h_bases.len(), assignments: queries.iter().map(|q| q.len).collect() };
    if queries.len() != job.assignments.len() {
        return Err(Error::LengthMismatch {
            what: "partition assignments",
            expected: queries.len(),
            actual: job.assignments.len(),
        });
    }
    shape.check(job)?;
    let h = h_coefficients(job.a, job.b, job.c)?;
    let h_sum = msm_cpu::<G1>(h_bases, &h)?;
    let mut assignments = Vec::with_capacity(queries.len());
    for (q, input) in queries.iter().zip(&job.assignments) {
        let g1 = q.g1.iter().map(|b| query_sum::<G1>(b, q.len, input)).collect::<Result<Vec<_>>>()?;
        let g2 = q.g2.iter().map(|b| query_sum::<G2>(b, q.len, input)).collect::<Result<Vec<_>>>()?;
        assignments.push(AssignmentOutput { g1, g2 });
    }
    Ok((PartitionResults { h: h_sum, assignments }, h))
}
