//! What the `xtask` and `zkgpu-bench` binaries share: the bench command line ([`bench_args`]), the benchmark
//! results file format ([`results`]) and the recorded peer figures the tables compare against ([`peers`]).
pub mod bench_args;
pub mod peers;
pub mod results;
