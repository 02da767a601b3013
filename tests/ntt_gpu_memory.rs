//! NTT on the GPU with the device's memory nearly all taken: NN and RR then find no room for their scratch
//! buffer and must permute in place instead, with the same results. A binary of its own, because it holds
//! almost all device memory for a while: test binaries run one after another, the tests inside one in
//! parallel. Run with `cargo xtask test --gpu`; without a GPU this test fails.
mod common;

use blstrs::Scalar;
use ff::Field;
use zkgpu::ntt::{NttConfig, Order};
use zkgpu::{Ntt, ntt_cpu};

#[test]
#[ignore = "needs a CUDA GPU"]
fn without_room_for_the_scratch_nn_and_rr_permute_in_place() {
    let gpu = common::gpu::gpu();
    let ntt = Ntt::new(&gpu).unwrap();
    let mut rng = common::seeded_rng("without_room_for_the_scratch_nn_and_rr_permute_in_place");
    let n = 1usize << 20;
    let input: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
    let mut buf = gpu.upload(&input).unwrap();
    let mut expected = input.clone();
    let nn = NttConfig::forward().orders(Order::Natural, Order::Natural);
    ntt_cpu::ntt(&mut expected, nn).unwrap();
    // Tables first (an NR needs the same ones and no scratch), then take the device's memory down to less than
    // the 32 MiB scratch: 1 GiB blocks, then 4 MiB ones, until allocation fails.
    ntt.prepare(n, NttConfig::forward()).unwrap();
    let mut hog: Vec<zkgpu::DeviceBuffer<u8>> = Vec::new();
    for block in [1usize << 30, 4 << 20] {
        while let Ok(b) = gpu.alloc_zeroed::<u8>(block) {
            hog.push(b);
        }
    }
    let (free, _) = gpu.memory_info().unwrap();
    println!("device memory held: {} blocks, {free} bytes free", hog.len());
    ntt.run(&mut buf, n, nn).unwrap();
    assert_eq!(ntt.scratch_len(), 0, "a scratch of 2^20 elements was allocated with {free} bytes free");
    let got = gpu.download(&buf).unwrap();
    drop(hog);
    if let Some(i) = got.iter().zip(&expected).position(|(a, b)| a != b) {
        panic!("{nn} 2^20 without scratch: first wrong output at {i}");
    }
    // With the memory back, the next call allocates the scratch and folds the permutation.
    let mut buf = gpu.upload(&input).unwrap();
    ntt.run(&mut buf, n, nn).unwrap();
    assert_eq!(ntt.scratch_len(), n);
    assert!(gpu.download(&buf).unwrap() == expected, "{nn} 2^20 with the scratch");
}

