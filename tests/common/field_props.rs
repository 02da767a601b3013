//! Field property templates, written once and instantiated per field (Fr/Scalar, Fq/Fp, Fq2/Fp2) and per
//! evaluator (host build of the kernels' arithmetic: default, portable or PTX-emulated; GPU kernels).
//!
//! Values cross the evaluator boundary as blstrs types (the oracle's own types); the kernels' types are
//! bit-identical (tests/layout.rs), so converting is a byte reinterpretation.
use std::fmt::Debug;

use blstrs::{Fp, Fp2, Scalar};
use ff::Field as _;
use rand_core::RngCore;
use zkgpu_kernels::field::{Field, Fq, Fq2, Fr};

/// The field operations every evaluator implements (kernel names use [`Op::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Add,
    Sub,
    Mul,
    Neg,
    Double,
    Sqr,
    Inv,
}

impl Op {
    pub const BINARY: [Op; 3] = [Op::Add, Op::Sub, Op::Mul];
    pub const UNARY: [Op; 4] = [Op::Neg, Op::Double, Op::Sqr, Op::Inv];

    /// The op's part of a kernel name: `arith_{field}_{name}`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Sub => "sub",
            Op::Mul => "mul",
            Op::Neg => "neg",
            Op::Double => "double",
            Op::Sqr => "sqr",
            Op::Inv => "inv",
        }
    }
}

/// Reinterprets a value as another type of the same size (the layout identity tests/layout.rs proves).
pub fn reinterpret<A: Copy, B: Copy>(a: &A) -> B {
    assert_eq!(std::mem::size_of::<A>(), std::mem::size_of::<B>(), "reinterpret between different sizes");
    // SAFETY: same size, both plain-old-data types whose every bit pattern is valid (limb arrays).
    unsafe { std::ptr::read_unaligned(a as *const A as *const B) }
}

/// A kernels field type paired with its blstrs oracle type.
pub trait FieldUnderTest: Field {
    /// The blstrs type with the same bits.
    type Ref: ff::Field + Copy + PartialEq + Debug + Send + Sync + 'static;
    /// Field name as in kernel names (`fr`, `fq`, `fq2`).
    const NAME: &'static str;

    fn to_ref(&self) -> Self::Ref {
        reinterpret(self)
    }
    fn from_ref(r: &Self::Ref) -> Self {
        reinterpret(r)
    }
    /// Values that stress carries, reduction and special cases (0, 1, 2, -1, -2, R-related limbs, ...).
    fn edge_cases() -> Vec<Self::Ref>;
    /// The portable implementation of `op` on the host.
    fn portable(op: Op, a: &Self, b: &Self) -> Self;
    /// The PTX text of `op` run by the host interpreter, where the field has its own chains (Fr, Fq).
    fn ptx_emulated(op: Op, a: &Self, b: &Self) -> Option<Self>;
}

/// Evaluates `op` on the default (trait) path.
pub fn default_op<F: Field>(op: Op, a: &F, b: &F) -> F {
    match op {
        Op::Add => a.add(b),
        Op::Sub => a.sub(b),
        Op::Mul => a.mul(b),
        Op::Neg => a.neg(),
        Op::Double => a.double(),
        Op::Sqr => a.square(),
        Op::Inv => a.inverse(),
    }
}

/// The oracle: blstrs's own arithmetic (inverse(0) = 0 to match the kernels' convention).
pub fn reference_op<R: ff::Field>(op: Op, a: &R, b: &R) -> R {
    match op {
        Op::Add => *a + b,
        Op::Sub => *a - b,
        Op::Mul => *a * b,
        Op::Neg => -*a,
        Op::Double => a.double(),
        Op::Sqr => a.square(),
        Op::Inv => Option::<R>::from(a.invert()).unwrap_or(R::ZERO),
    }
}

