//! [`Msm`]: the engine that owns the scratch and runs the plan's launches (scalar split, sort, accumulation,
//! reduction), and the one-shot [`msm`] / [`msm_device`].
use super::*;

/// Threads per block of the per-point kernels (G2's 255 registers allow fewer).
pub(super) fn point_block<C: Curve>() -> u32 {
    if C::XYZZ_BYTES > 192 { 64 } else { 128 }
}

/// How a chunk's entries name their points (the count's and sorts' common arguments).
pub(super) struct PointArgs<'a> {
    /// Sparse scalars' base indices for the chunk, or `None`.
    pub(super) index_view: Option<&'a cudarc::driver::CudaView<'a, u8>>,
    pub(super) len: u32,
    /// Points per precomputed copy (table row), and the chunk's first base.
    pub(super) stride: u32,
    pub(super) first: u32,
    /// Base indices must be below this (larger ones become 0 and are counted).
    pub(super) limit: u32,
}

/// One chunk of an MSM: the scalars `scalars` of the input, naming bases at the positions `bases`. Dense
/// scalars name the same range; sparse ones any position of the table (device bases: `0..n`) or of a window
/// of host bases staged in `slot` (indices outside it are counted bad).
#[derive(Clone, Debug)]
pub(super) struct Chunk {
    /// The staging buffers host inputs use (0 or 1).
    pub(super) slot: usize,
    pub(super) scalars: Range<usize>,
    pub(super) bases: Range<usize>,
}

impl Chunk {
    /// Chunk `[first, first + len)` of dense scalars (or of sparse ones over device bases of `n` points).
    pub(super) fn dense(slot: usize, first: usize, len: usize) -> Self {
        Chunk { slot, scalars: first..first + len, bases: first..first + len }
    }
}

/// Kernel handles of one curve.
pub(super) struct Kernels {
    pub(super) count: KernelFn<sig::MsmCount>,
    pub(super) scan_sums: KernelFn<sig::MsmScanSums>,
    pub(super) scan: KernelFn<sig::MsmScan>,
    pub(super) scatter: KernelFn<sig::MsmScatter>,
    pub(super) sort_upsweep: KernelFn<sig::MsmSortUpsweep>,
    pub(super) sort_downsweep: KernelFn<sig::MsmSortDownsweep>,
    pub(super) sort_offsets: KernelFn<sig::MsmSortOffsets>,
    pub(super) accumulate: KernelFn<sig::MsmAccumulate>,
    pub(super) accumulate_affine: KernelFn<sig::MsmAccumulateAffine>,
    pub(super) fold: KernelFn<sig::MsmFold>,
    pub(super) fixup: KernelFn<sig::MsmFixup>,
    pub(super) fixup_spanning: KernelFn<sig::MsmFixup>,
    pub(super) reduce: KernelFn<sig::MsmReduce>,
}

/// An MSM engine: kernels and scratch for one [`MsmPlan`], reused across calls (allocate once per size).
pub struct Msm<'g, C: Curve> {
    pub(super) gpu: &'g Gpu,
    pub(super) plan: MsmPlan,
    pub(super) kernels: Kernels,
    pub(super) sums: XyzzSetSum<C>,
    /// The counting sort's scratch (empty buffers with the radix sort).
    pub(super) counting: CountingScratch,
    /// The radix sort's scratch (empty buffers with the counting sort).
    pub(super) radix: RadixScratch,
    pub(super) offsets: DeviceBuffer<u32>,
    pub(super) sorted: DeviceBuffer<u32>,
    pub(super) partials: DeviceBuffer<u8>,
    pub(super) buckets: DeviceBuffer<u8>,
    pub(super) shares: DeviceBuffer<u8>,
    /// Per table of the queued call, the `q` window sums (grown by [`Msm::reserve_tables`]): the host combines
    /// them ([`combine_windows`]), since a Horner chain of `c·(q − 1)` doublings is one dependent thread's work
    /// that a CPU core does faster than a GPU thread.
    pub(super) window_sums: Vec<DeviceBuffer<C::Projective>>,
    /// Chunk staging for host inputs (double-buffered; windows may take more buffers), allocated on first use.
    pub(super) staged_bases: Vec<DeviceBuffer<C::Affine>>,
    pub(super) staged_scalars: Vec<DeviceBuffer<Scalar>>,
    /// Per staging slot: recorded on the compute stream after the last kernels that read it, so a chunk's
    /// copy waits for them before its timing starts (the copy phases time the copy, not the wait).
    pub(super) staging_read: Vec<Option<CudaEvent>>,
    /// Every window's signed digit of the chunk's scalars (count → scatter), `windows · chunk` words.
    pub(super) digits: DeviceBuffer<u32>,
    /// Out-of-range base indices the count found (sparse scalars).
    pub(super) bad_indices: DeviceBuffer<u32>,
    /// The affine accumulation's lists and prefix products (empty for XYZZ accumulation).
    pub(super) affine_scratch: DeviceBuffer<C::Affine>,
    /// What [`Msm::enqueue`] queued and [`Msm::finish`] collects.
    pub(super) pending: Option<Queued>,
}

/// The counting sort's buffers (count → scan → scatter).
pub(super) struct CountingScratch {
    /// Entries per bucket, `q · buckets` words.
    pub(super) counts: DeviceBuffer<u32>,
    /// The scan's part sums, `q · ⌈buckets / SCAN_SPAN⌉` words.
    pub(super) scan_sums: DeviceBuffer<u32>,
    /// The scatter's cursors for entries past the ranks the count keeps, `q · buckets` words.
    pub(super) cursors: DeviceBuffer<u32>,
}

impl CountingScratch {
    pub(super) fn new(gpu: &Gpu, plan: &MsmPlan) -> Result<Self> {
        let q = if plan.sort == Sort::Counting { plan.virtual_windows as usize } else { 0 };
        Ok(CountingScratch {
            counts: gpu.alloc_zeroed(q * plan.buckets())?,
            scan_sums: gpu.alloc_zeroed(q * plan.scan_parts())?,
            cursors: gpu.alloc_zeroed(q * plan.buckets())?,
        })
    }
}

/// The radix sort's buffers for one group of `sort_group` virtual windows (`zkgpu_kernels::msm_sort`).
pub(super) struct RadixScratch {
    /// Keys of alternate passes, `group · per_window` words each.
    pub(super) keys: [DeviceBuffer<u32>; 2],
    /// Values of the passes that do not write `sorted`, `group · per_window` words.
    pub(super) vals: DeviceBuffer<u32>,
    /// Items per window after the first pass (zero digits dropped), a word per window.
    pub(super) counts: DeviceBuffer<u32>,
    /// Histogram `[window][digit][block]`, its exclusive scan (`L + 1` words per window), the scan's cursors and
    /// part sums.
    pub(super) hist: DeviceBuffer<u32>,
    pub(super) spine: DeviceBuffer<u32>,
    pub(super) cursors: DeviceBuffer<u32>,
    pub(super) sums: DeviceBuffer<u32>,
}

