// Host targets only (never nvptx64): the host crate launches through it and its build.rs checks it against the
// PTX (a build dependency). The module docs are on `pub mod interface` in lib.rs.

use self::Param::{Ptr, U32, U64};

/// One kernel parameter as the PTX declares it (`.param ...` in the entry's parameter list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    /// A raw pointer (`*const T` / `*mut T`): `.param .u64 .ptr ...`. PTX does not record constness or the
    /// pointee type, so neither is checked.
    Ptr,
    /// `u32`: `.param .u32`.
    U32,
    /// `u64`: `.param .u64` (no `.ptr`).
    U64,
    /// A struct passed by value: `.param .align A .b8 NAME[S]` (none of today's production kernels takes one).
    Bytes {
        /// Alignment in bytes.
        align: u32,
        /// Size in bytes.
        size: u32,
    },
}

/// A kernel of the production module: its entry name and its parameters in launch order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// The `.entry` name (the `#[unsafe(no_mangle)]` function in `entry/`).
    pub name: &'static str,
    /// The parameters, in the order the launch pushes them.
    pub params: &'static [Param],
}

// MSM, curve-independent (`entry/msm.rs`, `entry/msm_sort.rs`).

/// `msm_count(scalars, indices, len, c, windows, q, limit, counts, digits, bad)`.
pub const MSM_COUNT: Kernel =
    Kernel { name: "msm_count", params: &[Ptr, Ptr, U32, U32, U32, U32, U32, Ptr, Ptr, Ptr] };
/// `msm_scan_sums(counts, buckets, sums)`.
pub const MSM_SCAN_SUMS: Kernel = Kernel { name: "msm_scan_sums", params: &[Ptr, U32, Ptr] };
/// `msm_scan(counts, buckets, sums, offsets, cursors)`.
pub const MSM_SCAN: Kernel = Kernel { name: "msm_scan", params: &[Ptr, U32, Ptr, Ptr, Ptr] };
/// `msm_scatter(digits, indices, len, c, windows, q, stride, first, limit, offsets, cursors, sorted,
/// per_window, bucket_lo, bucket_hi)`.
pub const MSM_SCATTER: Kernel = Kernel {
    name: "msm_scatter",
    params: &[Ptr, Ptr, U32, U32, U32, U32, U32, U32, U32, Ptr, Ptr, Ptr, U32, U32, U32],
};
/// `msm_sort_upsweep(digits, len, c, windows, q, v0, per_window, tiles_per_block, pass, bits, keys, counts,
/// hist)`.
pub const MSM_SORT_UPSWEEP: Kernel = Kernel {
    name: "msm_sort_upsweep",
    params: &[Ptr, U32, U32, U32, U32, U32, U32, U32, U32, U32, Ptr, Ptr, Ptr],
};
/// `msm_sort_downsweep(digits, indices, len, c, windows, q, stride, first, limit, v0, per_window,
/// tiles_per_block, pass, bits, keys, vals, counts, spine, out_keys, out_vals)`.
pub const MSM_SORT_DOWNSWEEP: Kernel = Kernel {
    name: "msm_sort_downsweep",
    params: &[
        Ptr, Ptr, U32, U32, U32, U32, U32, U32, U32, U32, U32, U32, U32, U32, Ptr, Ptr, Ptr, Ptr, Ptr, Ptr,
    ],
};
/// `msm_sort_offsets(keys, counts, per_window, buckets, offsets)`.
pub const MSM_SORT_OFFSETS: Kernel = Kernel { name: "msm_sort_offsets", params: &[Ptr, Ptr, U32, U32, Ptr] };

// NTT (`entry/ntt.rs`).

