//! G1/G2 point arithmetic, host build of the kernel code, against blstrs.
//!
//! The same property templates (tests/common/curve_props.rs) run on the GPU in tests/curve_gpu.rs.
mod common;

use common::curve_props::{self as props, G1, G2, HostArithmetic, PairBatch};

/// Every kernel tests/curve_gpu.rs launches is in both embedded test modules (catches a missing or renamed
/// kernel, or stale committed PTX, on machines without a GPU).
#[test]
fn curve_kernels_are_in_the_embedded_ptx() {
    let names: Vec<String> = props::kernel_names::<G1>().into_iter().chain(props::kernel_names::<G2>()).collect();
    assert_eq!(names.len(), 18);
    for (arch, ptx) in common::embedded_arches().into_iter().map(|a| (a.arch, a.test.text().unwrap())) {
        for name in &names {
            assert!(
                ptx.contains(&format!(".visible .entry {name}(")),
                "{name} missing from the {arch} PTX ({}; run `cargo xtask ptx` if the committed PTX is stale)",
                zkgpu::PTX_SOURCE
            );
        }
    }
}

macro_rules! curve_cpu_tests {
    ($module:ident, $curve:ty, $proptest_cases:expr, lazy_field: $lazy:literal) => {
        mod $module {
            use super::*;
            use proptest::prelude::*;
            use rand_chacha::ChaCha20Rng;
            use rand_core::SeedableRng;

            fn rng(test: &str) -> ChaCha20Rng {
                common::seeded_rng(&format!("{}::{test}", stringify!($module)))
            }

            #[test]
            fn layout_is_blstrs() {
                props::check_layout::<$curve>(&mut rng("layout_is_blstrs"));
            }

            #[test]
            fn on_curve_check_rejects_off_curve_points() {
                props::check_on_curve_rejects::<$curve>(&mut rng("on_curve_check_rejects_off_curve_points"));
            }

            #[test]
            fn edge_cases_match_blstrs() {
                let batch = PairBatch::<$curve>::edge_cases(&mut rng("edge_cases_match_blstrs"));
                props::check_all_ops(&HostArithmetic, &batch);
            }

            /// The batch the GPU test uses, at a smaller size (not a multiple of 32).
            #[test]
            fn mixed_batch_matches_blstrs() {
                let batch = PairBatch::<$curve>::mixed(&mut rng("mixed_batch_matches_blstrs"), 203);
                props::check_all_ops(&HostArithmetic, &batch);
            }

            /// 64 mixed additions kept lazily reduced (MSM bucket, batch-addition lane) against the canonical
            /// ones; over Fq some coordinates must actually have been in `[p, 2p)`.
            #[test]
            fn lazy_bucket_chain_matches_canonical() {
                let non_canonical = props::check_lazy_bucket_chain::<$curve>(&mut rng("lazy_bucket_chain"), 64);
                if $lazy {
                    assert!(non_canonical > 0, "no lazy coordinate was >= p: the lazy path was not exercised");
                } else {
                    assert_eq!(non_canonical, 0, "a field without lazy operations gave a non-canonical value");
                }
            }

            proptest! {
                #![proptest_config(ProptestConfig {
                    cases: $proptest_cases,
                    failure_persistence: None,
                    ..ProptestConfig::default()
                })]

                /// Random points in random representations: the failing seed is printed by proptest.
                #[test]
                fn random_representations_match_blstrs(seed in any::<u64>()) {
                    props::check_random_representations::<$curve>(&mut ChaCha20Rng::seed_from_u64(seed));
                }

                #[test]
                fn random_pairs_match_blstrs(seed in any::<u64>()) {
                    let batch = PairBatch::<$curve>::mixed(&mut ChaCha20Rng::seed_from_u64(seed), 4);
                    props::check_all_ops(&HostArithmetic, &batch);
                }
            }
        }
    };
}

// Fq has lazy operations (`Field::*_lazy`), Fq2 keeps the canonical defaults.
curve_cpu_tests!(g1, G1, 64, lazy_field: true);
curve_cpu_tests!(g2, G2, 32, lazy_field: false);
