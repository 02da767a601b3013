//! The GPU prover: a [`PartitionEngine`] built from the key, fed one synthesized circuit per job.
//!
//! The engine works on *assignments* whose queries line up with them point for point. bellperson's A and B
//! queries skip the aux variables they do not use (their densities), so each query's scalars are the aux
//! values its density selects: L always takes the whole aux assignment, A and B share it when their
//! density is full (the common case), otherwise each gets the selected values as an assignment of its own
//! (one assignment when A's and B's densities are equal). Densities are known only after synthesis, so the
//! engine is built at the first proof and rebuilt if a later circuit's densities differ (no proof may be in
//! flight then). The H query has `n − 1` points; the engine takes `n`, so the generator pads it: `h`'s last
//! coefficient is zero for a satisfied circuit (`deg h ≤ n − 2`), and synthesis rejects unsatisfied ones.
//! The public inputs' terms (a few hundred points at most) are summed on the CPU while the GPU works.
//! On several GPUs each holds its own engine (built at the first proof it gets) and a proof goes to the GPU
//! with the fewest in flight; witnesses live in one pool of portable pinned memory that every GPU reads.
use std::borrow::Cow;
use std::collections::VecDeque;
use std::ops::DerefMut;
use std::time::Instant;

use bellperson::Circuit;
use bellperson::groth16::Proof;
use blstrs::{Bls12, G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use group::prime::PrimeCurveAffine;
use rand_core::RngCore;

use super::cpu::{input_sums, prove_witness_cpu};
use super::key::{ProvingKey, Queries};
use super::synthesis::{Density, Witness, synthesize_sized};
use super::{QuerySums, assemble};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::pinned::{PinnedBuffer, PinnedMode, PinnedPool};
use crate::pipeline::{
    AssignmentInput, AssignmentOutput, EngineMemory, JobTicket, PartitionConfig, PartitionEngine, PartitionJob,
    PartitionSrs, pick_engine, split_assignment,
};
use crate::profile::PhaseReport;

/// A witness in pinned memory, ready for upload.
pub type PinnedWitness = Witness<PinnedBuffer<Scalar>>;

/// Which aux values an engine assignment holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Select {
    All,
    A,
    B,
}

/// Where a query's sum comes out of the engine: (assignment, index among its G1 or G2 queries); `None` when
/// the query selects no variable (its sum is the identity).
type Slot = Option<(usize, usize)>;

/// The engine's assignments for one pair of densities.
#[derive(Debug, PartialEq)]
struct Layout {
    a_aux: Density,
    b_aux: Density,
    groups: Vec<Select>,
    l: Slot,
    a: Slot,
    b_g1: Slot,
    b_g2: Slot,
}

impl Layout {
    fn plan<S: DerefMut<Target = [Scalar]>>(w: &Witness<S>) -> Layout {
        let (da, db) = (&w.a_aux_density, &w.b_aux_density);
        let sel_a = if da.is_full() { Select::All } else { Select::A };
        let sel_b = if db.is_full() {
            Select::All
        } else if sel_a == Select::A && da == db {
            Select::A
        } else {
            Select::B
        };
        let len = |s: Select| match s {
            Select::All => w.aux.len(),
            Select::A => da.total(),
            Select::B => db.total(),
        };
        let mut groups: Vec<(Select, usize, usize)> = Vec::new(); // (select, G1 queries, G2 queries)
        let mut slot = |s: Select, g2: bool| -> Slot {
            if len(s) == 0 {
                return None;
            }
            let g = groups.iter().position(|(sel, ..)| *sel == s).unwrap_or_else(|| {
                groups.push((s, 0, 0));
                groups.len() - 1
            });
            let count = if g2 { &mut groups[g].2 } else { &mut groups[g].1 };
            *count += 1;
            Some((g, *count - 1))
        };
        let (l, a, b_g1, b_g2) = (slot(Select::All, false), slot(sel_a, false), slot(sel_b, false), slot(sel_b, true));
        Layout {
            a_aux: da.clone(),
            b_aux: db.clone(),
            groups: groups.into_iter().map(|g| g.0).collect(),
            l,
            a,
            b_g1,
            b_g2,
        }
    }

    fn matches<S: DerefMut<Target = [Scalar]>>(&self, w: &Witness<S>) -> bool {
        self.a_aux == w.a_aux_density && self.b_aux == w.b_aux_density
    }

