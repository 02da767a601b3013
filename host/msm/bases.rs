//! Bases and scalars as an MSM takes them: device-resident tables ([`MsmBases`], optionally with
//! precomputed copies) or host slices, and scalars on the host or the device (dense or indexed).
use super::*;

/// Bases resident on one GPU: uploaded once, used by many MSMs (optionally with precomputed copies).
pub struct MsmBases<C: Curve> {
    /// `copies` rows of `n` points: row `k` holds `2^(c·q·k)·Pᵢ`.
    pub(super) table: DeviceBuffer<C::Affine>,
    pub(super) n: usize,
    pub(super) copies: u32,
    /// The window bits the copies were made for (0 without precomputation).
    pub(super) window_bits: u32,
}

impl<C: Curve> MsmBases<C> {
    /// Uploads `bases` (no precomputation).
    pub fn upload(gpu: &Gpu, bases: &[C::Affine]) -> Result<Self> {
        check_table(bases.len(), 1)?;
        Ok(MsmBases { table: gpu.upload(bases)?, n: bases.len(), copies: 1, window_bits: 0 })
    }

    /// Takes bases already on the device.
    pub fn from_buffer(table: DeviceBuffer<C::Affine>) -> Result<Self> {
        check_table(table.len(), 1)?;
        Ok(MsmBases { n: table.len(), table, copies: 1, window_bits: 0 })
    }

    /// Uploads `bases` and builds `plan.copies` shifted copies on the GPU (`copies · n` points of device
    /// memory): row `k` is `2^(c·q·k)·Pᵢ` for the plan's window bits `c` and virtual windows `q`. Runs with this
    /// plan then need `q` bucket sets instead of `W`.
    pub fn precompute(gpu: &Gpu, bases: &[C::Affine], plan: &MsmPlan) -> Result<Self> {
        check_table(bases.len(), plan.copies.max(1))?;
        Self::precompute_from_buffer(gpu, &gpu.upload(bases)?, plan)
    }

    /// [`MsmBases::precompute`] for bases already on the device (copied into the table's first row).
    pub fn precompute_from_buffer(gpu: &Gpu, bases: &DeviceBuffer<C::Affine>, plan: &MsmPlan) -> Result<Self> {
        gpu.owns("MsmBases::precompute_from_buffer bases", bases)?;
        let (n, copies) = (bases.len(), plan.copies.max(1));
        check_table(n, copies)?;
        let span = tracing::info_span!("zkgpu.msm.precompute", curve = C::NAME, n, copies);
        let _entered = span.enter();
        let mut table = gpu.alloc_zeroed::<C::Affine>(n * copies as usize)?;
        if n > 0 {
            gpu.stream().memcpy_dtod(bases.raw(), &mut table.raw_range_mut(0..n)?)?;
        }
        if n > 0 && copies > 1 {
            let f = gpu.kernel(&C::KERNELS.msm_precompute)?;
            let precompute = args::MsmPrecompute {
                table: write(table.raw_mut()),
                n: n as u32,
                shift: plan.window_bits * plan.virtual_windows,
                copies,
            };
            // SAFETY: msm_{C}_precompute: one thread per point (n < 2^31), the table holds copies · n points
            // with row 0 written above; each thread reads and writes only its own column.
            unsafe { f.launch(gpu.stream(), launch_config_1d(n, point_block::<C>()), precompute) }?;
        }
        gpu.synchronize()?;
        let window_bits = if copies > 1 { plan.window_bits } else { 0 };
        Ok(MsmBases { table, n, copies, window_bits })
    }

    /// Number of bases.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no bases.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The bases themselves when there is no precomputation (`copies == 1`), e.g. for batch additions over
    /// the same query; `None` for a precomputed table (its rows are shifted copies).
    pub fn points(&self) -> Option<&DeviceBuffer<C::Affine>> {
        (self.copies == 1).then_some(&self.table)
    }

    /// Precomputed copies (1: none).
    pub fn copies(&self) -> u32 {
        self.copies
    }

    /// Device memory the table takes.
    pub fn device_bytes(&self) -> usize {
        self.table.byte_len()
    }
}

pub(super) fn check_table(n: usize, copies: u32) -> Result<()> {
    if n.saturating_mul(copies as usize) >= MAX_TABLE_POINTS {
        return Err(Error::SizeOverflow(format!("{n} bases × {copies} copies: a table holds fewer than 2^31 points")));
    }
    Ok(())
}

/// Where the bases are.
pub enum Bases<'a, C: Curve> {
    /// Resident on the device (possibly precomputed); the scalars use the first `scalars.len()` bases.
    Device(&'a MsmBases<C>),
    /// In host memory (pinned memory uploads at line rate; pageable memory is staged by the driver).
    /// Must hold exactly one base per scalar.
    Host(&'a [C::Affine]),
}

/// Where the scalars are.
pub enum Scalars<'a> {
    /// On the device.
    Device(&'a DeviceBuffer<Scalar>),
    /// In host memory.
    Host(&'a [Scalar]),
    /// Sparse, on the device: scalar `j < len` multiplies base `indices[j]` of [`Bases::Device`] (any of
    /// them, in any order, repeats allowed). For MSMs whose scalars are mostly zero: only the `len` others
    /// are sorted and added. An index past the bases is reported by [`Msm::finish`]
    /// ([`Error::IndexOutOfRange`]); the GPU only ever reads bases inside the table.
    DeviceIndexed {
        /// At least `len` scalars (the first `len` are used).
        scalars: &'a DeviceBuffer<Scalar>,
        /// At least `len` base indices.
        indices: &'a DeviceBuffer<u32>,
        len: usize,
    },
}

impl Scalars<'_> {
    /// Number of scalars.
    pub fn len(&self) -> usize {
        match self {
            Scalars::Device(s) => s.len(),
            Scalars::Host(s) => s.len(),
            Scalars::DeviceIndexed { len, .. } => *len,
        }
    }

    /// Whether there are no scalars.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