/// `ntt_pass_dif(src, dst, twiddles, scale_lo, scale_hi, w0, w1)` (`w0, w1`: `ntt::PassParams::encode`).
pub const NTT_PASS_DIF: Kernel = Kernel { name: "ntt_pass_dif", params: &[Ptr, Ptr, Ptr, Ptr, Ptr, U32, U32] };
/// `ntt_pass_dit(src, dst, twiddles, scale_lo, scale_hi, w0, w1)`.
pub const NTT_PASS_DIT: Kernel = Kernel { name: "ntt_pass_dit", params: &[Ptr, Ptr, Ptr, Ptr, Ptr, U32, U32] };
/// `ntt_bit_reverse(data, log_n, total)`.
pub const NTT_BIT_REVERSE: Kernel = Kernel { name: "ntt_bit_reverse", params: &[Ptr, U32, U64] };
/// `ntt_bit_reverse_tiled(data, log_n)`.
pub const NTT_BIT_REVERSE_TILED: Kernel = Kernel { name: "ntt_bit_reverse_tiled", params: &[Ptr, U32] };
/// `ntt_fill_table(out, lo, hi, lo_bits, count)`.
pub const NTT_FILL_TABLE: Kernel = Kernel { name: "ntt_fill_table", params: &[Ptr, Ptr, Ptr, U32, U64] };
/// `ntt_h_pointwise(a, b, z, count)`.
pub const NTT_H_POINTWISE: Kernel = Kernel { name: "ntt_h_pointwise", params: &[Ptr, Ptr, Ptr, U64] };
/// `ntt_h_subtract(a, c, z, count)`.
pub const NTT_H_SUBTRACT: Kernel = Kernel { name: "ntt_h_subtract", params: &[Ptr, Ptr, Ptr, U64] };

// Batch addition, curve-independent (`entry/batch_add.rs`).

/// `batch_add_classify_scalars(scalars, n, ones, others)`.
pub const BATCH_ADD_CLASSIFY_SCALARS: Kernel =
    Kernel { name: "batch_add_classify_scalars", params: &[Ptr, U32, Ptr, Ptr] };
/// `batch_add_count_chunks(bits, len, chunk_counts)`.
pub const BATCH_ADD_COUNT_CHUNKS: Kernel = Kernel { name: "batch_add_count_chunks", params: &[Ptr, U32, Ptr] };
/// `batch_add_selected_totals(chunk_counts, chunks, shift, totals)`.
pub const BATCH_ADD_SELECTED_TOTALS: Kernel =
    Kernel { name: "batch_add_selected_totals", params: &[Ptr, U32, U32, Ptr] };
/// `batch_add_compact_indices(bits, len, chunk_counts, indices)`.
pub const BATCH_ADD_COMPACT_INDICES: Kernel =
    Kernel { name: "batch_add_compact_indices", params: &[Ptr, U32, Ptr, Ptr] };

/// The kernels instantiated once per curve (`msm_curve_kernels!` and `batch_add_kernels!` in `entry/`): the
/// same parameter lists for [`G1`] and [`G2`], pointers to that curve's point types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CurveKernels {
    /// `msm_{g}_accumulate(bases, sorted, per_window, offsets, buckets, seg, slots, partials)`.
    pub msm_accumulate: Kernel,
    /// `msm_{g}_accumulate_affine(bases, sorted, per_window, offsets, buckets, seg, slots, partials, rounds,
    /// first_window, scratch)`.
    pub msm_accumulate_affine: Kernel,
    /// `msm_{g}_fold(offsets, buckets, seg, partials, slots)`.
    pub msm_fold: Kernel,
    /// `msm_{g}_fixup(offsets, buckets, seg, partials, slots, bucket_sums, first)`.
    pub msm_fixup: Kernel,
    /// `msm_{g}_fixup_spanning(offsets, buckets, seg, partials, slots, bucket_sums, first)`.
    pub msm_fixup_spanning: Kernel,
    /// `msm_{g}_reduce(bucket_sums, buckets, run, shares)`.
    pub msm_reduce: Kernel,
    /// `msm_{g}_combine(window_sums, q, c, out)`.
    pub msm_combine: Kernel,
    /// `msm_{g}_precompute(table, n, shift, copies)`.
    pub msm_precompute: Kernel,
    /// `batch_add_{g}_accumulate(points, set_offsets, bitmap, lane_sums)`.
    pub batch_add_accumulate: Kernel,
    /// `set_sum_{g}_reduce(input, in_per_set, output)`: sums of point sets (batch addition's lane sums, the
    /// MSM's bucket shares), one reduction level.
    pub set_sum_reduce: Kernel,
    /// `set_sum_{g}_finish(input, in_per_set, out)`: the last level, one sum per set.
    pub set_sum_finish: Kernel,
    /// `batch_add_{g}_affine_level(input, count, shift, output)`.
    pub batch_add_affine_level: Kernel,
    /// `batch_add_{g}_affine_level_gather(points, indices, count, output)`.
    pub batch_add_affine_level_gather: Kernel,
    /// `bench_batch_add_{g}_expand(seeds, step, run, n, out)`: benchmark inputs (the bench runner's).
    pub bench_expand: Kernel,
}

