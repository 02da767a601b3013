// Host targets only (never nvptx64): the host crate launches through it and its build.rs checks it against the
// PTX (a build dependency). The module docs are on `pub mod interface` in lib.rs.

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

/// A kernel of the production module, type-erased: its entry name and its parameters in launch order (what
/// build.rs checks against the PTX, and what the module tables list).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// The `.entry` name (the `#[unsafe(no_mangle)]` function in `entry/`).
    pub name: &'static str,
    /// The parameters, in the order the launch pushes them.
    pub params: &'static [Param],
}

/// A parameter list shared by one or more kernels: the marker type of [`Entry`], and the key the host's
/// argument structs are bound to (`zkgpu::kernel_args`), so a launch can only pass a kernel the arguments of
/// its own parameter list.
pub trait Signature: 'static {
    /// The parameters' kinds, in launch order.
    const PARAMS: &'static [Param];
    /// The parameters' names (the kernel function's), in launch order.
    const NAMES: &'static [&'static str];
}

/// A production kernel with its [`Signature`] `S` in the type.
pub struct Entry<S> {
    /// The kernel, type-erased.
    pub kernel: Kernel,
    signature: core::marker::PhantomData<fn() -> S>,
}

impl<S: Signature> Entry<S> {
    /// The kernel `name`, taking `S`'s parameters.
    pub const fn new(name: &'static str) -> Self {
        Entry { kernel: Kernel { name, params: S::PARAMS }, signature: core::marker::PhantomData }
    }
}

impl<S> Clone for Entry<S> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<S> Copy for Entry<S> {}
impl<S> core::fmt::Debug for Entry<S> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        self.kernel.fmt(f)
    }
}

