//! Helpers shared by the integration tests: property templates written once and instantiated per
//! field/curve (in the style of arkworks' test templates), and the GPU harness.
#![allow(dead_code)]
#[cfg(feature = "bellperson")]
pub mod circuits;
pub mod curve_props;
pub mod field_props;
pub mod gpu;
pub mod msm_cases;
pub mod pipeline_cases;
pub mod points;

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

/// The architectures whose modules this build embeds (all unless it was built with `ZKGPU_EMBED_ARCHES`, as
/// the bundle's binaries are): sm_90 always, and exactly those `zkgpu::module::EMBEDDED_ARCHES` names.
pub fn embedded_arches() -> Vec<&'static zkgpu::module::ArchModules> {
    let all = [&zkgpu::module::SM90, &zkgpu::module::SM80];
    let embedded: Vec<_> = all.into_iter().filter(|a| a.is_embedded()).collect();
    let names: Vec<&str> = embedded.iter().map(|a| a.arch).collect();
    assert_eq!(names.join(","), zkgpu::module::EMBEDDED_ARCHES, "the embedded modules and EMBEDDED_ARCHES disagree");
    assert!(names.contains(&"sm_90"), "this build embeds no sm_90 modules");
    println!("embedded architectures: {}", names.join(", "));
    embedded
}

/// A seeded RNG for one test. The seed comes from `ZKGPU_TEST_SEED` (to replay a failure) or is drawn at random,
/// and is always printed so a failing run can be reproduced.
pub fn seeded_rng(test_name: &str) -> ChaCha20Rng {
    let seed = std::env::var("ZKGPU_TEST_SEED").ok().and_then(|s| s.parse::<u64>().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x5eed)
    });
    println!("{test_name}: seed {seed} (replay with ZKGPU_TEST_SEED={seed})");
    ChaCha20Rng::seed_from_u64(seed)
}

/// The largest log2 size a size sweep goes to: `default`, or less when `ZKGPU_TEST_MAX_LOG_N` says so (the
/// bundle's run.sh sets it for compute-sanitizer runs, where kernels run 10-100x slower). Printed when it cuts.
pub fn max_log_n(default: u32) -> u32 {
    let cap = std::env::var("ZKGPU_TEST_MAX_LOG_N").ok().and_then(|v| v.parse::<u32>().ok());
    match cap {
        Some(cap) if cap < default => {
            println!("sizes up to 2^{cap} only (ZKGPU_TEST_MAX_LOG_N), not 2^{default}");
            cap
        }
        _ => default,
    }
}

/// Instantiates generic test templates once per curve (or field): each entry
/// `fn NAME = TEMPLATE { g1: G1(ARGS), g2: G2(ARGS) }` becomes a module `NAME` with one `#[test] fn` per
/// listed instance, `NAME::g1` calling `TEMPLATE::<G1>("g1_NAME", ARGS)` (the string names the test in its
/// printed seed). Attributes before `fn` (e.g. `#[ignore = "needs a CUDA GPU"]`) go on every instance.
#[macro_export]
macro_rules! curve_tests {
    ($(
        $(#[$attr:meta])*
        fn $test:ident = $template:ident { $($inst:ident: $ty:ident ($($arg:expr),* $(,)?)),+ $(,)? }
    )*) => {$(
        mod $test {
            #[allow(unused_imports)]
            use super::*;
            $crate::curve_tests!(@each [$(#[$attr])*] $test $template $($inst $ty ($($arg),*))+);
        }
    )*};
    (@each $attrs:tt $test:ident $template:ident $($inst:ident $ty:ident $args:tt)+) => {$(
        $crate::curve_tests!(@one $attrs $test $template $inst $ty $args);
    )+};
    (@one [$(#[$attr:meta])*] $test:ident $template:ident $inst:ident $ty:ident ($($arg:expr),*)) => {
        #[test]
        $(#[$attr])*
        fn $inst() {
            $template::<$ty>(concat!(stringify!($inst), "_", stringify!($test)), $($arg),*);
        }
    };
}

/// Runs test `name` of this test binary again in a child process with `env` set (for checks that need a
/// process of their own: a faulted context, nothing loaded yet); asserts that it passed and printed `marker`,
/// which shows it ran its checks rather than the direct-run path. Returns its standard output.
pub fn run_child_test(name: &str, env: &str, marker: &str) -> String {
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([name, "--exact", "--ignored", "--nocapture", "--test-threads=1"])
        .env(env, "1")
        .output()
        .expect("runs the child");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the child {name} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(marker), "the child {name} did not finish its checks");
    stdout
}