/// Anything that can evaluate field ops on batches: the CPU builds or the GPU kernels.
pub trait Evaluator<F: FieldUnderTest> {
    /// Human-readable name for failure messages.
    fn label(&self) -> String;
    /// `out[i] = op(a[i], b[i])` for binary ops, `op(a[i])` for unary ones (`b` ignored then).
    fn eval(&self, op: Op, a: &[F::Ref], b: &[F::Ref]) -> Vec<F::Ref>;
}

/// Which host implementation a [`CpuEvaluator`] runs.
#[derive(Clone, Copy, Debug)]
pub enum CpuPath {
    /// The `Field` trait methods (portable Rust on the host).
    Default,
    /// The explicit `*_portable` methods.
    Portable,
    /// The PTX chains interpreted on the host (Fr, Fq only).
    PtxEmulated,
}

pub struct CpuEvaluator(pub CpuPath);

impl<F: FieldUnderTest> Evaluator<F> for CpuEvaluator {
    fn label(&self) -> String {
        format!("cpu {:?} {}", self.0, F::NAME)
    }
    fn eval(&self, op: Op, a: &[F::Ref], b: &[F::Ref]) -> Vec<F::Ref> {
        a.iter()
            .enumerate()
            .map(|(i, x)| {
                let x = F::from_ref(x);
                let y = b.get(i).map(F::from_ref).unwrap_or(F::ZERO);
                let out = match self.0 {
                    CpuPath::Default => default_op(op, &x, &y),
                    CpuPath::Portable => F::portable(op, &x, &y),
                    CpuPath::PtxEmulated => F::ptx_emulated(op, &x, &y).expect("no PTX chains for this field"),
                };
                out.to_ref()
            })
            .collect()
    }
}

/// Inputs for a batch: every edge case against every edge case, then `random` seeded random pairs.
pub fn test_inputs<F: FieldUnderTest>(rng: &mut impl RngCore, random: usize) -> (Vec<F::Ref>, Vec<F::Ref>) {
    let edges = F::edge_cases();
    let mut a = Vec::new();
    let mut b = Vec::new();
    for x in &edges {
        for y in &edges {
            a.push(*x);
            b.push(*y);
        }
    }
    for k in 0..random {
        let x = F::Ref::random(&mut *rng);
        // Some pairs reuse an edge case or the same value on both sides (a * a, a - a).
        let y = match k % 8 {
            0 => x,
            1 => edges[k % edges.len()],
            _ => F::Ref::random(&mut *rng),
        };
        a.push(x);
        b.push(y);
    }
    (a, b)
}

fn check_batch<F: FieldUnderTest>(
    label: &str,
    what: &str,
    a: &[F::Ref],
    b: Option<&[F::Ref]>,
    got: &[F::Ref],
    want: &[F::Ref],
) {
    assert_eq!(got.len(), want.len(), "{label}: {what}: wrong output length");
    let bad: Vec<usize> = (0..want.len()).filter(|&i| got[i] != want[i]).collect();
    if let Some(&i) = bad.first() {
        panic!(
            "{label}: {what}: {} of {} elements differ; first at {i}: a = {:?}, b = {:?}, got {:?}, want {:?}",
            bad.len(),
            want.len(),
            a[i],
            b.map(|b| b[i]),
            got[i],
            want[i]
        );
    }
}

/// Every op of `eval` equals blstrs element-wise on (`a`, `b`).
pub fn check_ops_match_reference<F: FieldUnderTest>(eval: &impl Evaluator<F>, a: &[F::Ref], b: &[F::Ref]) {
    let label = eval.label();
    for op in Op::BINARY {
        let want: Vec<_> = a.iter().zip(b).map(|(x, y)| reference_op(op, x, y)).collect();
        let got = eval.eval(op, a, b);
        check_batch::<F>(&label, op.name(), a, Some(b), &got, &want);
    }
    for op in Op::UNARY {
        let want: Vec<_> = a.iter().map(|x| reference_op(op, x, &F::Ref::ZERO)).collect();
        let got = eval.eval(op, a, &[]);
        check_batch::<F>(&label, op.name(), a, None, &got, &want);
    }
}

