//! GPU tests of the host runtime and the device API (`#[ignore = "needs a CUDA GPU"]`; run them with
//! `cargo xtask test --gpu` or `cargo test --test device_gpu -- --ignored`). Each opens GPU 0 through
//! `common::gpu()`, which panics where there is no GPU, so they fail rather than pass without one.
mod common;

use common::gpu::{gpu, run_binary};

#[test]
#[ignore = "needs a CUDA GPU"]
fn smoke_add_u32_matches_the_cpu() {
    let gpu = gpu();
    let mut rng = common::seeded_rng("smoke_add_u32_matches_the_cpu");
    use rand_core::RngCore;
    // Sizes around the block size (256) and one larger, not a multiple of it.
    for n in [0usize, 1, 31, 255, 256, 257, 1000, 100_003] {
        let a: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let b: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
        let got: Vec<u32> = run_binary(&gpu, "smoke_add_u32", &a, &b);
        let want: Vec<u32> = a.iter().zip(&b).map(|(x, y)| x.wrapping_add(*y)).collect();
        assert_eq!(got, want, "n = {n}");
    }
}
