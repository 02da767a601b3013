//! Property templates for G1/G2 point arithmetic, written once and instantiated per curve and per evaluator.
//!
//! A [`CurveUnderTest`] ties our kernel types (`zkgpu_kernels::curve::{Affine, Jacobian}` over Fq or Fq2) to
//! blstrs's (`G1Affine`/`G1Projective`, ...). Values cross between the two by byte-identical casts, so every
//! check is also a check of the layout. A [`PointEvaluator`] runs the `arith_{g1,g2}_*` operations on a batch:
//! [`HostArithmetic`] calls the host build of the kernel bodies (`zkgpu_kernels::curve::ops`), the GPU
//! evaluator (tests/curve_gpu.rs) launches the kernels. blstrs is the oracle.
use std::mem::{align_of, size_of};
use std::ops::Neg;

use group::Group;
use rand_core::RngCore;
pub use zkgpu::curve::{Curve, G1, G2};
use zkgpu_kernels::curve::{Affine, CurveField, Jacobian, Xyzz, ops};
use zkgpu_kernels::field::Field;

/// A curve under test: the host's [`zkgpu::curve::Curve`] (kernel name stem, base field, blstrs's point
/// types) with the bounds the tests lean on (blstrs's group arithmetic, conversions both ways, affine
/// negation) and the few blstrs accessors only tests need. Implemented for the host's [`G1`] and [`G2`].
pub trait CurveUnderTest:
    Curve<
        Field: CurveField,
        Affine: From<<Self as Curve>::Projective> + Neg<Output = <Self as Curve>::Affine>,
        Projective: group::Curve<AffineRepr = <Self as Curve>::Affine> + From<<Self as Curve>::Affine>,
    >
{
    fn affine_is_on_curve(p: &Self::Affine) -> bool;
    fn projective_is_on_curve(p: &Self::Projective) -> bool;
    /// The bytes of blstrs's own x-coordinate accessor (checks where `x` sits in our struct).
    fn affine_x_bytes(p: &Self::Affine) -> Vec<u8>;
}

macro_rules! curve_under_test {
    ($($curve:ty),*) => {$(
        impl CurveUnderTest for $curve {
            fn affine_is_on_curve(p: &Self::Affine) -> bool {
                bool::from(p.is_on_curve())
            }
            fn projective_is_on_curve(p: &Self::Projective) -> bool {
                bool::from(p.is_on_curve())
            }
            fn affine_x_bytes(p: &Self::Affine) -> Vec<u8> {
                bytes_of(&p.x())
            }
        }
    )*};
}
curve_under_test!(G1, G2);

/// The raw bytes of a plain-data value.
pub fn bytes_of<T: Copy>(value: &T) -> Vec<u8> {
    // SAFETY: T is Copy plain data (field elements / points: integer arrays without padding); we only read
    // size_of::<T>() bytes from a valid reference.
    unsafe { std::slice::from_raw_parts(value as *const T as *const u8, size_of::<T>()).to_vec() }
}

/// Reinterpret a value as another type of the same size (blstrs <-> ours). Panics on a size mismatch.
pub fn cast<A: Copy, B: Copy>(value: &A) -> B {
    assert_eq!(
        size_of::<A>(),
        size_of::<B>(),
        "{} and {} differ in size",
        std::any::type_name::<A>(),
        std::any::type_name::<B>()
    );
    // SAFETY: equal sizes (checked), both Copy plain data; transmute_copy reads unaligned.
    unsafe { std::mem::transmute_copy(value) }
}

/// Our affine view of a blstrs affine point.
pub fn ours<C: CurveUnderTest>(p: &C::Affine) -> Affine<C::Field> {
    cast(p)
}

/// blstrs's view of our affine point.
pub fn theirs<C: CurveUnderTest>(p: &Affine<C::Field>) -> C::Affine {
    cast(p)
}

/// blstrs's view of our Jacobian point.
pub fn theirs_projective<C: CurveUnderTest>(p: &Jacobian<C::Field>) -> C::Projective {
    cast(p)
}

