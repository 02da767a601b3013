//! Groth16 on the GPU: proofs byte-identical to bellperson's `create_proof` (same `r`, `s`) for every test
//! circuit, batches and proofs in flight, and errors that leave the prover usable.
mod common;

use bellperson::Circuit;
use bellperson::groth16::{self, Parameters, Proof, prepare_verifying_key, verify_proof, verify_proofs_batch};
use blstrs::{Bls12, Scalar};
use common::circuits::{
    BadVariable, Blake2sHash, Empty, ManyInputs, OneConstraint, Sparse, parameter_file, parameters, public_inputs,
};
use common::gpu::gpu;
use common::seeded_rng;
use ff::Field;
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use zkgpu::groth16::circuits::{PowerRounds, Sha256Chain};
use zkgpu::groth16::{Groth16Prover, ProverConfig, ProvingKey};
use zkgpu::{Error, Gpu};

fn proof_bytes(p: &Proof<Bls12>) -> Vec<u8> {
    let mut out = Vec::new();
    p.write(&mut out).expect("writing to a Vec");
    out
}

/// The GPU proof of `circuit` equals bellperson's byte for byte and verifies; a changed input fails.
fn check_gpu<C: Circuit<Scalar> + Clone + Send>(
    name: &str,
    prover: &mut Groth16Prover<'_>,
    params: &Parameters<Bls12>,
    circuit: C,
    rng: &mut ChaCha20Rng,
) {
    let (r, s) = (Scalar::random(&mut *rng), Scalar::random(&mut *rng));
    let ours = prover.prove_with(circuit.clone(), r, s).unwrap_or_else(|e| panic!("{name}: {e}"));
    let theirs = groth16::create_proof(circuit.clone(), params, r, s).expect("bellperson proves");
    assert_eq!(proof_bytes(&ours), proof_bytes(&theirs), "{name}: GPU proof differs from bellperson's");
    let pvk = prepare_verifying_key(&params.vk);
    let inputs = public_inputs(circuit);
    assert!(verify_proof(&pvk, &ours, &inputs).expect("verify"), "{name}: GPU proof does not verify");
    if let Some(first) = inputs.first() {
        let mut wrong = inputs.clone();
        wrong[0] = *first + Scalar::ONE;
        assert!(!verify_proof(&pvk, &ours, &wrong).expect("verify"), "{name}: a wrong public input verifies");
    }
}