    /// The values an assignment of `select` holds.
    fn values<'w, S: DerefMut<Target = [Scalar]>>(select: Select, w: &'w Witness<S>) -> Cow<'w, [Scalar]> {
        match select {
            Select::All => Cow::Borrowed(&w.aux),
            Select::A => Cow::Owned(w.a_aux_density.select(&w.aux)),
            Select::B => Cow::Owned(w.b_aux_density.select(&w.aux)),
        }
    }
}

struct Engine<'g> {
    engine: PartitionEngine<'g>,
    layout: Layout,
    /// Distinguishes engines across rebuilds (a ticket belongs to one).
    generation: u64,
}

/// One GPU of the prover and its engine (none before its first proof).
struct Device<'g> {
    gpu: &'g Gpu,
    engine: Option<Engine<'g>>,
}

impl Device<'_> {
    fn in_flight(&self) -> usize {
        self.engine.as_ref().map_or(0, |e| e.engine.in_flight())
    }
}

/// How a [`Groth16Prover`] runs; `Default` is what [`Groth16Prover::new`] uses.
#[derive(Clone, Copy, Debug)]
pub struct ProverConfig {
    /// The engines' configuration. `None`: the pipeline's defaults, with the tail MSMs sized for the first
    /// circuit's share of aux values that are neither 0 nor 1.
    pub engine: Option<PartitionConfig>,
    /// Cap on the pinned host memory held for witnesses and splits (`None`: no cap; a witness of a 2^k
    /// domain pins `3·32·2^k` bytes).
    pub pinned_limit: Option<usize>,
    /// The pinned memory synthesis writes into. Synthesis never reads a, b, c back, so write-combined memory
    /// is safe; cached memory keeps a partially written line in the cache rather than flushing it.
    pub pinned_mode: PinnedMode,
    /// Device memory each GPU's engine may hold (`None`: what the GPU has free): the engine's
    /// [`PartitionConfig::max_device_bytes`]. With a budget the H query and the assignment queries start in
    /// pinned memory (from this prover's pool) and stream in every proof when the rest leaves them no room, H
    /// first ([`Groth16Prover::memory`]).
    pub max_device_bytes: Option<usize>,
}

impl Default for ProverConfig {
    fn default() -> Self {
        ProverConfig {
            engine: None,
            pinned_limit: None,
            pinned_mode: PinnedMode::WriteCombined,
            max_device_bytes: None,
        }
    }
}

/// A proof in flight: [`Groth16Prover::finish`] turns it into the proof.
#[derive(Debug)]
pub struct ProofTicket {
    job: Option<JobTicket>,
    device: usize,
    generation: u64,
    r: Scalar,
    s: Scalar,
    inputs: (G1Projective, G1Projective, G2Projective),
    /// The proof itself when it was made without the GPU (a domain of 1: no constraints to transform).
    done: Option<Proof<Bls12>>,
    synthesis_ms: f64,
    started: Instant,
}

/// Where a proof's time went.
#[derive(Clone, Debug)]
pub struct ProofReport {
    /// Synthesis (zero for a witness synthesized by the caller).
    pub synthesis_ms: f64,
    /// From `start` (after synthesis) to the finished proof: split, uploads, GPU work, assembly.
    pub post_synthesis_ms: f64,
    /// The GPU job's phases (uploads, NTTs, MSMs, batch additions, downloads) and busy fraction.
    pub gpu: Option<PhaseReport>,
    /// The prover's GPU (index in the slice it was made with) that ran the job.
    pub device: usize,
}

/// Proves circuits of one proving key on one GPU or several.
pub struct Groth16Prover<'g> {
    devices: Vec<Device<'g>>,
    key: ProvingKey,
    config: ProverConfig,
    pool: PinnedPool,
    generations: u64,
    /// Where the search for the least-loaded GPU starts (turns go round among equals).
    next: usize,
}

impl<'g> Groth16Prover<'g> {
    /// A prover for `key` on `gpu` with the default [`ProverConfig`]. The GPU working set is allocated at
    /// the first proof (it depends on the circuit's densities).
    pub fn new(gpu: &'g Gpu, key: ProvingKey) -> Result<Self> {
        Self::with_config(std::slice::from_ref(gpu), key, ProverConfig::default())
    }