/// A random point of the prime-order group.
pub fn random_point<C: CurveUnderTest>(rng: &mut impl RngCore) -> C::Affine {
    C::Affine::from(C::Projective::random(rng))
}

/// A random non-zero field element: the x-coordinate of a random point (blstrs keeps its field types private).
pub fn random_field<C: CurveUnderTest>(rng: &mut impl RngCore) -> C::Field {
    loop {
        let x = ours::<C>(&random_point::<C>(rng)).x;
        if !x.is_zero() {
            return x;
        }
    }
}

/// Binary kernel operations (`arith_{curve}_{name}(p, q, out, n)`, out Jacobian). All compute `p + q`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddOp {
    /// XYZZ + affine (`Xyzz::add_affine`).
    Mixed,
    /// XYZZ + XYZZ (`Xyzz::add`).
    Xyzz,
    /// Jacobian + Jacobian (`Jacobian::add`).
    Jacobian,
    /// Jacobian + affine (`Jacobian::add_affine`).
    MixedJacobian,
}

impl AddOp {
    pub const ALL: [Self; 4] = [Self::Mixed, Self::Xyzz, Self::Jacobian, Self::MixedJacobian];
    pub fn name(self) -> &'static str {
        match self {
            Self::Mixed => "add_mixed",
            Self::Xyzz => "add_xyzz",
            Self::Jacobian => "add_jacobian",
            Self::MixedJacobian => "add_mixed_jacobian",
        }
    }
    /// The host build of the kernel body.
    pub fn host<F: Field>(self) -> fn(&Affine<F>, &Affine<F>) -> Jacobian<F> {
        match self {
            Self::Mixed => ops::add_mixed::<F>,
            Self::Xyzz => ops::add_xyzz::<F>,
            Self::Jacobian => ops::add_jacobian::<F>,
            Self::MixedJacobian => ops::add_mixed_jacobian::<F>,
        }
    }
}

/// Unary kernel operations (`arith_{curve}_{name}(p, out, n)`, out Jacobian).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    Double,
    DoubleJacobian,
    Neg,
}

impl UnaryOp {
    pub const ALL: [Self; 3] = [Self::Double, Self::DoubleJacobian, Self::Neg];
    pub fn name(self) -> &'static str {
        match self {
            Self::Double => "double",
            Self::DoubleJacobian => "double_jacobian",
            Self::Neg => "neg",
        }
    }
    pub fn host<F: Field>(self) -> fn(&Affine<F>) -> Jacobian<F> {
        match self {
            Self::Double => ops::double::<F>,
            Self::DoubleJacobian => ops::double_jacobian::<F>,
            Self::Neg => ops::neg::<F>,
        }
    }
    /// blstrs's answer.
    pub fn expected<C: CurveUnderTest>(self, p: &C::Affine) -> C::Projective {
        let p = C::Projective::from(*p);
        match self {
            Self::Double | Self::DoubleJacobian => p.double(),
            Self::Neg => -p,
        }
    }
}

/// Round trips affine -> XYZZ/Jacobian (rescaled) -> affine (`arith_{curve}_{name}(p, out, n)`, out affine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundTrip {
    XyzzToAffine,
    JacobianToAffine,
}

impl RoundTrip {
    pub const ALL: [Self; 2] = [Self::XyzzToAffine, Self::JacobianToAffine];
    pub fn name(self) -> &'static str {
        match self {
            Self::XyzzToAffine => "xyzz_to_affine",
            Self::JacobianToAffine => "jacobian_to_affine",
        }
    }
    pub fn host<F: Field>(self) -> fn(&Affine<F>) -> Affine<F> {
        match self {
            Self::XyzzToAffine => ops::xyzz_to_affine::<F>,
            Self::JacobianToAffine => ops::jacobian_to_affine::<F>,
        }
    }
}

/// The kernel that runs `op` on curve `C`, e.g. `arith_g1_add_mixed`.
pub fn kernel_name<C: CurveUnderTest>(op: &str) -> String {
    format!("arith_{}_{}", C::NAME, op)
}