/// Algebraic laws evaluated entirely by `eval` (no oracle): commutativity, associativity of mul,
/// distributivity, a·a⁻¹ = 1, double = a + a, square = a·a, -(-a) = a, a - b = a + (-b), a + 0 = a, a·1 = a.
pub fn check_laws<F: FieldUnderTest>(eval: &impl Evaluator<F>, a: &[F::Ref], b: &[F::Ref], c: &[F::Ref]) {
    let label = eval.label();
    let e = |op: Op, x: &[F::Ref], y: &[F::Ref]| eval.eval(op, x, y);
    let check = |what: &str, got: &[F::Ref], want: &[F::Ref]| check_batch::<F>(&label, what, a, Some(b), got, want);
    let n = a.len();
    let ones = vec![F::Ref::ONE; n];
    let zeros = vec![F::Ref::ZERO; n];

    check("a+b = b+a", &e(Op::Add, a, b), &e(Op::Add, b, a));
    check("a*b = b*a", &e(Op::Mul, a, b), &e(Op::Mul, b, a));
    check("(a*b)*c = a*(b*c)", &e(Op::Mul, &e(Op::Mul, a, b), c), &e(Op::Mul, a, &e(Op::Mul, b, c)));
    check("a*(b+c) = a*b + a*c", &e(Op::Mul, a, &e(Op::Add, b, c)), &e(Op::Add, &e(Op::Mul, a, b), &e(Op::Mul, a, c)));
    check("double a = a+a", &e(Op::Double, a, &[]), &e(Op::Add, a, a));
    check("sqr a = a*a", &e(Op::Sqr, a, &[]), &e(Op::Mul, a, a));
    check("-(-a) = a", &e(Op::Neg, &e(Op::Neg, a, &[]), &[]), a);
    check("a-b = a+(-b)", &e(Op::Sub, a, b), &e(Op::Add, a, &e(Op::Neg, b, &[])));
    check("a+0 = a", &e(Op::Add, a, &zeros), a);
    check("a*1 = a", &e(Op::Mul, a, &ones), a);
    check("a-a = 0", &e(Op::Sub, a, a), &zeros);
    let inv = e(Op::Inv, a, &[]);
    let prod = e(Op::Mul, a, &inv);
    let want: Vec<_> = a.iter().map(|x| if bool::from(x.is_zero()) { F::Ref::ZERO } else { F::Ref::ONE }).collect();
    check("a*inv(a) = 1 (0 for a = 0)", &prod, &want);
}

// ---- instantiations -------------------------------------------------------------------------------------

/// `a − b` on little-endian limbs, wrapping (callers keep `a ≥ b`).
pub fn sub_limbs<const N: usize>(a: [u32; N], b: [u32; N]) -> [u32; N] {
    let mut d = [0u32; N];
    let mut borrow = 0u64;
    for k in 0..N {
        let t = (a[k] as u64).wrapping_sub(b[k] as u64 + borrow);
        d[k] = t as u32;
        borrow = t >> 63;
    }
    d
}

/// Raw Montgomery limb patterns below p that stress carries: 2^(32k), p - 2^(32k), all-ones words under the
/// top limb, plus canonical small values and ±1, ±2, (p±1)/2.
fn prime_edge_limbs<const N: usize>(p: [u32; N], from_canonical: impl Fn([u32; N]) -> [u32; N]) -> Vec<[u32; N]> {
    let mut out = Vec::new();
    let small = |v: u32| {
        let mut l = [0u32; N];
        l[0] = v;
        l
    };
    let sub = sub_limbs::<N>;
    let half = |a: [u32; N]| {
        let mut h = [0u32; N];
        for k in 0..N {
            h[k] = (a[k] >> 1) | if k + 1 < N { a[k + 1] << 31 } else { 0 };
        }
        h
    };
    // Canonical values (converted to Montgomery form).
    for v in [small(0), small(1), small(2), small(3), sub(p, small(1)), sub(p, small(2)), half(p), {
        let mut h = half(p);
        h[0] += 1; // (p+1)/2 = floor(p/2) + 1; the low limb of floor(p/2) is not all-ones for either field
        h
    }] {
        out.push(from_canonical(v));
    }
    // Raw Montgomery limb patterns.
    for v in [small(1), small(2), sub(p, small(1)), sub(p, small(2))] {
        out.push(v);
    }
    for k in 0..N {
        let mut w = [0u32; N];
        w[k] = 1;
        out.push(w);
        out.push(sub(p, w));
    }
    let mut ones = [u32::MAX; N];
    ones[N - 1] = p[N - 1] - 1;
    out.push(ones);
    out
}