/// Calls `$callback! { ... }` with every kernel parameter list, once each, as
/// `Name(param: Kind, ...);` with `Kind` one of `Ptr`, `U32`, `U64` ([`Param`]). The kernels crate makes the
/// [`Signature`] markers of [`sig`] from it, the host crate its argument structs: one list, two crates.
/// The names are the kernel functions' parameter names (`entry/`).
#[macro_export]
macro_rules! for_each_signature {
    ($callback:ident) => {
        $callback! {
            // MSM, curve-independent (`entry/msm.rs`, `entry/msm_sort.rs`).
            MsmCount(scalars: Ptr, indices: Ptr, len: U32, c: U32, windows: U32, q: U32, first: U32, limit: U32,
                counts: Ptr, digits: Ptr, bad: Ptr);
            MsmScanSums(counts: Ptr, buckets: U32, sums: Ptr);
            MsmScan(counts: Ptr, buckets: U32, sums: Ptr, offsets: Ptr, cursors: Ptr);
            MsmScatter(digits: Ptr, indices: Ptr, len: U32, c: U32, windows: U32, q: U32, stride: U32, first: U32,
                limit: U32, offsets: Ptr, cursors: Ptr, sorted: Ptr, per_window: U32, bucket_lo: U32,
                bucket_hi: U32);
            MsmSortUpsweep(digits: Ptr, len: U32, c: U32, windows: U32, q: U32, v0: U32, per_window: U32,
                tiles_per_block: U32, pass: U32, bits: U32, keys: Ptr, counts: Ptr, hist: Ptr);
            MsmSortDownsweep(digits: Ptr, indices: Ptr, len: U32, c: U32, windows: U32, q: U32, stride: U32,
                first: U32, limit: U32, v0: U32, per_window: U32, tiles_per_block: U32, pass: U32, bits: U32,
                keys: Ptr, vals: Ptr, counts: Ptr, spine: Ptr, out_keys: Ptr, out_vals: Ptr);
            MsmSortOffsets(keys: Ptr, counts: Ptr, per_window: U32, buckets: U32, offsets: Ptr);
            // MSM, per curve (`msm_curve_kernels!` in `entry/msm.rs`).
            MsmAccumulate(bases: Ptr, sorted: Ptr, per_window: U32, offsets: Ptr, buckets: U32, seg: U32,
                slots: U32, partials: Ptr);
            MsmAccumulateAffine(bases: Ptr, sorted: Ptr, per_window: U32, offsets: Ptr, buckets: U32, seg: U32,
                slots: U32, partials: Ptr, rounds: U32, first_window: U32, scratch: Ptr);
            MsmFold(offsets: Ptr, buckets: U32, seg: U32, partials: Ptr, slots: U32);
            MsmFixup(offsets: Ptr, buckets: U32, seg: U32, partials: Ptr, slots: U32, bucket_sums: Ptr,
                first: U32);
            MsmReduce(bucket_sums: Ptr, buckets: U32, run: U32, shares: Ptr);
            MsmPrecompute(table: Ptr, n: U32, shift: U32, copies: U32);
            // NTT (`entry/ntt.rs`).
            NttPass(src: Ptr, dst: Ptr, twiddles: Ptr, scale_lo: Ptr, scale_hi: Ptr, w0: U32, w1: U32);
            NttBitReverse(data: Ptr, log_n: U32, total: U64);
            NttBitReverseTiled(data: Ptr, log_n: U32);
            NttFillTable(out: Ptr, lo: Ptr, hi: Ptr, lo_bits: U32, count: U64);
            NttHPointwise(a: Ptr, b: Ptr, z: Ptr, count: U64);
            NttHSubtract(a: Ptr, c: Ptr, z: Ptr, count: U64);
            // Batch addition, curve-independent (`entry/batch_add.rs`).
            BatchAddClassifyScalars(scalars: Ptr, n: U32, ones: Ptr, others: Ptr);
            BatchAddCountChunks(bits: Ptr, len: U32, chunk_counts: Ptr);
            BatchAddSelectedTotals(chunk_counts: Ptr, chunks: U32, shift: U32, totals: Ptr);
            BatchAddCompactIndices(bits: Ptr, len: U32, chunk_counts: Ptr, indices: Ptr);
            // Batch addition and set sums, per curve (`batch_add_kernels!` in `entry/batch_add.rs`).
            BatchAddAccumulate(points: Ptr, set_offsets: Ptr, bitmap: Ptr, lane_sums: Ptr);
            SetSum(input: Ptr, in_per_set: U32, output: Ptr);
            BatchAddAffineLevel(input: Ptr, count: Ptr, shift: U32, output: Ptr);
            BatchAddAffineLevelGather(points: Ptr, indices: Ptr, count: Ptr, output: Ptr);
            BatchAddExpand(seeds: Ptr, step: Ptr, run: U32, n: U32, out: Ptr);
        }
    };
}

macro_rules! define_signatures {
    ($($name:ident($($param:ident: $kind:ident),* $(,)?);)*) => {
        $(
            #[doc = concat!("The parameters `", stringify!($name), "(", $(stringify!($param), ", ",)* ")`.")]
            #[derive(Clone, Copy, Debug)]
            pub struct $name;
            impl super::Signature for $name {
                const PARAMS: &'static [super::Param] = &[$(super::Param::$kind),*];
                const NAMES: &'static [&'static str] = &[$(stringify!($param)),*];
            }
        )*
    };
}

/// The [`Signature`] markers, one per parameter list of [`for_each_signature!`].
pub mod sig {
    for_each_signature!(define_signatures);
}

// MSM, curve-independent.

/// `msm_count`: digit counting.
pub const MSM_COUNT: Entry<sig::MsmCount> = Entry::new("msm_count");
/// `msm_scan_sums`: per-block sums of the bucket counts.
pub const MSM_SCAN_SUMS: Entry<sig::MsmScanSums> = Entry::new("msm_scan_sums");
/// `msm_scan`: bucket offsets and cursors.
pub const MSM_SCAN: Entry<sig::MsmScan> = Entry::new("msm_scan");
/// `msm_scatter`: the counting sort's scatter.
pub const MSM_SCATTER: Entry<sig::MsmScatter> = Entry::new("msm_scatter");
/// `msm_sort_upsweep`: the radix sort's histograms.
pub const MSM_SORT_UPSWEEP: Entry<sig::MsmSortUpsweep> = Entry::new("msm_sort_upsweep");
/// `msm_sort_downsweep`: the radix sort's scatter.
pub const MSM_SORT_DOWNSWEEP: Entry<sig::MsmSortDownsweep> = Entry::new("msm_sort_downsweep");
/// `msm_sort_offsets`: bucket offsets of the radix-sorted keys.
pub const MSM_SORT_OFFSETS: Entry<sig::MsmSortOffsets> = Entry::new("msm_sort_offsets");