    /// A prover for `key` on every GPU of `gpus` (e.g. from [`Gpu::all`]), each holding its own copy of the
    /// key's bases; proofs go to the GPU with the fewest in flight. `Err(NoDevice)` for an empty slice.
    pub fn with_config(gpus: &'g [Gpu], key: ProvingKey, config: ProverConfig) -> Result<Self> {
        let first = gpus.first().ok_or(Error::NoDevice)?;
        let pool = PinnedPool::new(first, config.pinned_mode, config.pinned_limit);
        let devices = gpus.iter().map(|gpu| Device { gpu, engine: None }).collect();
        Ok(Groth16Prover { devices, key, config, pool, generations: 0, next: 0 })
    }

    /// The GPUs proofs run on.
    pub fn gpus(&self) -> usize {
        self.devices.len()
    }

    /// Per GPU, how its engine placed the working set (`None` before that GPU's first proof).
    pub fn memory(&self) -> Vec<Option<EngineMemory>> {
        self.devices.iter().map(|d| d.engine.as_ref().map(|e| e.engine.memory())).collect()
    }

    /// The proving key.
    pub fn key(&self) -> &ProvingKey {
        &self.key
    }

    /// Synthesizes `circuit` into pinned buffers of the key's domain (for [`Groth16Prover::start`]). Needs
    /// only `&self`: call it from several threads to synthesize circuits in parallel.
    pub fn synthesize<C: Circuit<Scalar>>(&self, circuit: C) -> Result<PinnedWitness> {
        synthesize_pinned(&self.pool, self.key.domain(), self.expected(), circuit)
    }

    /// Proves `circuit` with random blinding factors drawn from `rng` (`r` then `s`, as bellperson draws
    /// them).
    pub fn prove<C: Circuit<Scalar>, R: RngCore>(&mut self, circuit: C, rng: &mut R) -> Result<Proof<Bls12>> {
        let (r, s) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
        self.prove_with(circuit, r, s)
    }

    /// Proves `circuit` with the blinding factors `r`, `s`: the proof bellperson's
    /// `create_proof(circuit, params, r, s)` makes.
    pub fn prove_with<C: Circuit<Scalar>>(&mut self, circuit: C, r: Scalar, s: Scalar) -> Result<Proof<Bls12>> {
        let started = Instant::now();
        let w = self.synthesize(circuit)?;
        let synthesis_ms = started.elapsed().as_secs_f64() * 1e3;
        let mut ticket = self.start(w, r, s)?;
        ticket.synthesis_ms = synthesis_ms;
        self.finish(ticket)
    }

    /// Proves every circuit (blinding factors from `rng`: all the `r`s, then all the `s`s, as bellperson's
    /// batch prover draws them). Synthesis runs on all cores, one circuit per thread, while the GPU proves
    /// the circuits already synthesized; proofs come back in the circuits' order. The first error stops the
    /// batch and is returned (the prover stays usable).
    pub fn prove_batch<C, R>(&mut self, circuits: Vec<C>, rng: &mut R) -> Result<Vec<Proof<Bls12>>>
    where
        C: Circuit<Scalar> + Send,
        R: RngCore,
    {
        let r: Vec<Scalar> = (0..circuits.len()).map(|_| Scalar::random(&mut *rng)).collect();
        let s: Vec<Scalar> = (0..circuits.len()).map(|_| Scalar::random(&mut *rng)).collect();
        self.prove_batch_with(circuits, &r, &s)
    }

    /// [`Groth16Prover::prove_batch`] with given blinding factors (one `r` and one `s` per circuit).
    pub fn prove_batch_with<C>(&mut self, circuits: Vec<C>, r: &[Scalar], s: &[Scalar]) -> Result<Vec<Proof<Bls12>>>
    where
        C: Circuit<Scalar> + Send,
    {
        Ok(self.prove_batch_reports(circuits, r, s)?.into_iter().map(|(proof, _)| proof).collect())
    }

