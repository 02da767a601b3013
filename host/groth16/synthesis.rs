//! Synthesis: a bellperson circuit run into the buffers the prover uploads.
//!
//! It reproduces what bellperson's prover records, so that proofs come out byte-identical: the input "one"
//! is allocated first, the circuit synthesizes, then one constraint `xᵢ · 0 = 0` is added per public input. Each constraint's A, B and C linear combinations are evaluated on the
//! witness into `a`, `b`, `c` (evaluations on the domain; positions past the last constraint are zero, the
//! padding to 2^k). Densities record which variables a query uses, as bellperson's do: A's aux variables
//! (every input is in A through its input constraint), B's inputs and aux; a variable counts when it
//! appears with a non-zero coefficient.
//!
//! Beyond bellperson: every constraint is checked (`a·b = c`, one multiplication), so an unsatisfied circuit
//! is an [`Error::Unsatisfied`] rather than a proof that fails to verify; a variable index outside the
//! assignment is an error rather than a panic; a circuit larger than the key's domain is an
//! [`Error::KeyMismatch`], and nothing is written past the buffers.
use std::ops::DerefMut;

use bellperson::{Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable};
use blstrs::Scalar;
use ff::Field;

use crate::error::{Error, Result};

/// Which variables of an assignment a query uses: bit `i` of word `i / 32`, the layout of the engine's
/// bitmaps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Density {
    words: Vec<u32>,
    len: usize,
    total: usize,
}

impl Density {
    /// A density over `len` variables, none used.
    pub fn new(len: usize) -> Self {
        Density { words: vec![0; len.div_ceil(32)], len, total: 0 }
    }

    /// No variables yet, room for `len` without growing.
    fn with_capacity(len: usize) -> Self {
        Density { words: Vec::with_capacity(len.div_ceil(32)), len: 0, total: 0 }
    }

    /// Variables tracked.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No variables tracked.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Variables used (the query's number of bases over this assignment).
    pub fn total(&self) -> usize {
        self.total
    }

    /// Every variable is used (the query's bases line up with the whole assignment).
    pub fn is_full(&self) -> bool {
        self.total == self.len
    }

    /// The bitmap, `⌈len / 32⌉` words; bits past `len` are zero.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Is variable `i` used?
    pub fn contains(&self, i: usize) -> bool {
        i < self.len && self.words[i / 32] >> (i % 32) & 1 == 1
    }

    /// The values at the used positions, in order (the scalars of a query whose bases skip unused variables).
    pub fn select<T: Copy>(&self, values: &[T]) -> Vec<T> {
        let mut out = Vec::with_capacity(self.total);
        for (w, (&word, chunk)) in self.words.iter().zip(values.chunks(32)).enumerate() {
            if word == u32::MAX && chunk.len() == 32 {
                out.extend_from_slice(chunk);
                continue;
            }
            let mut bits = word;
            while bits != 0 {
                let b = bits.trailing_zeros() as usize;
                if let Some(v) = values.get(32 * w + b) {
                    out.push(*v);
                }
                bits &= bits - 1;
            }
        }
        out
    }

    fn push(&mut self) {
        if self.len.is_multiple_of(32) {
            self.words.push(0);
        }
        self.len += 1;
    }

    /// Marks variable `i` (the caller has checked `i < len`).
    fn mark(&mut self, i: usize) {
        let (word, bit) = (&mut self.words[i / 32], 1u32 << (i % 32));
        if *word & bit == 0 {
            *word |= bit;
            self.total += 1;
        }
    }
}

/// A synthesized circuit: the evaluations `a`, `b`, `c` (as long as the domain, zero past the constraints),
/// the assignments and the densities. `S` is where the evaluations live: a `Vec` or a [`crate::PinnedBuffer`]
/// (synthesis only writes them, so write-combined pinned memory is fine).
#[derive(Debug)]
pub struct Witness<S = Vec<Scalar>> {
    pub(crate) a: S,
    pub(crate) b: S,
    pub(crate) c: S,
    pub(crate) constraints: usize,
    pub(crate) input: Vec<Scalar>,
    pub(crate) aux: Vec<Scalar>,
    pub(crate) a_aux_density: Density,
    pub(crate) b_input_density: Density,
    pub(crate) b_aux_density: Density,
}

