//! The op registry: every benchmarkable operation, its variants (implementation choices) and default sizes,
//! for the GPU and for the CPU reference. A new op (NTT, MSM, batch addition, transfers) is one more
//! [`BenchOp`] implementation in its own file, added to [`registry`]; the driver, table, JSON and plot need no
//! change. Ratios to sppark come from `zkgpu_bench::peers` by op name.
pub mod batch_add;
pub mod groth16;
pub mod inv;
pub mod msm;
pub mod mul;
pub mod ntt;
pub mod pipeline;
pub mod soak;
pub mod startup;
pub mod transfer;

use crate::Result;
use zkgpu::Gpu;

/// The first `count` GPUs, opened once per process beside the runner's (engines and provers borrow them for
/// the process's life): the multi-GPU variants. `Err` naming both counts where fewer are visible.
pub fn first_gpus(count: usize) -> Result<&'static [Gpu]> {
    static GPUS: std::sync::OnceLock<Vec<Gpu>> = std::sync::OnceLock::new();
    let all = match GPUS.get() {
        Some(g) => g,
        None => {
            let opened = Gpu::all()?;
            GPUS.get_or_init(|| opened)
        }
    };
    all.get(..count).ok_or_else(|| format!("this variant needs {count} GPUs, {} visible", all.len()).into())
}

/// Where a case runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Gpu,
    Cpu,
}

impl Target {
    /// `gpu` or `cpu`, whichever this target is (an op's variants, default sizes, ...).
    pub fn pick<T: ?Sized>(self, gpu: &'static T, cpu: &'static T) -> &'static T {
        match self {
            Target::Gpu => gpu,
            Target::Cpu => cpu,
        }
    }
}

/// One benchmarkable operation, e.g. `mul_fq`.
pub trait BenchOp: Sync {
    /// Op name as in the results schema (`mul_fq`, `ntt_fwd_nn`, `msm_g1`, ...).
    fn name(&self) -> &'static str;
    /// One line for `--list`.
    fn about(&self) -> &'static str;
    /// Variants on `target`; the first is the baseline the table's ratio column divides by.
    fn variants(&self, target: Target) -> &'static [&'static str];
    /// Variants run when `--variants` is not given (default: all).
    fn default_variants(&self, target: Target) -> &'static [&'static str] {
        self.variants(target)
    }
    /// Whether the op runs when no op is named (ops with many configurations keep the default sweep short).
    fn in_default_sweep(&self) -> bool {
        true
    }
    /// log2 sizes swept when `--sizes` is not given.
    fn default_sizes(&self, target: Target) -> &'static [u32];
    /// Kernels a GPU variant launches (for the ptxas table; none for ops that time more than kernels).
    fn kernels(&self, _variant: &str) -> Vec<String> {
        Vec::new()
    }
    /// Allocate and fill inputs for one (variant, size) on `target` (`gpu` is `Some` for [`Target::Gpu`]).
    fn prepare<'g>(&self, gpu: Option<&'g Gpu>, variant: &str, log_n: u32, opts: &CaseOptions) -> Prepared<'g>;
}

/// What [`BenchOp::prepare`] returns: the case, borrowing the GPU it runs on.
pub type Prepared<'g> = Result<Box<dyn Case + 'g>>;

/// Knobs shared by all ops.
#[derive(Clone, Debug)]
pub struct CaseOptions {
    /// RNG seed for the inputs (printed with the results).
    pub seed: u64,
    /// Op-specific repetition count inside one timed run (mul: chain length), `None` for the op's default.
    pub iters: Option<u32>,
}