    /// [`Groth16Prover::prove_batch_with`], with each proof's report (its synthesis, and its GPU job's
    /// phases: the batch's GPU busy time is the sum of the jobs' kernel time over the batch's wall time).
    pub fn prove_batch_reports<C>(
        &mut self,
        circuits: Vec<C>,
        r: &[Scalar],
        s: &[Scalar],
    ) -> Result<Vec<(Proof<Bls12>, ProofReport)>>
    where
        C: Circuit<Scalar> + Send,
    {
        for (what, v) in [("prove_batch r", r.len()), ("prove_batch s", s.len())] {
            if v != circuits.len() {
                return Err(Error::LengthMismatch { what, expected: circuits.len(), actual: v });
            }
        }
        let count = circuits.len();
        let workers = std::thread::available_parallelism().map_or(1, |t| t.get()).min(count).max(1);
        let (pool, domain, expected) = (self.pool.clone(), self.key.domain(), self.expected());
        let queue = std::sync::Mutex::new(circuits.into_iter().enumerate());
        // At most `workers` witnesses wait for the GPU: bounds the pinned memory a batch holds.
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Result<PinnedWitness>, f64)>(workers);
        let mut proofs: Vec<Option<(Proof<Bls12>, ProofReport)>> = vec![None; count];
        std::thread::scope(|scope| -> Result<()> {
            for _ in 0..workers {
                let (tx, queue, pool) = (tx.clone(), &queue, &pool);
                scope.spawn(move || {
                    loop {
                        let next = queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).next();
                        let Some((i, circuit)) = next else { break };
                        let started = Instant::now();
                        let witness = synthesize_pinned(pool, domain, expected, circuit);
                        if tx.send((i, witness, started.elapsed().as_secs_f64() * 1e3)).is_err() {
                            break; // the prover stopped on an error
                        }
                    }
                });
            }
            drop(tx);
            // On an error: leave the remaining circuits unsynthesized.
            let stop = || queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).by_ref().for_each(drop);
            let mut in_flight: VecDeque<(usize, ProofTicket)> = VecDeque::new();
            let slots = self.engine_config().slots.max(1) * self.devices.len();
            let result = (|| -> Result<()> {
                for (i, witness, synthesis_ms) in rx.iter() {
                    let mut ticket = self.start(witness?, r[i], s[i])?;
                    ticket.synthesis_ms = synthesis_ms;
                    in_flight.push_back((i, ticket));
                    if in_flight.len() >= slots {
                        if let Some((j, t)) = in_flight.pop_front() {
                            proofs[j] = Some(self.finish_report(t)?);
                        }
                    }
                }
                while let Some((j, t)) = in_flight.pop_front() {
                    proofs[j] = Some(self.finish_report(t)?);
                }
                Ok(())
            })();
            if result.is_err() {
                stop();
                for _ in rx.iter() {} // let the workers finish their current circuit and exit
                for (_, t) in in_flight {
                    let _ = self.finish(t); // collect the GPU jobs; the first error is what is returned
                }
            }
            result
        })?;
        proofs.into_iter().map(|p| p.ok_or_else(|| Error::Pipeline("a proof of the batch is missing".into()))).collect()
    }

    /// Starts proving a synthesized witness: checks it against the key, splits its assignments, queues its
    /// uploads and GPU work and sums the public inputs' terms on the CPU meanwhile. Returns once the uploads
    /// are done (the witness's buffers go back to the pool). On error nothing is queued.
    pub fn start<S: DerefMut<Target = [Scalar]>>(
        &mut self,
        w: Witness<S>,
        r: Scalar,
        s: Scalar,
    ) -> Result<ProofTicket> {
        let started = Instant::now();
        let span = tracing::info_span!("zkgpu.groth16.start", domain = w.domain(), aux = w.aux.len());
        let _entered = span.enter();
        self.key.queries(&w)?; // the checks, before anything is allocated
        if w.domain() < 2 {
            // No constraint to transform (only "one"'s input constraint): nothing worth a GPU job.
            let proof = prove_witness_cpu(&self.key, &w, r, s)?;
            return Ok(ProofTicket {
                job: None,
                device: 0,
                generation: 0,
                r,
                s,
                inputs: (G1Projective::identity(), G1Projective::identity(), G2Projective::identity()),
                done: Some(proof),
                synthesis_ms: 0.0,
                started,
            });
        }
        let loads: Vec<usize> = self.devices.iter().map(Device::in_flight).collect();
        let device = pick_engine(&loads, self.next);
        self.ensure_engine(device, &w)?;
        let q = self.key.queries(&w)?;
        let engine = self.devices[device]
            .engine
            .as_mut()
            .ok_or_else(|| Error::Pipeline("the Groth16 engine is missing".into()))?;
        let mut splits = Vec::with_capacity(engine.layout.groups.len());
        for &select in &engine.layout.groups {
            let values = Layout::values(select, &w);
            let mut ones = self.pool.take::<u32>(values.len().div_ceil(32))?;
            let mut tail = self.pool.take::<Scalar>(values.len())?;
            let mut tail_index = self.pool.take::<u32>(values.len())?;
            let k = split_assignment(&values, &mut ones, &mut tail, &mut tail_index)?;
            splits.push((ones, tail, tail_index, k));
        }
        let assignments = splits
            .iter()
            .map(|(ones, t, ix, k)| AssignmentInput { tail: &t[..*k], tail_index: &ix[..*k], ones })
            .collect();
        let job = engine.engine.start(PartitionJob { a: &w.a, b: &w.b, c: &w.c, assignments, h_out: None })?;
        let generation = engine.generation;
        self.next = (device + 1) % self.devices.len();
        let inputs = input_sums(&q, &w)?;
        Ok(ProofTicket { job: Some(job), device, generation, r, s, inputs, done: None, synthesis_ms: 0.0, started })
    }

    /// Waits for a proof started with [`Groth16Prover::start`].
    pub fn finish(&mut self, ticket: ProofTicket) -> Result<Proof<Bls12>> {
        self.finish_report(ticket).map(|(proof, _)| proof)
    }

    /// [`Groth16Prover::finish`], with where the proof's time went.
    pub fn finish_report(&mut self, ticket: ProofTicket) -> Result<(Proof<Bls12>, ProofReport)> {
        let report = |gpu| ProofReport {
            synthesis_ms: ticket.synthesis_ms,
            post_synthesis_ms: ticket.started.elapsed().as_secs_f64() * 1e3,
            gpu,
            device: ticket.device,
        };
        let Some(job) = ticket.job else {
            let proof = ticket.done.ok_or_else(|| Error::Pipeline("an empty proof ticket".into()))?;
            return Ok((proof, report(None)));
        };
        let engine = match self.devices.get_mut(ticket.device).and_then(|d| d.engine.as_mut()) {
            Some(e) if e.generation == ticket.generation => e,
            _ => return Err(Error::Pipeline("the proof was started on an engine that has since been rebuilt".into())),
        };
        let out = engine.engine.finish(job)?;
        let (layout, results) = (&engine.layout, &out.results.assignments);
        let g1 = |slot: Slot| slot_sum(results, slot, |a| &a.g1);
        let (a_in, b_g1_in, b_g2_in) = ticket.inputs;
        let sums = QuerySums {
            h: out.results.h,
            l: g1(layout.l)?,
            a: a_in + g1(layout.a)?,
            b_g1: b_g1_in + g1(layout.b_g1)?,
            b_g2: b_g2_in + slot_sum(results, layout.b_g2, |a| &a.g2)?,
        };
        let proof = assemble(&self.key.vk, &sums, ticket.r, ticket.s);
        Ok((proof, report(Some(out.report))))
    }

    /// The key's (inputs, aux) counts: what a synthesis of its circuit allocates.
    fn expected(&self) -> (usize, usize) {
        (self.key.num_inputs(), self.key.num_aux())
    }

    /// The engines' configuration (the tail MSMs not yet sized when it is automatic).
    fn engine_config(&self) -> PartitionConfig {
        self.config.engine.unwrap_or_default()
    }

    /// Makes sure GPU `device`'s engine fits `w`'s densities: built at its first proof, rebuilt when they
    /// change.
    fn ensure_engine<S: DerefMut<Target = [Scalar]>>(&mut self, device: usize, w: &Witness<S>) -> Result<()> {
        let (count, mut config) = (self.devices.len(), self.engine_config());
        let d = self.devices.get_mut(device).ok_or(Error::DeviceIndex { ordinal: device, count })?;
        if let Some(e) = &d.engine {
            if e.layout.matches(w) {
                return Ok(());
            }
            if e.engine.in_flight() > 0 {
                return Err(Error::Pipeline(
                    "this circuit's densities differ from those of the proofs in flight: finish them first".into(),
                ));
            }
            tracing::warn!(target: "zkgpu.groth16", device, "circuit densities changed: rebuilding the GPU engine");
        }
        d.engine = None; // free the old working set before allocating the new one
        let q = self.key.queries(w)?;
        let layout = Layout::plan(w);
        // The engine's H query has `n` points: the key's `n − 1` and a pad (see the module doc).
        let h_pad = [G1Affine::generator()];
        config.max_device_bytes = self.config.max_device_bytes.or(config.max_device_bytes);
        let mut srs = if config.max_device_bytes.is_some() {
            // Within a budget the engine decides where H goes: it starts in pinned memory.
            let mut pinned = self.pool.take::<G1Affine>(q.h.len() + 1)?;
            let (points, pad) = pinned.split_at_mut(q.h.len());
            points.copy_from_slice(q.h);
            pad.copy_from_slice(&h_pad);
            PartitionSrs::pinned(d.gpu, pinned)?
        } else {
            PartitionSrs::new(d.gpu, d.gpu.upload_parts(&[q.h, &h_pad])?)?
        };
        for g in 0..layout.groups.len() {
            let (g1, g2) = group_queries(&layout, g, &q);
            if config.max_device_bytes.is_some() {
                // Likewise the assignment queries: uploaded where the budget has room, else streamed.
                let g1 = g1.iter().map(|points| pinned_copy(&self.pool, points)).collect::<Result<Vec<_>>>()?;
                let g2 = g2.iter().map(|points| pinned_copy(&self.pool, points)).collect::<Result<Vec<_>>>()?;
                srs.add_assignment_pinned(g1, g2)?;
            } else {
                srs.add_assignment_host(d.gpu, &g1, &g2)?;
            }
        }
        if self.config.engine.is_none() && !w.aux.is_empty() {
            let tail = w.aux.iter().filter(|v| **v != Scalar::ZERO && **v != Scalar::ONE).count();
            config.tail_fraction = (tail as f64 / w.aux.len() as f64).clamp(0.01, 1.0);
        }
        let engine = PartitionEngine::new(d.gpu, srs, config)?;
        self.generations += 1;
        d.engine = Some(Engine { engine, layout, generation: self.generations });
        Ok(())
    }
}