// NTT.

/// `ntt_pass_dif` (`w0, w1`: `ntt::PassParams::encode`).
pub const NTT_PASS_DIF: Entry<sig::NttPass> = Entry::new("ntt_pass_dif");
/// `ntt_pass_dit`.
pub const NTT_PASS_DIT: Entry<sig::NttPass> = Entry::new("ntt_pass_dit");
/// `ntt_pass_dif_inv`: an inverse transform's DIF pass (the forward twiddle table, read mirrored).
pub const NTT_PASS_DIF_INV: Entry<sig::NttPass> = Entry::new("ntt_pass_dif_inv");
/// `ntt_pass_dit_inv`.
pub const NTT_PASS_DIT_INV: Entry<sig::NttPass> = Entry::new("ntt_pass_dit_inv");
/// `ntt_bit_reverse`.
pub const NTT_BIT_REVERSE: Entry<sig::NttBitReverse> = Entry::new("ntt_bit_reverse");
/// `ntt_bit_reverse_tiled`.
pub const NTT_BIT_REVERSE_TILED: Entry<sig::NttBitReverseTiled> = Entry::new("ntt_bit_reverse_tiled");
/// `ntt_fill_table`: twiddle tables.
pub const NTT_FILL_TABLE: Entry<sig::NttFillTable> = Entry::new("ntt_fill_table");
/// `ntt_h_pointwise`: Groth16's `a·b` on the coset.
pub const NTT_H_POINTWISE: Entry<sig::NttHPointwise> = Entry::new("ntt_h_pointwise");
/// `ntt_h_subtract`: Groth16's `(a·b − c)/z`.
pub const NTT_H_SUBTRACT: Entry<sig::NttHSubtract> = Entry::new("ntt_h_subtract");

// Batch addition, curve-independent.

/// `batch_add_classify_scalars`: 0/1 scalars apart from the others.
pub const BATCH_ADD_CLASSIFY_SCALARS: Entry<sig::BatchAddClassifyScalars> = Entry::new("batch_add_classify_scalars");
/// `batch_add_count_chunks`: set bits per bitmap chunk.
pub const BATCH_ADD_COUNT_CHUNKS: Entry<sig::BatchAddCountChunks> = Entry::new("batch_add_count_chunks");
/// `batch_add_selected_totals`: the selection's totals.
pub const BATCH_ADD_SELECTED_TOTALS: Entry<sig::BatchAddSelectedTotals> = Entry::new("batch_add_selected_totals");
/// `batch_add_compact_indices`: a bitmap compacted to indices.
pub const BATCH_ADD_COMPACT_INDICES: Entry<sig::BatchAddCompactIndices> = Entry::new("batch_add_compact_indices");