/// Every kernel the GPU evaluator launches for curve `C`.
pub fn kernel_names<C: CurveUnderTest>() -> Vec<String> {
    let binary = AddOp::ALL.map(AddOp::name);
    let unary = UnaryOp::ALL.map(UnaryOp::name);
    let round_trips = RoundTrip::ALL.map(RoundTrip::name);
    binary.iter().chain(&unary).chain(&round_trips).map(|op| kernel_name::<C>(op)).collect()
}

/// Runs the point operations on whole batches (one element per GPU thread, or a CPU loop).
pub trait PointEvaluator<C: CurveUnderTest> {
    fn binary(&self, op: AddOp, p: &[C::Affine], q: &[C::Affine]) -> Vec<C::Projective>;
    fn unary(&self, op: UnaryOp, p: &[C::Affine]) -> Vec<C::Projective>;
    fn round_trip(&self, op: RoundTrip, p: &[C::Affine]) -> Vec<C::Affine>;
}

/// The host build of the kernel bodies (`zkgpu_kernels::curve::ops`), element by element.
pub struct HostArithmetic;

impl<C: CurveUnderTest> PointEvaluator<C> for HostArithmetic {
    fn binary(&self, op: AddOp, p: &[C::Affine], q: &[C::Affine]) -> Vec<C::Projective> {
        let f = op.host::<C::Field>();
        p.iter().zip(q).map(|(a, b)| theirs_projective::<C>(&f(&ours::<C>(a), &ours::<C>(b)))).collect()
    }
    fn unary(&self, op: UnaryOp, p: &[C::Affine]) -> Vec<C::Projective> {
        let f = op.host::<C::Field>();
        p.iter().map(|a| theirs_projective::<C>(&f(&ours::<C>(a)))).collect()
    }
    fn round_trip(&self, op: RoundTrip, p: &[C::Affine]) -> Vec<C::Affine> {
        let f = op.host::<C::Field>();
        p.iter().map(|a| theirs::<C>(&f(&ours::<C>(a)))).collect()
    }
}

/// Pairs of inputs for the binary operations, each with a label for failure messages.
pub struct PairBatch<C: CurveUnderTest> {
    pub p: Vec<C::Affine>,
    pub q: Vec<C::Affine>,
    pub labels: Vec<&'static str>,
}

impl<C: CurveUnderTest> PairBatch<C> {
    /// Every edge case once: identities on either side, `P + P` (a doubling hidden in an addition),
    /// `P + (-P)`, `P + 2P`, `-P + P`, the generator doubled, and one random pair.
    pub fn edge_cases(rng: &mut impl RngCore) -> Self {
        let o = C::Affine::from(C::Projective::identity());
        let g = C::Affine::from(C::Projective::generator());
        let p = random_point::<C>(rng);
        let q = random_point::<C>(rng);
        let minus_p = C::Affine::from(-C::Projective::from(p));
        let two_p = C::Affine::from(C::Projective::from(p).double());
        let cases: [(&'static str, C::Affine, C::Affine); 11] = [
            ("O + O", o, o),
            ("O + P", o, p),
            ("P + O", p, o),
            ("P + P", p, p),
            ("G + G", g, g),
            ("P + (-P)", p, minus_p),
            ("(-P) + P", minus_p, p),
            ("P + 2P", p, two_p),
            ("2P + P", two_p, p),
            ("G + (-G)", g, C::Affine::from(-C::Projective::generator())),
            ("P + Q", p, q),
        ];
        Self {
            p: cases.iter().map(|c| c.1).collect(),
            q: cases.iter().map(|c| c.2).collect(),
            labels: cases.iter().map(|c| c.0).collect(),
        }
    }

    /// `len` pairs: every edge case (several times, with fresh random points) scattered among random pairs.
    pub fn mixed(rng: &mut impl RngCore, len: usize) -> Self {
        let mut batch = Self { p: Vec::with_capacity(len), q: Vec::with_capacity(len), labels: Vec::new() };
        // About 1 pair in 8 is an edge case.
        while batch.p.len() < len / 8 {
            let edge = Self::edge_cases(rng);
            batch.p.extend(edge.p);
            batch.q.extend(edge.q);
            batch.labels.extend(edge.labels);
        }
        batch.p.truncate(len);
        batch.q.truncate(len);
        batch.labels.truncate(len);
        while batch.p.len() < len {
            batch.p.push(random_point::<C>(rng));
            batch.q.push(random_point::<C>(rng));
            batch.labels.push("random P + Q");
        }
        // Fisher-Yates, so edge cases land in every warp position, including the ragged last warp.
        for i in (1..len).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            batch.p.swap(i, j);
            batch.q.swap(i, j);
            batch.labels.swap(i, j);
        }
        batch
    }