const MSM_ACCUMULATE_PARAMS: &[Param] = &[Ptr, Ptr, U32, Ptr, U32, U32, U32, Ptr];
const MSM_ACCUMULATE_AFFINE_PARAMS: &[Param] = &[Ptr, Ptr, U32, Ptr, U32, U32, U32, Ptr, U32, U32, Ptr];
const MSM_FOLD_PARAMS: &[Param] = &[Ptr, U32, U32, Ptr, U32];
const MSM_FIXUP_PARAMS: &[Param] = &[Ptr, U32, U32, Ptr, U32, Ptr, U32];
const MSM_REDUCE_PARAMS: &[Param] = &[Ptr, U32, U32, Ptr];
const MSM_COMBINE_PARAMS: &[Param] = &[Ptr, U32, U32, Ptr];
const MSM_PRECOMPUTE_PARAMS: &[Param] = &[Ptr, U32, U32, U32];
const BATCH_ADD_ACCUMULATE_PARAMS: &[Param] = &[Ptr, Ptr, Ptr, Ptr];
const BATCH_ADD_REDUCE_PARAMS: &[Param] = &[Ptr, U32, Ptr];
const BATCH_ADD_AFFINE_LEVEL_PARAMS: &[Param] = &[Ptr, Ptr, U32, Ptr];
const BATCH_ADD_AFFINE_LEVEL_GATHER_PARAMS: &[Param] = &[Ptr, Ptr, Ptr, Ptr];
const BATCH_ADD_EXPAND_PARAMS: &[Param] = &[Ptr, Ptr, U32, U32, Ptr];

/// The G1 (Fq) instances.
pub const G1: CurveKernels = CurveKernels {
    msm_accumulate: Kernel { name: "msm_g1_accumulate", params: MSM_ACCUMULATE_PARAMS },
    msm_accumulate_affine: Kernel { name: "msm_g1_accumulate_affine", params: MSM_ACCUMULATE_AFFINE_PARAMS },
    msm_fold: Kernel { name: "msm_g1_fold", params: MSM_FOLD_PARAMS },
    msm_fixup: Kernel { name: "msm_g1_fixup", params: MSM_FIXUP_PARAMS },
    msm_fixup_spanning: Kernel { name: "msm_g1_fixup_spanning", params: MSM_FIXUP_PARAMS },
    msm_reduce: Kernel { name: "msm_g1_reduce", params: MSM_REDUCE_PARAMS },
    msm_combine: Kernel { name: "msm_g1_combine", params: MSM_COMBINE_PARAMS },
    msm_precompute: Kernel { name: "msm_g1_precompute", params: MSM_PRECOMPUTE_PARAMS },
    batch_add_accumulate: Kernel { name: "batch_add_g1_accumulate", params: BATCH_ADD_ACCUMULATE_PARAMS },
    set_sum_reduce: Kernel { name: "set_sum_g1_reduce", params: BATCH_ADD_REDUCE_PARAMS },
    set_sum_finish: Kernel { name: "set_sum_g1_finish", params: BATCH_ADD_REDUCE_PARAMS },
    batch_add_affine_level: Kernel { name: "batch_add_g1_affine_level", params: BATCH_ADD_AFFINE_LEVEL_PARAMS },
    batch_add_affine_level_gather: Kernel {
        name: "batch_add_g1_affine_level_gather",
        params: BATCH_ADD_AFFINE_LEVEL_GATHER_PARAMS,
    },
    bench_expand: Kernel { name: "bench_batch_add_g1_expand", params: BATCH_ADD_EXPAND_PARAMS },
};

/// The G2 (Fq2) instances.
pub const G2: CurveKernels = CurveKernels {
    msm_accumulate: Kernel { name: "msm_g2_accumulate", params: MSM_ACCUMULATE_PARAMS },
    msm_accumulate_affine: Kernel { name: "msm_g2_accumulate_affine", params: MSM_ACCUMULATE_AFFINE_PARAMS },
    msm_fold: Kernel { name: "msm_g2_fold", params: MSM_FOLD_PARAMS },
    msm_fixup: Kernel { name: "msm_g2_fixup", params: MSM_FIXUP_PARAMS },
    msm_fixup_spanning: Kernel { name: "msm_g2_fixup_spanning", params: MSM_FIXUP_PARAMS },
    msm_reduce: Kernel { name: "msm_g2_reduce", params: MSM_REDUCE_PARAMS },
    msm_combine: Kernel { name: "msm_g2_combine", params: MSM_COMBINE_PARAMS },
    msm_precompute: Kernel { name: "msm_g2_precompute", params: MSM_PRECOMPUTE_PARAMS },
    batch_add_accumulate: Kernel { name: "batch_add_g2_accumulate", params: BATCH_ADD_ACCUMULATE_PARAMS },
    set_sum_reduce: Kernel { name: "set_sum_g2_reduce", params: BATCH_ADD_REDUCE_PARAMS },
    set_sum_finish: Kernel { name: "set_sum_g2_finish", params: BATCH_ADD_REDUCE_PARAMS },
    batch_add_affine_level: Kernel { name: "batch_add_g2_affine_level", params: BATCH_ADD_AFFINE_LEVEL_PARAMS },
    batch_add_affine_level_gather: Kernel {
        name: "batch_add_g2_affine_level_gather",
        params: BATCH_ADD_AFFINE_LEVEL_GATHER_PARAMS,
    },
    bench_expand: Kernel { name: "bench_batch_add_g2_expand", params: BATCH_ADD_EXPAND_PARAMS },
};