/// The kernels instantiated once per curve (`msm_curve_kernels!` and `batch_add_kernels!` in `entry/`): the
/// same parameter lists for [`G1`] and [`G2`], pointers to that curve's point types.
#[derive(Clone, Copy, Debug)]
pub struct CurveKernels {
    /// `msm_{g}_accumulate`.
    pub msm_accumulate: Entry<sig::MsmAccumulate>,
    /// `msm_{g}_accumulate_affine`.
    pub msm_accumulate_affine: Entry<sig::MsmAccumulateAffine>,
    /// `msm_{g}_fold`.
    pub msm_fold: Entry<sig::MsmFold>,
    /// `msm_{g}_fixup`.
    pub msm_fixup: Entry<sig::MsmFixup>,
    /// `msm_{g}_fixup_spanning`.
    pub msm_fixup_spanning: Entry<sig::MsmFixup>,
    /// `msm_{g}_reduce`.
    pub msm_reduce: Entry<sig::MsmReduce>,
    /// `msm_{g}_precompute`.
    pub msm_precompute: Entry<sig::MsmPrecompute>,
    /// `batch_add_{g}_accumulate`.
    pub batch_add_accumulate: Entry<sig::BatchAddAccumulate>,
    /// `set_sum_{g}_reduce`: sums of point sets (batch addition's lane sums, the MSM's bucket shares), one
    /// reduction level.
    pub set_sum_reduce: Entry<sig::SetSum>,
    /// `set_sum_{g}_finish`: the last level, one sum per set.
    pub set_sum_finish: Entry<sig::SetSum>,
    /// `batch_add_{g}_affine_level`.
    pub batch_add_affine_level: Entry<sig::BatchAddAffineLevel>,
    /// `batch_add_{g}_affine_level_gather`.
    pub batch_add_affine_level_gather: Entry<sig::BatchAddAffineLevelGather>,
    /// `bench_batch_add_{g}_expand`: benchmark inputs (the bench runner's).
    pub bench_expand: Entry<sig::BatchAddExpand>,
}

impl CurveKernels {
    /// Every kernel of the curve, type-erased.
    pub const fn all(&self) -> [Kernel; 13] {
        [
            self.msm_accumulate.kernel,
            self.msm_accumulate_affine.kernel,
            self.msm_fold.kernel,
            self.msm_fixup.kernel,
            self.msm_fixup_spanning.kernel,
            self.msm_reduce.kernel,
            self.msm_precompute.kernel,
            self.batch_add_accumulate.kernel,
            self.set_sum_reduce.kernel,
            self.set_sum_finish.kernel,
            self.batch_add_affine_level.kernel,
            self.batch_add_affine_level_gather.kernel,
            self.bench_expand.kernel,
        ]
    }
}

macro_rules! curve_kernels {
    ($g:literal) => {
        CurveKernels {
            msm_accumulate: Entry::new(concat!("msm_", $g, "_accumulate")),
            msm_accumulate_affine: Entry::new(concat!("msm_", $g, "_accumulate_affine")),
            msm_fold: Entry::new(concat!("msm_", $g, "_fold")),
            msm_fixup: Entry::new(concat!("msm_", $g, "_fixup")),
            msm_fixup_spanning: Entry::new(concat!("msm_", $g, "_fixup_spanning")),
            msm_reduce: Entry::new(concat!("msm_", $g, "_reduce")),
            msm_precompute: Entry::new(concat!("msm_", $g, "_precompute")),
            batch_add_accumulate: Entry::new(concat!("batch_add_", $g, "_accumulate")),
            set_sum_reduce: Entry::new(concat!("set_sum_", $g, "_reduce")),
            set_sum_finish: Entry::new(concat!("set_sum_", $g, "_finish")),
            batch_add_affine_level: Entry::new(concat!("batch_add_", $g, "_affine_level")),
            batch_add_affine_level_gather: Entry::new(concat!("batch_add_", $g, "_affine_level_gather")),
            bench_expand: Entry::new(concat!("bench_batch_add_", $g, "_expand")),
        }
    };
}

/// The G1 (Fq) instances.
pub const G1: CurveKernels = curve_kernels!("g1");
/// The G2 (Fq2) instances.
pub const G2: CurveKernels = curve_kernels!("g2");

