//! GPU tests of fault handling (`#[ignore = "needs a CUDA GPU"]`; `cargo xtask test --gpu`): after a kernel
//! faults, every zkgpu call on that GPU returns the fatal `Error::ContextLost` (no panic, no hang, no abort
//! when buffers drop), and the documented recovery, a new process, finds the GPU working.
//!
//! The fault is made in a child process (this test binary run again on `fault_child`), since nothing brings a
//! faulted context back within a process.
mod common;

use cudarc::driver::LaunchConfig;
use group::prime::PrimeCurveAffine;
use zkgpu::{Error, Gpu, Ntt, PinnedMode};

/// Set in the child's environment: `fault_child` faults only when it is there.
const CHILD_ENV: &str = "ZKGPU_FAULT_CHILD";

fn expect_lost<T: std::fmt::Debug>(what: &str, result: zkgpu::Result<T>) {
    match result {
        Err(e) if e.is_fatal() => println!("{what}: {e}"),
        other => panic!("{what} after the fault gave {other:?}, not ContextLost"),
    }
}

/// The child: fault GPU 0 with a trapping kernel, then check every call named in the reliability issue.
/// Run directly (without the variable) it only checks that the trap kernel exists.
#[test]
#[ignore = "needs a CUDA GPU"]
fn fault_child() {
    let gpu = common::gpu::gpu();
    let trap = gpu.function("device_api_trap").expect("the trap kernel (test module)");
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let staged = gpu.pin_slice(&[7u32; 1024], PinnedMode::WriteCombined).expect("pins");
    let on_device = gpu.upload(&[1u32; 1024]).expect("uploads");
    // SAFETY: the kernel takes no arguments and touches no memory; it traps by design.
    unsafe { gpu.stream().launch_builder(&trap).launch(LaunchConfig::for_num_elems(32)) }
        .map_err(|e| panic!("the trap launch itself failed: {e}"))
        .ok();
    expect_lost("synchronize (the fault)", gpu.synchronize());
    assert!(zkgpu::health::lost(0).is_some(), "the loss is recorded");
    expect_lost("synchronize again", gpu.synchronize());
    expect_lost("health", gpu.health());
    expect_lost("a kernel lookup", gpu.function("smoke_add_u32"));
    expect_lost("Gpu::new(0)", Gpu::new(0));
    expect_lost("Ntt::new", Ntt::new(&gpu));
    let bases = vec![blstrs::G1Affine::generator(); 256];
    let scalars = vec![blstrs::Scalar::from(3u64); 256];
    expect_lost("an MSM", zkgpu::msm::msm::<zkgpu::curve::G1>(&gpu, &bases, &scalars));
    expect_lost("a download", gpu.download(&on_device));
    expect_lost("an upload", gpu.upload(&[2u32; 16]));
    // Dropping buffers of a lost context must not abort (pinned memory whose copies cannot be waited for is
    // leaked on purpose, never freed while a DMA might touch it).
    drop(staged);
    drop(on_device);
    drop(gpu);
    println!("zkgpu-fault-child: every call failed fast with ContextLost");
}

/// The fault runs in a child process; this process (the recovery path: a new process) then uses the GPU.
#[test]
#[ignore = "needs a CUDA GPU"]
fn a_fault_loses_the_gpu_and_a_new_process_recovers() {
    common::run_child_test("fault_child", CHILD_ENV, "zkgpu-fault-child: every call failed fast");

    let gpu = common::gpu::gpu();
    assert!(gpu.health().is_ok());
    let got: Vec<u32> = common::gpu::run_binary(&gpu, "smoke_add_u32", &[1u32, 2, 3], &[10u32; 3]);
    assert_eq!(got, vec![11, 12, 13]);
}

/// Without a fault nothing is fatal: an out-of-memory error leaves the GPU usable.
#[test]
#[ignore = "needs a CUDA GPU"]
fn out_of_memory_is_not_fatal() {
    let gpu = common::gpu::gpu();
    let too_much = gpu.info().total_memory * 2;
    match gpu.alloc_zeroed::<u8>(too_much) {
        Err(e @ Error::OutOfMemory { .. }) => assert!(!e.is_fatal()),
        other => panic!("allocating twice the device gave {:?}", other.map(|b| b.len())),
    }
    assert!(gpu.health().is_ok());
}

