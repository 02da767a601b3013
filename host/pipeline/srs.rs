//! The proving key's points on one GPU ([`PartitionSrs`]): the H query and each assignment's queries.
use super::*;

/// A query's points for batch addition: the table of its MSM bases (never precomputed here).
pub(super) fn query_points<C: Curve>(bases: &MsmBases<C>) -> Result<&DeviceBuffer<C::Affine>> {
    bases.points().ok_or_else(|| Error::Pipeline("query bases are a precomputed table".into()))
}

/// One assignment's queries on one curve.
pub(super) enum Queries<C: Curve> {
    /// On the device.
    Device(Vec<MsmBases<C>>),
    /// In pinned host memory: an engine uploads them when its budget has room (they become `Device`), else
    /// streams them window by window through the assignment's work in every job.
    Pinned(Vec<PinnedBuffer<C::Affine>>),
}

impl<C: Curve> Queries<C> {
    pub(super) fn len(&self) -> usize {
        match self {
            Queries::Device(q) => q.len(),
            Queries::Pinned(q) => q.len(),
        }
    }

    /// The queries in pinned host memory (none when on the device).
    pub(super) fn pinned(&self) -> Vec<&PinnedBuffer<C::Affine>> {
        match self {
            Queries::Pinned(q) => q.iter().collect(),
            Queries::Device(_) => Vec::new(),
        }
    }

    /// Marks the queries in pinned host memory as read by `stream` (their release and host writes wait for
    /// what is queued there).
    pub(super) fn mark_read_by(&mut self, stream: &CudaStream) -> Result<()> {
        if let Queries::Pinned(q) = self {
            for table in q {
                table.mark_read_by(stream)?;
            }
        }
        Ok(())
    }

    /// Moves pinned queries to the device (they fit the engine's budget).
    fn upload(&mut self, gpu: &Gpu) -> Result<()> {
        if let Queries::Pinned(q) = self {
            *self = Queries::Device(q.iter().map(|p| MsmBases::from_buffer(gpu.upload(p)?)).collect::<Result<_>>()?);
        }
        Ok(())
    }

    /// Device memory the bases take (none in pinned host memory).
    fn device_bytes(&self) -> usize {
        match self {
            Queries::Device(q) => q.iter().map(MsmBases::device_bytes).sum(),
            Queries::Pinned(_) => 0,
        }
    }
}

/// The bases of one assignment's queries.
pub(super) struct AssignmentBases {
    pub(super) len: usize,
    pub(super) g1: Queries<G1>,
    pub(super) g2: Queries<G2>,
}

impl AssignmentBases {
    /// Its queries are in pinned host memory: given so, an engine streams them unless they fit its budget
    /// (it then uploads them).
    pub(super) fn streamed(&self) -> bool {
        matches!(self.g1, Queries::Pinned(_)) || matches!(self.g2, Queries::Pinned(_))
    }

    /// Moves its queries to the device.
    pub(super) fn upload(&mut self, gpu: &Gpu) -> Result<()> {
        self.g1.upload(gpu)?;
        self.g2.upload(gpu)
    }

    /// Bytes of bases its jobs upload (the streamed queries, each once).
    pub(super) fn streamed_bytes(&self) -> usize {
        if self.streamed() {
            self.len * (self.g1.len() * size_of::<G1Affine>() + self.g2.len() * size_of::<G2Affine>())
        } else {
            0
        }
    }
}

/// The length all queries of an assignment share: at least one point, at least one query.
fn assignment_len(lens: impl Iterator<Item = usize>) -> Result<usize> {
    let lens: Vec<usize> = lens.collect();
    let len = lens.first().copied().unwrap_or(0);
    if len == 0 {
        return Err(Error::LengthMismatch {
            what: "partition assignment queries (none, or empty)",
            expected: 1,
            actual: 0,
        });
    }
    match lens.iter().find(|&&l| l != len) {
        Some(&l) => Err(Error::LengthMismatch { what: "partition query length", expected: len, actual: l }),
        None => Ok(len),
    }
}

/// Where the H query is.
pub(super) enum HQuery {
    /// On the device.
    Device(MsmBases<G1>),
    /// In pinned host memory: the engine uploads it when its working set fits the budget, else streams it
    /// through the H MSM in every job.
    Pinned(PinnedBuffer<G1Affine>),
}

/// A partition's proving key on one GPU: the H query (`n` bases, `n` a power of two) and, per assignment, its
/// G1 and G2 queries (each exactly as long as the assignment). Uploaded once, used by every job.
pub struct PartitionSrs {
    pub(super) ordinal: usize,
    pub(super) n: usize,
    pub(super) h: HQuery,
    pub(super) assignments: Vec<AssignmentBases>,
}

