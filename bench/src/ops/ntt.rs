//! `ntt_{fwd,inv}_{nn,nr,rn,rr}`, `ntt_coset_{fwd,inv}_{..}`: NTTs over Fr through the host API
//! (`zkgpu::Ntt`), one op per configuration (`NttConfig::name`).
//!
//! GPU variants: `gpu` (kernel time of `Ntt::run` on a device-resident buffer, CUDA events; the baseline),
//! `gpu-pinned` and `gpu-pageable` (end to end with `Ntt::run_host` from pinned or pageable host memory:
//! allocation, copy in, transform, copy out; wall clock). CPU variant: `cpu-ref` (`zkgpu::ntt::cpu::ntt`).
//! Outputs are checked on sampled indices against `ntt_cpu::output_at` (direct summation) after one untimed
//! transform of the original input. The default sweep runs the six configurations sppark was measured on,
//! device-resident; `--variants` and op names select the rest.
use super::mul::{FrSpec, random_elements};
use super::{BenchOp, Case, CaseOptions, Prepared, Target};
use crate::Result;
use blstrs::Scalar;
use std::time::Instant;
use zkgpu::ntt::cpu as ntt_cpu;
use zkgpu::ntt::{Direction, Order};
use zkgpu::{DeviceBuffer, Gpu, Ntt, NttConfig, PinnedBuffer, PinnedMode};

/// Configurations in sppark's figures (design.md), run by default.
const DEFAULT_CONFIGS: [&str; 6] = ["fwd_nn", "fwd_nr", "fwd_rn", "fwd_rr", "inv_nn", "coset_fwd_nr"];

pub struct NttOp {
    cfg: NttConfig,
    name: &'static str,
}

/// One op per configuration, the default ones first.
pub fn all_ops() -> Vec<NttOp> {
    let mut configs = NttConfig::all();
    configs.sort_by_key(|c| DEFAULT_CONFIGS.iter().position(|d| *d == c.name()).unwrap_or(usize::MAX));
    configs
        .into_iter()
        .map(|cfg| NttOp { cfg, name: Box::leak(format!("ntt_{}", cfg.name()).into_boxed_str()) })
        .collect()
}

impl BenchOp for NttOp {
    fn name(&self) -> &'static str {
        self.name
    }
    fn about(&self) -> &'static str {
        "NTT over Fr (zkgpu::Ntt), in place; sizes log2 elements"
    }
    fn variants(&self, target: Target) -> &'static [&'static str] {
        target.pick(&["gpu", "gpu-pinned", "gpu-pageable"], &["cpu-ref"])
    }
    fn default_variants(&self, target: Target) -> &'static [&'static str] {
        target.pick(&["gpu"], &["cpu-ref"])
    }
    fn in_default_sweep(&self) -> bool {
        DEFAULT_CONFIGS.contains(&&self.name["ntt_".len()..])
    }
    fn default_sizes(&self, target: Target) -> &'static [u32] {
        target.pick(&[16, 20, 22, 24, 26, 27, 28], zkgpu_bench::bench_args::cpu_default_sizes(self.name()))
    }
    fn kernels(&self, _variant: &str) -> Vec<String> {
        let passes = if self.cfg.direction == Direction::Inverse {
            ["ntt_pass_dif_inv", "ntt_pass_dit_inv"]
        } else {
            ["ntt_pass_dif", "ntt_pass_dit"]
        };
        passes.into_iter().chain(["ntt_bit_reverse", "ntt_fill_table"]).map(String::from).collect()
    }
    fn prepare<'g>(&self, gpu: Option<&'g Gpu>, variant: &str, log_n: u32, opts: &CaseOptions) -> Prepared<'g> {
        let n = 1usize << log_n;
        let input = random_scalars(n, opts.seed ^ 0x004e_5454, u64::from(log_n));
        let samples = sample_points(n, opts.seed);
        let (place, inputs) = match (gpu, variant) {
            (Some(gpu), "gpu") => (Place::Device(gpu.upload(&input)?), "device"),
            (Some(gpu), "gpu-pinned") => (Place::Pinned(gpu.pin_slice(&input, PinnedMode::ReadBack)?), "pinned"),
            (Some(_), "gpu-pageable") => (Place::Pageable(input.clone()), "pageable"),
            (None, "cpu-ref") => (Place::Cpu(input.clone()), "host"),
            _ => return Err(format!("{}: no variant {variant:?} here", self.name).into()),
        };
        let ntt = match gpu {
            Some(gpu) => {
                let ntt = Ntt::new(gpu)?;
                ntt.prepare(n, self.cfg)?;
                Some(ntt)
            }
            None => None,
        };
        Ok(Box::new(NttCase { ntt, cfg: self.cfg, n, input, place, inputs, samples }))
    }
}