    pub fn len(&self) -> usize {
        self.p.len()
    }
}

/// Check one result: equal to blstrs's, on the curve by blstrs's test and by ours.
fn check_point<C: CurveUnderTest>(got: &C::Projective, expected: &C::Projective, what: impl Fn() -> String) {
    assert!(got == expected, "{}: got {got:?}, expected {expected:?}", what());
    assert!(C::projective_is_on_curve(got), "{}: result not on the curve (blstrs): {got:?}", what());
    let ours_jacobian: Jacobian<C::Field> = cast(got);
    assert!(ours_jacobian.is_on_curve(), "{}: result not on the curve (ours): {got:?}", what());
}

/// All binary operations on `batch` against `p + q` from blstrs.
pub fn check_binary_ops<C: CurveUnderTest>(eval: &impl PointEvaluator<C>, batch: &PairBatch<C>) {
    for op in AddOp::ALL {
        let got = eval.binary(op, &batch.p, &batch.q);
        assert_eq!(got.len(), batch.len(), "{} {op:?}: wrong output length", C::NAME);
        for (i, got) in got.iter().enumerate() {
            let expected = C::Projective::from(batch.p[i]) + C::Projective::from(batch.q[i]);
            check_point::<C>(got, &expected, || {
                format!(
                    "{} {op:?} element {i} ({}): p = {:?}, q = {:?}",
                    C::NAME,
                    batch.labels[i],
                    batch.p[i],
                    batch.q[i]
                )
            });
        }
    }
}

/// All unary operations and round trips on `points` (which should include the identity).
pub fn check_unary_ops<C: CurveUnderTest>(eval: &impl PointEvaluator<C>, points: &[C::Affine]) {
    for op in UnaryOp::ALL {
        let got = eval.unary(op, points);
        assert_eq!(got.len(), points.len(), "{} {op:?}: wrong output length", C::NAME);
        for (i, (got, p)) in got.iter().zip(points).enumerate() {
            check_point::<C>(got, &op.expected::<C>(p), || format!("{} {op:?} element {i}: p = {p:?}", C::NAME));
        }
    }
    for op in RoundTrip::ALL {
        let got = eval.round_trip(op, points);
        assert_eq!(got.len(), points.len(), "{} {op:?}: wrong output length", C::NAME);
        for (i, (got, p)) in got.iter().zip(points).enumerate() {
            // Bit-exact: canonical coordinates, identity all-zero.
            assert_eq!(bytes_of(got), bytes_of(p), "{} {op:?} element {i}: got {got:?}, expected {p:?}", C::NAME);
        }
    }
}

/// Everything an evaluator runs, on one batch.
pub fn check_all_ops<C: CurveUnderTest>(eval: &impl PointEvaluator<C>, batch: &PairBatch<C>) {
    check_binary_ops(eval, batch);
    check_unary_ops(eval, &batch.p);
    check_unary_ops(eval, &batch.q);
}

