//! Number-theoretic transforms over BLS12-381 Fr (`blstrs::Scalar`) on the GPU.
//!
//! [`Ntt`] holds a [`Gpu`], the NTT kernels and the cached tables (one twiddle table for both directions, built
//! once for the largest size used and shared by all smaller sizes; coset and scaling tables per size).
//! Transforms run in place on a [`DeviceBuffer`] ([`Ntt::run`]) or on a host slice ([`Ntt::run_host`]: pinned
//! or pageable; a [`crate::PinnedBuffer`] derefs to a slice and then copies at PCIe line rate).
//!
//! Every direction (forward, inverse), coset or not, and every ordering (natural or bit-reversed input and
//! output) is one [`NttConfig`]; a buffer holding several transforms of one size back to back is a batch.
//! Definitions are those of the CPU reference, [`crate::ntt::cpu`]. How the kernels work: `zkgpu_kernels::ntt`.
//!
//! Cost: every ordering is one DIF or DIT sweep of ceil(L/10) passes. NR (natural in, bit-reversed out) is a
//! DIF and RN a DIT, in place. NN and RR are a DIF with the bit-reversal permutation folded into its last
//! store or first load; with more than one pass that runs out of place through a scratch buffer of the
//! batch's size, which `Ntt` keeps for later calls ([`Ntt::release_scratch`] frees it). When the scratch
//! cannot be allocated, or would not fit the budget of an [`Ntt::with_budget`], they fall back to an in-place
//! permutation pass. Scaling (n^-1, coset powers) is folded into the first or last pass.
//! [`Ntt::groth16_h`] chains the Groth16 quotient computation in six sweeps (C's coset round trip cancels)
//! with no permutation except the final one and with the inverse's n^-1 folded into the coset powers; its
//! building blocks, [`Ntt::groth16_h_prepare`] (A and B), [`Ntt::groth16_h_prepare_c`] (C) and
//! [`Ntt::groth16_h_combine`] (the rest), let a caller start each vector as soon as it is uploaded and time
//! each part on its own.
//!
//! Errors are typed and leave the caller's buffers unchanged: a size that is not a power of two
//! ([`Error::NttSize`]), above 2^[`MAX_LOG_N`] ([`Error::NttTooLarge`]), a buffer that is not a whole number of
//! transforms ([`Error::NttBatchShape`]), not enough device memory ([`Error::OutOfMemory`]).
/// The CPU reference (tests compare the GPU against it).
pub mod cpu;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use blstrs::Scalar;
use cudarc::driver::{DevicePtr, LaunchConfig};
use ff::Field;
use zkgpu_kernels::interface::{self, sig};
use zkgpu_kernels::ntt::plan;
pub use zkgpu_kernels::ntt::{PassParams, Scale, ScaleMode};

use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::kernel_args::{self as args, KernelFn, Ptr, read, write};
use crate::memory::DeviceBuffer;
use crate::ntt::cpu::{coset_generator, powers, root_of_unity};

/// Largest supported transform: 2^MAX_LOG_N elements (device memory usually ends first).
pub const MAX_LOG_N: u32 = zkgpu_kernels::ntt::MAX_LOG_N;

/// Which way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Coefficients to evaluations.
    Forward,
    /// Evaluations to coefficients (scaled by n^-1).
    Inverse,
}

/// Element order of an input or output array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Logical element i at position i.
    Natural,
    /// Logical element i at position bit_reverse(i).
    BitReversed,
}

/// One kind of transform: direction, coset or not, input and output order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NttConfig {
    pub direction: Direction,
    /// Evaluate on the coset g*H (forward: input coefficient i times g^i; inverse: output i times g^-i).
    pub coset: bool,
    pub input: Order,
    pub output: Order,
}

impl NttConfig {
    /// Forward, natural in and out.
    pub const fn forward() -> Self {
        NttConfig { direction: Direction::Forward, coset: false, input: Order::Natural, output: Order::Natural }
    }

    /// Inverse, natural in and out.
    pub const fn inverse() -> Self {
        NttConfig { direction: Direction::Inverse, coset: false, input: Order::Natural, output: Order::Natural }
    }

    /// The same transform on the coset g*H.
    pub const fn coset(self) -> Self {
        NttConfig { coset: true, ..self }
    }

    /// The same transform with these input and output orders.
    pub const fn orders(self, input: Order, output: Order) -> Self {
        NttConfig { input, output, ..self }
    }

    /// All 16 configurations (2 directions x coset or not x 4 orderings).
    pub fn all() -> Vec<NttConfig> {
        let mut out = Vec::new();
        for coset in [false, true] {
            for direction in [Direction::Forward, Direction::Inverse] {
                for input in [Order::Natural, Order::BitReversed] {
                    for output in [Order::Natural, Order::BitReversed] {
                        out.push(NttConfig { direction, coset, input, output });
                    }
                }
            }
        }
        out
    }

    /// Name as in the benchmark op names after `ntt_`: `fwd_nr`, `coset_inv_rr`, ...
    pub fn name(&self) -> String {
        let dir = match self.direction {
            Direction::Forward => "fwd",
            Direction::Inverse => "inv",
        };
        let o = |o: Order| if o == Order::Natural { 'n' } else { 'r' };
        format!("{}{dir}_{}{}", if self.coset { "coset_" } else { "" }, o(self.input), o(self.output))
    }

    /// Parses [`NttConfig::name`].
    pub fn from_name(name: &str) -> Option<NttConfig> {
        NttConfig::all().into_iter().find(|c| c.name() == name)
    }
}

/// log2 of `n`, or `Err(NttSize)` when `n` is not a power of two; `Err(NttTooLarge)` above 2^MAX_LOG_N.
pub fn checked_log_n(n: usize) -> Result<u32> {
    if !n.is_power_of_two() {
        return Err(Error::NttSize { n });
    }
    let log_n = n.trailing_zeros();
    if log_n > MAX_LOG_N {
        return Err(Error::NttTooLarge { log_n, max_log_n: MAX_LOG_N });
    }
    Ok(log_n)
}

/// (log2 n, batch count) for a buffer of `len` elements holding transforms of size `n`.
pub fn check_shape(len: usize, n: usize) -> Result<(u32, usize)> {
    let log_n = checked_log_n(n)?;
    if len == 0 || !len.is_multiple_of(n) {
        return Err(Error::NttBatchShape { len, n });
    }
    Ok((log_n, len / n))
}