/// `points` copied into a buffer of `pool`.
fn pinned_copy<T: crate::memory::DeviceSafe>(pool: &PinnedPool, points: &[T]) -> Result<PinnedBuffer<T>> {
    let mut pinned = pool.take::<T>(points.len())?;
    pinned.copy_from_slice(points);
    Ok(pinned)
}

/// The G1 and G2 bases of engine assignment `g`, in the order of the layout's slots.
fn group_queries<'k>(layout: &Layout, g: usize, q: &Queries<'k>) -> (Vec<&'k [G1Affine]>, Vec<&'k [G2Affine]>) {
    let mut g1: Vec<(usize, &'k [G1Affine])> = Vec::new();
    for (slot, bases) in [(layout.l, q.l), (layout.a, q.a_aux), (layout.b_g1, q.b_g1_aux)] {
        if let Some((sg, i)) = slot {
            if sg == g {
                g1.push((i, bases));
            }
        }
    }
    g1.sort_by_key(|(i, _)| *i);
    let g2 = match layout.b_g2 {
        Some((sg, _)) if sg == g => vec![q.b_g2_aux],
        _ => Vec::new(),
    };
    (g1.into_iter().map(|(_, b)| b).collect(), g2)
}

/// The sum at `slot` (the identity for none) among the G1 or G2 results `pick` takes from an assignment.
fn slot_sum<P: Copy + Group>(
    assignments: &[AssignmentOutput],
    slot: Slot,
    pick: impl Fn(&AssignmentOutput) -> &[P],
) -> Result<P> {
    let Some((g, i)) = slot else { return Ok(P::identity()) };
    assignments
        .get(g)
        .and_then(|a| pick(a).get(i))
        .copied()
        .ok_or_else(|| Error::Pipeline(format!("the engine returned no result for assignment {g}, query {i}")))
}

/// Synthesis into buffers of `pool` (write-combined: synthesis only writes them).
/// `expected`: the key's (inputs, aux) counts, reserved up front.
fn synthesize_pinned<C: Circuit<Scalar>>(
    pool: &PinnedPool,
    domain: usize,
    expected: (usize, usize),
    circuit: C,
) -> Result<PinnedWitness> {
    let (a, b, c) = (pool.take::<Scalar>(domain)?, pool.take::<Scalar>(domain)?, pool.take::<Scalar>(domain)?);
    synthesize_sized(circuit, a, b, c, expected)
}