/// Our types are blstrs's, byte for byte: sizes, where `x` sits, the identity encodings, and the Jacobian
/// convention (`x = X/Z^2`, `y = Y/Z^3`).
pub fn check_layout<C: CurveUnderTest>(rng: &mut impl RngCore) {
    assert_eq!(size_of::<Affine<C::Field>>(), size_of::<C::Affine>(), "{} affine size", C::NAME);
    assert_eq!(size_of::<Jacobian<C::Field>>(), size_of::<C::Projective>(), "{} Jacobian size", C::NAME);
    assert_eq!(size_of::<Xyzz<C::Field>>(), 4 * size_of::<C::Field>(), "{} XYZZ size", C::NAME);
    assert!(align_of::<Affine<C::Field>>() <= align_of::<C::Affine>(), "{} affine alignment", C::NAME);
    assert!(align_of::<Jacobian<C::Field>>() <= align_of::<C::Projective>(), "{} Jacobian alignment", C::NAME);

    let identity = C::Affine::from(C::Projective::identity());
    assert!(bytes_of(&identity).iter().all(|&b| b == 0), "{}: blstrs's affine identity is not all-zero", C::NAME);
    assert_eq!(ours::<C>(&identity), Affine::IDENTITY);
    assert!(Affine::<C::Field>::IDENTITY.is_identity());
    let projective_identity: Jacobian<C::Field> = cast(&C::Projective::identity());
    assert!(projective_identity.is_identity(), "{}: blstrs's projective identity is not Z = 0", C::NAME);
    assert!(C::Projective::identity() == theirs_projective::<C>(&Jacobian::IDENTITY));

    for p in [C::Affine::from(C::Projective::generator()), random_point::<C>(rng)] {
        let ours_p = ours::<C>(&p);
        assert_eq!(bytes_of(&ours_p.x), C::affine_x_bytes(&p), "{}: x is not where blstrs keeps it", C::NAME);
        assert!(ours_p.is_on_curve(), "{}: {p:?} not on the curve by our arithmetic", C::NAME);
        assert!(!ours_p.is_identity());
    }

    // A blstrs projective point with Z != 1 (a sum), read by our Jacobian conventions.
    let sum = C::Projective::random(&mut *rng) + C::Projective::random(&mut *rng);
    let ours_sum: Jacobian<C::Field> = cast(&sum);
    assert!(ours_sum.z != C::Field::ONE, "{}: test needs Z != 1", C::NAME);
    assert!(ours_sum.is_on_curve(), "{}: blstrs's Jacobian point fails our curve equation", C::NAME);
    assert_eq!(ours_sum.to_affine(), ours::<C>(&C::Affine::from(sum)), "{}: Jacobian convention", C::NAME);
}

/// `is_on_curve` accepts points and the identity, and rejects a point with a perturbed coordinate.
pub fn check_on_curve_rejects<C: CurveUnderTest>(rng: &mut impl RngCore) {
    let p = ours::<C>(&random_point::<C>(rng));
    assert!(p.is_on_curve());
    assert!(Affine::<C::Field>::IDENTITY.is_on_curve());
    let moved = Affine { x: p.x.add(&C::Field::ONE), y: p.y };
    assert!(!moved.is_on_curve(), "{}: (x + 1, y) accepted", C::NAME);
    assert!(!C::affine_is_on_curve(&theirs::<C>(&moved)), "{}: blstrs accepts (x + 1, y)", C::NAME);
    let xyzz = Xyzz::from_affine_scaled(&p, &random_field::<C>(rng));
    assert!(xyzz.is_on_curve());
    assert!(!Xyzz { zzz: xyzz.zzz.double(), ..xyzz }.is_on_curve(), "{}: ZZ^3 != ZZZ^2 accepted", C::NAME);
    let jac = Jacobian::from_affine_scaled(&p, &random_field::<C>(rng));
    assert!(jac.is_on_curve());
    assert!(!Jacobian { y: jac.y.double(), ..jac }.is_on_curve(), "{}: (X, 2Y, Z) accepted", C::NAME);
    // (0, 0) is not on the curve, which is why it can encode the identity; the identity flag makes it pass.
    assert!(!C::Field::coeff_b().is_zero());
}

/// Host-only: the formulas on random, independent representations (random `λ` per operand, so `ZZ`, `ZZZ`, `Z`
/// are arbitrary), including equal points in different representations (doubling and `P + (-P)` must be
/// detected across representations), conversions, and a chain of mixed additions like an MSM bucket.
/// (Split in three so each stack frame stays small in debug builds, where everything is inlined.)
pub fn check_random_representations<C: CurveUnderTest>(rng: &mut impl RngCore) {
    let case = RandomCase::<C>::new(rng);
    check_xyzz_representations::<C>(&case);
    check_jacobian_representations::<C>(&case);
    check_bucket_chain::<C>(rng);
}