/// log2 n for the Groth16 quotient's three vectors of one length `n = a_len`: `Err(NttBatchShape)` (with the
/// first other length that differs) when `b_len` or `c_len` is not `n`, then as [`checked_log_n`].
fn groth16_h_shape(a_len: usize, b_len: usize, c_len: usize) -> Result<u32> {
    let n = a_len;
    if b_len != n || c_len != n {
        return Err(Error::NttBatchShape { len: if b_len != n { b_len } else { c_len }, n });
    }
    checked_log_n(n)
}

/// What a transform multiplies by, folded into one pass.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleKind {
    /// Input coefficient i times g^i.
    CosetForward,
    /// Output i times n^-1 g^-i.
    CosetInverse,
    /// Every element times n^-1.
    InverseN,
    /// Coefficient i times n^-1 g^i: an unscaled inverse followed by a coset forward (Groth16).
    InverseThenCoset,
}

/// Scale tables on the device: `factor(i) = lo[i mod 2^lo_bits] · hi[i >> lo_bits]` (or `lo[0]` when constant).
#[derive(Debug)]
struct ScaleTables {
    lo: DeviceBuffer<Scalar>,
    hi: DeviceBuffer<Scalar>,
    lo_bits: u32,
    mode: ScaleMode,
}

/// The two sweeps the kernels do.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sweep {
    /// Natural in, bit-reversed out.
    Dif,
    /// Bit-reversed in, natural out.
    Dit,
}

#[derive(Debug, Default)]
struct Tables {
    /// (log2 N, table of w_N^e for e <= N/2): both directions' twiddles, the inverse's read mirrored.
    twiddles: Option<(u32, DeviceBuffer<Scalar>)>,
    scales: HashMap<(u32, ScaleKind), ScaleTables>,
    /// Per log n: (g^n - 1)^-1, the inverse of the vanishing polynomial on the coset.
    z_inv: HashMap<u32, DeviceBuffer<Scalar>>,
}

impl Tables {
    /// Device memory the tables hold.
    fn device_bytes(&self) -> usize {
        let twiddles = self.twiddles.as_ref().map_or(0, |(_, t)| t.byte_len());
        let scales: usize = self.scales.values().map(|t| t.lo.byte_len() + t.hi.byte_len()).sum();
        let z_inv: usize = self.z_inv.values().map(DeviceBuffer::byte_len).sum();
        twiddles + scales + z_inv
    }
}

/// NTTs on one GPU, with their tables cached.
#[derive(Debug)]
pub struct Ntt {
    gpu: Gpu,
    pass_dif: KernelFn<sig::NttPass>,
    pass_dit: KernelFn<sig::NttPass>,
    pass_dif_inv: KernelFn<sig::NttPass>,
    pass_dit_inv: KernelFn<sig::NttPass>,
    bit_reverse: KernelFn<sig::NttBitReverse>,
    bit_reverse_tiled: KernelFn<sig::NttBitReverseTiled>,
    fill_table: KernelFn<sig::NttFillTable>,
    h_pointwise: KernelFn<sig::NttHPointwise>,
    h_subtract: KernelFn<sig::NttHSubtract>,
    tables: Mutex<Tables>,
    /// The out-of-place buffer of NN and RR transforms (at least the largest batch seen so far; locked after
    /// `tables` when both are held).
    scratch: Mutex<Option<DeviceBuffer<Scalar>>>,
    /// Most device memory its tables and scratch may hold, the tables' upload staging included
    /// ([`Ntt::with_budget`]).
    budget: Option<usize>,
}

/// Threads per block of the element-wise kernels.
const ELEMENTWISE_BLOCK: u32 = 256;

impl Ntt {
    /// Loads the NTT kernels on `gpu`. Tables are built on first use.
    pub fn new(gpu: &Gpu) -> Result<Ntt> {
        Ok(Ntt {
            gpu: gpu.clone(),
            pass_dif: gpu.kernel(&interface::NTT_PASS_DIF)?,
            pass_dit: gpu.kernel(&interface::NTT_PASS_DIT)?,
            pass_dif_inv: gpu.kernel(&interface::NTT_PASS_DIF_INV)?,
            pass_dit_inv: gpu.kernel(&interface::NTT_PASS_DIT_INV)?,
            bit_reverse: gpu.kernel(&interface::NTT_BIT_REVERSE)?,
            bit_reverse_tiled: gpu.kernel(&interface::NTT_BIT_REVERSE_TILED)?,
            fill_table: gpu.kernel(&interface::NTT_FILL_TABLE)?,
            h_pointwise: gpu.kernel(&interface::NTT_H_POINTWISE)?,
            h_subtract: gpu.kernel(&interface::NTT_H_SUBTRACT)?,
            tables: Mutex::new(Tables::default()),
            scratch: Mutex::new(None),
            budget: None,
        })
    }

    /// [`Ntt::new`] whose tables and scratch never hold more than `max_device_bytes` of device memory at once
    /// (the caller's data is the caller's). A table that would exceed it is `Err(DeviceBudget)`, stating what
    /// the tables need, with nothing changed; the NN/RR scratch buffer gives way to the tables (it is freed to
    /// make room) and where it would exceed the budget the transform permutes in place instead (one more pass,
    /// same result).
    pub fn with_budget(gpu: &Gpu, max_device_bytes: usize) -> Result<Ntt> {
        Ok(Ntt { budget: Some(max_device_bytes), ..Ntt::new(gpu)? })
    }

    /// The budget it was made with ([`Ntt::with_budget`]).
    pub fn budget(&self) -> Option<usize> {
        self.budget
    }

    /// The GPU it runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Builds the tables (and for NN and RR the scratch buffer) a transform of size `n` with `cfg` needs, so
    /// that later calls only launch kernels (benchmarks call this before timing).
    pub fn prepare(&self, n: usize, cfg: NttConfig) -> Result<()> {
        let log_n = checked_log_n(n)?;
        if log_n == 0 {
            return Ok(());
        }
        let mut tables = self.lock();
        self.tables_for(&mut tables, log_n, cfg)?;
        if schedule(log_n, 1, cfg, log_n, true).iter().any(Step::uses_scratch) {
            self.grow_scratch(&mut self.lock_scratch(), n, tables.device_bytes())?;
        }
        Ok(())
    }