impl<S: DerefMut<Target = [Scalar]>> Witness<S> {
    /// Evaluations of the A combinations, one per constraint, then zeros to the domain size.
    pub fn a(&self) -> &S {
        &self.a
    }
    /// Evaluations of the B combinations (as [`Witness::a`]).
    pub fn b(&self) -> &S {
        &self.b
    }
    /// Evaluations of the C combinations (as [`Witness::a`]).
    pub fn c(&self) -> &S {
        &self.c
    }
    /// Constraints, the input constraints included.
    pub fn constraints(&self) -> usize {
        self.constraints
    }
    /// The domain size (a power of two).
    pub fn domain(&self) -> usize {
        self.a.len()
    }
    /// Public inputs, "one" first.
    pub fn input(&self) -> &[Scalar] {
        &self.input
    }
    /// Auxiliary (private) variables.
    pub fn aux(&self) -> &[Scalar] {
        &self.aux
    }
    /// Aux variables used by the A query.
    pub fn a_aux_density(&self) -> &Density {
        &self.a_aux_density
    }
    /// Inputs used by the B queries.
    pub fn b_input_density(&self) -> &Density {
        &self.b_input_density
    }
    /// Aux variables used by the B queries.
    pub fn b_aux_density(&self) -> &Density {
        &self.b_aux_density
    }
    /// The public inputs a verifier takes (without "one").
    pub fn public_inputs(&self) -> &[Scalar] {
        self.input.get(1..).unwrap_or(&[])
    }
}

/// Synthesizes `circuit` into the evaluation buffers `a`, `b`, `c` (equal lengths, a power of two: the
/// domain). Every position is written, the padding with zeros. Errors: the circuit's own failure
/// ([`Error::Synthesis`]), more constraints than the domain holds ([`Error::KeyMismatch`]), a failing
/// constraint ([`Error::Unsatisfied`]), buffers of bad sizes ([`Error::LengthMismatch`], [`Error::NttSize`]).
pub fn synthesize<C, S>(circuit: C, a: S, b: S, c: S) -> Result<Witness<S>>
where
    C: Circuit<Scalar>,
    S: DerefMut<Target = [Scalar]> + Send,
{
    synthesize_sized(circuit, a, b, c, (0, 0))
}

/// [`synthesize`] with the assignments' expected lengths `(inputs, aux)` reserved up front (a key knows
/// them), so they never grow by copying.
pub(crate) fn synthesize_sized<C, S>(circuit: C, a: S, b: S, c: S, expected: (usize, usize)) -> Result<Witness<S>>
where
    C: Circuit<Scalar>,
    S: DerefMut<Target = [Scalar]> + Send,
{
    let n = a.len();
    if !n.is_power_of_two() {
        return Err(Error::NttSize { n });
    }
    for (what, v) in [("synthesis b", &b), ("synthesis c", &c)] {
        if v.len() != n {
            return Err(Error::LengthMismatch { what, expected: n, actual: v.len() });
        }
    }
    let mut cs = Synthesizer {
        w: Witness {
            a,
            b,
            c,
            constraints: 0,
            input: Vec::with_capacity(expected.0),
            aux: Vec::with_capacity(expected.1),
            a_aux_density: Density::with_capacity(expected.1),
            b_input_density: Density::with_capacity(expected.0),
            b_aux_density: Density::with_capacity(expected.1),
        },
        fault: None,
    };
    cs.alloc_input(|| "one", || Ok(Scalar::ONE)).map_err(|e| Error::Synthesis(e.to_string()))?;
    circuit.synthesize(&mut cs).map_err(|e| Error::Synthesis(e.to_string()))?;
    for i in 0..cs.w.input.len() {
        cs.enforce(|| "input constraint", |lc| lc + Variable::new_unchecked(Index::Input(i)), |lc| lc, |lc| lc);
    }
    if let Some(fault) = cs.fault {
        return Err(match fault {
            Fault::TooLarge => Error::KeyMismatch(format!(
                "the circuit has {} constraints (with one per public input), the key's domain holds {n}",
                cs.w.constraints
            )),
            Fault::Unsatisfied { constraint, annotation } => Error::Unsatisfied { constraint, annotation },
            Fault::BadVariable { constraint, index } => Error::Synthesis(format!(
                "constraint {constraint} names {index:?}, which was never allocated ({} inputs, {} aux)",
                cs.w.input.len(),
                cs.w.aux.len()
            )),
        });
    }
    let mut w = cs.w;
    let k = w.constraints;
    for v in [&mut w.a, &mut w.b, &mut w.c] {
        v[k..].fill(Scalar::ZERO);
    }
    Ok(w)
}

/// The first thing that went wrong; synthesis goes on (the trait's `enforce` cannot fail) but writes nothing
/// past the buffers, and the error is returned at the end.
enum Fault {
    TooLarge,
    Unsatisfied { constraint: usize, annotation: String },
    BadVariable { constraint: usize, index: Index },
}

/// The constraint system: bellperson's `ProvingAssignment`, writing into [`Witness`].
struct Synthesizer<S> {
    w: Witness<S>,
    fault: Option<Fault>,
}