/// Two random points, their sum, `2P`, `-P`, and three random non-zero scales.
struct RandomCase<C: CurveUnderTest> {
    p: Affine<C::Field>,
    q: Affine<C::Field>,
    sum: Affine<C::Field>,
    twice_p: Affine<C::Field>,
    minus_p: Affine<C::Field>,
    scales: [C::Field; 3],
}

impl<C: CurveUnderTest> RandomCase<C> {
    fn new(rng: &mut impl RngCore) -> Self {
        let (bp, bq) = (random_point::<C>(rng), random_point::<C>(rng));
        let proj = |a: &C::Affine| C::Projective::from(*a);
        let (p, q) = (ours::<C>(&bp), ours::<C>(&bq));
        let minus_p = p.neg();
        assert_eq!(theirs::<C>(&minus_p), C::Affine::from(-proj(&bp)), "{}: affine neg", C::NAME);
        assert_eq!(Affine::<C::Field>::IDENTITY.neg(), Affine::IDENTITY, "{}: neg(O)", C::NAME);
        Self {
            p,
            q,
            sum: ours::<C>(&C::Affine::from(proj(&bp) + proj(&bq))),
            twice_p: ours::<C>(&C::Affine::from(proj(&bp).double())),
            minus_p,
            scales: [random_field::<C>(rng), random_field::<C>(rng), random_field::<C>(rng)],
        }
    }
}

/// Run `f` in its own stack frame. In debug builds every `#[inline(always)]` operation is inlined with all its
/// temporaries; a test that calls dozens of G2 operations in one function would overflow the test thread's stack.
#[inline(never)]
fn separately<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[inline(never)]
fn check_xyzz_representations<C: CurveUnderTest>(case: &RandomCase<C>) {
    let RandomCase { p, q, sum, twice_p, minus_p, scales: [l1, l2, l3] } = case;
    let (p, q, sum, twice_p, minus_p) = (*p, *q, *sum, *twice_p, *minus_p);
    let o = Affine::<C::Field>::IDENTITY;
    let xp = separately(|| Xyzz::from_affine_scaled(&p, l1));
    let xp2 = separately(|| Xyzz::from_affine_scaled(&p, l3));
    let xq = separately(|| Xyzz::from_affine_scaled(&q, l2));
    let xo = Xyzz::<C::Field>::IDENTITY;
    assert!(separately(|| xp.is_on_curve() && xq.is_on_curve()));
    assert_eq!(separately(|| xp.to_affine()), p, "{}: XYZZ to_affine", C::NAME);
    assert_eq!(separately(|| xp.to_jacobian().to_affine()), p, "{}: XYZZ to_jacobian", C::NAME);
    assert_eq!(separately(|| Xyzz::from_jacobian(&xp.to_jacobian()).to_affine()), p, "{}: XYZZ from_jacobian", C::NAME);
    assert_eq!(separately(|| Xyzz::from_affine(&p).to_affine()), p);
    assert_eq!(separately(|| xp.add(&xq).to_affine()), sum, "{}: XYZZ add", C::NAME);
    assert_eq!(separately(|| xq.add(&xp).to_affine()), sum, "{}: XYZZ add (swapped)", C::NAME);
    assert_eq!(separately(|| xp.add_affine(&q).to_affine()), sum, "{}: XYZZ add_affine", C::NAME);
    assert_eq!(separately(|| xp.add(&xp2).to_affine()), twice_p, "{}: XYZZ P + P, two representations", C::NAME);
    assert_eq!(separately(|| xp.add_affine(&p).to_affine()), twice_p, "{}: XYZZ P + P mixed", C::NAME);
    assert_eq!(separately(|| xp.double().to_affine()), twice_p, "{}: XYZZ double", C::NAME);
    assert_eq!(separately(|| Xyzz::double_affine(&p).to_affine()), twice_p, "{}: XYZZ double_affine", C::NAME);
    assert!(separately(|| Xyzz::double_affine(&o).is_identity()));
    assert!(separately(|| xp.add(&Xyzz::from_affine_scaled(&minus_p, l3)).is_identity()), "{}: XYZZ P + (-P)", C::NAME);
    assert!(separately(|| xp.add_affine(&minus_p).is_identity()), "{}: XYZZ P + (-P) mixed", C::NAME);
    assert!(separately(|| xp.add(&xp.neg()).is_identity()), "{}: XYZZ P + neg(P)", C::NAME);
    assert_eq!(separately(|| xp.add(&xo).to_affine()), p);
    assert_eq!(separately(|| xo.add(&xp).to_affine()), p);
    assert_eq!(separately(|| xo.add_affine(&p).to_affine()), p);
    assert_eq!(separately(|| xp.add_affine(&o).to_affine()), p);
    assert!(separately(|| xo.add(&xo).is_identity() && xo.add_affine(&o).is_identity() && xo.double().is_identity()));
    assert!(separately(|| xo.neg().is_identity() && Xyzz::from_affine(&o).is_identity()));
    assert!(separately(|| Xyzz::from_affine_scaled(&o, l1).is_identity()));
    assert_eq!(separately(|| xo.to_affine()), o, "{}: XYZZ identity to affine", C::NAME);
    assert!(separately(|| xo.to_jacobian().is_identity()));
    assert!(separately(|| xp.add(&xq).is_on_curve() && xp.double().is_on_curve() && xp.add_affine(&q).is_on_curve()));
}

