//! Inputs for the pipeline tests, shared by the CPU and GPU suites: a, b, c (optionally a satisfied witness,
//! `c = a·b` on the domain, so `A·B − C` is divisible by `Z`), and assignments with a Filecoin-like mix of
//! scalars (mostly 0 and 1, the rest random) split into `ones`, `tail` and `tail_index` by `zkgpu::pipeline::split_assignment`.
use blstrs::Scalar;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::RngCore;
use zkgpu::pipeline::{AssignmentInput, PartitionJob, split_assignment};

/// One assignment: its values and their split.
pub struct AssignmentData {
    pub values: Vec<Scalar>,
    pub ones: Vec<u32>,
    /// The compacted tail and its positions (exactly as long as the tail).
    pub tail: Vec<Scalar>,
    pub tail_index: Vec<u32>,
}

/// A job's host data.
pub struct JobData {
    pub a: Vec<Scalar>,
    pub b: Vec<Scalar>,
    pub c: Vec<Scalar>,
    pub assignments: Vec<AssignmentData>,
}

/// `m` scalars: about 45 % zeros, 45 % ones, 10 % uniformly random.
pub fn filecoin_mix(rng: &mut ChaCha20Rng, m: usize) -> Vec<Scalar> {
    (0..m)
        .map(|_| match rng.next_u32() % 20 {
            0..=8 => Scalar::ZERO,
            9..=17 => Scalar::ONE,
            _ => Scalar::random(&mut *rng),
        })
        .collect()
}

/// Random a, b, c of size `n` (`c = a·b` when `satisfied`) and assignments of lengths `lens`.
pub fn job_data(rng: &mut ChaCha20Rng, n: usize, lens: &[usize], satisfied: bool) -> JobData {
    let a: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut *rng)).collect();
    let b: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut *rng)).collect();
    let c: Vec<Scalar> = if satisfied {
        a.iter().zip(&b).map(|(x, y)| x * y).collect()
    } else {
        (0..n).map(|_| Scalar::random(&mut *rng)).collect()
    };
    let assignments = lens
        .iter()
        .map(|&m| {
            let values = filecoin_mix(rng, m);
            let (mut ones, mut tail, mut tail_index) =
                (vec![0u32; m.div_ceil(32)], vec![Scalar::ZERO; m], vec![0u32; m]);
            let k = split_assignment(&values, &mut ones, &mut tail, &mut tail_index)
                .expect("split_assignment with matching lengths");
            tail.truncate(k);
            tail_index.truncate(k);
            AssignmentData { values, ones, tail, tail_index }
        })
        .collect();
    JobData { a, b, c, assignments }
}

impl AssignmentData {
    /// The job's input for this assignment.
    pub fn input(&self) -> AssignmentInput<'_> {
        AssignmentInput { tail: &self.tail, tail_index: &self.tail_index, ones: &self.ones }
    }
}

impl JobData {
    /// The job over this data (no h download).
    pub fn job(&self) -> PartitionJob<'_> {
        PartitionJob {
            a: &self.a,
            b: &self.b,
            c: &self.c,
            assignments: self.assignments.iter().map(|d| d.input()).collect(),
            h_out: None,
        }
    }
}
