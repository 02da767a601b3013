//! What the `xtask` and `zkgpu-bench` binaries share: the benchmark results file format ([`results`]) and the
//! recorded peer figures the tables compare against ([`peers`]).
pub mod peers;
pub mod results;