/// Every kernel above: what build.rs checks against the production PTX of each architecture.
pub fn kernels() -> Vec<Kernel> {
    let mut all = vec![
        MSM_COUNT.kernel,
        MSM_SCAN_SUMS.kernel,
        MSM_SCAN.kernel,
        MSM_SCATTER.kernel,
        MSM_SORT_UPSWEEP.kernel,
        MSM_SORT_DOWNSWEEP.kernel,
        MSM_SORT_OFFSETS.kernel,
        NTT_PASS_DIF.kernel,
        NTT_PASS_DIT.kernel,
        NTT_PASS_DIF_INV.kernel,
        NTT_PASS_DIT_INV.kernel,
        NTT_BIT_REVERSE.kernel,
        NTT_BIT_REVERSE_TILED.kernel,
        NTT_FILL_TABLE.kernel,
        NTT_H_POINTWISE.kernel,
        NTT_H_SUBTRACT.kernel,
        BATCH_ADD_CLASSIFY_SCALARS.kernel,
        BATCH_ADD_COUNT_CHUNKS.kernel,
        BATCH_ADD_SELECTED_TOTALS.kernel,
        BATCH_ADD_COMPACT_INDICES.kernel,
    ];
    all.extend(G1.all());
    all.extend(G2.all());
    all
}

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
    use super::Param::{Ptr, U32, U64};
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
        assert!(check_ptx(PTX, &[NTT_BIT_REVERSE.kernel]).is_ok());
    }

    #[test]
    fn reports_a_renamed_kernel() {
        let renamed = PTX.replace("ntt_bit_reverse", "ntt_bit_reversal");
        let problems = check_ptx(&renamed, &[NTT_BIT_REVERSE.kernel]).unwrap_err();
        assert_eq!(problems, vec!["kernel ntt_bit_reverse: no such entry in the PTX".to_string()]);
    }

    #[test]
    fn reports_a_changed_parameter() {
        let changed = PTX.replace(".u64 ntt_bit_reverse_param_2", ".u32 ntt_bit_reverse_param_2");
        let problems = check_ptx(&changed, &[NTT_BIT_REVERSE.kernel]).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert!(problems[0].starts_with("kernel ntt_bit_reverse: the interface expects"), "{}", problems[0]);
        assert!(problems[0].ends_with("[Ptr, U32, U64], the PTX has [Ptr, U32, U32]"), "{}", problems[0]);
        // A dropped parameter and an unknown declaration are reported too.
        let dropped = PTX.replace(",\n\t.param .u64 ntt_bit_reverse_param_2", "");
        assert_eq!(check_ptx(&dropped, &[NTT_BIT_REVERSE.kernel]).unwrap_err().len(), 1);
        let unknown = PTX.replace(".u64 ntt_bit_reverse_param_2", ".f64 ntt_bit_reverse_param_2");
        let problems = check_ptx(&unknown, &[NTT_BIT_REVERSE.kernel]).unwrap_err();
        assert!(problems[0].contains("unrecognized parameter `.param .f64"), "{}", problems[0]);
    }

    /// Every parameter list names each parameter once and has a name per kind.
    #[test]
    fn signatures_name_their_parameters() {
        macro_rules! check {
            ($($name:ident($($param:ident: $kind:ident),* $(,)?);)*) => {$(
                let names = <sig::$name as Signature>::NAMES;
                assert_eq!(names.len(), <sig::$name as Signature>::PARAMS.len(), stringify!($name));
                for (i, a) in names.iter().enumerate() {
                    assert!(!names[i + 1..].contains(a), "{}: {a} twice", stringify!($name));
                }
            )*};
        }
        for_each_signature!(check);
        assert_eq!(<sig::SetSum as Signature>::NAMES, ["input", "in_per_set", "output"]);
        assert_eq!(G2.set_sum_finish.kernel.params, [Ptr, U32, Ptr]);
    }

    #[test]
    fn names_are_unique() {
        let all = kernels();
        for (i, a) in all.iter().enumerate() {
            assert!(all[i + 1..].iter().all(|b| b.name != a.name), "{} listed twice", a.name);
        }
    }

    /// The committed modules match the table (build.rs checks whichever PTX a build uses).
    #[test]
    fn committed_ptx_matches() {
        for arch in crate::committed::ARCHES {
            let path = crate::committed::path(arch).display().to_string();
            let ptx = crate::committed::read(arch).unwrap_or_else(|e| panic!("{e}"));
            if let Err(problems) = check_ptx(&ptx, &kernels()) {
                panic!("{path}:\n{}", problems.join("\n"));
            }
        }
    }
}
