//! `h2d`, `d2h`: host-device copy bandwidth, the quantity the project's origin story is about (pageable
//! memory staged through a small bounce buffer vs page-locked memory copied by DMA at PCIe line rate).
//!
//! Variants are the host memory kind, `pageable` (an ordinary `Vec`; the baseline) and `pinned`
//! (`Gpu::pin_slice`: write-combined for uploads, cached for downloads); `inputs` records the same. Sizes are
//! log2 **bytes** (30 = 1 GiB, where sppark's figures were taken). Each run is one synchronous copy on the
//! compute stream, bracketed by CUDA events. GPU only: there is no CPU reference for a PCIe copy.
use super::{BenchOp, Case, CaseOptions, Prepared, Target};
use crate::Result;
use rayon::prelude::*;
use zkgpu::{DeviceBuffer, Gpu, PinnedBuffer, PinnedMode};

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    HostToDevice,
    DeviceToHost,
}

pub struct TransferOp(pub Direction);

impl BenchOp for TransferOp {
    fn name(&self) -> &'static str {
        match self.0 {
            Direction::HostToDevice => "h2d",
            Direction::DeviceToHost => "d2h",
        }
    }
    fn about(&self) -> &'static str {
        match self.0 {
            Direction::HostToDevice => "host-to-device copy bandwidth (sizes in log2 bytes)",
            Direction::DeviceToHost => "device-to-host copy bandwidth (sizes in log2 bytes)",
        }
    }
    fn variants(&self, target: Target) -> &'static [&'static str] {
        target.pick(&["pageable", "pinned"], &[])
    }
    fn default_sizes(&self, target: Target) -> &'static [u32] {
        target.pick(&[24, 27, 30], &[])
    }
    fn prepare<'g>(&self, gpu: Option<&'g Gpu>, variant: &str, log_n: u32, opts: &CaseOptions) -> Prepared<'g> {
        let gpu = gpu.ok_or("transfers need a GPU")?;
        if log_n < 3 {
            return Err("transfer sizes are log2 bytes, at least 3".into());
        }
        let words = 1usize << (log_n - 3);
        let data = random_words(words, opts.seed ^ u64::from(log_n));
        let host = match (variant, self.0) {
            ("pageable", Direction::HostToDevice) => Host::Pageable(data.clone()),
            ("pageable", Direction::DeviceToHost) => Host::Pageable(vec![0; words]),
            ("pinned", Direction::HostToDevice) => Host::Pinned(gpu.pin_slice(&data, PinnedMode::WriteCombined)?),
            ("pinned", Direction::DeviceToHost) => Host::Pinned(gpu.alloc_pinned(words, PinnedMode::ReadBack)?),
            _ => return Err(format!("{}: no variant {variant:?}", self.name()).into()),
        };
        let device = match self.0 {
            Direction::HostToDevice => gpu.alloc_zeroed(words)?,
            Direction::DeviceToHost => gpu.upload(&data)?,
        };
        let inputs = if variant == "pinned" { "pinned" } else { "pageable" };
        Ok(Box::new(TransferCase { gpu, direction: self.0, inputs, host, device, expected: data }))
    }
}

/// Distinct pseudo-random words (splitmix64 of the index), filled in parallel.
fn random_words(len: usize, seed: u64) -> Vec<u64> {
    (0..len as u64)
        .into_par_iter()
        .map(|i| {
            let mut z = seed.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15));
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}

enum Host {
    Pageable(Vec<u64>),
    Pinned(PinnedBuffer<u64>),
}

struct TransferCase<'g> {
    gpu: &'g Gpu,
    direction: Direction,
    inputs: &'static str,
    host: Host,
    device: DeviceBuffer<u64>,
    expected: Vec<u64>,
}

impl Case for TransferCase<'_> {
    fn inputs(&self) -> &'static str {
        self.inputs
    }

    fn run(&mut self) -> Result<f64> {
        let (gpu, device, host) = (self.gpu, &mut self.device, &mut self.host);
        let ms = match self.direction {
            Direction::HostToDevice => gpu.time_ms(|_| match host {
                Host::Pageable(v) => gpu.upload_into(v, device),
                Host::Pinned(p) => gpu.upload_into(p, device),
            })?,
            Direction::DeviceToHost => gpu.time_ms(|_| match host {
                Host::Pageable(v) => gpu.download_into(device, v),
                Host::Pinned(p) => gpu.download_into(device, p),
            })?,
        };
        Ok(f64::from(ms))
    }

    fn verify(&mut self, _runs: u32) -> Result<()> {
        let got: Vec<u64> = match self.direction {
            Direction::HostToDevice => self.gpu.download(&self.device)?,
            Direction::DeviceToHost => match &self.host {
                Host::Pageable(v) => v.clone(),
                Host::Pinned(p) => p.to_vec(),
            },
        };
        match got.iter().zip(&self.expected).position(|(a, b)| a != b) {
            None if got.len() == self.expected.len() => Ok(()),
            None => Err(format!("copied {} words, expected {}", got.len(), self.expected.len()).into()),
            Some(i) => Err(format!("word {i} differs after the copy").into()),
        }
    }

    fn bytes_per_run(&self) -> Option<f64> {
        Some(self.expected.len() as f64 * 8.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_words_are_distinct_and_seeded() {
        let a = random_words(1 << 12, 1);
        assert_eq!(a, random_words(1 << 12, 1));
        assert_ne!(a, random_words(1 << 12, 2));
        let mut s = a.clone();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), a.len());
    }

    #[test]
    fn cpu_has_no_transfer_variants() {
        assert!(TransferOp(Direction::HostToDevice).variants(Target::Cpu).is_empty());
        assert!(
            TransferOp(Direction::HostToDevice)
                .prepare(None, "pinned", 20, &CaseOptions { seed: 1, iters: None })
                .is_err()
        );
    }
}