    /// Transforms `data` in place: `data.len() / n` transforms of size `n` back to back. Queued on the
    /// compute stream; returns without waiting (a download or [`Gpu::synchronize`] waits). NN and RR
    /// transforms of more than 2^10 elements go through the scratch buffer, allocated here when it is smaller
    /// than `data` (see the module docs).
    pub fn run(&self, data: &mut DeviceBuffer<Scalar>, n: usize, cfg: NttConfig) -> Result<()> {
        self.run_within(data, n, cfg, 0)
    }

    /// [`Ntt::run`], the budget also covering `outside` bytes the call holds elsewhere on the device.
    fn run_within(&self, data: &mut DeviceBuffer<Scalar>, n: usize, cfg: NttConfig, outside: usize) -> Result<()> {
        self.gpu.owns("Ntt::run data", data)?;
        let (log_n, batch) = check_shape(data.len(), n)?;
        let span = tracing::debug_span!("zkgpu.ntt", log_n, batch, cfg = %cfg.name());
        let _entered = span.enter();
        if log_n == 0 {
            // A size-1 transform is the identity in every configuration (n^-1 = g^0 = 1).
            return Ok(());
        }
        let mut tables = self.lock();
        // Every table first, so an allocation failure leaves `data` untouched.
        self.tables_for(&mut tables, log_n, cfg)?;
        let log_table = tables.twiddles.as_ref().map_or(log_n, |t| t.0);
        let mut scratch = self.lock_scratch();
        let folded = schedule(log_n, batch, cfg, log_table, true);
        let uses_scratch = folded.iter().any(Step::uses_scratch);
        let held = tables.device_bytes() + outside;
        let have_scratch = uses_scratch && self.grow_scratch(&mut scratch, data.len(), held)?;
        let steps = if uses_scratch && !have_scratch { schedule(log_n, batch, cfg, log_table, false) } else { folded };
        for step in &steps {
            self.launch_step(&tables, data, scratch.as_mut(), log_n, step)?;
        }
        Ok(())
    }

    /// Elements in the cached scratch buffer of NN and RR transforms (0 when there is none).
    pub fn scratch_len(&self) -> usize {
        self.lock_scratch().as_ref().map_or(0, |s| s.len())
    }

    /// Device memory the cached tables and the scratch buffer hold now.
    pub fn device_bytes(&self) -> usize {
        let tables = self.lock().device_bytes();
        tables + self.lock_scratch().as_ref().map_or(0, DeviceBuffer::byte_len)
    }

    /// `Err(DeviceBudget)` unless `more` bytes fit the budget beside `tables` and the scratch buffer. The
    /// scratch is only a cache (a transform without it permutes in place), so it is freed where that makes room.
    fn within_budget(&self, tables: &Tables, more: usize, what: &str) -> Result<()> {
        let Some(budget) = self.budget else {
            return Ok(());
        };
        let needed = tables.device_bytes().saturating_add(more);
        if needed > budget {
            return Err(Error::DeviceBudget { budget, needed, what: what.to_string() });
        }
        let mut scratch = self.lock_scratch();
        if needed.saturating_add(scratch.as_ref().map_or(0, DeviceBuffer::byte_len)) > budget {
            tracing::debug!(what, "freeing the NTT scratch to stay within the budget");
            *scratch = None;
        }
        Ok(())
    }

    /// Frees the scratch buffer of NN and RR transforms (the next such call allocates it again). Waits for
    /// the work queued on the compute stream only as the driver's free does.
    pub fn release_scratch(&self) {
        *self.lock_scratch() = None;
    }