impl RadixScratch {
    pub(super) fn new(gpu: &Gpu, plan: &MsmPlan) -> Result<Self> {
        let (group, per_window, spine) = match plan.sort {
            Sort::Radix => (plan.sort_group as usize, plan.per_window(), plan.sort_spine_len()),
            Sort::Counting => (0, 0, 0),
        };
        Ok(RadixScratch {
            keys: [gpu.alloc_zeroed(group * per_window)?, gpu.alloc_zeroed(group * per_window)?],
            vals: gpu.alloc_zeroed(group * per_window)?,
            counts: gpu.alloc_zeroed(group)?,
            hist: gpu.alloc_zeroed(group * spine)?,
            spine: gpu.alloc_zeroed(group * (spine + 1))?,
            cursors: gpu.alloc_zeroed(group * spine)?,
            sums: gpu.alloc_zeroed(group * spine.div_ceil(SCAN_SPAN as usize))?,
        })
    }
}

/// An MSM [`Msm::enqueue`] queued.
#[derive(Clone, Copy)]
pub(super) enum Queued {
    /// No scalars: the identity per table, nothing on the GPU.
    Empty { tables: usize },
    /// Kernels queued for `tables` tables; `index_limit`: the bases sparse scalars may index (their check is
    /// collected too).
    Run { index_limit: Option<usize>, tables: usize },
}

impl<'g, C: Curve> Msm<'g, C> {
    /// Allocates the results of `tables` tables now, so that queueing that many ([`Msm::enqueue_tables`])
    /// allocates nothing: an engine that reserves what its jobs use cannot run out of memory in a job.
    pub fn reserve_tables(&mut self, tables: usize) -> Result<()> {
        while self.window_sums.len() < tables {
            self.window_sums.push(self.gpu.alloc_zeroed(self.plan.virtual_windows as usize)?);
        }
        Ok(())
    }

    /// Allocates the staging of host bases now (double-buffered where the plan has several chunks; allocated
    /// on first use otherwise), so that calls with [`Bases::Host`] allocate nothing.
    pub fn reserve_host_bases(&mut self) -> Result<()> {
        if self.staged_bases.is_empty() {
            let chunk = self.plan.chunk.min(self.plan.n);
            self.staged_bases =
                (0..self.plan.staging_buffers()).map(|_| self.gpu.alloc_zeroed(chunk)).collect::<Result<_>>()?;
        }
        Ok(())
    }

    /// Allocates the staging of windows of `window` host bases now ([`Msm::begin_pinned_windows`]; `depth`
    /// buffers, at least two, where the plan's `n` spans several windows, so that a window uploads while the
    /// one before is read, and with more the copies run further ahead of the kernels), replacing smaller
    /// staging. Windows may be longer than the plan's chunk, which bounds the entries sorted at once, not the
    /// bases staged.
    pub(crate) fn reserve_window_staging(&mut self, window: usize, depth: usize) -> Result<()> {
        let buffers = window_staging_count(self.plan.n, window, depth);
        if self.staged_bases.len() < buffers || self.staged_bases.iter().any(|b| b.len() < window) {
            // The smaller staging is freed before the larger is allocated.
            self.staged_bases = Vec::new();
            self.staged_bases = (0..buffers).map(|_| self.gpu.alloc_zeroed(window)).collect::<Result<_>>()?;
            self.staging_read.resize_with(buffers.max(2), || None);
        }
        Ok(())
    }

    /// Device memory of [`Msm::reserve_window_staging`]'s staging for `window` bases over `n` points.
    pub(crate) fn window_staging_bytes(n: usize, window: usize, depth: usize) -> usize {
        window_staging_count(n, window, depth) * window * size_of::<C::Affine>()
    }

    /// Loads the kernels and allocates the plan's scratch ([`MsmPlan::scratch_bytes`]). `Err(MsmConfig)` for a
    /// plan [`MsmPlan::validate`] rejects.
    pub fn new(gpu: &'g Gpu, plan: MsmPlan) -> Result<Self> {
        plan.validate()?;
        let curve = C::KERNELS;
        let kernels = Kernels {
            count: gpu.kernel(&interface::MSM_COUNT)?,
            scan_sums: gpu.kernel(&interface::MSM_SCAN_SUMS)?,
            scan: gpu.kernel(&interface::MSM_SCAN)?,
            scatter: gpu.kernel(&interface::MSM_SCATTER)?,
            sort_upsweep: gpu.kernel(&interface::MSM_SORT_UPSWEEP)?,
            sort_downsweep: gpu.kernel(&interface::MSM_SORT_DOWNSWEEP)?,
            sort_offsets: gpu.kernel(&interface::MSM_SORT_OFFSETS)?,
            accumulate: gpu.kernel(&curve.msm_accumulate)?,
            accumulate_affine: gpu.kernel(&curve.msm_accumulate_affine)?,
            fold: gpu.kernel(&curve.msm_fold)?,
            fixup: gpu.kernel(&curve.msm_fixup)?,
            fixup_spanning: gpu.kernel(&curve.msm_fixup_spanning)?,
            reduce: gpu.kernel(&curve.msm_reduce)?,
        };
        gpu.allow_dynamic_shared(kernels.sort_upsweep.function(), upsweep_shared_bytes(RADIX_BITS))?;
        gpu.allow_dynamic_shared(kernels.sort_downsweep.function(), downsweep_shared_bytes(RADIX_BITS))?;
        let q = plan.virtual_windows as usize;
        let b = plan.buckets();
        let xyzz = C::XYZZ_BYTES;
        Ok(Msm {
            gpu,
            kernels,
            sums: XyzzSetSum::new(gpu, plan.shares(), q)?,
            counting: CountingScratch::new(gpu, &plan)?,
            radix: RadixScratch::new(gpu, &plan)?,
            offsets: gpu.alloc_zeroed(q * (b + 1))?,
            sorted: gpu.alloc_zeroed(q * plan.per_window())?,
            partials: gpu.alloc_zeroed(q * plan.slots() * xyzz)?,
            buckets: gpu.alloc_zeroed(q * b * xyzz)?,
            shares: gpu.alloc_zeroed(q * plan.shares() * xyzz)?,
            window_sums: vec![gpu.alloc_zeroed(q)?],
            staged_bases: Vec::new(),
            staged_scalars: Vec::new(),
            staging_read: (0..2).map(|_| None).collect(),
            digits: gpu.alloc_zeroed(plan.windows as usize * plan.chunk)?,
            bad_indices: gpu.alloc_zeroed(1)?,
            affine_scratch: gpu.alloc_zeroed(plan.affine_scratch_points::<C>())?,
            pending: None,
            plan,
        })
    }