#[inline(never)]
fn check_jacobian_representations<C: CurveUnderTest>(case: &RandomCase<C>) {
    let RandomCase { p, q, sum, twice_p, minus_p, scales: [l1, l2, l3] } = case;
    let (p, q, sum, twice_p, minus_p) = (*p, *q, *sum, *twice_p, *minus_p);
    let o = Affine::<C::Field>::IDENTITY;
    let jp = separately(|| Jacobian::from_affine_scaled(&p, l1));
    let jp2 = separately(|| Jacobian::from_affine_scaled(&p, l3));
    let jq = separately(|| Jacobian::from_affine_scaled(&q, l2));
    let jo = Jacobian::<C::Field>::IDENTITY;
    assert!(separately(|| jp.is_on_curve() && jq.is_on_curve()));
    assert_eq!(separately(|| jp.to_affine()), p, "{}: Jacobian to_affine", C::NAME);
    assert_eq!(separately(|| jp.to_xyzz().to_affine()), p, "{}: Jacobian to_xyzz", C::NAME);
    assert_eq!(separately(|| Jacobian::from_affine(&p).to_affine()), p);
    assert_eq!(separately(|| jp.add(&jq).to_affine()), sum, "{}: Jacobian add", C::NAME);
    assert_eq!(separately(|| jp.add_affine(&q).to_affine()), sum, "{}: Jacobian add_affine", C::NAME);
    assert_eq!(separately(|| jp.add(&jp2).to_affine()), twice_p, "{}: Jacobian P + P, two representations", C::NAME);
    assert_eq!(separately(|| jp.add_affine(&p).to_affine()), twice_p, "{}: Jacobian P + P mixed", C::NAME);
    assert_eq!(separately(|| jp.double().to_affine()), twice_p, "{}: Jacobian double", C::NAME);
    assert!(
        separately(|| jp.add(&Jacobian::from_affine_scaled(&minus_p, l2)).is_identity()),
        "{}: Jacobian P + (-P)",
        C::NAME
    );
    assert!(separately(|| jp.add_affine(&minus_p).is_identity()), "{}: Jacobian P + (-P) mixed", C::NAME);
    assert!(separately(|| jp.add(&jp.neg()).is_identity()));
    assert_eq!(separately(|| jp.add(&jo).to_affine()), p);
    assert_eq!(separately(|| jo.add(&jp).to_affine()), p);
    assert_eq!(separately(|| jo.add_affine(&p).to_affine()), p);
    assert_eq!(separately(|| jp.add_affine(&o).to_affine()), p);
    assert!(separately(|| jo.add(&jo).is_identity() && jo.add_affine(&o).is_identity() && jo.double().is_identity()));
    assert!(separately(|| jo.neg().is_identity() && Jacobian::from_affine(&o).is_identity()));
    assert_eq!(separately(|| jo.to_affine()), o);
    assert!(separately(|| jo.to_xyzz().is_identity()));
    assert!(separately(|| jp.add(&jq).is_on_curve() && jp.double().is_on_curve() && jp.add_affine(&q).is_on_curve()));
}

