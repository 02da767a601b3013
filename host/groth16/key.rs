//! The proving key: bellperson's `Parameters<Bls12>` held as shared slices, with the checks that tie it to a
//! circuit and the query slices a witness selects.
//!
//! bellperson's key stores each query without its points at infinity: A holds the inputs then the aux
//! variables A uses, B (G1 and G2) the inputs B uses then the aux B uses, L every aux variable, H `n − 1`
//! points for a domain of `n`. Which variables a query uses is known only after synthesis (the densities of
//! [`super::Witness`]), so [`ProvingKey::queries`] cuts the slices per witness, as bellperson does.
use std::ops::Deref;
use std::sync::Arc;

use bellperson::groth16::{Parameters, VerifyingKey};
use blstrs::{Bls12, G1Affine, G2Affine, Scalar};
use group::prime::PrimeCurveAffine;

use super::synthesis::Witness;
use crate::error::{Error, Result};
use crate::memory::DeviceSafe;
use crate::pinned::PinnedBuffer;

/// Where a query's points live: shared with a bellperson `Parameters` on the heap, or page-locked memory the
/// GPU reads at PCIe line rate ([`ProvingKey::read_pinned`]).
pub(crate) enum Points<T: DeviceSafe> {
    Heap(Arc<Vec<T>>),
    Pinned(Arc<PinnedBuffer<T>>),
}

impl<T: DeviceSafe> Clone for Points<T> {
    fn clone(&self) -> Self {
        match self {
            Points::Heap(v) => Points::Heap(v.clone()),
            Points::Pinned(p) => Points::Pinned(p.clone()),
        }
    }
}

impl<T: DeviceSafe> Deref for Points<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        match self {
            Points::Heap(v) => v,
            Points::Pinned(p) => p,
        }
    }
}

impl<T: DeviceSafe> Points<T> {
    /// The points to fill, while nothing else shares them (just after allocation).
    pub(crate) fn unique_mut(&mut self) -> Option<&mut [T]> {
        match self {
            Points::Heap(v) => Arc::get_mut(v).map(Vec::as_mut_slice),
            Points::Pinned(p) => Arc::get_mut(p).map(|p| &mut **p),
        }
    }

    /// Shares heap points; copies pinned ones.
    fn to_heap(&self) -> Arc<Vec<T>> {
        match self {
            Points::Heap(v) => v.clone(),
            Points::Pinned(p) => Arc::new(p.to_vec()),
        }
    }
}

/// A Groth16 proving key for one circuit. Cloning shares the points.
#[derive(Clone)]
pub struct ProvingKey {
    pub(crate) vk: VerifyingKey<Bls12>,
    pub(crate) h: Points<G1Affine>,
    pub(crate) l: Points<G1Affine>,
    pub(crate) a: Points<G1Affine>,
    pub(crate) b_g1: Points<G1Affine>,
    pub(crate) b_g2: Points<G2Affine>,
}

impl std::fmt::Debug for ProvingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProvingKey")
            .field("domain", &self.domain())
            .field("inputs", &self.num_inputs())
            .field("aux", &self.num_aux())
            .field("a", &self.a.len())
            .field("b", &self.b_g1.len())
            .finish()
    }
}

/// The bases of every query for one witness: slices of the key, each exactly as long as its scalars.
pub(crate) struct Queries<'k> {
    /// `n − 1` points (the last `h` coefficient is not used: bellperson truncates it).
    pub h: &'k [G1Affine],
    pub l: &'k [G1Affine],
    pub a_inputs: &'k [G1Affine],
    pub a_aux: &'k [G1Affine],
    pub b_g1_inputs: &'k [G1Affine],
    pub b_g1_aux: &'k [G1Affine],
    pub b_g2_inputs: &'k [G2Affine],
    pub b_g2_aux: &'k [G2Affine],
}