impl PartitionSrs {
    /// The H query already on `gpu` (`n` a power of two).
    pub fn new(gpu: &Gpu, h: DeviceBuffer<G1Affine>) -> Result<Self> {
        gpu.owns("PartitionSrs::new H query", &h)?;
        let n = h.len();
        checked_log_n(n)?;
        let h = HQuery::Device(MsmBases::from_buffer(h)?);
        Ok(PartitionSrs { ordinal: gpu.info().ordinal, n, h, assignments: Vec::new() })
    }

    /// The H query in pinned host memory (e.g. a [`crate::PinnedPool`] buffer filled once from the key; `n` a
    /// power of two), for an engine with a device-memory budget: it is uploaded when the engine's working set
    /// fits [`PartitionConfig::max_device_bytes`], else streamed through the H MSM chunk by chunk in every job.
    pub fn pinned(gpu: &Gpu, h: PinnedBuffer<G1Affine>) -> Result<Self> {
        let n = h.len();
        checked_log_n(n)?;
        Ok(PartitionSrs { ordinal: gpu.info().ordinal, n, h: HQuery::Pinned(h), assignments: Vec::new() })
    }

    /// Uploads the H query.
    pub fn upload(gpu: &Gpu, h: &[G1Affine]) -> Result<Self> {
        checked_log_n(h.len())?;
        PartitionSrs::new(gpu, gpu.upload(h)?)
    }

    /// Adds an assignment whose queries are already on `gpu`: all of them as long as the assignment (at
    /// least one point, at least one query). Returns its index (the job's `assignments` order).
    pub fn add_assignment(
        &mut self,
        gpu: &Gpu,
        g1: Vec<DeviceBuffer<G1Affine>>,
        g2: Vec<DeviceBuffer<G2Affine>>,
    ) -> Result<usize> {
        if gpu.info().ordinal != self.ordinal {
            return Err(Error::Pipeline(format!(
                "SRS of GPU {} given bases on GPU {}",
                self.ordinal,
                gpu.info().ordinal
            )));
        }
        let len = assignment_len(g1.iter().map(DeviceBuffer::len).chain(g2.iter().map(DeviceBuffer::len)))?;
        let g1 = Queries::Device(g1.into_iter().map(MsmBases::from_buffer).collect::<Result<Vec<_>>>()?);
        let g2 = Queries::Device(g2.into_iter().map(MsmBases::from_buffer).collect::<Result<Vec<_>>>()?);
        self.assignments.push(AssignmentBases { len, g1, g2 });
        Ok(self.assignments.len() - 1)
    }

    /// Adds an assignment whose queries are in pinned host memory (e.g. [`crate::PinnedPool`] buffers filled
    /// once from the key), for a key larger than the device-memory budget: the engine uploads them when its
    /// budget has room, else streams them through every job, window by window of
    /// [`PartitionConfig::query_window`] positions ([`PartitionEngine::memory`] says which). Jobs must then
    /// give the assignment's `tail_index` ascending (as [`split_assignment`] writes it). Lengths as
    /// [`PartitionSrs::add_assignment`]. Returns its index.
    pub fn add_assignment_pinned(
        &mut self,
        g1: Vec<PinnedBuffer<G1Affine>>,
        g2: Vec<PinnedBuffer<G2Affine>>,
    ) -> Result<usize> {
        let len = assignment_len(g1.iter().map(|q| q.len()).chain(g2.iter().map(|q| q.len())))?;
        self.assignments.push(AssignmentBases { len, g1: Queries::Pinned(g1), g2: Queries::Pinned(g2) });
        Ok(self.assignments.len() - 1)
    }

    /// [`PartitionSrs::add_assignment`] from host slices.
    pub fn add_assignment_host(&mut self, gpu: &Gpu, g1: &[&[G1Affine]], g2: &[&[G2Affine]]) -> Result<usize> {
        let g1 = g1.iter().map(|q| gpu.upload(q)).collect::<Result<Vec<_>>>()?;
        let g2 = g2.iter().map(|q| gpu.upload(q)).collect::<Result<Vec<_>>>()?;
        self.add_assignment(gpu, g1, g2)
    }

    /// The shape jobs must have.
    pub fn shape(&self) -> PartitionShape {
        PartitionShape { n: self.n, assignments: self.assignments.iter().map(|a| a.len).collect() }
    }

    /// (G1 queries, G2 queries) per assignment.
    pub fn query_counts(&self) -> Vec<(usize, usize)> {
        self.assignments.iter().map(|a| (a.g1.len(), a.g2.len())).collect()
    }

    /// Device memory the bases take (an H query in pinned memory takes none).
    pub fn device_bytes(&self) -> usize {
        let q1: usize = self.assignments.iter().map(|a| a.g1.device_bytes()).sum();
        let q2: usize = self.assignments.iter().map(|a| a.g2.device_bytes()).sum();
        let h = match &self.h {
            HQuery::Device(h) => h.device_bytes(),
            HQuery::Pinned(_) => 0,
        };
        h + q1 + q2
    }
}