    /// The plan in use.
    pub fn plan(&self) -> &MsmPlan {
        &self.plan
    }

    /// Device memory this engine holds now: scratch plus any host-input staging.
    pub fn device_bytes(&self) -> usize {
        let staged: usize = self.staged_bases.iter().map(|b| b.byte_len()).sum::<usize>()
            + self.staged_scalars.iter().map(|s| s.byte_len()).sum::<usize>();
        let tables = self.plan.results_bytes::<C>(self.window_sums.len().saturating_sub(1));
        self.plan.scratch_bytes::<C>() + tables + staged
    }

    /// `Σ scalars[i]·bases[i]`, normalized (`Z = 1`, or the identity): [`Msm::enqueue`] then
    /// [`Msm::finish`]. Errors: more scalars than the plan's `n` or than the bases (`LengthMismatch`; host
    /// bases must match the scalars exactly), device bases precomputed for another plan (`MsmConfig`), device
    /// memory for the host-input staging (`OutOfMemory`). Nothing the caller passed is modified.
    pub fn run(&mut self, bases: Bases<'_, C>, scalars: Scalars<'_>) -> Result<C::Projective> {
        self.enqueue(bases, scalars)?;
        self.finish()
    }

    /// Queues the whole MSM on the GPU's streams; [`Msm::finish`] waits and returns the result. Lets a
    /// pipeline queue more work behind the MSM (the next job's uploads, an NTT) before it blocks. Same checks
    /// and errors as [`Msm::run`].
    ///
    /// Returns once the device no longer needs the caller's memory: at once for device inputs (the streams
    /// order them), after the last chunk's upload for [`Bases::Host`] / [`Scalars::Host`] (the copy stream is
    /// waited for; with double-buffered chunks that is about when the second-to-last chunk's compute ends).
    /// On an error nothing queued reads the caller's memory afterwards (the GPU is synchronized).
    pub fn enqueue(&mut self, bases: Bases<'_, C>, scalars: Scalars<'_>) -> Result<()> {
        self.enqueue_on(&[bases], scalars)
    }

    /// Queues the MSMs of one scalar vector over several device tables (`Σ scalars[i]·tables[k][i]` for every
    /// `k`); [`Msm::finish_tables`] returns them in order. When the scalars fit one chunk of the plan the
    /// count and sort run once and only the bucket stages (accumulate to combine) run per table; otherwise
    /// each table is a whole MSM. The tables must have the same length and precomputation (the sorted entries
    /// name points by position); errors as [`Msm::run`], plus `LengthMismatch` for tables of different
    /// lengths.
    pub fn enqueue_tables(&mut self, tables: &[&MsmBases<C>], scalars: Scalars<'_>) -> Result<()> {
        if let Some(t) = tables.iter().find(|t| t.n != tables[0].n) {
            return Err(Error::LengthMismatch {
                what: "msm tables (all the same length)",
                expected: tables[0].n,
                actual: t.n,
            });
        }
        let bases: Vec<Bases<'_, C>> = tables.iter().map(|t| Bases::Device(t)).collect();
        self.enqueue_on(&bases, scalars)
    }