/// A prepared (op, variant, size): inputs are in place, `run` times one repetition.
pub trait Case {
    /// Where the inputs live: "device", "pinned", "pageable" (GPU) or "host" (CPU).
    fn inputs(&self) -> &'static str;
    /// One timed repetition, in milliseconds (CUDA events on the GPU, wall clock on the CPU).
    fn run(&mut self) -> Result<f64>;
    /// Check the outputs after `runs` repetitions (warm-up included) against an independent reference.
    fn verify(&mut self, runs: u32) -> Result<()>;
    /// Multiplications per run (for G mul/s), if the op counts them.
    fn muls_per_run(&self) -> Option<f64> {
        None
    }
    /// Inversions per run (for G inv/s), if the op counts them.
    fn invs_per_run(&self) -> Option<f64> {
        None
    }
    /// Bytes moved per run (for GB/s), if the op is a transfer.
    fn bytes_per_run(&self) -> Option<f64> {
        None
    }
    /// Extra fields recorded in the JSON row (e.g. the chain length).
    fn extra(&self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }
}

/// Every op the workbench knows, in listing order.
pub fn registry() -> Vec<Box<dyn BenchOp>> {
    let fixed: Vec<Box<dyn BenchOp>> = vec![
        Box::new(mul::MulOp::<mul::FqSpec>::default()),
        Box::new(mul::MulOp::<mul::FrSpec>::default()),
        Box::new(inv::InvOp::<mul::FqSpec>::default()),
        Box::new(inv::InvOp::<mul::FrSpec>::default()),
        Box::new(transfer::TransferOp(transfer::Direction::HostToDevice)),
        Box::new(transfer::TransferOp(transfer::Direction::DeviceToHost)),
    ];
    fixed
        .into_iter()
        .chain(ntt::all_ops().into_iter().map(|op| Box::new(op) as Box<dyn BenchOp>))
        .chain(batch_add::all_ops())
        .chain(msm::all_ops())
        .chain(std::iter::once(Box::new(pipeline::PipelineOp) as Box<dyn BenchOp>))
        .chain(std::iter::once(Box::new(groth16::Groth16Op) as Box<dyn BenchOp>))
        .chain(std::iter::once(Box::new(startup::StartupOp) as Box<dyn BenchOp>))
        .chain(std::iter::once(Box::new(soak::SoakOp) as Box<dyn BenchOp>))
        .collect()
}

/// Ops selected by the command line: exact names or prefixes at a `_` boundary (`mul` selects `mul_fq` and
/// `mul_fr`), `-` read as `_` (`batch-add` is `batch_add`); no selection means all. Unknown selections are an
/// error listing what exists.
pub fn select(all: Vec<Box<dyn BenchOp>>, wanted: &[String]) -> Result<Vec<Box<dyn BenchOp>>> {
    if wanted.is_empty() {
        return Ok(all.into_iter().filter(|op| op.in_default_sweep()).collect());
    }
    let wanted: Vec<String> = wanted.iter().map(|w| w.replace('-', "_")).collect();
    let matches = |op: &str, w: &str| op == w || op.strip_prefix(w).is_some_and(|rest| rest.starts_with('_'));
    for w in &wanted {
        if !all.iter().any(|op| matches(op.name(), w)) {
            let names: Vec<_> = all.iter().map(|op| op.name()).collect();
            return Err(format!("unknown op {w:?}; known: {}", names.join(", ")).into());
        }
    }
    Ok(all.into_iter().filter(|op| wanted.iter().any(|w| matches(op.name(), w))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--kernels` lists what each GPU variant launches: every name must be an entry of the committed PTX, so a
    /// renamed kernel cannot leave a stale name behind.
    #[test]
    fn every_listed_kernel_exists() {
        let ptx = zkgpu_kernels::committed::read("sm_90").expect("the committed PTX");
        let known: Vec<&str> = zkgpu_kernels::interface::ptx_entries(&ptx).into_iter().map(|(name, _)| name).collect();
        for op in registry() {
            for variant in op.variants(Target::Gpu) {
                for name in op.kernels(variant) {
                    assert!(known.contains(&name.as_str()), "{} {variant}: no kernel {name}", op.name());
                }
            }
        }
    }
}