    /// Makes the scratch buffer at least `len` elements long. `Ok(false)` when the device, or the budget beside
    /// `table_bytes` of tables, has no room for it (the caller then permutes in place instead); other errors
    /// are returned.
    fn grow_scratch(&self, scratch: &mut Option<DeviceBuffer<Scalar>>, len: usize, table_bytes: usize) -> Result<bool> {
        if scratch.as_ref().is_some_and(|s| s.len() >= len) {
            return Ok(true);
        }
        // Free the smaller one first, so the two need not fit together.
        *scratch = None;
        let bytes = len.saturating_mul(size_of::<Scalar>());
        if self.budget.is_some_and(|budget| table_bytes.saturating_add(bytes) > budget) {
            tracing::debug!(bytes, "NTT scratch does not fit the budget: permuting in place");
            return Ok(false);
        }
        match self.gpu.alloc_zeroed::<Scalar>(len) {
            Ok(buf) => {
                *scratch = Some(buf);
                Ok(true)
            }
            Err(Error::OutOfMemory { requested, .. }) => {
                tracing::debug!(requested, "NTT scratch does not fit: permuting in place");
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    /// Transforms a host slice (pinned or pageable): upload, [`Ntt::run`], download into `data`. On error
    /// `data` is unchanged.
    pub fn run_host(&self, data: &mut [Scalar], n: usize, cfg: NttConfig) -> Result<()> {
        let (log_n, _) = check_shape(data.len(), n)?;
        // Within a budget the device copy counts too: the tables first, then the copy beside them.
        let bytes = size_of_val(data);
        if log_n > 0 {
            let mut tables = self.lock();
            self.tables_for(&mut tables, log_n, cfg)?;
            self.within_budget(&tables, bytes, "an NTT of host data")?;
        }
        let mut buf = self.gpu.upload(data)?;
        self.run_within(&mut buf, n, cfg, bytes)?;
        self.gpu.download_into(&buf, data)
    }

    /// Groth16's quotient: given the evaluations `a`, `b`, `c` of A, B, C on the domain H (natural order, one
    /// transform each of size n = len), leaves in `a` the coefficients (natural order) of `h = (A B - C) / Z`
    /// with `Z = X^n - 1`, computed on the coset g*H. `b` is overwritten with its coset evaluations (natural
    /// order), `c` with its coefficients (bit-reversed order).
    ///
    /// Six sweeps, not seven: `Z` is the constant `g^n - 1` on the coset, so `h = coset_interp(A B) / Z -
    /// C / Z` as coefficients, and C's coset round trip (inverse NTT, coset NTT, coset inverse NTT) cancels to
    /// its inverse NTT. Passes: 2 x (inverse DIF + coset DIT, n^-1 folded into the coset powers) for a and b,
    /// one inverse DIF (n^-1 folded in) for c, the pointwise kernel, one coset inverse DIF, the subtraction
    /// of c / Z and one permutation.
    ///
    /// It is [`Ntt::groth16_h_prepare`] on `a` and `b`, [`Ntt::groth16_h_prepare_c`] on `c`, then
    /// [`Ntt::groth16_h_combine`], with every table built and every shape checked first (so on an error no
    /// buffer has changed). Call the building blocks directly to start each vector's transforms as soon as it
    /// is on the device, or to time them separately (the partition pipeline does both).
    pub fn groth16_h(
        &self,
        a: &mut DeviceBuffer<Scalar>,
        b: &mut DeviceBuffer<Scalar>,
        c: &mut DeviceBuffer<Scalar>,
    ) -> Result<()> {
        self.owns_abc(a, b, c)?;
        let log_n = groth16_h_shape(a.len(), b.len(), c.len())?;
        let mut tables = self.lock();
        self.groth16_h_tables(&mut tables, log_n)?;
        for v in [&mut *a, &mut *b] {
            self.queue_groth16_h_prepare(&tables, v, log_n)?;
        }
        self.queue_inverse_dif(&tables, c, log_n, ScaleKind::InverseN)?;
        self.queue_groth16_h_multiply(&tables, a, b, log_n)?;
        self.queue_groth16_h_finish(&tables, a, c, log_n)
    }

    /// The per-vector part of [`Ntt::groth16_h`] for A and B: takes the evaluations of one of them on the
    /// domain H (natural order; `v.len()` = n, a power of two) to its evaluations on the coset g*H (natural
    /// order), as an unscaled inverse DIF (NR) then a coset DIT (RN) whose load multiplies by `n^-1 g^i`: two
    /// sweeps, no permutation. Queued on the compute stream; returns without waiting. On an error (`NttSize`,
    /// `NttTooLarge`, `OutOfMemory` for the tables) nothing is queued and `v` is unchanged.
    pub fn groth16_h_prepare(&self, v: &mut DeviceBuffer<Scalar>) -> Result<()> {
        let log_n = checked_log_n(v.len())?;
        let mut tables = self.lock();
        self.groth16_h_tables(&mut tables, log_n)?;
        self.queue_groth16_h_prepare(&tables, v, log_n)
    }

    /// The per-vector part of [`Ntt::groth16_h`] for C: its coefficients from its evaluations on H, in
    /// bit-reversed order (the inverse NTT, natural in and bit-reversed out: one sweep). Queued on the compute
    /// stream; errors as for [`Ntt::groth16_h_prepare`].
    pub fn groth16_h_prepare_c(&self, c: &mut DeviceBuffer<Scalar>) -> Result<()> {
        let log_n = checked_log_n(c.len())?;
        let mut tables = self.lock();
        self.groth16_h_tables(&mut tables, log_n)?;
        self.queue_inverse_dif(&tables, c, log_n, ScaleKind::InverseN)
    }

    /// The final part of [`Ntt::groth16_h`]: given the coset evaluations of A and B (what
    /// [`Ntt::groth16_h_prepare`] leaves) and the coefficients of C (what [`Ntt::groth16_h_prepare_c`]
    /// leaves), leaves in `a` the coefficients (natural order) of `h = (A B - C) / Z`: the pointwise kernel,
    /// one coset inverse DIF, the subtraction and one permutation. `b` and `c` are only read. Queued on the
    /// compute stream; returns without waiting. Errors as for [`Ntt::groth16_h`] (`NttBatchShape` for `b` or
    /// `c` not as long as `a`), with nothing queued and `a` unchanged. It is [`Ntt::groth16_h_multiply`] then
    /// [`Ntt::groth16_h_finish`].
    pub fn groth16_h_combine(
        &self,
        a: &mut DeviceBuffer<Scalar>,
        b: &DeviceBuffer<Scalar>,
        c: &DeviceBuffer<Scalar>,
    ) -> Result<()> {
        self.owns_abc(a, b, c)?;
        let log_n = groth16_h_shape(a.len(), b.len(), c.len())?;
        let mut tables = self.lock();
        self.groth16_h_tables(&mut tables, log_n)?;
        self.queue_groth16_h_multiply(&tables, a, b, log_n)?;
        self.queue_groth16_h_finish(&tables, a, c, log_n)
    }

    /// The first half of [`Ntt::groth16_h_combine`]: `a[i] = a[i] b[i] / Z` on the coset (A and B as
    /// [`Ntt::groth16_h_prepare`] leaves them). `b` is only read, so its buffer may take C next: A, B and C
    /// need never be on the device at once (the partition engine's two-vector slots). Queued on the compute
    /// stream; errors as for [`Ntt::groth16_h_combine`], with nothing queued and `a` unchanged.
    pub fn groth16_h_multiply(&self, a: &mut DeviceBuffer<Scalar>, b: &DeviceBuffer<Scalar>) -> Result<()> {
        self.groth16_h_pair(a, b, "Groth16 H b", Self::queue_groth16_h_multiply)
    }

    /// The second half of [`Ntt::groth16_h_combine`]: from `a` as [`Ntt::groth16_h_multiply`] leaves it and
    /// C's coefficients (what [`Ntt::groth16_h_prepare_c`] leaves), the coefficients of `h` in `a`: one coset
    /// inverse DIF, the subtraction of C / Z and one permutation. `c` is only read. Queued on the compute
    /// stream; errors as for [`Ntt::groth16_h_combine`], with nothing queued and `a` unchanged.
    pub fn groth16_h_finish(&self, a: &mut DeviceBuffer<Scalar>, c: &DeviceBuffer<Scalar>) -> Result<()> {
        self.groth16_h_pair(a, c, "Groth16 H c", Self::queue_groth16_h_finish)
    }

    /// The part of [`Ntt::groth16_h_finish`] that reads no C: `a` as [`Ntt::groth16_h_multiply`] leaves it to
    /// coefficients (bit-reversed order), one coset inverse DIF with `n^-1 g^-i` folded into its store. Where C
    /// uploads into B's buffer after the product, this runs during that upload. Queued on the compute stream;
    /// errors as for [`Ntt::groth16_h_prepare`].
    pub fn groth16_h_interpolate(&self, a: &mut DeviceBuffer<Scalar>) -> Result<()> {
        let log_n = checked_log_n(a.len())?;
        let mut tables = self.lock();
        self.groth16_h_tables(&mut tables, log_n)?;
        self.queue_inverse_dif(&tables, a, log_n, ScaleKind::CosetInverse)
    }

    /// The rest of [`Ntt::groth16_h_finish`] after [`Ntt::groth16_h_interpolate`]: the subtraction of C / Z
    /// (`c` as [`Ntt::groth16_h_prepare_c`] leaves it, only read) and the permutation to natural order. Queued
    /// on the compute stream; errors as for [`Ntt::groth16_h_finish`].
    pub fn groth16_h_subtract(&self, a: &mut DeviceBuffer<Scalar>, c: &DeviceBuffer<Scalar>) -> Result<()> {
        self.groth16_h_pair(a, c, "Groth16 H c", Self::queue_groth16_h_subtract)
    }

    /// A Groth16 step on `a` and one other vector (`what`): both on this GPU and of one power-of-two length,
    /// the tables built, then `queue`; on an error nothing is queued.
    fn groth16_h_pair(
        &self,
        a: &mut DeviceBuffer<Scalar>,
        other: &DeviceBuffer<Scalar>,
        what: &'static str,
        queue: impl FnOnce(&Self, &Tables, &mut DeviceBuffer<Scalar>, &DeviceBuffer<Scalar>, u32) -> Result<()>,
    ) -> Result<()> {
        self.gpu.owns("Groth16 H a", a)?;
        self.gpu.owns(what, other)?;
        let log_n = groth16_h_shape(a.len(), other.len(), other.len())?;
        let mut tables = self.lock();
        self.groth16_h_tables(&mut tables, log_n)?;
        queue(self, &tables, a, other, log_n)
    }

    /// `Err(WrongDevice)` unless Groth16's a, b and c live on this NTT's GPU.
    fn owns_abc(&self, a: &DeviceBuffer<Scalar>, b: &DeviceBuffer<Scalar>, c: &DeviceBuffer<Scalar>) -> Result<()> {
        self.gpu.owns("Groth16 H a", a)?;
        self.gpu.owns("Groth16 H b", b)?;
        self.gpu.owns("Groth16 H c", c)
    }

    /// Builds what the Groth16 building blocks read at size 2^log_n: the twiddle table, the n^-1 g^i,
    /// n^-1 and n^-1 g^-i scale tables, and 1 / Z on the coset.
    fn groth16_h_tables(&self, tables: &mut Tables, log_n: u32) -> Result<()> {
        if log_n > 0 {
            self.twiddles(tables, log_n)?;
            for kind in [ScaleKind::InverseThenCoset, ScaleKind::InverseN, ScaleKind::CosetInverse] {
                self.scale_tables(tables, log_n, kind)?;
            }
        }
        if !tables.z_inv.contains_key(&log_n) {
            self.within_budget(tables, size_of::<Scalar>(), "the NTT's 1 / Z")?;
        }
        if let std::collections::hash_map::Entry::Vacant(slot) = tables.z_inv.entry(log_n) {
            // g is not in the subgroup of order n, so g^n != 1 and Z is invertible on the coset.
            let z = coset_generator().pow_vartime([1u64 << log_n]) - Scalar::ONE;
            slot.insert(self.gpu.upload(&[z.invert().unwrap_or(Scalar::ZERO)])?);
        }
        Ok(())
    }

    /// Queues [`Ntt::groth16_h_prepare`]'s passes (tables built, `v.len()` = 2^log_n checked): an unscaled
    /// inverse DIF, then a forward DIT whose load multiplies by n^-1 g^i.
    fn queue_groth16_h_prepare(&self, tables: &Tables, v: &mut DeviceBuffer<Scalar>, log_n: u32) -> Result<()> {
        self.queue_sweep(tables, v, log_n, Sweep::Dif, Direction::Inverse, None)?;
        self.queue_sweep(tables, v, log_n, Sweep::Dit, Direction::Forward, Some(ScaleKind::InverseThenCoset))
    }

    /// Queues one inverse DIF sweep over `v` (natural in, bit-reversed out) with the scaling `kind` folded
    /// into its store (tables built, `v.len()` = 2^log_n checked). C's sweep ([`Ntt::groth16_h_prepare_c`])
    /// scales by 1/n, A's interpolation ([`Ntt::groth16_h_interpolate`]) also undoes the coset.
    fn queue_inverse_dif(
        &self,
        tables: &Tables,
        v: &mut DeviceBuffer<Scalar>,
        log_n: u32,
        kind: ScaleKind,
    ) -> Result<()> {
        self.queue_sweep(tables, v, log_n, Sweep::Dif, Direction::Inverse, Some(kind))
    }

    /// Queues one in-place sweep over `v` (tables built, `v.len()` = 2^log_n checked); nothing at size 1,
    /// where every transform and scaling of the chain is the identity (n^-1 = g^0 = 1).
    fn queue_sweep(
        &self,
        tables: &Tables,
        v: &mut DeviceBuffer<Scalar>,
        log_n: u32,
        dif_or_dit: Sweep,
        direction: Direction,
        scale: Option<ScaleKind>,
    ) -> Result<()> {
        if log_n == 0 {
            return Ok(());
        }
        let log_table = tables.twiddles.as_ref().map_or(log_n, |t| t.0);
        for step in &sweep(log_n, 1, dif_or_dit, direction, log_table, scale) {
            self.launch_step(tables, v, None, log_n, step)?;
        }
        Ok(())
    }

    /// Queues [`Ntt::groth16_h_multiply`]'s kernel (tables built, lengths 2^log_n checked).
    fn queue_groth16_h_multiply(
        &self,
        tables: &Tables,
        a: &mut DeviceBuffer<Scalar>,
        b: &DeviceBuffer<Scalar>,
        log_n: u32,
    ) -> Result<()> {
        let n = a.len();
        let z_inv = tables.z_inv.get(&log_n).ok_or(Error::NttSize { n })?;
        let pointwise =
            args::NttHPointwise { a: write(a.raw_mut()), b: read(b.raw()), z: read(z_inv.raw()), count: n as u64 };
        // SAFETY: ntt_h_pointwise reads a, b (n elements each) and z (one element) and writes only a (a distinct
        // buffer: it is borrowed mutably); grid-stride loop bounded by count = n.
        unsafe { self.h_pointwise.launch(self.gpu.stream(), self.elementwise_config(n), pointwise) }
    }

    /// Queues [`Ntt::groth16_h_finish`]'s kernels (tables built, lengths 2^log_n checked).
    fn queue_groth16_h_finish(
        &self,
        tables: &Tables,
        a: &mut DeviceBuffer<Scalar>,
        c: &DeviceBuffer<Scalar>,
        log_n: u32,
    ) -> Result<()> {
        self.queue_inverse_dif(tables, a, log_n, ScaleKind::CosetInverse)?;
        self.queue_groth16_h_subtract(tables, a, c, log_n)
    }

    /// Queues [`Ntt::groth16_h_subtract`]'s kernels (tables built, lengths 2^log_n checked).
    fn queue_groth16_h_subtract(
        &self,
        tables: &Tables,
        a: &mut DeviceBuffer<Scalar>,
        c: &DeviceBuffer<Scalar>,
        log_n: u32,
    ) -> Result<()> {
        let n = a.len();
        let z_inv = tables.z_inv.get(&log_n).ok_or(Error::NttSize { n })?;
        // Both a and c are coefficients in bit-reversed order here.
        let subtract =
            args::NttHSubtract { a: write(a.raw_mut()), c: read(c.raw()), z: read(z_inv.raw()), count: n as u64 };
        // SAFETY: ntt_h_subtract reads a, c (n elements each) and z (one element) and writes only a (borrowed
        // mutably, so distinct from c); grid-stride loop bounded by count = n.
        unsafe { self.h_subtract.launch(self.gpu.stream(), self.elementwise_config(n), subtract) }?;
        if log_n > 0 {
            self.launch_step(tables, a, None, log_n, &Step::Permute)?;
        }
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, Tables> {
        // The tables are a cache whose entries are inserted only once complete: a panic elsewhere while the
        // lock was held leaves nothing half-built, so a poisoned lock is still usable.
        self.tables.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lock_scratch(&self) -> MutexGuard<'_, Option<DeviceBuffer<Scalar>>> {
        // The scratch holds no state between calls, so a poisoned lock is still usable.
        self.scratch.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Grid-stride launch for the element-wise kernels.
    fn elementwise_config(&self, count: usize) -> LaunchConfig {
        let max_blocks = (self.gpu.info().sm_count as usize).max(1) * 16;
        let blocks = count.div_ceil(ELEMENTWISE_BLOCK as usize).clamp(1, max_blocks) as u32;
        LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (ELEMENTWISE_BLOCK, 1, 1), shared_mem_bytes: 0 }
    }

    /// In-place bit-reversal of every size-2^log_n transform in `data`.
    fn permute(&self, data: &mut DeviceBuffer<Scalar>, log_n: u32) -> Result<()> {
        use zkgpu_kernels::ntt::{ELEMENT_BYTES, PERMUTE_EDGE_BITS, PERMUTE_MIN_LOG_N, PERMUTE_PITCH, PERMUTE_TILE};
        if log_n >= PERMUTE_MIN_LOG_N {
            let blocks = data.len() >> PERMUTE_MIN_LOG_N;
            let grid =
                u32::try_from(blocks).map_err(|_| Error::InvalidLaunch(format!("{blocks} permutation blocks")))?;
            let cfg = LaunchConfig {
                grid_dim: (grid, 1, 1),
                block_dim: (PERMUTE_TILE, 1, 1),
                shared_mem_bytes: 2 * (PERMUTE_PITCH << PERMUTE_EDGE_BITS) * ELEMENT_BYTES as u32,
            };
            let reverse = args::NttBitReverseTiled { data: write(data.raw_mut()), log_n };
            // SAFETY: one block of 256 threads per (transform, middle value): data.len() >> 8 blocks, as the
            // kernel requires; two padded 16 x 16 tiles of shared memory; every position the kernel touches is
            // inside `data` (a whole number of 2^log_n transforms, checked by check_shape).
            return unsafe { self.bit_reverse_tiled.launch(self.gpu.stream(), cfg, reverse) };
        }
        let total = data.len() as u64;
        let cfg = self.elementwise_config(data.len());
        let reverse = args::NttBitReverse { data: write(data.raw_mut()), log_n, total };
        // SAFETY: ntt_bit_reverse swaps pairs within each 2^log_n chunk of `data` (total elements, a multiple
        // of 2^log_n, checked by check_shape); each pair is owned by one thread.
        unsafe { self.bit_reverse.launch(self.gpu.stream(), cfg, reverse) }
    }

    /// Queues one step of a schedule on the compute stream (`scratch`: the scratch buffer, at least as long as
    /// `data`, when the step uses it).
    fn launch_step(
        &self,
        tables: &Tables,
        data: &mut DeviceBuffer<Scalar>,
        scratch: Option<&mut DeviceBuffer<Scalar>>,
        log_n: u32,
        step: &Step,
    ) -> Result<()> {
        let (params, dit, direction, kind, src, dst) = match step {
            Step::Permute => return self.permute(data, log_n),
            Step::Pass { params, dit, direction, scale, src, dst } => (params, *dit, *direction, *scale, *src, *dst),
        };
        let missing = || Error::InvalidLaunch(format!("NTT table for 2^{log_n} was not prepared"));
        let (log_table, twiddles) = tables.twiddles.as_ref().ok_or_else(missing)?;
        // Only the pass that folds the scaling in (first or last) reads the scale tables; the others get the
        // twiddle table as a placeholder argument.
        let kind = if params.scale.mode == ScaleMode::None { None } else { kind };
        let (lo, hi) = match kind {
            Some(k) => {
                let t = tables.scales.get(&(log_n, k)).ok_or_else(missing)?;
                if t.lo_bits != params.scale.lo_bits || t.mode != params.scale.mode {
                    return Err(missing());
                }
                (t.lo.raw(), t.hi.raw())
            }
            None => (twiddles.raw(), twiddles.raw()),
        };
        let tile_holds_transforms = params.log_tile() >= log_n;
        let reverses = params.reverse_in || params.reverse_out;
        if !params.is_valid() || params.log_table != *log_table || (src == dst && reverses && !tile_holds_transforms) {
            return Err(Error::InvalidLaunch(format!("NTT pass geometry {params:?} ({src:?} -> {dst:?})")));
        }
        let scratch = match scratch {
            Some(s) if s.len() >= data.len() => Some(s),
            _ if src == Buffer::Scratch || dst == Buffer::Scratch => {
                return Err(Error::InvalidLaunch("NTT scratch buffer missing or too small".into()));
            }
            _ => None,
        };
        let tiles = data.len() >> params.log_tile();
        let grid = u32::try_from(tiles).map_err(|_| Error::InvalidLaunch(format!("{tiles} NTT tiles")))?;
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (params.threads(), 1, 1),
            shared_mem_bytes: (zkgpu_kernels::ntt::ELEMENT_BYTES << params.log_tile()) as u32,
        };
        let [w0, w1] = params.encode();
        let function = match (dit, direction) {
            (false, Direction::Forward) => &self.pass_dif,
            (true, Direction::Forward) => &self.pass_dit,
            (false, Direction::Inverse) => &self.pass_dif_inv,
            (true, Direction::Inverse) => &self.pass_dit_inv,
        };
        // In place, the source is the destination's address as a plain pointer (the destination argument
        // borrows the buffer mutably and orders the stream's accesses to it).
        let (src, dst) = match (src, scratch) {
            (Buffer::Data, Some(s)) if dst == Buffer::Scratch => (read(data.raw()), write(s.raw_mut())),
            (Buffer::Scratch, Some(s)) if dst == Buffer::Data => (read(s.raw()), write(data.raw_mut())),
            (Buffer::Scratch, Some(s)) => (Ptr::Address(device_address(s, self.gpu.stream())), write(s.raw_mut())),
            _ => (Ptr::Address(device_address(data, self.gpu.stream())), write(data.raw_mut())),
        };
        let pass =
            args::NttPass { src, dst, twiddles: read(twiddles.raw()), scale_lo: read(lo), scale_hi: read(hi), w0, w1 };
        // SAFETY: the grid has one block per tile of 2^log_tile elements (data.len() is a multiple: the plan
        // divides batch * n), threads() threads and 32 bytes of shared memory per element. Source and
        // destination hold data.len() elements each and are the same buffer or distinct ones; the same only
        // when the pass reverses nothing or its tile holds whole transforms (checked above). The twiddle table
        // holds 2^(log_table-1) + 1 >= n/2 + 1 entries; the scale tables match the pass's mode and lo_bits and
        // hold 2^lo_bits and n >> lo_bits entries (one each when constant). Tables, data and scratch are
        // distinct.
        unsafe { function.launch(self.gpu.stream(), cfg, pass) }
    }

    /// The twiddle table and, if `cfg` scales, the scaling table a transform of `2^log_n` with `cfg` needs.
    fn tables_for(&self, tables: &mut Tables, log_n: u32, cfg: NttConfig) -> Result<()> {
        self.twiddles(tables, log_n)?;
        if let Some(kind) = scale_kind(cfg) {
            self.scale_tables(tables, log_n, kind)?;
        }
        Ok(())
    }

    /// The twiddle table, at least 2^log_n in size (rebuilt larger when needed; the old one is freed first, so
    /// the budget counts only the new one).
    fn twiddles(&self, tables: &mut Tables, log_n: u32) -> Result<()> {
        if matches!(&tables.twiddles, Some((log_table, _)) if *log_table >= log_n) {
            return Ok(());
        }
        let log_table = log_n.max(1);
        let v = twiddle_factors(log_table);
        let count = twiddle_count(log_table);
        let bytes = (count + v.lo.len() + v.hi.len()) * size_of::<Scalar>();
        let old = tables.twiddles.as_ref().map_or(0, |(_, t)| t.byte_len());
        self.within_budget(tables, bytes.saturating_sub(old), &format!("NTT twiddles for 2^{log_table}"))?;
        tables.twiddles = None;
        tables.twiddles = Some((log_table, self.fill(&v.lo, &v.hi, v.lo_bits, count)?));
        Ok(())
    }

    fn scale_tables(&self, tables: &mut Tables, log_n: u32, kind: ScaleKind) -> Result<()> {
        if tables.scales.contains_key(&(log_n, kind)) {
            return Ok(());
        }
        let v = scale_values(log_n, kind);
        let bytes = (v.lo.len() + v.hi.len()) * size_of::<Scalar>();
        self.within_budget(tables, bytes, &format!("NTT scale tables for 2^{log_n}"))?;
        let entry =
            ScaleTables { lo: self.gpu.upload(&v.lo)?, hi: self.gpu.upload(&v.hi)?, lo_bits: v.lo_bits, mode: v.mode };
        tables.scales.insert((log_n, kind), entry);
        Ok(())
    }

    /// A device table `out[e] = hi[e >> lo_bits] * lo[e mod 2^lo_bits]`, e < count.
    fn fill(&self, lo: &[Scalar], hi: &[Scalar], lo_bits: u32, count: usize) -> Result<DeviceBuffer<Scalar>> {
        if lo.len() < 1 << lo_bits || hi.len() < count.div_ceil(1 << lo_bits) {
            let what = "NTT table factors";
            return Err(Error::LengthMismatch { what, expected: count.div_ceil(1 << lo_bits), actual: hi.len() });
        }
        let lo_dev = self.gpu.upload(lo)?;
        let hi_dev = self.gpu.upload(hi)?;
        let mut out = self.gpu.alloc_zeroed::<Scalar>(count)?;
        let fill = args::NttFillTable {
            out: write(out.raw_mut()),
            lo: read(lo_dev.raw()),
            hi: read(hi_dev.raw()),
            lo_bits,
            count: count as u64,
        };
        // SAFETY: ntt_fill_table writes out[e] for e < count (out has count entries) and reads
        // lo[e mod 2^lo_bits] and hi[e >> lo_bits], within the lengths checked above.
        unsafe { self.fill_table.launch(self.gpu.stream(), self.elementwise_config(count), fill) }?;
        Ok(out)
    }
}

/// The device address of `buf`, for a kernel argument that aliases another one.
fn device_address(buf: &DeviceBuffer<Scalar>, stream: &std::sync::Arc<cudarc::driver::CudaStream>) -> u64 {
    let (address, _read_recorded) = buf.raw().device_ptr(stream);
    address
}

/// The buffers a pass reads and writes (public for the CPU emulation in the tests).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buffer {
    /// The caller's buffer.
    Data,
    /// The `Ntt`'s scratch buffer, as long as the caller's.
    Scratch,
}

/// One step of a transform's schedule (public for the CPU emulation in the tests).
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// In-place bit-reversal of each transform.
    Permute,
    /// One kernel pass from `src` to `dst`.
    Pass { params: PassParams, dit: bool, direction: Direction, scale: Option<ScaleKind>, src: Buffer, dst: Buffer },
}

impl Step {
    /// Whether the step reads or writes the scratch buffer.
    pub fn uses_scratch(&self) -> bool {
        matches!(self, Step::Pass { src: Buffer::Scratch, .. } | Step::Pass { dst: Buffer::Scratch, .. })
    }
}

/// The passes of one DIF or DIT sweep, in place, with `kind`'s scaling folded into the first (on load) or last
/// pass.
#[doc(hidden)]
pub fn sweep(
    log_n: u32,
    batch: usize,
    sweep: Sweep,
    direction: Direction,
    log_table: u32,
    kind: Option<ScaleKind>,
) -> Vec<Step> {
    let scale = match kind {
        Some(k) => {
            let v = scale_layout(log_n, k);
            let on_load = matches!(k, ScaleKind::CosetForward | ScaleKind::InverseThenCoset);
            // The input of a DIF sweep and the output of a DIT sweep are in natural order, the others bit-reversed.
            let natural_there = (sweep == Sweep::Dif) == on_load;
            Scale { mode: v.0, on_load, bit_reversed: !natural_there, lo_bits: v.1 }
        }
        None => Scale::NONE,
    };
    let dit = sweep == Sweep::Dit;
    plan::passes(log_n, batch as u64, dit, log_table, scale)
        .into_iter()
        .map(|params| Step::Pass { params, dit, direction, scale: kind, src: Buffer::Data, dst: Buffer::Data })
        .collect()
}

/// The steps of one transform (log_n >= 1) over `batch` transforms, twiddles from a 2^log_table table.
///
/// NN and RR are a DIF sweep with the permutation folded in: the last pass stores (NN) or the first pass loads
/// (RR) at bit-reversed positions. One pass does that in place (its tile holds whole transforms); with more,
/// the first pass writes `Scratch`, the last reads it, when `scratch` is true, and otherwise the sweep stays
/// in place and a separate permutation step follows (NN) or precedes (RR) it.
///
/// The scaling's logical indices need no change: a reversed load leaves the data in natural order for the
/// sweep (as a DIF's input is), and a reversed store applies the factor of the element it stores.
#[doc(hidden)]
pub fn schedule(log_n: u32, batch: usize, cfg: NttConfig, log_table: u32, scratch: bool) -> Vec<Step> {
    let (sw, reverse_in, reverse_out) = match (cfg.input, cfg.output) {
        (Order::Natural, Order::BitReversed) => (Sweep::Dif, false, false),
        (Order::BitReversed, Order::Natural) => (Sweep::Dit, false, false),
        (Order::Natural, Order::Natural) => (Sweep::Dif, false, true),
        (Order::BitReversed, Order::BitReversed) => (Sweep::Dif, true, false),
    };
    let mut steps = sweep(log_n, batch, sw, cfg.direction, log_table, scale_kind(cfg));
    let count = steps.len();
    if !(reverse_in || reverse_out) || count == 0 {
        return steps;
    }
    if count > 1 && !scratch {
        if reverse_in {
            steps.insert(0, Step::Permute);
        } else {
            steps.push(Step::Permute);
        }
        return steps;
    }
    for (p, step) in steps.iter_mut().enumerate() {
        if let Step::Pass { params, src, dst, .. } = step {
            let (first, last) = (p == 0, p + 1 == count);
            params.reverse_in = reverse_in && first;
            params.reverse_out = reverse_out && last;
            *src = if first { Buffer::Data } else { Buffer::Scratch };
            *dst = if last { Buffer::Data } else { Buffer::Scratch };
        }
    }
    steps
}

/// Host values of a scale table.
#[doc(hidden)]
#[derive(Clone, Debug)]
pub struct TableValues {
    pub lo: Vec<Scalar>,
    pub hi: Vec<Scalar>,
    pub lo_bits: u32,
    pub mode: ScaleMode,
}

/// (mode, lo_bits) of the scale table for `kind` at size 2^log_n.
fn scale_layout(log_n: u32, kind: ScaleKind) -> (ScaleMode, u32) {
    match kind {
        ScaleKind::InverseN => (ScaleMode::Constant, 0),
        _ => (ScaleMode::Powers, log_n.div_ceil(2)),
    }
}

/// The scale table for `kind` at size 2^log_n: factor(i) = lo[i mod 2^lo_bits] * hi[i >> lo_bits].
#[doc(hidden)]
pub fn scale_values(log_n: u32, kind: ScaleKind) -> TableValues {
    let n_inv = Scalar::from(1u64 << log_n).invert().unwrap_or(Scalar::ONE);
    let g = coset_generator();
    let g_inv = g.invert().unwrap_or(Scalar::ONE);
    let (mode, lo_bits) = scale_layout(log_n, kind);
    let (constant, base) = match kind {
        ScaleKind::InverseN => return TableValues { lo: vec![n_inv], hi: vec![Scalar::ONE], lo_bits, mode },
        ScaleKind::CosetForward => (Scalar::ONE, g),
        ScaleKind::CosetInverse => (n_inv, g_inv),
        ScaleKind::InverseThenCoset => (n_inv, g),
    };
    let lo = powers(base, 1 << lo_bits).into_iter().map(|x| x * constant).collect();
    let hi = powers(base.pow_vartime([1u64 << lo_bits]), 1 << (log_n - lo_bits));
    TableValues { lo, hi, lo_bits, mode }
}

/// Entries of the twiddle table for transforms up to N = 2^log_table (log_table >= 1): `w_N^e` for
/// `e <= N/2`, the last one `-1` for the inverse's mirrored reads.
#[doc(hidden)]
pub fn twiddle_count(log_table: u32) -> usize {
    (1usize << log_table.saturating_sub(1)) + 1
}

/// The factors of the twiddle table of size 2^log_table (log_table >= 1): entry e < [`twiddle_count`] is
/// `w_N^e = hi[e >> lo_bits] * lo[e mod 2^lo_bits]`.
#[doc(hidden)]
pub fn twiddle_factors(log_table: u32) -> TableValues {
    let w = root_of_unity(log_table);
    let count_log = log_table.saturating_sub(1);
    let lo_bits = count_log.div_ceil(2);
    let lo = powers(w, 1 << lo_bits);
    // One more `hi` than 2^count_log / 2^lo_bits: entry N/2 is hi[N/2 >> lo_bits] * lo[0].
    let hi = powers(w.pow_vartime([1u64 << lo_bits]), (1 << (count_log - lo_bits)) + 1);
    TableValues { lo, hi, lo_bits, mode: ScaleMode::Powers }
}

/// The scaling a configuration needs.
fn scale_kind(cfg: NttConfig) -> Option<ScaleKind> {
    match (cfg.direction, cfg.coset) {
        (Direction::Forward, false) => None,
        (Direction::Forward, true) => Some(ScaleKind::CosetForward),
        (Direction::Inverse, false) => Some(ScaleKind::InverseN),
        (Direction::Inverse, true) => Some(ScaleKind::CosetInverse),
    }
}

impl std::fmt::Display for NttConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}
