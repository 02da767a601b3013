// Also read by the host crate's build.rs (a build dependency on this crate): plain items, no inner attributes.

/// Per-kernel register caps: `(kernel, most registers per thread)`. rustc has no `__launch_bounds__`, so
/// build.rs writes `.maxnreg N` after the entry's parameter list in the PTX (ptxas and the driver's JIT honour
/// it); the build fails if a listed kernel is missing from the production module.
///
/// - `msm_g1_accumulate`, 168: with its products out of line ([`crate::field::outlined`]) ptxas gives the
///   loop 184 registers, which fits two 128-thread blocks per SM (8 warps) and runs no faster than the
///   inlined loop; 168 is the most that still fits three (65536 / (3 · 128) = 170, allocated in steps of
///   8): 158 registers, no spills, 12 warps, 8% faster than inlined (docs/log/kernels-notes.md, MSM, "Out-of-line
///   products").
pub const MAX_REGISTERS: &[(&str, u32)] = &[("msm_g1_accumulate", 168)];