/// [`FieldUnderTest::portable`] for a kernels field: its inherent `*_portable` methods (Fr, Fq and Fq2 alike).
macro_rules! portable_op {
    () => {
        fn portable(op: Op, a: &Self, b: &Self) -> Self {
            match op {
                Op::Add => a.add_portable(b),
                Op::Sub => a.sub_portable(b),
                Op::Mul => a.mul_portable(b),
                Op::Neg => a.neg_portable(),
                Op::Double => a.double_portable(),
                Op::Sqr => a.square_portable(),
                Op::Inv => a.inverse_portable(),
            }
        }
    };
}

/// Fr and Fq share every method: their kernels types come from one macro with the same API.
macro_rules! prime_field_under_test {
    ($field:ident, $reference:ty, $name:literal) => {
        impl FieldUnderTest for $field {
            type Ref = $reference;
            const NAME: &'static str = $name;
            fn edge_cases() -> Vec<$reference> {
                prime_edge_limbs($field::MODULUS, |l| $field::from_canonical_limbs(l).limbs())
                    .into_iter()
                    .map(|l| $field::from_limbs(l).to_ref())
                    .collect()
            }
            portable_op!();
            fn ptx_emulated(op: Op, a: &Self, b: &Self) -> Option<Self> {
                Some(match op {
                    Op::Add => a.add_ptx_emulated(b).expect("PTX interpreter"),
                    Op::Sub => a.sub_ptx_emulated(b).expect("PTX interpreter"),
                    Op::Mul => a.mul_ptx_emulated(b).expect("PTX interpreter"),
                    Op::Neg => a.neg_ptx_emulated().expect("PTX interpreter"),
                    Op::Double => a.add_ptx_emulated(a).expect("PTX interpreter"),
                    Op::Sqr => a.square_ptx_emulated().expect("PTX interpreter"),
                    // Fermat over the emulated multiply would take seconds; the laws cover inverse on other paths.
                    Op::Inv => a.inverse(),
                })
            }
        }
    };
}
prime_field_under_test!(Fr, Scalar, "fr");
prime_field_under_test!(Fq, Fp, "fq");

impl FieldUnderTest for Fq2 {
    type Ref = Fp2;
    const NAME: &'static str = "fq2";
    /// Pairs of Fq edge cases, including the non-residues u and 1 + u and elements with c0 or c1 zero.
    fn edge_cases() -> Vec<Fp2> {
        let fq = Fq::edge_cases();
        let picks = [0usize, 1, 4, 5, 12, 20];
        let mut out = Vec::new();
        for &i in &picks {
            for &j in &picks {
                out.push(Fp2::new(fq[i % fq.len()], fq[j % fq.len()]));
            }
        }
        out.push(Fp2::new(Fp::ZERO, Fp::ONE)); // u
        out.push(Fp2::new(Fp::ONE, Fp::ONE)); // 1 + u, the Fq6 non-residue
        out.push(Fp2::new(-Fp::ONE, -Fp::ONE));
        out.push(Fp2::new(Fp::ONE, -Fp::ONE));
        out
    }
    portable_op!();
    fn ptx_emulated(_: Op, _: &Self, _: &Self) -> Option<Self> {
        None
    }
}