/// `Σ coeff·value` over a combination; marks used variables in the densities given. `Err(index)` for a
/// variable outside the assignment.
fn eval<'d>(
    lc: &LinearCombination<Scalar>,
    mut input_density: Option<&'d mut Density>,
    mut aux_density: Option<&'d mut Density>,
    input: &[Scalar],
    aux: &[Scalar],
) -> std::result::Result<Scalar, Index> {
    let mut acc = Scalar::ZERO;
    let terms = lc.iter_inputs().map(|(i, c)| (true, *i, c)).chain(lc.iter_aux().map(|(i, c)| (false, *i, c)));
    for (is_input, index, coeff) in terms {
        if limbs(coeff) == [0; 4] {
            continue;
        }
        let (values, density) = if is_input { (input, &mut input_density) } else { (aux, &mut aux_density) };
        let Some(value) = values.get(index) else {
            return Err(if is_input { Index::Input(index) } else { Index::Aux(index) });
        };
        if let Some(d) = density {
            d.mark(index);
        }
        if limbs(value) != [0; 4] {
            acc += product(coeff, value);
        }
    }
    Ok(acc)
}

/// `coeff · value` without a multiplication in the common cases: values 0 and 1 (bits, most of a hash
/// circuit's witness; its packing combinations carry coefficients 2ⁱ) and coefficients ±1 (gadgets'
/// `lc + v`, `lc - v`). The tests compare Montgomery limbs directly: `Scalar`'s `==` is constant-time,
/// which synthesis (the witness is the prover's own) does not need and which cost ~10% of its time.
#[inline]
fn product(coeff: &Scalar, value: &Scalar) -> Scalar {
    let v = limbs(value);
    if v == [0; 4] {
        Scalar::ZERO
    } else if v == ONE {
        *coeff
    } else {
        let c = limbs(coeff);
        if c == ONE {
            *value
        } else if c == MINUS_ONE {
            -*value
        } else {
            *value * coeff
        }
    }
}

/// Montgomery limbs of 1 and −1 (`R mod r` and `r − R mod r`), checked against `Scalar` by a test.
const ONE: [u64; 4] = [0x0000_0001_ffff_fffe, 0x5884_b7fa_0003_4802, 0x998c_4fef_ecbc_4ff5, 0x1824_b159_acc5_056f];
const MINUS_ONE: [u64; 4] =
    [0xffff_fffd_0000_0003, 0xfb38_ec08_fffb_13fc, 0x99ad_8818_1ce5_880f, 0x5bc8_f5f9_7cd8_77d8];

#[inline]
fn limbs(s: &Scalar) -> [u64; 4] {
    blst::blst_fr::from(*s).l
}

impl<S: DerefMut<Target = [Scalar]> + Send> ConstraintSystem<Scalar> for Synthesizer<S> {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.w.aux.push(f()?);
        self.w.a_aux_density.push();
        self.w.b_aux_density.push();
        Ok(Variable::new_unchecked(Index::Aux(self.w.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> std::result::Result<Variable, SynthesisError>
    where
        F: FnOnce() -> std::result::Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.w.input.push(f()?);
        self.w.b_input_density.push();
        Ok(Variable::new_unchecked(Index::Input(self.w.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, annotation: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let constraint = self.w.constraints;
        self.w.constraints += 1;
        let (la, lb, lc) = (a(LinearCombination::zero()), b(LinearCombination::zero()), c(LinearCombination::zero()));
        let w = &mut self.w;
        let (input, aux) = (&w.input[..], &w.aux[..]);
        let values = eval(&la, None, Some(&mut w.a_aux_density), input, aux).and_then(|va| {
            let vb = eval(&lb, Some(&mut w.b_input_density), Some(&mut w.b_aux_density), input, aux)?;
            Ok((va, vb, eval(&lc, None, None, input, aux)?))
        });
        let (va, vb, vc) = match values {
            Ok(v) => v,
            Err(index) => {
                self.fault.get_or_insert(Fault::BadVariable { constraint, index });
                return;
            }
        };
        if constraint >= w.a.len() {
            self.fault.get_or_insert(Fault::TooLarge);
            return;
        }
        w.a[constraint] = va;
        w.b[constraint] = vb;
        w.c[constraint] = vc;
        if self.fault.is_none() && product(&va, &vb) != vc {
            self.fault = Some(Fault::Unsatisfied { constraint, annotation: annotation().into() });
        }
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn montgomery_constants() {
        assert_eq!(limbs(&Scalar::ONE), ONE);
        assert_eq!(limbs(&-Scalar::ONE), MINUS_ONE);
        assert_eq!(limbs(&Scalar::ZERO), [0; 4]);
    }
}