/// A bucket kept lazily reduced, as the MSM's accumulation and the batch addition keep theirs: `len` random
/// points plus a repeat of the running sum's last point (the doubling branch), a cancellation and the identity,
/// accumulated with `add_affine_lazy`; after every step its canonical form must equal, coordinate by
/// coordinate, the bucket accumulated with the canonical `add_affine`, and the sum must match blstrs. Returns
/// how many lazy coordinates were not canonical (in `[p, 2p)`), so a caller can check that the lazy path was
/// exercised (over Fq; fields without lazy operations give 0).
pub fn check_lazy_bucket_chain<C: CurveUnderTest>(rng: &mut impl RngCore, len: usize) -> usize {
    let proj = |a: &C::Affine| C::Projective::from(*a);
    let mut points: Vec<C::Affine> = (0..len).map(|_| random_point::<C>(rng)).collect();
    let start = C::Affine::from(points.iter().map(proj).sum::<C::Projective>());
    // P + P with P the sum so far (doubling across representations), then −(that sum) back (cancellation),
    // then the identity.
    points.push(start);
    points.push(C::Affine::from(-(proj(&start) + proj(&start))));
    points.push(C::Affine::from(C::Projective::identity()));
    points.extend((0..4).map(|_| random_point::<C>(rng)));
    let (mut lazy, mut canonical) = (Xyzz::<C::Field>::IDENTITY, Xyzz::<C::Field>::IDENTITY);
    let mut expected = C::Projective::identity();
    let mut non_canonical = 0;
    for (step, point) in points.iter().enumerate() {
        lazy = lazy.add_affine_lazy(&ours::<C>(point));
        canonical = canonical.add_affine(&ours::<C>(point));
        expected += proj(point);
        let reduced = lazy.canonical();
        for (got, want) in [(lazy.x, reduced.x), (lazy.y, reduced.y), (lazy.zz, reduced.zz), (lazy.zzz, reduced.zzz)] {
            non_canonical += usize::from(got != want);
        }
        let same = reduced.x == canonical.x
            && reduced.y == canonical.y
            && reduced.zz == canonical.zz
            && reduced.zzz == canonical.zzz;
        assert!(same, "{}: lazy bucket differs from the canonical one at step {step}", C::NAME);
        assert!(reduced.is_on_curve(), "{}: lazy bucket left the curve at step {step}", C::NAME);
    }
    assert_eq!(lazy.canonical().to_affine(), ours::<C>(&C::Affine::from(expected)), "{}: lazy bucket sum", C::NAME);
    non_canonical
}

/// A bucket: accumulate mixed additions in XYZZ (with a repeat and a cancellation), compare with blstrs.
#[inline(never)]
fn check_bucket_chain<C: CurveUnderTest>(rng: &mut impl RngCore) {
    let proj = |a: &C::Affine| C::Projective::from(*a);
    let mut points: Vec<C::Affine> = (0..6).map(|_| random_point::<C>(rng)).collect();
    points.push(points[2]);
    points.push(C::Affine::from(-proj(&points[0])));
    points.push(C::Affine::from(C::Projective::identity()));
    let mut bucket = Xyzz::<C::Field>::IDENTITY;
    let mut expected = C::Projective::identity();
    for point in &points {
        bucket = bucket.add_affine(&ours::<C>(point));
        expected += proj(point);
        assert!(bucket.is_on_curve(), "{}: bucket left the curve", C::NAME);
    }
    assert_eq!(bucket.to_affine(), ours::<C>(&C::Affine::from(expected)), "{}: bucket sum", C::NAME);
}