    /// [`Msm::enqueue`] over the tables `bases` (host bases only alone: their chunks are staged one table at
    /// a time).
    pub(super) fn enqueue_on(&mut self, bases: &[Bases<'_, C>], scalars: Scalars<'_>) -> Result<()> {
        self.enqueue_inner(bases, scalars)
    }

    /// [`Msm::enqueue_on`]: returns only after the copies of host inputs are done.
    fn enqueue_inner(&mut self, bases: &[Bases<'_, C>], scalars: Scalars<'_>) -> Result<()> {
        let n = scalars.len();
        let span = tracing::info_span!(
            "zkgpu.msm.enqueue",
            curve = C::NAME,
            n,
            c = self.plan.window_bits,
            tables = bases.len()
        );
        let _entered = span.enter();
        self.check_free("Msm::enqueue")?;
        for b in bases {
            self.check_inputs(b, &scalars)?;
        }
        let tables = bases.len();
        if n == 0 || tables == 0 {
            self.pending = Some(Queued::Empty { tables });
            return Ok(());
        }
        self.reserve_tables(tables)?;
        let index_limit = match (&bases[0], &scalars) {
            (Bases::Device(b), Scalars::DeviceIndexed { .. }) => Some(b.n),
            _ => None,
        };
        self.pending = Some(Queued::Run { index_limit, tables });
        let host_inputs = matches!(bases[0], Bases::Host(_)) || matches!(scalars, Scalars::Host(_));
        let queued = self.enqueue_all(bases, &scalars).and_then(|()| {
            // The copies read the caller's memory: they must be done before its borrow ends.
            if host_inputs { Ok(self.gpu.copy_stream().synchronize()?) } else { Ok(()) }
        });
        self.settle(queued)
    }

    /// Waits for the MSM queued by [`Msm::enqueue`] and returns it normalized (`Z = 1`, or the identity).
    /// `Err(MsmConfig)` when nothing is queued, or when [`Msm::enqueue_tables`] queued other than one table
    /// (use [`Msm::finish_tables`]; the engine is free again either way).
    pub fn finish(&mut self) -> Result<C::Projective> {
        let mut sums = self.finish_tables()?;
        match (sums.pop(), sums.is_empty()) {
            (Some(sum), true) => Ok(sum),
            _ => Err(Error::MsmConfig(
                "Msm::finish after enqueue_tables of other than one table (use finish_tables)".into(),
            )),
        }
    }

    /// Waits for the MSMs queued by [`Msm::enqueue`] or [`Msm::enqueue_tables`] and returns them normalized,
    /// one per table. `Err(MsmConfig)` when nothing is queued.
    pub fn finish_tables(&mut self) -> Result<Vec<C::Projective>> {
        let span = tracing::info_span!("zkgpu.msm.finish", curve = C::NAME);
        let _entered = span.enter();
        match self.pending.take() {
            None => Err(Error::MsmConfig("Msm::finish without a queued MSM (call enqueue first)".into())),
            Some(Queued::Empty { tables }) => Ok(vec![C::identity(); tables]),
            Some(Queued::Run { index_limit, tables }) => {
                let sums = self.window_sums.get(..tables).ok_or_else(|| Error::MsmConfig("no result".into()))?;
                let sums = sums.iter().map(|s| self.gpu.download(s)).collect::<Result<Vec<_>>>()?;
                if let Some(limit) = index_limit {
                    let bad = self.gpu.download(&self.bad_indices)?.first().copied().unwrap_or(0);
                    if bad > 0 {
                        return Err(Error::IndexOutOfRange { what: "msm base indices", count: bad as usize, limit });
                    }
                }
                let widths = WindowWidths::new(self.plan.window_bits, self.plan.virtual_windows);
                Ok(sums.iter().map(|s| C::normalize(&combine_windows::<C>(s, widths))).collect())
            }
        }
    }

    /// The first chunk's sort as the accumulate stage sees it: per virtual window, the bucket offsets
    /// (`buckets + 1` words) and the sorted entries (`point | NEG_FLAG` for a negated point). Runs only the
    /// count and the sort; for tests and diagnostics (`zkgpu_kernels::msm::model::sorted_windows` is the
    /// reference). Same input checks as [`Msm::run`].
    pub fn sorted_chunk(&mut self, bases: Bases<'_, C>, scalars: Scalars<'_>) -> Result<Vec<(Vec<u32>, Vec<u32>)>> {
        self.check_free("Msm::sorted_chunk")?;
        self.check_inputs(&bases, &scalars)?;
        let (q, b) = (self.plan.virtual_windows as usize, self.plan.buckets());
        let len = scalars.len().min(self.plan.chunk);
        if len == 0 {
            return Ok(vec![(vec![0; b + 1], Vec::new()); q]);
        }
        self.prepare_staging(&bases, &scalars)?;
        let chunk = Chunk::dense(0, 0, len);
        let queued =
            self.stage(&chunk, &bases, &scalars, None).and_then(|()| self.enqueue_sort(&chunk, &bases, &scalars));
        if let Err(e) = queued {
            let _ = self.gpu.synchronize();
            return Err(e);
        }
        let offsets = self.gpu.download(&self.offsets)?;
        let sorted = self.gpu.download(&self.sorted)?;
        let per_window = self.plan.per_window();
        Ok((0..q)
            .map(|v| {
                let offsets = offsets[v * (b + 1)..(v + 1) * (b + 1)].to_vec();
                let end = (offsets[b] as usize).min(per_window);
                let entries = sorted[v * per_window..v * per_window + end].to_vec();
                (offsets, entries)
            })
            .collect())
    }

    /// `Err(MsmConfig)` naming `call` while an MSM is queued.
    pub(super) fn check_free(&self, call: &str) -> Result<()> {
        match self.pending {
            Some(_) => Err(Error::MsmConfig(format!("{call} while an MSM is queued (call finish first)"))),
            None => Ok(()),
        }
    }

    /// Passes on how queueing went; after an error the MSM is forgotten and the GPU synchronized, so nothing
    /// queued reads the caller's memory afterwards.
    pub(super) fn settle(&mut self, queued: Result<()>) -> Result<()> {
        if queued.is_err() {
            self.pending = None;
            let _ = self.gpu.synchronize();
        }
        queued
    }

    /// The checks [`Msm::enqueue`] makes before queueing anything.
    pub(super) fn check_inputs(&self, bases: &Bases<'_, C>, scalars: &Scalars<'_>) -> Result<()> {
        if let Bases::Device(b) = bases {
            self.gpu.owns("msm bases", &b.table)?;
        }
        match scalars {
            Scalars::Device(s) => self.gpu.owns("msm scalars", s)?,
            Scalars::DeviceIndexed { scalars: s, indices, .. } => {
                self.gpu.owns("msm scalars", s)?;
                self.gpu.owns("msm base indices", indices)?;
            }
            Scalars::Host(_) => {}
        }
        let n = scalars.len();
        if n > self.plan.n {
            return Err(Error::LengthMismatch { what: "msm scalars (plan size)", expected: self.plan.n, actual: n });
        }
        if let Scalars::DeviceIndexed { scalars: s, indices, len } = scalars {
            if !matches!(bases, Bases::Device(_)) {
                return Err(Error::MsmConfig("sparse (indexed) scalars need device bases".into()));
            }
            if s.len() < *len {
                return Err(Error::LengthMismatch { what: "msm indexed scalars", expected: *len, actual: s.len() });
            }
            if indices.len() < *len {
                return Err(Error::LengthMismatch { what: "msm base indices", expected: *len, actual: indices.len() });
            }
        }
        let indexed = matches!(scalars, Scalars::DeviceIndexed { .. });
        match bases {
            Bases::Host(b) if b.len() != n => {
                Err(Error::LengthMismatch { what: "msm bases", expected: n, actual: b.len() })
            }
            Bases::Device(b) if !indexed && b.len() < n => {
                Err(Error::LengthMismatch { what: "msm device bases", expected: n, actual: b.len() })
            }
            Bases::Device(b)
                if b.copies != self.plan.copies || (b.copies > 1 && b.window_bits != self.plan.window_bits) =>
            {
                Err(Error::MsmConfig(format!(
                    "bases precomputed with {} copies for c = {}, plan has {} copies and c = {}",
                    b.copies, b.window_bits, self.plan.copies, self.plan.window_bits
                )))
            }
            Bases::Host(_) if self.plan.copies > 1 => {
                Err(Error::MsmConfig("precomputed plans need device bases (MsmBases::precompute)".into()))
            }
            _ => Ok(()),
        }
    }

    /// Queues every chunk and the final stages of each table into `out[k]` (inputs checked by
    /// [`Msm::enqueue_on`]). Scalars that fit one chunk are sorted once for all tables; longer ones are sorted
    /// chunk by chunk per table (the buckets hold one table's sums at a time): whole chunks of the plan with
    /// device inputs; with host inputs, double-buffered, a ramp of smaller chunks first ([`ramped_chunks`]),
    /// so that every upload but the small first one runs beside the previous chunk's kernels.
    pub(super) fn enqueue_all(&mut self, bases: &[Bases<'_, C>], scalars: &Scalars<'_>) -> Result<()> {
        let n = scalars.len();
        self.prepare_staging(&bases[0], scalars)?;
        let stream = self.gpu.stream().clone();
        let chunk = self.plan.chunk;
        let one_chunk = n <= chunk;
        let staged = matches!(bases[0], Bases::Host(_)) || matches!(scalars, Scalars::Host(_));
        // Every range is at most the plan's chunk: the staging and the scratch hold it.
        let ranges: Vec<Range<usize>> = if one_chunk {
            Vec::new()
        } else if staged {
            ramped_chunks(n, chunk)
        } else {
            whole_chunks(n, chunk).collect()
        };
        if one_chunk {
            stream.memset_zeros(self.bad_indices.raw_mut())?;
            let chunk = Chunk::dense(0, 0, n);
            self.stage(&chunk, &bases[0], scalars, None)?;
            self.enqueue_sort(&chunk, &bases[0], scalars)?;
        }
        for (table, b) in bases.iter().enumerate() {
            if one_chunk {
                self.enqueue_buckets(&Chunk::dense(0, 0, n), b, true)?;
            } else {
                // Each table's pass counts the same out-of-range indices again: keep one pass's count.
                stream.memset_zeros(self.bad_indices.raw_mut())?;
                for (k, range) in ranges.iter().enumerate() {
                    let chunk = Chunk::dense(k % 2, range.start, range.len());
                    self.stage(&chunk, b, scalars, None)?;
                    self.enqueue_chunk(&chunk, b, scalars, k == 0)?;
                    if staged {
                        self.staging_read[k % 2] = Some(stream.record_event(None)?);
                    }
                }
            }
            self.enqueue_finish(table)?;
        }
        if staged && one_chunk {
            self.staging_read[0] = Some(stream.record_event(None)?);
        }
        Ok(())
    }

    /// Allocates the chunk staging host inputs need (twice the chunk where there are several, for double
    /// buffering).
    pub(super) fn prepare_staging(&mut self, bases: &Bases<'_, C>, scalars: &Scalars<'_>) -> Result<()> {
        if matches!(bases, Bases::Host(_)) {
            self.reserve_host_bases()?;
        }
        let chunk = self.plan.chunk.min(self.plan.n);
        if matches!(scalars, Scalars::Host(_)) && self.staged_scalars.is_empty() {
            self.staged_scalars =
                (0..self.plan.staging_buffers()).map(|_| self.gpu.alloc_zeroed(chunk)).collect::<Result<_>>()?;
        }
        Ok(())
    }

    /// Queues the upload of `chunk`'s host inputs (its scalars, its bases) into its staging slot, on the
    /// copy stream, after the kernels that read the slot two chunks ago (`staging_read`; cudarc's buffer
    /// events order it the same way, and the kernels of this chunk after it), as the H2D phase `copy_phase`
    /// (a recorder and the phase's name) when given. Device inputs need nothing.
    pub(super) fn stage(
        &mut self,
        chunk: &Chunk,
        bases: &Bases<'_, C>,
        scalars: &Scalars<'_>,
        copy_phase: Option<(&mut PhaseRecorder, String)>,
    ) -> Result<()> {
        let (host_bases, host_scalars) = (matches!(bases, Bases::Host(_)), matches!(scalars, Scalars::Host(_)));
        if !host_bases && !host_scalars {
            return Ok(());
        }
        let copy = self.gpu.copy_stream().clone();
        let span = tracing::debug_span!("zkgpu.msm.h2d", first = chunk.bases.start, len = chunk.bases.len());
        let _entered = span.enter();
        let slot = chunk.slot;
        if let Some(read) = &self.staging_read[slot] {
            copy.wait(read)?;
        }
        let bytes = staged_point_bytes::<C>(false, host_scalars) * chunk.scalars.len()
            + staged_point_bytes::<C>(host_bases, false) * chunk.bases.len();
        let phase = match copy_phase {
            Some((rec, name)) => Some((rec.begin(name, PhaseKind::H2d, bytes, &copy)?, rec)),
            None => None,
        };
        // Scalars first: the chunk's count and sort read only them, and run while its bases upload.
        if let Scalars::Host(s) = scalars {
            let (dst, range) = (&mut self.staged_scalars[slot], chunk.scalars.clone());
            let len = range.len();
            copy.memcpy_htod(as_bytes(&s[range]), &mut dst.raw_range_mut(0..len)?)?;
        }
        if let Bases::Host(b) = bases {
            let (dst, range) = (&mut self.staged_bases[slot], chunk.bases.clone());
            let len = range.len();
            copy.memcpy_htod(as_bytes(&b[range]), &mut dst.raw_range_mut(0..len)?)?;
        }
        if let Some((id, rec)) = phase {
            rec.end(id, &copy)?;
        }
        Ok(())
    }

    /// Queues count, sort, accumulate, fold and fixup for one chunk on the compute stream.
    /// `first_chunk`: the fixup stores the buckets instead of adding to them (they are not zeroed).
    pub(super) fn enqueue_chunk(
        &mut self,
        chunk: &Chunk,
        bases: &Bases<'_, C>,
        scalars: &Scalars<'_>,
        first_chunk: bool,
    ) -> Result<()> {
        self.enqueue_sort(chunk, bases, scalars)?;
        self.enqueue_buckets(chunk, bases, first_chunk)
    }

    /// Queues the count and the sort of one chunk: `sorted` and `offsets` for every virtual window.
    pub(super) fn enqueue_sort(&mut self, chunk: &Chunk, bases: &Bases<'_, C>, scalars: &Scalars<'_>) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let plan = self.plan;
        let (c, windows, q) = (plan.window_bits, plan.windows, plan.virtual_windows);
        let len = chunk.scalars.len();
        let len32 = len as u32;
        // Point indices (`BaseNaming`): device bases index the whole table (stride n; the chunk's first
        // scalar names base `chunk.bases.start`, sparse scalars name their indices); staged host bases index
        // the staged chunk (no copies; sparse scalars' indices less the window's first position).
        let indexed = matches!(scalars, Scalars::DeviceIndexed { .. });
        let (stride, first32) = match bases {
            Bases::Device(b) => (b.n as u32, if indexed { 0 } else { chunk.bases.start as u32 }),
            Bases::Host(_) => (chunk.bases.len() as u32, if indexed { chunk.bases.start as u32 } else { 0 }),
        };
        let scalar_view = match scalars {
            Scalars::Device(s) | Scalars::DeviceIndexed { scalars: s, .. } => s.raw_range(chunk.scalars.clone())?,
            Scalars::Host(_) => self.staged_scalars[chunk.slot].raw_range(0..len)?,
        };
        let index_view = match scalars {
            Scalars::DeviceIndexed { indices, .. } => Some(indices.raw_range(chunk.scalars.clone())?),
            _ => None,
        };
        // Base indices must be below the row length (sparse scalars are checked against it); null: no indices.
        let limit = stride;
        let counting = plan.sort == Sort::Counting;
        if counting {
            stream.memset_zeros(self.counting.counts.raw_mut())?;
        }

        let count = args::MsmCount {
            scalars: read(&scalar_view),
            indices: read_or_null(index_view.as_ref()),
            len: len32,
            c,
            windows,
            q,
            first: first32,
            limit,
            counts: if counting { write(self.counting.counts.raw_mut()) } else { Ptr::Null },
            digits: write(self.digits.raw_mut()),
            bad: write(self.bad_indices.raw_mut()),
        };
        // SAFETY: msm_count: one thread per scalar of the chunk (len of them in the view, and in the index view
        // if any); counts null (radix sort) or holding q · 2^(c−1) zeroed counters, bad_indices one; digits
        // holds windows · chunk >= windows · len words; c in 1..=24, windows = ⌈256/c⌉, 1 <= q <= windows (plan
        // invariants).
        unsafe { self.kernels.count.launch(&stream, launch_config_1d(len, SCALAR_BLOCK), count) }?;

        let point_args = PointArgs { index_view: index_view.as_ref(), len: len32, stride, first: first32, limit };
        if counting { self.enqueue_counting_sort(&point_args) } else { self.enqueue_radix_sort(&point_args) }
    }

    /// Queues accumulate, fold and fixup for one sorted chunk. `first_chunk`: the fixup stores the buckets
    /// instead of adding to them (they are not zeroed).
    pub(super) fn enqueue_buckets(&mut self, chunk: &Chunk, bases: &Bases<'_, C>, first_chunk: bool) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let plan = self.plan;
        let q = plan.virtual_windows;
        let buckets = plan.buckets() as u32;
        let per_window = plan.per_window() as u32;
        let base_view = match bases {
            Bases::Device(b) => b.table.raw_range(0..b.table.len())?,
            Bases::Host(_) => self.staged_bases[chunk.slot].raw_range(0..chunk.bases.len())?,
        };
        let block = point_block::<C>();
        let segs = plan.per_window().div_ceil(plan.seg as usize);
        let (seg, slots) = (plan.seg, plan.slots() as u32);
        let blocks = (plan.accumulate_threads::<C>() / block as usize) as u32;
        if plan.affine_rounds == 0 {
            let cfg = LaunchConfig { grid_dim: (blocks, q, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
            let accumulate = args::MsmAccumulate {
                bases: read(&base_view),
                sorted: read(self.sorted.raw()),
                per_window,
                offsets: read(self.offsets.raw()),
                buckets,
                seg,
                slots,
                partials: write(self.partials.raw_mut()),
            };
            // SAFETY: msm_{C}_accumulate: grid covers ⌈per_window / seg⌉ segments per virtual window; offsets
            // and sorted come from this chunk's scan and scatter; every entry names a point of the base view (see
            // the scatter); partials holds q · slots points, slots = buckets + ⌈per_window / seg⌉.
            unsafe { self.kernels.accumulate.launch(&stream, cfg, accumulate) }?;
        }
        let mut first_window = 0;
        while plan.affine_rounds > 0 && first_window < q {
            let group = plan.affine_windows.min(q - first_window);
            let cfg = LaunchConfig { grid_dim: (blocks, group, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
            let accumulate = args::MsmAccumulateAffine {
                bases: read(&base_view),
                sorted: read(self.sorted.raw()),
                per_window,
                offsets: read(self.offsets.raw()),
                buckets,
                seg,
                slots,
                partials: write(self.partials.raw_mut()),
                rounds: plan.affine_rounds,
                first_window,
                scratch: write(self.affine_scratch.raw_mut()),
            };
            // SAFETY: msm_{C}_accumulate_affine: as the XYZZ launch above, for virtual windows first_window ..
            // first_window + group <= q; affine_scratch holds affine_windows · blocks · block · seg · 5/4 >=
            // (threads of this launch) · seg · 5/4 points; launches on one stream never share it.
            unsafe { self.kernels.accumulate_affine.launch(&stream, cfg, accumulate) }?;
            first_window += group;
        }

        // Buckets spanning more than FOLD_RUNS segments get their runs summed in groups first.
        let groups = segs.div_ceil(FOLD_RUNS as usize);
        if groups > 1 {
            let cfg = LaunchConfig {
                grid_dim: (groups.div_ceil(block as usize) as u32, q, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: 0,
            };
            let fold = args::MsmFold {
                offsets: read(self.offsets.raw()),
                buckets,
                seg,
                partials: write(self.partials.raw_mut()),
                slots,
            };
            // SAFETY: msm_{C}_fold: after this chunk's accumulate, same offsets, seg and slots; the grid covers
            // every group of FOLD_RUNS segments of each virtual window; groups own disjoint slots.
            unsafe { self.kernels.fold.launch(&stream, cfg, fold) }?;
        }

        // The fixup (a thread per bucket), then, where buckets span segments, the spanning fixup (a thread per
        // segment boundary): the same arguments.
        for (kernel, threads) in [(&self.kernels.fixup, buckets as usize), (&self.kernels.fixup_spanning, segs - 1)] {
            if threads == 0 {
                continue;
            }
            let cfg = LaunchConfig {
                grid_dim: (threads.div_ceil(block as usize) as u32, q, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: 0,
            };
            let fixup = args::MsmFixup {
                offsets: read(self.offsets.raw()),
                buckets,
                seg,
                partials: read(self.partials.raw()),
                slots,
                bucket_sums: write(self.buckets.raw_mut()),
                first: u32::from(first_chunk),
            };
            // SAFETY: msm_{C}_fixup: one thread per bucket of each virtual window; offsets/partials as written
            // by the accumulate launch above (same seg and slots); buckets holds q · buckets XYZZ points, all
            // written by the first chunk's fixups (first = 1) before later chunks add to them.
            // msm_{C}_fixup_spanning: the same, a thread per segment boundary; it writes only buckets spanning
            // segments, which the fixup left alone.
            unsafe { kernel.launch(&stream, cfg, fixup) }?;
        }
        Ok(())
    }

    /// The counting sort of the chunk's digits into `sorted` and `offsets`: scan of the count kernel's
    /// counters, then the scatter in the plan's passes over bucket ranges.
    pub(super) fn enqueue_counting_sort(&mut self, at: &PointArgs<'_>) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let plan = self.plan;
        let (c, windows, q) = (plan.window_bits, plan.windows, plan.virtual_windows);
        let buckets = plan.buckets() as u32;
        let per_window = plan.per_window() as u32;
        let parts = plan.scan_parts() as u32;
        let cfg =
            LaunchConfig { grid_dim: (parts, q, 1), block_dim: (SCAN_BLOCK, 1, 1), shared_mem_bytes: SCAN_BLOCK * 4 };
        let scratch = &mut self.counting;
        let sums =
            args::MsmScanSums { counts: read(scratch.counts.raw()), buckets, sums: write(scratch.scan_sums.raw_mut()) };
        // SAFETY: msm_scan_sums: grid (⌈buckets / SCAN_SPAN⌉, q) of SCAN_BLOCK threads with SCAN_BLOCK u32 of
        // shared memory; counts holds q · buckets entries, scan_sums q · parts.
        unsafe { self.kernels.scan_sums.launch(&stream, cfg, sums) }?;
        let scan = args::MsmScan {
            counts: read(scratch.counts.raw()),
            buckets,
            sums: read(scratch.scan_sums.raw()),
            offsets: write(self.offsets.raw_mut()),
            cursors: write(scratch.cursors.raw_mut()),
        };
        // SAFETY: msm_scan: the same grid (parts <= SCAN_BLOCK since buckets <= 2^23); counts and cursors hold
        // q · buckets entries, offsets q · (buckets + 1), scan_sums the part sums just written; totals <= len ·
        // copies < 2^32.
        unsafe { self.kernels.scan.launch(&stream, cfg, scan) }?;

        let cfg = LaunchConfig {
            grid_dim: ((at.len as usize).div_ceil(SCALAR_BLOCK as usize) as u32, windows, 1),
            block_dim: (SCALAR_BLOCK, 1, 1),
            shared_mem_bytes: 0,
        };
        let range = buckets.div_ceil(plan.scatter_passes);
        for pass in 0..plan.scatter_passes {
            let (bucket_lo, bucket_hi) = (pass * range, ((pass + 1) * range).min(buckets));
            let scatter = args::MsmScatter {
                digits: read(self.digits.raw()),
                indices: read_or_null(at.index_view),
                len: at.len,
                c,
                windows,
                q,
                stride: at.stride,
                first: at.first,
                limit: at.limit,
                offsets: read(self.offsets.raw()),
                cursors: write(scratch.cursors.raw_mut()),
                sorted: write(self.sorted.raw_mut()),
                per_window,
                bucket_lo,
                bucket_hi,
            };
            // SAFETY: msm_scatter: grid (⌈len / block⌉, windows); the count's digits and ranks for the same
            // chunk and layout and the scan's offsets and cursors of its counts, so every slot stays inside its
            // bucket's range of the window (<= per_window entries);
            // the passes' bucket ranges are disjoint, so each entry is written once; sorted holds q · per_window
            // entries; the index view (if any) holds len indices; base indices are below limit (n rows of the
            // table, or len staged bases; larger ones were counted by the count and become 0), so point indices
            // (w / q)·stride + index are < copies · n < 2^31 (check_table).
            unsafe { self.kernels.scatter.launch(&stream, cfg, scatter) }?;
        }
        Ok(())
    }

    /// The radix sort of the chunk's digits into `sorted` and `offsets` (`zkgpu_kernels::msm_sort`), group by
    /// group of virtual windows: per pass upsweep, spine (the scan kernels over the histogram) and downsweep,
    /// then the offsets from the sorted keys.
    pub(super) fn enqueue_radix_sort(&mut self, at: &PointArgs<'_>) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let plan = self.plan;
        let (c, windows, q) = (plan.window_bits, plan.windows, plan.virtual_windows);
        let buckets = plan.buckets();
        let per_window = plan.per_window();
        let pw32 = per_window as u32;
        let (bits, passes) = (radix_bits(c), radix_passes(c));
        let (blocks, tiles_per_block) = sort_grid(windows.div_ceil(q) * at.len);
        let spine_len = (1u32 << bits) * blocks;
        let parts = spine_len.div_ceil(SCAN_SPAN);
        let up_shared = upsweep_shared_bytes(bits) as u32;
        let down_shared = downsweep_shared_bytes(bits) as u32;
        let scratch = &mut self.radix;
        let mut v0 = 0u32;
        while v0 < q {
            let group = plan.sort_group.min(q - v0);
            let (lo, hi) = (v0 as usize * per_window, (v0 + group) as usize * per_window);
            let grid = |x: u32, shared: u32, block: u32| LaunchConfig {
                grid_dim: (x, group, 1),
                block_dim: (block, 1, 1),
                shared_mem_bytes: shared,
            };
            for pass in 0..passes {
                // Keys alternate between the two key buffers; values end in `sorted` after the last pass.
                let vals_to_sorted = (passes - 1 - pass) % 2 == 0;
                let [keys0, keys1] = &mut scratch.keys;
                let (keys_in, keys_out) = if pass % 2 == 0 { (&*keys1, keys0) } else { (&*keys0, keys1) };
                let upsweep = args::MsmSortUpsweep {
                    digits: read(self.digits.raw()),
                    len: at.len,
                    c,
                    windows,
                    q,
                    v0,
                    per_window: pw32,
                    tiles_per_block,
                    pass,
                    bits,
                    keys: if pass == 0 { Ptr::Null } else { read(keys_in.raw()) },
                    counts: read(scratch.counts.raw()),
                    hist: write(scratch.hist.raw_mut()),
                };
                // SAFETY: msm_sort_upsweep: grid (blocks, group), v0 + group <= q, SORT_BLOCK threads with
                // 2^bits counters of shared memory; digits from this chunk's count kernel (len >= 1); later
                // passes read the previous pass's keys (group · per_window words) and the first pass's counts;
                // hist holds group · 2^bits · SORT_GRID >= group · spine_len words.
                unsafe { self.kernels.sort_upsweep.launch(&stream, grid(blocks, up_shared, SORT_BLOCK), upsweep) }?;
                let scan_cfg = grid(parts, SCAN_BLOCK * 4, SCAN_BLOCK);
                let sums = args::MsmScanSums {
                    counts: read(scratch.hist.raw()),
                    buckets: spine_len,
                    sums: write(scratch.sums.raw_mut()),
                };
                // SAFETY: msm_scan_sums over group windows of spine_len counters (parts <= SCAN_BLOCK);
                // sums holds group · parts words.
                unsafe { self.kernels.scan_sums.launch(&stream, scan_cfg, sums) }?;
                let scan = args::MsmScan {
                    counts: read(scratch.hist.raw()),
                    buckets: spine_len,
                    sums: read(scratch.sums.raw()),
                    offsets: write(scratch.spine.raw_mut()),
                    cursors: write(scratch.cursors.raw_mut()),
                };
                // SAFETY: msm_scan: same grid; spine holds group · (spine_len + 1) words, cursors group ·
                // spine_len; totals <= per_window < 2^32.
                unsafe { self.kernels.scan.launch(&stream, scan_cfg, scan) }?;
                let sorted = &mut self.sorted;
                let vals = &mut scratch.vals;
                let (vals_in, mut vals_out) = if vals_to_sorted {
                    (vals.raw_range(0..vals.len())?, sorted.raw_range_mut(lo..hi)?)
                } else {
                    (sorted.raw_range(lo..hi)?, vals.raw_range_mut(0..vals.len())?)
                };
                let downsweep = args::MsmSortDownsweep {
                    digits: read(self.digits.raw()),
                    indices: read_or_null(at.index_view),
                    len: at.len,
                    c,
                    windows,
                    q,
                    stride: at.stride,
                    first: at.first,
                    limit: at.limit,
                    v0,
                    per_window: pw32,
                    tiles_per_block,
                    pass,
                    bits,
                    keys: if pass == 0 { Ptr::Null } else { read(keys_in.raw()) },
                    vals: if pass == 0 { Ptr::Null } else { read(&vals_in) },
                    counts: write(scratch.counts.raw_mut()),
                    spine: read(scratch.spine.raw()),
                    out_keys: write(keys_out.raw_mut()),
                    out_vals: write(&mut vals_out),
                };
                // SAFETY: msm_sort_downsweep: the upsweep's grid and arguments, downsweep_shared_bytes(bits) of
                // shared memory (allowed at Msm::new for RADIX_BITS >= bits); spine is the scan of that
                // upsweep's histogram; inputs (the digits and index view, or the previous pass's keys and
                // values) never alias the outputs (the other key buffer, and `sorted` or `vals` by the rule
                // above); outputs hold group · per_window words; point indices < 2^31 as for the scatter.
                let down_cfg = grid(blocks, down_shared, SORT_BLOCK);
                unsafe { self.kernels.sort_downsweep.launch(&stream, down_cfg, downsweep) }?;
            }
            let final_keys = &scratch.keys[((passes - 1) % 2) as usize];
            let b32 = buckets as u32;
            let mut offsets =
                self.offsets.raw_range_mut(v0 as usize * (buckets + 1)..(v0 + group) as usize * (buckets + 1))?;
            let sort_offsets = args::MsmSortOffsets {
                keys: read(final_keys.raw()),
                counts: read(scratch.counts.raw()),
                per_window: pw32,
                buckets: b32,
                offsets: write(&mut offsets),
            };
            // SAFETY: msm_sort_offsets: grid (⌈(buckets + 1) / block⌉, group); the last pass's keys (ascending
            // in each window's first counts[y] words); offsets is the group's group · (buckets + 1) words.
            let x = (buckets + 1).div_ceil(SORT_BLOCK as usize) as u32;
            unsafe { self.kernels.sort_offsets.launch(&stream, grid(x, 0, SORT_BLOCK), sort_offsets) }?;
            v0 += group;
        }
        Ok(())
    }

    /// Queues the bucket reduction and the per-window sums into `window_sums[table]`.
    pub(super) fn enqueue_finish(&mut self, table: usize) -> Result<()> {
        let stream = self.gpu.stream().clone();
        let plan = self.plan;
        let q = plan.virtual_windows;
        let buckets = plan.buckets() as u32;
        let (run, shares) = (plan.reduce_run, plan.shares());
        let block = point_block::<C>();
        let cfg = LaunchConfig {
            grid_dim: (shares.div_ceil(block as usize) as u32, q, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        };
        let reduce = args::MsmReduce {
            bucket_sums: read(self.buckets.raw()),
            buckets,
            run,
            shares: write(self.shares.raw_mut()),
        };
        // SAFETY: msm_{C}_reduce: one thread per share (⌈buckets / run⌉ per virtual window); buckets holds
        // q · buckets points, shares q · ⌈buckets / run⌉.
        unsafe { self.kernels.reduce.launch(&stream, cfg, reduce) }?;
        let sums = self.window_sums.get_mut(table).ok_or_else(|| Error::MsmConfig("no result buffer".into()))?;
        self.sums.enqueue(&self.shares, shares as u32, sums)
    }
}

/// `Σ_v 2^start(v)·sums[v]` by Horner from the top window: `bits(v)` doublings before adding window `v`.
pub(super) fn combine_windows<C: Curve>(sums: &[C::Projective], widths: WindowWidths) -> C::Projective {
    let mut acc = C::identity();
    for (v, sum) in sums.iter().enumerate().rev() {
        if v + 1 < sums.len() {
            for _ in 0..widths.bits(v as u32) {
                acc = C::double(&acc);
            }
        }
        acc = C::add_projective(&acc, sum);
    }
    acc
}

/// `Σ scalars[i]·bases[i]` with everything in host memory: a one-shot plan fitted to the device's free memory
/// ([`MsmPlan::within`]) and engine (use [`Msm`] to reuse scratch across calls). `Err(LengthMismatch)` when
/// the lengths differ, `Err(OutOfMemory)` when no plan fits.
pub fn msm<C: Curve>(gpu: &Gpu, bases: &[C::Affine], scalars: &[Scalar]) -> Result<C::Projective> {
    if bases.len() != scalars.len() {
        return Err(Error::LengthMismatch { what: "msm bases", expected: scalars.len(), actual: bases.len() });
    }
    let plan = MsmPlan::within::<C>(scalars.len(), &MsmConfig::default(), true, &DeviceLimits::of(gpu)?)?;
    Msm::<C>::new(gpu, plan)?.run(Bases::Host(bases), Scalars::Host(scalars))
}

/// `Σ scalars[i]·bases[i]` with device-resident bases and scalars (one-shot plan fitted to the memory left
/// beside them, and engine).
pub fn msm_device<C: Curve>(gpu: &Gpu, bases: &MsmBases<C>, scalars: &DeviceBuffer<Scalar>) -> Result<C::Projective> {
    let plan = MsmPlan::within::<C>(scalars.len(), &MsmConfig::default(), false, &DeviceLimits::of(gpu)?)?;
    Msm::<C>::new(gpu, plan)?.run(Bases::Device(bases), Scalars::Device(scalars))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field as _;
    use group::Group as _;
    use proptest::prelude::*;
    use rand_chacha::ChaCha20Rng;
    use rand_core::SeedableRng;

    /// The host's combine is `Σ_v 2^start(v)·sums[v]` for every window layout a plan can have: `⌈256 / c⌉`
    /// windows with the narrow top ones, or fewer (precomputed copies), all `c` bits. A point of prime order
    /// `r` times `2^k` equals it times `2^k mod r`, so the expected value is a scalar multiplication.
    fn combine_is_the_weighted_sum<C: Curve>(
        c: u32,
        copies: u32,
        sums: &[C::Projective],
        scalar_mul: impl Fn(&C::Projective, &Scalar) -> C::Projective,
    ) {
        let q = window_count(c).div_ceil(copies);
        let sums = &sums[..q as usize];
        let widths = WindowWidths::new(c, q);
        let expected = sums.iter().enumerate().fold(C::identity(), |acc, (v, s)| {
            let weight = Scalar::from(2u64).pow_vartime([u64::from(widths.start(v as u32))]);
            C::add_projective(&acc, &scalar_mul(s, &weight))
        });
        let got = combine_windows::<C>(sums, widths);
        assert_eq!(C::normalize(&got), C::normalize(&expected), "c {c}, copies {copies}");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn combine_windows_g1(c in 1u32..=MAX_WINDOW_BITS, copies in 1u32..4, seed in any::<u64>()) {
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let sums: Vec<_> = (0..256).map(|i| if i % 7 == 3 { blstrs::G1Projective::identity() } else { blstrs::G1Projective::random(&mut rng) }).collect();
            combine_is_the_weighted_sum::<G1>(c, copies, &sums, |p, s| p * s);
        }

        #[test]
        fn combine_windows_g2(c in 1u32..=MAX_WINDOW_BITS, copies in 1u32..4, seed in any::<u64>()) {
            let mut rng = ChaCha20Rng::seed_from_u64(seed);
            let sums: Vec<_> = (0..256).map(|i| if i % 7 == 3 { blstrs::G2Projective::identity() } else { blstrs::G2Projective::random(&mut rng) }).collect();
            combine_is_the_weighted_sum::<G2>(c, copies, &sums, |p, s| p * s);
        }
    }
}