impl ProvingKey {
    /// The key of `params` (shares its points; nothing is copied).
    pub fn from_parameters(params: &Parameters<Bls12>) -> Result<Self> {
        let key = ProvingKey {
            vk: params.vk.clone(),
            h: Points::Heap(params.h.clone()),
            l: Points::Heap(params.l.clone()),
            a: Points::Heap(params.a.clone()),
            b_g1: Points::Heap(params.b_g1.clone()),
            b_g2: Points::Heap(params.b_g2.clone()),
        };
        key.validate()?;
        Ok(key)
    }

    /// The key as bellperson's `Parameters` (for its provers): shares the points of a key on the heap, copies
    /// those of a pinned one.
    pub fn to_parameters(&self) -> Parameters<Bls12> {
        Parameters {
            vk: self.vk.clone(),
            h: self.h.to_heap(),
            l: self.l.to_heap(),
            a: self.a.to_heap(),
            b_g1: self.b_g1.to_heap(),
            b_g2: self.b_g2.to_heap(),
        }
    }

    /// Whether the points are in page-locked memory ([`ProvingKey::read_pinned`]).
    pub fn is_pinned(&self) -> bool {
        matches!(self.h, Points::Pinned(_))
    }

    pub(super) fn validate(&self) -> Result<()> {
        if !self.domain().is_power_of_two() {
            return Err(Error::InvalidKey(format!("{} H points: not one less than a power of two", self.h.len())));
        }
        if self.vk.ic.is_empty() {
            return Err(Error::InvalidKey("the verifying key has no input terms (not even \"one\")".into()));
        }
        if bool::from(self.vk.delta_g1.is_identity() | self.vk.delta_g2.is_identity()) {
            return Err(Error::InvalidKey("δ is the identity (a subverted key)".into()));
        }
        Ok(())
    }

    /// The domain size `n` (a power of two): the circuit's constraints, one per public input included, fit.
    pub fn domain(&self) -> usize {
        self.h.len() + 1
    }

    /// Public inputs, "one" included.
    pub fn num_inputs(&self) -> usize {
        self.vk.ic.len()
    }

    /// Auxiliary variables.
    pub fn num_aux(&self) -> usize {
        self.l.len()
    }

    /// The verifying key (for `bellperson::groth16::prepare_verifying_key`).
    pub fn verifying_key(&self) -> &VerifyingKey<Bls12> {
        &self.vk
    }

    /// The query bases for `w`, after checking that `w` is a witness of this key's circuit.
    pub(crate) fn queries<S: std::ops::DerefMut<Target = [Scalar]>>(&self, w: &Witness<S>) -> Result<Queries<'_>> {
        let mismatch = |what: &str, key: usize, circuit: usize| {
            Err(Error::KeyMismatch(format!("{what}: the key has {key}, the circuit {circuit}")))
        };
        if w.domain() != self.domain() {
            return mismatch("domain size", self.domain(), w.domain());
        }
        if w.input.len() != self.num_inputs() {
            return mismatch("public inputs (with \"one\")", self.num_inputs(), w.input.len());
        }
        if w.aux.len() != self.num_aux() {
            return mismatch("auxiliary variables", self.num_aux(), w.aux.len());
        }
        let inputs = w.input.len();
        let (a_aux, b_in, b_aux) = (w.a_aux_density.total(), w.b_input_density.total(), w.b_aux_density.total());
        if self.a.len() < inputs + a_aux {
            return mismatch("A query points", self.a.len(), inputs + a_aux);
        }
        for (what, have) in [("B query points (G1)", self.b_g1.len()), ("B query points (G2)", self.b_g2.len())] {
            if have < b_in + b_aux {
                return mismatch(what, have, b_in + b_aux);
            }
        }
        Ok(Queries {
            h: &self.h,
            l: &self.l,
            a_inputs: &self.a[..inputs],
            a_aux: &self.a[inputs..inputs + a_aux],
            b_g1_inputs: &self.b_g1[..b_in],
            b_g1_aux: &self.b_g1[b_in..b_in + b_aux],
            b_g2_inputs: &self.b_g2[..b_in],
            b_g2_aux: &self.b_g2[b_in..b_in + b_aux],
        })
    }
}