/// A buffer of GPU 1 passed to every GPU-0 API that takes a caller's buffer: each returns `WrongDevice`
/// naming both GPUs before anything is queued, and GPU 0 keeps working. Needs two GPUs (the test runners
/// skip `two_gpus_*` on one-GPU hosts and say so).
#[test]
#[ignore = "needs two CUDA GPUs"]
fn two_gpus_wrong_device_buffers_are_refused() {
    use zkgpu::batch_add::{self, G1, Method};
    use zkgpu::msm::{Msm, MsmBases, MsmPlan, Scalars};
    let count = Gpu::count().unwrap_or(0);
    assert!(count >= 2, "two_gpus_wrong_device_buffers_are_refused needs 2 GPUs, {count} visible");
    let (gpu0, gpu1) = (Gpu::new(0).unwrap(), Gpu::new(1).unwrap());
    let n = 1024;
    let scalars: Vec<blstrs::Scalar> = (1..=n as u64).map(blstrs::Scalar::from).collect();
    let points = vec![blstrs::G1Affine::generator(); n];
    let mut foreign_scalars = gpu1.upload(&scalars).unwrap();
    let foreign_points = gpu1.upload(&points).unwrap();
    let foreign_bitmap = gpu1.upload(&vec![u32::MAX; n / 32]).unwrap();
    let local_points = gpu0.upload(&points).unwrap();

    fn wrong<T>(what: &str, result: zkgpu::Result<T>) {
        match result {
            Err(Error::WrongDevice { buffer_device: 1, gpu: 0, what: named }) => println!("{what}: refused ({named})"),
            Err(other) => panic!("{what} with a GPU-1 buffer on GPU 0 gave {other:?}"),
            Ok(_) => panic!("{what} with a GPU-1 buffer on GPU 0 succeeded"),
        }
    }
    wrong("download", gpu0.download(&foreign_scalars));
    wrong("upload_into", gpu0.upload_into(&scalars, &mut foreign_scalars));
    let ntt = Ntt::new(&gpu0).unwrap();
    wrong("Ntt::run", ntt.run(&mut foreign_scalars, n, zkgpu::NttConfig::forward()));
    wrong("batch_add", batch_add::batch_add::<G1>(&gpu0, &foreign_points, None, Method::Xyzz));
    wrong("batch_add bitmap", batch_add::batch_add::<G1>(&gpu0, &local_points, Some(&foreign_bitmap), Method::Affine));
    wrong("split_scalars", batch_add::split_scalars(&gpu0, &foreign_scalars));
    let plan = MsmPlan::new(n, &Default::default(), false).unwrap();
    let mut msm = Msm::<zkgpu::curve::G1>::new(&gpu0, plan).unwrap();
    let local_bases = MsmBases::<zkgpu::curve::G1>::upload(&gpu0, &points).unwrap();
    wrong("Msm::run scalars", msm.run(zkgpu::msm::Bases::Device(&local_bases), Scalars::Device(&foreign_scalars)));
    let foreign_bases = MsmBases::<zkgpu::curve::G1>::from_buffer(gpu1.upload(&points).unwrap()).unwrap();
    wrong("Msm::run bases", msm.run(zkgpu::msm::Bases::Device(&foreign_bases), Scalars::Host(&scalars)));
    wrong(
        "PartitionSrs::new",
        zkgpu::PartitionSrs::new(&gpu0, gpu1.upload(&vec![blstrs::G1Affine::generator(); 16]).unwrap()),
    );
    // GPU 0 is unharmed: the same MSM with its own buffers is right.
    let local_scalars = gpu0.upload(&scalars).unwrap();
    let sum = msm.run(zkgpu::msm::Bases::Device(&local_bases), Scalars::Device(&local_scalars)).unwrap();
    let expected = <blstrs::G1Projective as group::Group>::generator() * blstrs::Scalar::from((n * (n + 1) / 2) as u64);
    assert_eq!(sum, expected);
    assert!(gpu0.health().is_ok() && gpu1.health().is_ok());
}