/// Every kernel above: what build.rs checks against the production PTX of each architecture.
pub const KERNELS: &[Kernel] = &[
    MSM_COUNT,
    MSM_SCAN_SUMS,
    MSM_SCAN,
    MSM_SCATTER,
    MSM_SORT_UPSWEEP,
    MSM_SORT_DOWNSWEEP,
    MSM_SORT_OFFSETS,
    NTT_PASS_DIF,
    NTT_PASS_DIT,
    NTT_BIT_REVERSE,
    NTT_BIT_REVERSE_TILED,
    NTT_FILL_TABLE,
    NTT_H_POINTWISE,
    NTT_H_SUBTRACT,
    BATCH_ADD_CLASSIFY_SCALARS,
    BATCH_ADD_COUNT_CHUNKS,
    BATCH_ADD_SELECTED_TOTALS,
    BATCH_ADD_COMPACT_INDICES,
    G1.msm_accumulate,
    G1.msm_accumulate_affine,
    G1.msm_fold,
    G1.msm_fixup,
    G1.msm_fixup_spanning,
    G1.msm_reduce,
    G1.msm_combine,
    G1.msm_precompute,
    G1.batch_add_accumulate,
    G1.set_sum_reduce,
    G1.set_sum_finish,
    G1.batch_add_affine_level,
    G1.batch_add_affine_level_gather,
    G1.bench_expand,
    G2.msm_accumulate,
    G2.msm_accumulate_affine,
    G2.msm_fold,
    G2.msm_fixup,
    G2.msm_fixup_spanning,
    G2.msm_reduce,
    G2.msm_combine,
    G2.msm_precompute,
    G2.batch_add_accumulate,
    G2.set_sum_reduce,
    G2.set_sum_finish,
    G2.batch_add_affine_level,
    G2.batch_add_affine_level_gather,
    G2.bench_expand,
];

/// The `.visible .entry` kernels of a PTX module in file order: name and parameter list, or for a list with a
/// declaration [`Param`] cannot express, that declaration (as an error).
pub fn ptx_entries(ptx: &str) -> Vec<(&str, Result<Vec<Param>, String>)> {
    const HEAD: &str = ".visible .entry ";
    let mut entries = Vec::new();
    let mut rest = ptx;
    while let Some(at) = rest.find(HEAD) {
        rest = &rest[at + HEAD.len()..];
        let Some(open) = rest.find('(') else { break };
        let name = rest[..open].trim();
        let Some(close) = rest[open..].find(')') else {
            entries.push((name, Err("no closing parenthesis".to_string())));
            break;
        };
        let list = &rest[open + 1..open + close];
        let params = list
            .split(',')
            .map(str::trim)
            .filter(|decl| !decl.is_empty())
            .map(|decl| parse_param(decl).ok_or_else(|| format!("unrecognized parameter `{decl}`")))
            .collect();
        entries.push((name, params));
        rest = &rest[open + close..];
    }
    entries
}

/// One `.param` declaration of an entry's parameter list.
fn parse_param(decl: &str) -> Option<Param> {
    let tokens: Vec<&str> = decl.split_whitespace().collect();
    let (&first, rest) = tokens.split_first()?;
    let (&name, kind) = rest.split_last()?;
    if first != ".param" {
        return None;
    }
    match kind {
        [".u32"] => Some(Param::U32),
        [".u64"] => Some(Param::U64),
        // `.ptr`, then an optional state space and `.align N`.
        [".u64", ".ptr", ..] => Some(Param::Ptr),
        [".align", align, ".b8"] => {
            let size = name.strip_suffix(']')?.rsplit_once('[')?.1;
            Some(Param::Bytes { align: align.parse().ok()?, size: size.parse().ok()? })
        }
        _ => None,
    }
}