/// n random Fr elements (Montgomery limbs from the seeded generator, reinterpreted through blst's type).
pub fn random_scalars(n: usize, seed: u64, stream: u64) -> Vec<Scalar> {
    use super::mul::ChainElem;
    use rayon::prelude::*;
    random_elements::<FrSpec>(n, seed, stream).par_iter().map(<Scalar as ChainElem<FrSpec>>::from_limbs).collect()
}

/// Output indices to check: first, last, and a seeded one (direct summation is O(n) per index).
fn sample_points(n: usize, seed: u64) -> Vec<usize> {
    let mut s = vec![0, n - 1, (seed as usize).wrapping_mul(2_654_435_761) % n];
    s.sort_unstable();
    s.dedup();
    s
}

enum Place {
    Device(DeviceBuffer<Scalar>),
    Pinned(PinnedBuffer<Scalar>),
    Pageable(Vec<Scalar>),
    Cpu(Vec<Scalar>),
}

struct NttCase {
    ntt: Option<Ntt>,
    cfg: NttConfig,
    n: usize,
    input: Vec<Scalar>,
    place: Place,
    inputs: &'static str,
    samples: Vec<usize>,
}

impl NttCase {
    fn gpu_ntt(&self) -> Result<&Ntt> {
        self.ntt.as_ref().ok_or_else(|| "no GPU for a GPU variant".into())
    }
}

impl Case for NttCase {
    fn inputs(&self) -> &'static str {
        self.inputs
    }

    fn run(&mut self) -> Result<f64> {
        let (n, cfg) = (self.n, self.cfg);
        // Repeated runs transform the data again; the timing does not depend on the values.
        match &mut self.place {
            Place::Device(buf) => {
                let ntt = self.ntt.as_ref().ok_or("no GPU")?;
                Ok(f64::from(ntt.gpu().time_ms(|_| ntt.run(buf, n, cfg))?))
            }
            Place::Pinned(host) => {
                let ntt = self.ntt.as_ref().ok_or("no GPU")?;
                let start = Instant::now();
                ntt.run_host(host, n, cfg)?;
                Ok(start.elapsed().as_secs_f64() * 1e3)
            }
            Place::Pageable(host) => {
                let ntt = self.ntt.as_ref().ok_or("no GPU")?;
                let start = Instant::now();
                ntt.run_host(host, n, cfg)?;
                Ok(start.elapsed().as_secs_f64() * 1e3)
            }
            Place::Cpu(data) => {
                let start = Instant::now();
                ntt_cpu::ntt(data, cfg)?;
                Ok(start.elapsed().as_secs_f64() * 1e3)
            }
        }
    }

    /// One untimed transform of the original input, checked at the sample indices.
    fn verify(&mut self, _runs: u32) -> Result<()> {
        let mut out = self.input.clone();
        match &self.place {
            Place::Cpu(_) => ntt_cpu::ntt(&mut out, self.cfg)?,
            Place::Device(_) => {
                let ntt = self.gpu_ntt()?;
                let mut buf = ntt.gpu().upload(&self.input)?;
                ntt.run(&mut buf, self.n, self.cfg)?;
                out = ntt.gpu().download(&buf)?;
            }
            Place::Pinned(_) | Place::Pageable(_) => self.gpu_ntt()?.run_host(&mut out, self.n, self.cfg)?,
        }
        let log_n = self.n.trailing_zeros();
        for &k in &self.samples {
            // Logical output k sits at position k, or bit_reverse(k) in a bit-reversed output.
            let position = match self.cfg.output {
                Order::Natural => k,
                Order::BitReversed => ntt_cpu::bit_reverse_index(k, log_n),
            };
            let expected = ntt_cpu::output_at(&self.input, self.cfg, k)?;
            if out[position] != expected {
                return Err(format!(
                    "ntt_{} 2^{}: output {k} differs from the CPU reference",
                    self.cfg.name(),
                    self.n.trailing_zeros()
                )
                .into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_ops_with_design_names_defaults_first() {
        let ops = all_ops();
        assert_eq!(ops.len(), 16);
        let names: Vec<&str> = ops.iter().map(|o| o.name()).collect();
        assert_eq!(
            &names[..6],
            &["ntt_fwd_nn", "ntt_fwd_nr", "ntt_fwd_rn", "ntt_fwd_rr", "ntt_inv_nn", "ntt_coset_fwd_nr"]
        );
        assert!(names.contains(&"ntt_coset_inv_rr"));
        assert_eq!(ops.iter().filter(|o| o.in_default_sweep()).count(), 6);
    }

    #[test]
    fn cpu_case_verifies() {
        let opts = CaseOptions { seed: 5, iters: None };
        for op in &all_ops() {
            let mut case = op.prepare(None, "cpu-ref", 6, &opts).unwrap();
            case.run().unwrap();
            case.verify(1).unwrap();
        }
    }
}