/// Proves `make()`'s circuits (each with fresh witnesses) twice on one prover: the second proof reuses the
/// engine built by the first.
fn check_circuit<C: Circuit<Scalar> + Clone + Send>(
    name: &str,
    blank: C,
    mut make: impl FnMut(&mut ChaCha20Rng) -> C,
    rng: &mut ChaCha20Rng,
) {
    let gpu = gpu();
    let params = parameters(blank, rng);
    let mut prover = Groth16Prover::new(&gpu, ProvingKey::from_parameters(&params).expect("key")).expect("prover");
    for round in 0..2 {
        let circuit = make(rng);
        check_gpu(&format!("{name} (proof {round})"), &mut prover, &params, circuit, rng);
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn sha256_chains_match_bellperson() {
    let mut rng = seeded_rng("sha256_chains_match_bellperson");
    for blocks in [1, 2] {
        check_circuit(
            &format!("sha256 x{blocks}"),
            Sha256Chain { blocks, data: None },
            |r| Sha256Chain::random(blocks, r),
            &mut rng,
        );
    }
}

/// 38 blocks: 1.0M constraints, a 2^20 domain (parameter generation takes about a minute on 16 cores).
#[test]
#[ignore = "needs a CUDA GPU"]
fn sha256_38_blocks_matches_bellperson() {
    let mut rng = seeded_rng("sha256_38_blocks_matches_bellperson");
    let gpu = gpu();
    let params = parameters(Sha256Chain { blocks: 38, data: None }, &mut rng);
    assert_eq!(params.h.len() + 1, 1 << 20);
    let mut prover = Groth16Prover::new(&gpu, ProvingKey::from_parameters(&params).expect("key")).expect("prover");
    let circuit = Sha256Chain::random(38, &mut rng);
    check_gpu("sha256 x38", &mut prover, &params, circuit, &mut rng);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn blake2s_and_dense_rounds_match_bellperson() {
    let mut rng = seeded_rng("blake2s_and_dense_rounds_match_bellperson");
    check_circuit("blake2s", Blake2sHash { bytes: 64, data: None }, |r| Blake2sHash::random(64, r), &mut rng);
    let template = PowerRounds::random(20_000, &mut rng);
    let constants = template.constants.clone();
    check_circuit(
        "x^5 rounds",
        template.blank(),
        |r| PowerRounds { x: Some(Scalar::random(&mut *r)), constants: constants.clone() },
        &mut rng,
    );
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn edge_circuits_match_bellperson() {
    let mut rng = seeded_rng("edge_circuits_match_bellperson");
    check_circuit("328 inputs", ManyInputs::blank(328), |r| ManyInputs::random(328, r), &mut rng);
    for (both, a_only, b_only, c_only) in [(4000, 1300, 1700, 900), (4000, 0, 0, 900), (0, 0, 0, 40)] {
        let template = Sparse::new(both, a_only, b_only, c_only, &mut rng);
        let name = format!("sparse both {both} a {a_only} b {b_only} c {c_only}");
        check_circuit(&name, template.blank(), |r| Sparse::new(both, a_only, b_only, c_only, r), &mut rng);
    }
    let one = |r: &mut ChaCha20Rng| OneConstraint {
        xy: Some((Scalar::random(&mut *r), Scalar::random(&mut *r))),
        wrong: false,
    };
    check_circuit("one constraint", OneConstraint { xy: None, wrong: false }, one, &mut rng);
    check_circuit("empty", Empty, |_| Empty, &mut rng);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn batches_and_proofs_in_flight_verify() {
    let mut rng = seeded_rng("batches_and_proofs_in_flight_verify");
    let gpu = gpu();
    let template = PowerRounds::random(5000, &mut rng);
    let params = parameters(template.blank(), &mut rng);
    let mut prover = Groth16Prover::new(&gpu, ProvingKey::from_parameters(&params).expect("key")).expect("prover");
    let circuits: Vec<PowerRounds> = (0..6)
        .map(|_| PowerRounds { x: Some(Scalar::random(&mut rng)), constants: template.constants.clone() })
        .collect();
    let r: Vec<Scalar> = (0..6).map(|_| Scalar::random(&mut rng)).collect();
    let s: Vec<Scalar> = (0..6).map(|_| Scalar::random(&mut rng)).collect();
    let proofs = prover.prove_batch_with(circuits.clone(), &r, &s).expect("batch");
    for (i, p) in proofs.iter().enumerate() {
        let theirs = groth16::create_proof(circuits[i].clone(), &params, r[i], s[i]).expect("bellperson");
        assert_eq!(proof_bytes(p), proof_bytes(&theirs), "batch proof {i}");
    }
    let pvk = prepare_verifying_key(&params.vk);
    let inputs: Vec<Vec<Scalar>> = circuits.iter().map(|c| public_inputs(c.clone())).collect();
    let refs: Vec<&Proof<Bls12>> = proofs.iter().collect();
    assert!(verify_proofs_batch(&pvk, &mut rng, &refs, &inputs).expect("batch verify"));
    // Three in flight through start/finish, finished out of order.
    let tickets: Vec<_> = (0..3)
        .map(|i| {
            let w = prover.synthesize(circuits[i].clone()).expect("synthesize");
            prover.start(w, r[i], s[i]).expect("start")
        })
        .collect();
    let mut tickets: Vec<_> = tickets.into_iter().enumerate().collect();
    tickets.reverse();
    for (i, t) in tickets {
        let (proof, report) = prover.finish_report(t).expect("finish");
        assert_eq!(proof_bytes(&proof), proof_bytes(&proofs[i]), "in-flight proof {i}");
        let gpu_report = report.gpu.expect("a GPU job");
        assert!(gpu_report.gpu_busy > 0.0 && gpu_report.gpu_busy <= 1.0, "busy {}", gpu_report.gpu_busy);
    }
    // prove() draws r then s from the rng as bellperson does.
    let mut a = ChaCha20Rng::seed_from_u64(7);
    let mut b = ChaCha20Rng::seed_from_u64(7);
    let ours = prover.prove(circuits[0].clone(), &mut a).expect("prove");
    let theirs = groth16::create_random_proof(circuits[0].clone(), &params, &mut b).expect("bellperson");
    assert_eq!(proof_bytes(&ours), proof_bytes(&theirs), "prove with an rng");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn errors_leave_the_prover_usable() {
    let mut rng = seeded_rng("errors_leave_the_prover_usable");
    let gpu = gpu();
    let small = PowerRounds::random(10, &mut rng);
    let params = parameters(small.blank(), &mut rng);
    let mut prover = Groth16Prover::new(&gpu, ProvingKey::from_parameters(&params).expect("key")).expect("prover");
    let (r, s) = (Scalar::random(&mut rng), Scalar::random(&mut rng));
    check_gpu("before errors", &mut prover, &params, small.clone(), &mut rng);
    assert!(matches!(prover.prove_with(PowerRounds::random(100, &mut rng), r, s), Err(Error::KeyMismatch(_))));
    assert!(matches!(prover.prove_with(PowerRounds::random(9, &mut rng), r, s), Err(Error::KeyMismatch(_))));
    assert!(matches!(prover.prove_with(small.blank(), r, s), Err(Error::Synthesis(_))));
    assert!(matches!(prover.prove_with(BadVariable, r, s), Err(Error::Synthesis(_))));
    let mut bad = small.clone();
    bad.x = None;
    let batch = vec![small.clone(), bad, small.clone()];
    assert!(matches!(prover.prove_batch_with(batch, &[r; 3], &[s; 3]), Err(Error::Synthesis(_))));
    assert!(matches!(
        prover.prove_batch_with(vec![small.clone()], &[r; 2], &[s; 2]),
        Err(Error::LengthMismatch { .. })
    ));
    check_gpu("after errors", &mut prover, &params, small.clone(), &mut rng);
    // Unsatisfied on the GPU path too.
    let params_one = parameters(OneConstraint { xy: None, wrong: false }, &mut rng);
    let mut prover_one =
        Groth16Prover::new(&gpu, ProvingKey::from_parameters(&params_one).expect("key")).expect("prover");
    let wrong = OneConstraint { xy: Some((Scalar::random(&mut rng), Scalar::random(&mut rng))), wrong: true };
    assert!(matches!(prover_one.prove_with(wrong, r, s), Err(Error::Unsatisfied { constraint: 0, .. })));
    let right = OneConstraint { xy: Some((Scalar::random(&mut rng), Scalar::random(&mut rng))), wrong: false };
    check_gpu("one constraint after an unsatisfied one", &mut prover_one, &params_one, right, &mut rng);
}

/// A batch over `gpus` equals bellperson proof by proof, uses every GPU, and proofs started on different
/// GPUs finish in any order.
fn spread_over(gpus: &[Gpu], name: &str) {
    let mut rng = seeded_rng(name);
    let template = PowerRounds::random(3000, &mut rng);
    let params = parameters(template.blank(), &mut rng);
    let key = ProvingKey::from_parameters(&params).expect("key");
    let mut prover = Groth16Prover::with_config(gpus, key, ProverConfig::default()).expect("prover");
    assert_eq!(prover.gpus(), gpus.len());
    let count = 4 * gpus.len();
    let circuits: Vec<PowerRounds> = (0..count)
        .map(|_| PowerRounds { x: Some(Scalar::random(&mut rng)), constants: template.constants.clone() })
        .collect();
    let r: Vec<Scalar> = (0..count).map(|_| Scalar::random(&mut rng)).collect();
    let s: Vec<Scalar> = (0..count).map(|_| Scalar::random(&mut rng)).collect();
    let out = prover.prove_batch_reports(circuits.clone(), &r, &s).expect("batch");
    let mut used = vec![0usize; gpus.len()];
    for (i, (proof, report)) in out.iter().enumerate() {
        let theirs = groth16::create_proof(circuits[i].clone(), &params, r[i], s[i]).expect("bellperson");
        assert_eq!(proof_bytes(proof), proof_bytes(&theirs), "{name}: batch proof {i}");
        used[report.device] += 1;
    }
    assert!(used.iter().all(|&u| u > 0), "{name}: proofs per GPU {used:?}");
    // One proof in flight per GPU (the least loaded gets the next), finished last-started first.
    let mut tickets: Vec<_> = (0..gpus.len())
        .map(|i| (i, prover.start(prover.synthesize(circuits[i].clone()).expect("synthesize"), r[i], s[i])))
        .collect();
    tickets.reverse();
    let mut devices = Vec::new();
    for (i, t) in tickets {
        let (proof, report) = prover.finish_report(t.expect("start")).expect("finish");
        assert_eq!(proof_bytes(&proof), proof_bytes(&out[i].0), "{name}: in-flight proof {i}");
        devices.push(report.device);
    }
    devices.sort_unstable();
    assert_eq!(devices, (0..gpus.len()).collect::<Vec<_>>(), "{name}: one proof in flight per GPU");
}

/// Two handles of GPU 0: each holds its own engine, so the multi-GPU paths run on any machine.
#[test]
#[ignore = "needs a CUDA GPU"]
fn batch_spreads_over_two_handles_of_one_gpu() {
    spread_over(&[gpu(), gpu()], "batch_spreads_over_two_handles_of_one_gpu");
}

/// Needs two GPUs: fails on fewer (the test runners skip `two_gpus_*` tests on one-GPU hosts and say so).
#[test]
#[ignore = "needs two CUDA GPUs"]
fn two_gpus_groth16_batch_spreads() {
    let count = Gpu::count().unwrap_or(0);
    assert!(count >= 2, "two_gpus_groth16_batch_spreads needs 2 GPUs, {count} visible");
    spread_over(&Gpu::all().expect("GPUs"), "two_gpus_groth16_batch_spreads");
}

/// Within a device-memory budget one byte short of what the prover's engine holds without one, the H query
/// streams from pinned memory, and the proofs stay byte-identical to bellperson's; so they do at the least
/// budget the engine states, where every query streams and C shares B's buffer. The provers see the same
/// first circuit, so their engines are sized alike.
#[test]
#[ignore = "needs a CUDA GPU"]
fn proofs_within_a_device_budget_match_bellperson() {
    let gpu = gpu();
    let mut rng = seeded_rng("proofs_within_a_device_budget_match_bellperson");
    // 2^18 constraints: streaming H saves memory only when H is large next to its staging (at 2^15 it did not).
    let first = PowerRounds::random((1 << 16) - 2, &mut rng);
    let params = parameters(first.blank(), &mut rng);
    let key = ProvingKey::from_parameters(&params).expect("key");
    let mut resident = Groth16Prover::new(&gpu, key.clone()).expect("prover");
    check_gpu("resident", &mut resident, &params, first.clone(), &mut rng);
    let full = resident.memory()[0].expect("an engine after a proof").device_bytes;
    drop(resident);
    let config =
        ProverConfig { max_device_bytes: Some(full + zkgpu::pipeline::BUDGET_RESERVE - 1), ..ProverConfig::default() };
    let mut streamed = Groth16Prover::with_config(std::slice::from_ref(&gpu), key.clone(), config).expect("prover");
    check_gpu("streamed H", &mut streamed, &params, first.clone(), &mut rng);
    let second = PowerRounds { x: Some(Scalar::random(&mut rng)), constants: first.constants.clone() };
    check_gpu("streamed H, second proof", &mut streamed, &params, second, &mut rng);
    let memory = streamed.memory()[0].expect("an engine after a proof");
    println!("resident {full} bytes; within a budget: {memory:?}");
    assert!(memory.h_streamed && memory.device_bytes < full, "{memory:?}");
    drop(streamed);

    // The least budget the engine states (asked twice: first the floor of the SRS and one slot, refused
    // before allocating, then the whole working set): the A/B/L queries stream from pinned memory (in
    // windows of 2^12 positions: at this size a whole-assignment window would take more than the queries),
    // and C shares B's buffer in one slot.
    let tight = |budget| ProverConfig {
        max_device_bytes: Some(budget),
        engine: Some(zkgpu::PartitionConfig { query_window: Some(1 << 12), ..Default::default() }),
        ..ProverConfig::default()
    };
    let needed = |budget: usize| {
        let mut prover =
            Groth16Prover::with_config(std::slice::from_ref(&gpu), key.clone(), tight(budget)).expect("prover");
        match prover.prove_with(first.clone(), Scalar::ONE, Scalar::ONE) {
            Err(zkgpu::Error::DeviceBudget { needed, .. }) => needed,
            other => panic!("budget {budget}: {:?}", other.map(|_| prover.memory())),
        }
    };
    let needed = needed(needed(0));
    let mut least = Groth16Prover::with_config(std::slice::from_ref(&gpu), key, tight(needed)).expect("prover");
    check_gpu("the least budget", &mut least, &params, first.clone(), &mut rng);
    let memory = least.memory()[0].expect("an engine after a proof");
    println!("at the least budget {needed}: {memory:?}");
    assert!(memory.streamed_assignments > 0 && memory.c_shares_b, "{memory:?}");
    assert!(memory.slots == 1 && memory.device_bytes <= needed, "{memory:?}");
}

/// A key read from its parameter file into pinned memory holds the points written and proves
/// byte-identically to bellperson (the engine uploads it from pinned memory).
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_key_read_into_pinned_memory_proves_the_same() {
    let gpu = gpu();
    let mut rng = seeded_rng("a_key_read_into_pinned_memory_proves_the_same");
    let circuit = PowerRounds::random(3000, &mut rng);
    let params = parameters(circuit.blank(), &mut rng);
    let (dir, path) = parameter_file(&params, "pinned-key");
    let key = ProvingKey::read_pinned(&gpu, &path, false).expect("read into pinned memory");
    std::fs::remove_dir_all(&dir).ok();
    assert!(key.is_pinned());
    assert!(key.to_parameters() == params, "the pinned key's points differ from the parameters written");
    let mut prover = Groth16Prover::new(&gpu, key).expect("prover");
    for round in 0..2 {
        let c = PowerRounds { x: Some(Scalar::random(&mut rng)), constants: circuit.constants.clone() };
        check_gpu(&format!("pinned key (proof {round})"), &mut prover, &params, c, &mut rng);
    }
}