/// Checks `kernels` against the PTX module `ptx`: each must be a `.visible .entry` exactly once, with exactly
/// its parameter list. `Err` lists every mismatch, one line each, naming the kernel.
pub fn check_ptx(ptx: &str, kernels: &[Kernel]) -> Result<(), Vec<String>> {
    let entries = ptx_entries(ptx);
    let mut problems = Vec::new();
    for kernel in kernels {
        let mut found = entries.iter().filter(|(name, _)| *name == kernel.name);
        match (found.next(), found.next()) {
            (None, _) => problems.push(format!("kernel {}: no such entry in the PTX", kernel.name)),
            (Some(_), Some(_)) => problems.push(format!("kernel {}: more than one entry in the PTX", kernel.name)),
            (Some((_, Err(why))), None) => problems.push(format!("kernel {}: {why}", kernel.name)),
            (Some((_, Ok(params))), None) if params.as_slice() != kernel.params => problems.push(format!(
                "kernel {}: the interface expects parameters {:?}, the PTX has {:?}",
                kernel.name, kernel.params, params
            )),
            (Some(_), None) => {}
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(problems) }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PTX: &str = "
.visible .entry ntt_bit_reverse(
\t.param .u64 .ptr .align 1 ntt_bit_reverse_param_0,
\t.param .u32 ntt_bit_reverse_param_1,
\t.param .u64 ntt_bit_reverse_param_2
)
.maxnreg 168
{
\tret;
}
.visible .entry by_value(
\t.param .align 8 .b8 by_value_param_0[24],
\t.param .u64 .ptr .global .align 16 by_value_param_1
)
{
}
.visible .entry no_params()
{
}
";

    #[test]
    fn parses_entries() {
        let entries = ptx_entries(PTX);
        assert_eq!(
            entries,
            vec![
                ("ntt_bit_reverse", Ok(vec![Ptr, U32, U64])),
                ("by_value", Ok(vec![Param::Bytes { align: 8, size: 24 }, Ptr])),
                ("no_params", Ok(vec![])),
            ]
        );
        assert!(check_ptx(PTX, &[NTT_BIT_REVERSE]).is_ok());
    }

    #[test]
    fn reports_a_renamed_kernel() {
        let renamed = PTX.replace("ntt_bit_reverse", "ntt_bit_reversal");
        let problems = check_ptx(&renamed, &[NTT_BIT_REVERSE]).unwrap_err();
        assert_eq!(problems, vec!["kernel ntt_bit_reverse: no such entry in the PTX".to_string()]);
    }

    #[test]
    fn reports_a_changed_parameter() {
        let changed = PTX.replace(".u64 ntt_bit_reverse_param_2", ".u32 ntt_bit_reverse_param_2");
        let problems = check_ptx(&changed, &[NTT_BIT_REVERSE]).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("kernel ntt_bit_reverse: the interface expects"), "{}", problems[0]);
        assert!(problems[0].ends_with("[Ptr, U32, U64], the PTX has [Ptr, U32, U32]"), "{}", problems[0]);
        // A dropped parameter and an unknown declaration are reported too.
        let dropped = PTX.replace(",\n\t.param .u64 ntt_bit_reverse_param_2", "");
        assert_eq!(check_ptx(&dropped, &[NTT_BIT_REVERSE]).unwrap_err().len(), 1);
        let unknown = PTX.replace(".u64 ntt_bit_reverse_param_2", ".f64 ntt_bit_reverse_param_2");
        let problems = check_ptx(&unknown, &[NTT_BIT_REVERSE]).unwrap_err();
        assert!(problems[0].contains("unrecognized parameter `.param .f64"), "{}", problems[0]);
    }

    #[test]
    fn names_are_unique() {
        for (i, a) in KERNELS.iter().enumerate() {
            assert!(KERNELS[i + 1..].iter().all(|b| b.name != a.name), "{} listed twice", a.name);
        }
    }

    /// The committed modules match the table (build.rs checks whichever PTX a build uses).
    #[test]
    fn committed_ptx_matches() {
        for arch in crate::committed::ARCHES {
            let path = crate::committed::path(arch).display().to_string();
            let ptx = crate::committed::read(arch).unwrap_or_else(|e| panic!("{e}"));
            if let Err(problems) = check_ptx(&ptx, KERNELS) {
                panic!("{path}:\n{}", problems.join("\n"));
            }
        }
    }
}
