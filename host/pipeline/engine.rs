//! [`PartitionEngine`]: one GPU's working set and the start/finish job protocol (streams, slots, stages).
use super::*;

/// Device inputs of one job.
pub(super) struct Slot {
    pub(super) a: DeviceBuffer<Scalar>,
    pub(super) b: DeviceBuffer<Scalar>,
    /// C's own buffer; `None` where C shares B's ([`SlotLayout::c_shares_b`]).
    pub(super) c: Option<DeviceBuffer<Scalar>>,
    /// Per assignment: the tail scalars, their positions, how many the job has, and the ones bitmap.
    pub(super) tails: Vec<DeviceBuffer<Scalar>>,
    pub(super) tail_index: Vec<DeviceBuffer<u32>>,
    pub(super) tail_len: Vec<usize>,
    /// Per assignment the ones bitmap, as many words as [`SlotLayout::ones_words`] says: a streamed
    /// assignment's is zero-padded to whole windows, and the bits past the assignment's length are cleared.
    pub(super) ones: Vec<DeviceBuffer<u32>>,
    /// Per streamed assignment, the tail entries of each window (empty for the others).
    pub(super) tail_windows: Vec<Vec<Range<usize>>>,
    /// Per assignment its last bitmap word, masked to the assignment's length, to upload from.
    last_ones: PinnedBuffer<u32>,
}

/// What a slot holds beyond the job's shape: per assignment, the positions per window when its queries stream
/// from pinned memory (`None`: on the device; while the engine is placed, every assignment in pinned memory has
/// one, since it may stream); and whether C shares B's buffer.
#[derive(Clone, Debug)]
pub(super) struct SlotLayout {
    pub(super) shape: PartitionShape,
    pub(super) windows: Vec<Option<usize>>,
    /// Per assignment, the most tail entries a job may have ([`PartitionConfig::max_tail_fraction`]).
    pub(super) tail_capacity: Vec<usize>,
    /// Two vectors of `n` instead of three: C is uploaded into B's buffer once B is multiplied into A
    /// ([`Ntt::groth16_h_multiply`]), so its upload waits for B's transforms (chosen only where three do not
    /// fit the budget: a 2^27 slot is then 4.3 GB smaller).
    pub(super) c_shares_b: bool,
}

impl SlotLayout {
    /// `Err(LengthMismatch)` for a job whose tail is longer than its slot's room
    /// ([`PartitionConfig::max_tail_fraction`]).
    pub(super) fn check_tails(&self, job: &PartitionJob<'_>) -> Result<()> {
        for (input, &capacity) in job.assignments.iter().zip(&self.tail_capacity) {
            if input.tail.len() > capacity {
                return Err(Error::LengthMismatch {
                    what: "partition assignment tail (at most PartitionConfig::max_tail_fraction of its length)",
                    expected: capacity,
                    actual: input.tail.len(),
                });
            }
        }
        Ok(())
    }

    /// Bitmap words of assignment `i`'s slot buffer: its length's, or whole windows' when it may stream (a
    /// window's batch addition reads a window of bits).
    pub(super) fn ones_words(&self, i: usize) -> usize {
        let len = self.shape.assignments[i];
        match self.windows[i] {
            Some(w) => len.div_ceil(w) * (w / 32),
            None => len.div_ceil(32),
        }
    }
}

impl Slot {
    /// Device memory of a slot with `layout`: what [`Slot::new`] allocates (keep the two together), known
    /// before allocating.
    pub(super) fn bytes(layout: &SlotLayout) -> usize {
        let shape = &layout.shape;
        let per_assignment = |i: usize| {
            layout.tail_capacity[i] * (size_of::<Scalar>() + size_of::<u32>()) + layout.ones_words(i) * size_of::<u32>()
        };
        let vectors = if layout.c_shares_b { 2 } else { 3 };
        vectors * shape.n * size_of::<Scalar>() + (0..shape.assignments.len()).map(per_assignment).sum::<usize>()
    }

    pub(super) fn new(gpu: &Gpu, layout: &SlotLayout) -> Result<Slot> {
        let (n, lens) = (layout.shape.n, &layout.shape.assignments);
        Ok(Slot {
            a: gpu.alloc_zeroed(n)?,
            b: gpu.alloc_zeroed(n)?,
            c: if layout.c_shares_b { None } else { Some(gpu.alloc_zeroed(n)?) },
            tails: layout.tail_capacity.iter().map(|&m| gpu.alloc_zeroed(m)).collect::<Result<_>>()?,
            tail_index: layout.tail_capacity.iter().map(|&m| gpu.alloc_zeroed(m)).collect::<Result<_>>()?,
            tail_len: vec![0; lens.len()],
            ones: Slot::alloc_ones(gpu, layout)?,
            tail_windows: vec![Vec::new(); lens.len()],
            last_ones: gpu.alloc_pinned(lens.len(), crate::pinned::PinnedMode::WriteCombined)?,
        })
    }

    /// Per assignment a zeroed bitmap of [`SlotLayout::ones_words`] words.
    fn alloc_ones(gpu: &Gpu, layout: &SlotLayout) -> Result<Vec<DeviceBuffer<u32>>> {
        (0..layout.shape.assignments.len()).map(|i| gpu.alloc_zeroed(layout.ones_words(i))).collect()
    }

    /// Queues the NTT chain on the slot's a, b, c as a job does, without its uploads and phases (the engine
    /// builds the NTT tables with it).
    fn transform(&mut self, ntt: &Ntt) -> Result<()> {
        ntt.groth16_h_prepare(&mut self.a)?;
        ntt.groth16_h_prepare(&mut self.b)?;
        ntt.groth16_h_multiply(&mut self.a, &self.b)?;
        let c = self.c.as_mut().unwrap_or(&mut self.b);
        ntt.groth16_h_prepare_c(c)?;
        ntt.groth16_h_finish(&mut self.a, self.c.as_ref().unwrap_or(&self.b))
    }

    /// Assignment `i`'s tail as the sparse scalars of its MSMs.
    pub(super) fn tail(&self, i: usize) -> Scalars<'_> {
        Scalars::DeviceIndexed { scalars: &self.tails[i], indices: &self.tail_index[i], len: self.tail_len[i] }
    }
}

/// The batch adder and the tail MSM of one assignment's queries on one curve. Resident queries share the
/// assignment's scalars, so the adder compacts the `ones` bitmap once and the MSM sorts the tail once
/// ([`BatchAdder::enqueue_tables`], [`Msm::enqueue_tables`]); only the additions run per query. Streamed
/// queries (`window`) run window by window: each window of a query's bases is uploaded once and serves its
/// batch addition (into its own result, summed at collection) and its chunk of the tail MSM
/// ([`Msm::begin_pinned_windows`]), one step at a time so that the engine can interleave them with other
/// streamed work.
pub(super) struct QueryGroup<'g, C: Curve> {
    pub(super) adder: BatchAdder<'g, C>,
    pub(super) msm: Msm<'g, C>,
    queries: usize,
    /// Positions per window of streamed queries, and the assignment's windows; `None`: resident.
    window: Option<(usize, usize)>,
}

impl<'g, C: Curve> QueryGroup<'g, C> {
    /// `None` for an assignment without queries on this curve. `window`: its queries stream in windows of
    /// that many positions.
    pub(super) fn new(
        gpu: &'g Gpu,
        queries: usize,
        len: usize,
        window: Option<usize>,
        config: &PartitionConfig,
    ) -> Result<Option<Self>> {
        if queries == 0 {
            return Ok(None);
        }
        let plan = windowed_tail_plan(len, config, window)?;
        let points = window.unwrap_or(len);
        let windows = len.div_ceil(points);
        let mut group = QueryGroup {
            adder: BatchAdder::new(gpu, points, &[0, points], config.batch_add)?,
            msm: Msm::new(gpu, plan)?,
            queries,
            window: window.map(|w| (w, windows)),
        };
        // Every result buffer, the bitmap compaction and the staging now: jobs allocate nothing.
        group.adder.reserve_tables(queries * windows)?;
        group.adder.reserve_selection()?;
        group.msm.reserve_tables(queries)?;
        if let Some(w) = window {
            group.msm.reserve_window_staging(w, config.window_staging)?;
        }
        Ok(Some(group))
    }

    /// Device memory of the adder and the tail MSM.
    pub(super) fn device_bytes(&self) -> usize {
        self.adder.device_bytes() + self.msm.device_bytes()
    }

    /// Queues the batch additions and the tail MSMs of every query (on the device) of assignment `i` in
    /// `slot`, as two phases (`batch_add.{name}`, `msm.tail.{name}`).
    pub(super) fn enqueue(
        &mut self,
        bases: &[MsmBases<C>],
        slot: &Slot,
        i: usize,
        rec: &mut PhaseRecorder,
        stream: &std::sync::Arc<CudaStream>,
        name: &str,
    ) -> Result<()> {
        if self.window.is_some() {
            return Err(Error::Pipeline(format!("assignment {i}'s queries are on the device, its engines stream")));
        }
        let (adder, msm, ones) = (&mut self.adder, &mut self.msm, &slot.ones[i]);
        let points = bases.iter().map(query_points).collect::<Result<Vec<_>>>()?;
        rec.phase(format!("batch_add.{name}"), PhaseKind::Kernel, 0, stream, |_| {
            adder.enqueue_tables(&points, Some(ones))
        })?;
        let tables: Vec<&MsmBases<C>> = bases.iter().collect();
        rec.phase(format!("msm.tail.{name}"), PhaseKind::Kernel, 0, stream, |_| {
            msm.enqueue_tables(&tables, slot.tail(i))
        })
    }

    /// Begins the streamed work of assignment `i`'s queries (in pinned memory, `tables`) in `slot`: one step
    /// per query and window, queued by [`QueryGroup::step`].
    pub(super) fn begin(&mut self, tables: &[&PinnedBuffer<C::Affine>], slot: &Slot, i: usize) -> Result<Streamed> {
        let Some((window, _)) = self.window else {
            return Err(Error::Pipeline(format!("assignment {i}'s queries stream, its engines are resident")));
        };
        self.msm.begin_pinned_windows(tables, (&slot.tails[i], &slot.tail_index[i]), &slot.tail_windows[i], window)
    }

    /// Queues the next step of `run` ([`QueryGroup::begin`]): a window of one query uploaded, its batch
    /// addition (the window's words of the slot's `ones`, into its own result) and its chunk of the tail MSM,
    /// as phases of `phases`.
    pub(super) fn step(
        &mut self,
        run: &mut Streamed,
        tables: &[&PinnedBuffer<C::Affine>],
        slot: &Slot,
        i: usize,
        phases: StepPhases<'_>,
    ) -> Result<()> {
        let Some((window, windows)) = self.window else {
            return Err(Error::Pipeline(format!("assignment {i}'s queries stream, its engines are resident")));
        };
        let (adder, ones) = (&mut self.adder, &slot.ones[i]);
        self.msm.queue_step(run, tables, &slot.tail(i), phases, |table, k, staged| {
            adder.enqueue_window(staged, ones, k * (window / 32), table * windows + k)
        })
    }

    /// Waits and returns batch sum + tail MSM per query, normalized. Always calls the MSM's finish (so the
    /// engine is free afterwards, whatever failed).
    pub(super) fn collect(&mut self) -> Result<Vec<C::Projective>> {
        let windows = self.window.map_or(1, |(_, windows)| windows);
        let ones = self.adder.window_sums(self.queries * windows);
        let tails = self.msm.finish_tables();
        let (ones, tails) = (ones?, tails?);
        if ones.len() != tails.len() * windows {
            return Err(Error::Pipeline(format!("{} batch sums for {} tail MSMs", ones.len(), tails.len())));
        }
        Ok(ones
            .chunks(windows)
            .zip(&tails)
            .map(|(o, t)| C::normalize(&o.iter().fold(*t, |sum, w| C::add_projective(&sum, w))))
            .collect())
    }
}

impl<C: Curve> QueryGroup<'_, C> {
    /// Device memory [`QueryGroup::new`] allocates for these arguments, known before allocating.
    pub(super) fn bytes(
        gpu: &Gpu,
        queries: usize,
        len: usize,
        window: Option<usize>,
        config: &PartitionConfig,
    ) -> Result<usize> {
        if queries == 0 {
            return Ok(0);
        }
        let points = window.unwrap_or(len);
        let adder =
            BatchAdder::<C>::bytes(gpu, points, &[0, points], config.batch_add, queries * len.div_ceil(points))?;
        let plan = windowed_tail_plan(len, config, window)?;
        let staging = window.map_or(0, |w| Msm::<C>::window_staging_bytes(plan.n, w, config.window_staging));
        Ok(adder + plan.scratch_bytes::<C>() + plan.results_bytes::<C>(queries - 1) + staging)
    }
}

/// Per assignment: the group of its G1 and of its G2 queries (`None` where it has none).
pub(super) type AssignmentEngines<'g> = (Option<QueryGroup<'g, G1>>, Option<QueryGroup<'g, G2>>);

/// Device memory of an assignment's query groups.
fn groups_bytes((g1, g2): &AssignmentEngines<'_>) -> usize {
    g1.as_ref().map_or(0, QueryGroup::device_bytes) + g2.as_ref().map_or(0, QueryGroup::device_bytes)
}

/// How a [`PartitionEngine`] placed its working set ([`PartitionEngine::memory`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineMemory {
    /// The device-memory budget it was made with, in bytes ([`PartitionConfig::max_device_bytes`], or what
    /// the device had free plus the SRS on it).
    pub budget: usize,
    /// Device memory it holds, in bytes ([`PartitionEngine::device_bytes`]); at most `budget` less
    /// [`BUDGET_RESERVE`].
    pub device_bytes: usize,
    /// The H query streams from pinned host memory in every job (it did not fit the budget).
    pub h_streamed: bool,
    /// Assignments whose queries stream from pinned host memory in every job
    /// ([`PartitionSrs::add_assignment_pinned`]).
    pub streamed_assignments: usize,
    /// Bytes of bases copied host-to-device in every job (the streamed queries).
    pub streamed_bytes_per_job: usize,
    /// Input slots it holds: [`PartitionConfig::slots`], or fewer where the budget has no room for them.
    pub slots: usize,
    /// Its slots hold two vectors of `n`, not three: C is uploaded into B's buffer once B is multiplied into
    /// A, so a job's last upload waits for its first transforms (chosen only where three do not fit).
    pub c_shares_b: bool,
    /// Positions per window of the streamed assignments ([`PartitionConfig::query_window`], or the one chosen
    /// for the budget); `None` where none streams.
    pub query_window: Option<usize>,
}

/// Bytes of every budget ([`PartitionConfig::max_device_bytes`]) that an engine leaves unplaced: the driver's
/// stream-ordered allocator maps memory in whole pages, so its count of memory in use runs above the engine's
/// byte count (the measured excess is in DESIGN.md, section 5). A budget is kept as the driver counts it.
pub const BUDGET_RESERVE: usize = 128 << 20;

/// Where the H MSM's bases live.
#[derive(Debug, PartialEq)]
enum HPlacement {
    /// On the device (uploaded by [`PartitionEngine::new`] when given in pinned memory), with this plan.
    Resident(MsmPlan),
    /// Streamed from pinned host memory in every job, with this plan (the largest chunk whose staging fits).
    Streamed(MsmPlan),
}

/// What [`PartitionEngine::new`] places within its budget, besides what it has allocated already.
struct PlacementInput<'c> {
    /// H's length, and whether H is in pinned host memory (it may stream) or on the device.
    n: usize,
    h_pinned: bool,
    config: &'c PartitionConfig,
    /// Device memory of the SRS, the NTT tables, the query groups and one slot; and of one slot (three vectors
    /// of `n`); and of one vector of `n` (what each slot saves where C shares B's buffer).
    one_slot: usize,
    slot_bytes: usize,
    vector_bytes: usize,
    /// Per assignment given in pinned memory, in the order they stream: its device memory resident (its
    /// queries and groups) and streamed (its groups and staging). Not in `one_slot`.
    pinned: Vec<(usize, usize)>,
    /// Positions per window of the streamed assignments (sizes `pinned`'s streamed bytes and caps H's chunks).
    query_window: usize,
    budget: usize,
    /// The device (for the streamed plan's fit: total memory, SMs).
    limits: DeviceLimits,
}

/// What [`place`] chose: slots, whether C shares B's buffer in them, the H MSM's placement, and how many of
/// the pinned assignments stream (the first ones in [`PlacementInput::pinned`]'s order).
#[derive(Debug, PartialEq)]
struct Placement {
    slots: usize,
    c_shares_b: bool,
    h: HPlacement,
    streamed: usize,
}

/// The most slots (up to the configured count) with which the rest fits, then the least streamed: H resident
/// before streamed, then two-vector slots (C in B's buffer: its upload waits for B's transforms), then the
/// pinned assignments one after another (a second slot hides the next job's uploads, worth more than
/// keeping the key on the device; a streamed assignment copies its queries in every job, far more than C's
/// upload). `Ok(Err(needed))`: nothing fits; `needed` is the smallest working set.
fn place(input: &PlacementInput<'_>) -> Result<std::result::Result<Placement, usize>> {
    let mut smallest = usize::MAX;
    for slots in (1..=input.config.slots.max(1)).rev() {
        for streamed in 0..=input.pinned.len() {
            let (stream, keep) = input.pinned.split_at(streamed);
            let groups: usize =
                stream.iter().map(|&(_, s)| s).sum::<usize>() + keep.iter().map(|&(r, _)| r).sum::<usize>();
            for c_shares_b in [false, true] {
                let saved = if c_shares_b { slots * input.vector_bytes } else { 0 };
                let fixed = (input.one_slot + (slots - 1) * input.slot_bytes + groups).saturating_sub(saved);
                match place_h(input, input.budget.saturating_sub(fixed), streamed > 0)? {
                    Ok(h) => return Ok(Ok(Placement { slots, c_shares_b, h, streamed })),
                    Err(needed) => smallest = smallest.min(fixed.saturating_add(needed)),
                }
            }
        }
    }
    Ok(Err(smallest))
}

/// The H MSM within `room` bytes (the budget less the rest of the working set): resident when H is on the
/// device or fits there, else streamed, in chunks of at most [`interleaved_h_chunk`] where assignments stream
/// too (`interleaved`). `Ok(Err(needed))` when neither fits, `needed` the least an H MSM needs.
fn place_h(
    input: &PlacementInput<'_>,
    room: usize,
    interleaved: bool,
) -> Result<std::result::Result<HPlacement, usize>> {
    let h_msm = &input.config.h_msm;
    let xyzz = h_msm.accumulation == Accumulation::Xyzz;
    let h_config = MsmConfig { chunk: h_msm.chunk.or(xyzz.then_some(H_MSM_CHUNK)), ..*h_msm };
    let resident = MsmPlan::new(input.n, &h_config, false)?;
    let resident_bytes = resident.device_bytes::<G1>(false);
    let h_bytes = if input.h_pinned { input.n * size_of::<G1Affine>() } else { 0 };
    if h_bytes + resident_bytes <= room {
        return Ok(Ok(HPlacement::Resident(resident)));
    }
    if !input.h_pinned {
        return Ok(Err(resident_bytes));
    }
    // Streamed bases cannot be a precomputed table; the fewest chunks (of at most `largest`) whose scratch and
    // staging fit (the first chunks upload while the job's work on device bases runs: `queue_msm_stage`).
    let streamed = MsmConfig { chunk: h_msm.chunk, precompute: 0, ..*h_msm };
    let largest = if interleaved { interleaved_h_chunk(input.query_window) } else { input.n };
    match MsmPlan::within_streamed_bases::<G1>(input.n, &streamed, largest, &input.limits.capped(room)) {
        Ok(plan) => Ok(Ok(HPlacement::Streamed(plan))),
        Err(Error::OutOfMemory { requested, .. }) => Ok(Err((h_bytes + resident_bytes).min(requested))),
        Err(e) => Err(e),
    }
}

/// The largest chunk of a streamed H MSM whose steps interleave with streamed assignments' windows: half a
/// window. The fewest chunks that fit are not the fastest there: an H step's kernels should take about as long
/// as a window's copies, or the copy stream idles during the H steps and the compute stream during the windows
/// (measured in DESIGN.md, section 5, "Streamed H chunks").
fn interleaved_h_chunk(query_window: usize) -> usize {
    (query_window / 2).max(1)
}

/// The tail MSM's plan for an assignment of `len` scalars: up to `len` sparse scalars, the window chosen for
/// about `tail_fraction · len` of them.
pub fn tail_plan(len: usize, config: &PartitionConfig) -> Result<MsmPlan> {
    windowed_tail_plan(len, config, None)
}

/// [`tail_plan`]; streamed queries (`window`: positions per window) take no precomputed copies and chunks of
/// [`window_part`] entries (a window with more is sorted in several parts). Either way the accumulate work
/// per thread is sized for the expected entries ([`MsmPlan::for_entries`]): about `tail_fraction` of the
/// positions.
fn windowed_tail_plan(len: usize, config: &PartitionConfig, window: Option<usize>) -> Result<MsmPlan> {
    let fraction = config.tail_fraction.clamp(0.0, 1.0);
    // A windowed plan spans whole windows (the last one's points past the assignment are never selected: its
    // bitmap bits are clear, its tail indices below the length).
    let (tail, points) = match window {
        Some(w) => {
            (MsmConfig { chunk: Some(window_part(w, fraction)), precompute: 0, ..config.tail_msm }, len.div_ceil(w) * w)
        }
        None => (config.tail_msm, len),
    };
    let nonzero = ((len as f64 * fraction) as usize).max(1);
    let plan = MsmPlan::new(points, &tail, false)?;
    let per_chunk = match window {
        Some(w) => (w as f64 * fraction) as usize,
        None => nonzero,
    };
    let expected = |plan: MsmPlan| plan.for_entries(per_chunk, &DeviceLimits::UNBOUNDED);
    if tail.window_bits.is_some() {
        return Ok(expected(plan));
    }
    let chunks = match window {
        Some(w) => len.div_ceil(w),
        None => nonzero.div_ceil(plan.chunk).max(1),
    };
    let c = choose_window_bits(nonzero, tail.precompute.max(1), chunks);
    Ok(expected(MsmPlan::new(points, &MsmConfig { window_bits: Some(c), ..tail }, false)?))
}

/// Tail entries a streamed window's MSM sorts at once: four times the expected share (`fraction`) of the
/// window's `w` positions, at most all of them. The sort's digits and the run partials scale with it, where
/// a whole window's worth would be mostly unused; a window with more entries is sorted in parts.
fn window_part(w: usize, fraction: f64) -> usize {
    ((w as f64 * (4.0 * fraction).min(1.0)).ceil() as usize).clamp(1, w.max(1))
}

/// The most tail entries a job may have for an assignment of `len` ([`PartitionConfig::max_tail_fraction`]
/// of it, rounded up). `Err(Pipeline)` for a fraction outside 0..=1.
pub(super) fn tail_capacity(len: usize, config: &PartitionConfig) -> Result<usize> {
    let f = config.max_tail_fraction;
    if !(0.0..=1.0).contains(&f) {
        return Err(Error::Pipeline(format!("PartitionConfig::max_tail_fraction {f}: a fraction from 0 to 1")));
    }
    Ok(((len as f64 * f).ceil() as usize).min(len))
}

/// Positions per window of a streamed assignment of `len` for windows of `w`: `w`, or the length rounded up to
/// whole bitmap words when shorter. A window the engine chooses (`chosen`) is also at most a quarter of the
/// assignment (a power of two, at least 32), so that each window's copy overlaps the previous window's
/// kernels: one window for a whole 2^24 assignment ran slower per job than four (DESIGN.md, section 9).
pub(super) fn query_window(len: usize, w: usize, chosen: bool) -> usize {
    let quarter = 1 << (len / 4).max(32).ilog2();
    let w = if chosen { w.min(quarter) } else { w };
    w.min(len.next_multiple_of(32))
}

/// The windows to try, largest first: the configured one, or [`QUERY_WINDOWS`]. `Err(Pipeline)` unless the
/// configured window is a positive multiple of 32.
fn query_windows(config: &PartitionConfig) -> Result<Vec<usize>> {
    match config.query_window {
        Some(w) if w == 0 || !w.is_multiple_of(32) => {
            Err(Error::Pipeline(format!("PartitionConfig::query_window {w}: a positive multiple of 32")))
        }
        Some(w) => Ok(vec![w]),
        None => Ok(QUERY_WINDOWS.to_vec()),
    }
}

/// The tail entries of each of `windows` windows of `window` positions, for ascending `tail_index`: consecutive
/// ranges from 0 covering every entry (a few binary searches, cheap even in write-combined memory). Entries
/// that are not ascending land in some window whose positions they are outside, where the GPU counts them bad.
pub fn window_ranges(tail_index: &[u32], window: usize, windows: usize) -> Vec<Range<usize>> {
    let mut ranges = Vec::with_capacity(windows);
    let mut start = 0;
    for k in 1..=windows {
        let end = if k == windows {
            tail_index.len()
        } else {
            start + tail_index[start..].partition_point(|&p| (p as usize) < k * window)
        };
        ranges.push(start..end);
        start = end;
    }
    ranges
}

/// Where a job is.
pub(super) enum Stage {
    /// Uploads and NTTs queued; `inputs` marks the end of all its uploads on the transfer stream.
    Ntt { inputs: CudaEvent },
    /// MSM stage queued on the engines.
    Msm,
    /// Results collected (or the error that ended the job).
    Done(Result<PartitionResults>),
}

pub(super) struct JobState {
    pub(super) id: u64,
    pub(super) slot: usize,
    pub(super) stage: Stage,
    pub(super) rec: PhaseRecorder,
    pub(super) started: Instant,
    pub(super) start_wait_ms: f64,
}

/// Distinguishes engines, so a ticket cannot be redeemed at the wrong one.
static NEXT_ENGINE: AtomicU64 = AtomicU64::new(1);

/// One GPU's partition pipeline: see the module documentation.
pub struct PartitionEngine<'g> {
    pub(super) gpu: &'g Gpu,
    pub(super) id: u64,
    pub(super) config: PartitionConfig,
    pub(super) srs: PartitionSrs,
    pub(super) ntt: Ntt,
    pub(super) h_msm: Msm<'g, G1>,
    pub(super) queries: Vec<AssignmentEngines<'g>>,
    pub(super) slots: Vec<Slot>,
    /// What every slot holds.
    pub(super) layout: SlotLayout,
    pub(super) next_slot: usize,
    pub(super) jobs: VecDeque<JobState>,
    /// The job whose MSM stage is queued on the engines.
    pub(super) msm_owner: Option<u64>,
    pub(super) next_job: u64,
    pub(super) epoch: Epoch,
    /// Jobs whose tickets were dropped unredeemed (the tickets push here); cancelled by [`Self::reap`].
    pub(super) abandoned: Arc<Mutex<Vec<u64>>>,
    /// The device-memory budget it was made within.
    pub(super) budget: usize,
    /// The stream a job's inputs upload on: with [`StreamMode::Two`] the copy stream, or with one slot the
    /// engine's own beside it (the next job's inputs then upload while this job's MSM stage still streams its
    /// bases, each waiting only for the readers of its own buffer); the compute stream with
    /// [`StreamMode::One`].
    pub(super) input_stream: std::sync::Arc<CudaStream>,
}

// Each engine may be driven from its own thread (several GPUs: `ProverPool`'s docs).
const _: () = {
    const fn is_send<T: Send>() {}
    is_send::<PartitionEngine<'static>>();
};

impl<'g> PartitionEngine<'g> {
    /// Allocates the working set on `gpu` for `srs` (which must live on `gpu`): the NTT tables (built here
    /// with one transform chain over the zeroed slot), MSM engines, batch adders and `config.slots` input
    /// slots, all within [`PartitionConfig::max_device_bytes`] less [`BUDGET_RESERVE`]: an H query and
    /// assignment queries in pinned memory are uploaded if the whole set fits, else streamed (H first, then the
    /// assignments, smallest first, in the largest query window that fits), and fewer slots are made where the
    /// configured number does not fit even then ([`PartitionEngine::memory`] says what was chosen).
    /// `Err(DeviceBudget)` when the budget is below the smallest working set, `Err(OutOfMemory)` when the device
    /// cannot hold what fits the budget; either way nothing stays allocated.
    pub fn new(gpu: &'g Gpu, mut srs: PartitionSrs, config: PartitionConfig) -> Result<Self> {
        let span = tracing::info_span!("zkgpu.pipeline.engine_new", gpu = gpu.info().ordinal, n = srs.n);
        let _entered = span.enter();
        if srs.ordinal != gpu.info().ordinal {
            return Err(Error::Pipeline(format!(
                "SRS made for GPU {} given to an engine on GPU {}",
                srs.ordinal,
                gpu.info().ordinal
            )));
        }
        let budget = match config.max_device_bytes {
            Some(budget) => budget,
            None => gpu.memory_info()?.0 + srs.device_bytes(),
        };
        // What the engine places: the budget less the driver's rounding.
        let room = budget.saturating_sub(BUDGET_RESERVE);
        let log_n = srs.n.trailing_zeros();
        let over = |needed: usize| Error::DeviceBudget {
            budget,
            needed: needed.saturating_add(BUDGET_RESERVE),
            what: format!("a 2^{log_n} partition engine"),
        };
        let windows = query_windows(&config)?;
        let shape = srs.shape();
        let tail_capacity: Vec<usize> =
            shape.assignments.iter().map(|&len| tail_capacity(len, &config)).collect::<Result<_>>()?;
        // The slots' layout for windows of `w` (assignments in pinned memory have windows: they may stream).
        let layout_for = |w: usize| SlotLayout {
            shape: shape.clone(),
            windows: (srs.assignments.iter())
                .map(|a| a.streamed().then(|| query_window(a.len, w, config.query_window.is_none())))
                .collect(),
            tail_capacity: tail_capacity.clone(),
            c_shares_b: false,
        };
        // What is certain before allocating anything (the SRS and the smallest slot of two vectors): a budget
        // below it is refused without touching the device.
        let vector_bytes = srs.n * size_of::<Scalar>();
        let smallest_window = windows.iter().copied().min().unwrap_or(usize::MAX);
        let floor = srs.device_bytes() + Slot::bytes(&layout_for(smallest_window)) - vector_bytes;
        if floor > room {
            return Err(over(floor));
        }
        let ntt = Ntt::new(gpu)?;
        let groups = |a: &AssignmentBases, window: Option<usize>| -> Result<AssignmentEngines<'g>> {
            Ok((
                QueryGroup::new(gpu, a.g1.len(), a.len, window, &config)?,
                QueryGroup::new(gpu, a.g2.len(), a.len, window, &config)?,
            ))
        };
        // The groups of assignments on the device now; those in pinned memory once placed.
        let mut queries = srs
            .assignments
            .iter()
            .map(|a| if a.streamed() { Ok(None) } else { groups(a, None).map(Some) })
            .collect::<Result<Vec<_>>>()?;
        // One slot of two vectors first, laid out for the largest window (C gets its own buffer, and the
        // bitmaps their chosen size, once placed): the NTT tables are built on it (so that jobs allocate
        // nothing).
        let first_layout = SlotLayout { c_shares_b: true, ..layout_for(windows[0]) };
        let mut first = Slot::new(gpu, &first_layout)?;
        first.transform(&ntt)?;
        let fixed = srs.device_bytes() + ntt.device_bytes() + queries.iter().flatten().map(groups_bytes).sum::<usize>();
        // The assignments in pinned memory, the smallest first (the first to stream).
        let mut pinned: Vec<usize> = (0..srs.assignments.len()).filter(|&i| srs.assignments[i].streamed()).collect();
        pinned.sort_by_key(|&i| srs.assignments[i].streamed_bytes());
        // The room is the budget's: the device is checked by the allocations themselves.
        let limits = DeviceLimits {
            memory_bytes: usize::MAX,
            total_bytes: gpu.info().total_memory,
            sm_count: gpu.info().sm_count,
        };
        // Each pinned assignment's device memory for windows of `window` (`None`: its groups resident, with its
        // queries uploaded).
        let group_bytes = |i: usize, window: Option<usize>| -> Result<usize> {
            let a = &srs.assignments[i];
            let bases = if window.is_none() { a.streamed_bytes() } else { 0 };
            Ok(bases
                + QueryGroup::<G1>::bytes(gpu, a.g1.len(), a.len, window, &config)?
                + QueryGroup::<G2>::bytes(gpu, a.g2.len(), a.len, window, &config)?)
        };
        let resident = pinned.iter().map(|&i| group_bytes(i, None)).collect::<Result<Vec<_>>>()?;
        // The largest window with which the working set fits, then the placement `place` makes with it.
        let mut smallest = usize::MAX;
        let mut placed = None;
        let mut tried: Option<Vec<Option<usize>>> = None;
        for &w in &windows {
            let candidate = layout_for(w);
            // Windows capped by the assignments' lengths repeat a layout already tried.
            if tried.as_ref() == Some(&candidate.windows) {
                continue;
            }
            tried = Some(candidate.windows.clone());
            let slot_bytes = Slot::bytes(&candidate);
            // Each pinned assignment's device memory resident and streamed.
            let pinned_bytes = (pinned.iter().zip(&resident))
                .map(|(&i, &r)| Ok((r, group_bytes(i, candidate.windows[i])?)))
                .collect::<Result<Vec<_>>>()?;
            let input = PlacementInput {
                n: srs.n,
                h_pinned: matches!(srs.h, HQuery::Pinned(_)),
                config: &config,
                one_slot: fixed + slot_bytes,
                slot_bytes,
                vector_bytes,
                pinned: pinned_bytes,
                query_window: candidate.windows.iter().flatten().copied().max().unwrap_or(w),
                budget: room,
                limits,
            };
            match place(&input)? {
                Ok(placement) => {
                    placed = Some((candidate, placement));
                    break;
                }
                Err(needed) => smallest = smallest.min(needed),
            }
        }
        let Some((mut chosen, Placement { slots: count, c_shares_b, h, streamed })) = placed else {
            return Err(over(smallest));
        };
        // Only the streamed assignments keep windows (and bitmaps padded to whole windows).
        for &i in &pinned[streamed..] {
            chosen.windows[i] = None;
        }
        if chosen.windows != first_layout.windows {
            // The first slot's bitmaps for the chosen windows (no larger): the old ones are freed first.
            first.ones = Vec::new();
            first.ones = Slot::alloc_ones(gpu, &chosen)?;
        }
        let layout = SlotLayout { c_shares_b, ..chosen };
        if !c_shares_b {
            first.c = Some(gpu.alloc_zeroed(srs.n)?);
        }
        let mut slots = vec![first];
        for _ in 1..count {
            slots.push(Slot::new(gpu, &layout)?);
        }
        for &i in &pinned {
            let a = &mut srs.assignments[i];
            let window = layout.windows[i];
            if window.is_none() {
                a.upload(gpu)?;
            }
            queries[i] = Some(groups(a, window)?);
        }
        let queries = queries
            .into_iter()
            .map(|q| q.ok_or_else(|| Error::Pipeline("an assignment without its query groups".into())))
            .collect::<Result<Vec<_>>>()?;
        let stream_h = matches!(h, HPlacement::Streamed(_));
        let h_msm = match h {
            HPlacement::Streamed(plan) => {
                let mut msm = Msm::new(gpu, plan)?;
                msm.reserve_host_bases()?;
                msm
            }
            HPlacement::Resident(plan) => {
                if let HQuery::Pinned(h) = &srs.h {
                    srs.h = HQuery::Device(MsmBases::from_buffer(gpu.upload(h)?)?);
                }
                Msm::new(gpu, plan)?
            }
        };
        gpu.preload_kernels()?;
        gpu.synchronize()?;
        // With one slot the next job's inputs wait for this job's MSM stage to be done with their buffers, so
        // their uploads are on the critical path: on a stream of their own, A's starts once the H MSM is
        // done, beside the stage's streamed copies. With more slots they are not, and beside the streamed
        // copies they would slow those (the two share PCIe): they queue on the copy stream.
        let input_stream = match (config.streams, count) {
            (StreamMode::One, _) => gpu.stream().clone(),
            (StreamMode::Two, 1) => gpu.context().new_stream()?,
            (StreamMode::Two, _) => gpu.copy_stream().clone(),
        };
        let epoch = Epoch::new(gpu)?;
        let engine = PartitionEngine {
            gpu,
            id: NEXT_ENGINE.fetch_add(1, Ordering::Relaxed),
            config,
            srs,
            ntt,
            h_msm,
            queries,
            slots,
            layout,
            next_slot: 0,
            jobs: VecDeque::new(),
            msm_owner: None,
            next_job: 0,
            epoch,
            abandoned: Arc::default(),
            budget,
            input_stream,
        };
        let needed = engine.device_bytes();
        if needed > room {
            return Err(over(needed));
        }
        tracing::info!(
            budget,
            device_bytes = needed,
            h_streamed = stream_h,
            slots = count,
            c_shares_b,
            query_window = engine.memory().query_window,
            "partition engine ready"
        );
        Ok(engine)
    }

    /// Where the working set is: the budget, the device memory held, and what streams from host memory.
    pub fn memory(&self) -> EngineMemory {
        let h_streamed = matches!(self.srs.h, HQuery::Pinned(_));
        let h_bytes = if h_streamed { self.srs.n * size_of::<G1Affine>() } else { 0 };
        EngineMemory {
            budget: self.budget,
            device_bytes: self.device_bytes(),
            h_streamed,
            streamed_assignments: self.srs.assignments.iter().filter(|a| a.streamed()).count(),
            streamed_bytes_per_job: h_bytes
                + self.srs.assignments.iter().map(AssignmentBases::streamed_bytes).sum::<usize>(),
            slots: self.slots.len(),
            c_shares_b: self.layout.c_shares_b,
            query_window: self.layout.windows.iter().flatten().copied().max(),
        }
    }

    /// The GPU it runs on.
    pub fn gpu(&self) -> &'g Gpu {
        self.gpu
    }

    /// The shape its jobs must have.
    pub fn shape(&self) -> PartitionShape {
        self.srs.shape()
    }

    /// The configuration it was made with.
    pub fn config(&self) -> &PartitionConfig {
        &self.config
    }

    /// Jobs started and not yet finished, cancelled or abandoned (a dropped ticket).
    pub fn in_flight(&self) -> usize {
        self.jobs.len().saturating_sub(self.abandoned.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len())
    }

    /// Cancels the jobs whose tickets were dropped. A failure is logged: it belongs to a job nobody waits for
    /// (a lost GPU shows again in the caller's own next call).
    fn reap(&mut self) {
        let ids = std::mem::take(&mut *self.abandoned.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        for id in ids {
            if let Err(e) = self.cancel_id(id) {
                tracing::warn!(job = id, %e, "cancelling a job whose ticket was dropped failed");
            }
        }
    }

    /// Device memory held by the engine: SRS, input slots, NTT tables, MSM and batch-addition scratch (the
    /// driver's own reservations, e.g. the kernels' local memory, are not counted).
    pub fn device_bytes(&self) -> usize {
        self.srs.device_bytes()
            + self.ntt.device_bytes()
            + self.slots.len() * Slot::bytes(&self.layout)
            + self.h_msm.device_bytes()
            + self.queries.iter().map(groups_bytes).sum::<usize>()
    }

    /// Checks `job`, uploads its inputs into the next slot and queues its NTTs (and its MSM stage when the
    /// engines are free); returns once the uploads are done, so the caller may reuse its buffers. On any error
    /// nothing that reads the caller's memory is left running and the job is not started.
    pub fn start(&mut self, job: PartitionJob<'_>) -> Result<JobTicket> {
        let span = tracing::info_span!(
            "zkgpu.pipeline.start",
            gpu = self.gpu.info().ordinal,
            n = self.srs.n,
            job = self.next_job
        );
        let _entered = span.enter();
        let started = Instant::now();
        self.reap();
        if self.jobs.len() >= self.config.max_in_flight.max(1) {
            return Err(Error::Pipeline(format!(
                "{} jobs in flight, the most this engine takes (PartitionConfig::max_in_flight): finish or cancel some",
                self.jobs.len()
            )));
        }
        self.srs.shape().check(&job)?;
        self.layout.check_tails(&job)?;
        let slot = self.next_slot;
        // The rule: the slot's previous job must have its MSM stage queued before its inputs are overwritten.
        while self.jobs.iter().any(|j| j.slot == slot && matches!(j.stage, Stage::Ntt { .. })) {
            self.advance();
        }
        let mut rec = PhaseRecorder::new();
        let transfer = self.input_stream.clone();
        let queued = self.queue_job(slot, job, &mut rec, &transfer);
        let wait_start = Instant::now();
        let waited = {
            let _w = tracing::info_span!("zkgpu.pipeline.wait_uploads").entered();
            match &queued {
                Ok(inputs) => inputs.synchronize().map_err(Error::from),
                // The caller's memory must not be read after we return.
                Err(_) => transfer.synchronize().map_err(Error::from),
            }
        };
        let inputs = queued?;
        waited?;
        let id = self.next_job;
        self.next_job += 1;
        self.next_slot = (slot + 1) % self.slots.len();
        let start_wait_ms = wait_start.elapsed().as_secs_f64() * 1e3;
        self.jobs.push_back(JobState { id, slot, stage: Stage::Ntt { inputs }, rec, started, start_wait_ms });
        if self.msm_owner.is_none() {
            self.advance();
        }
        Ok(JobTicket { engine: self.id, id, abandoned: self.abandoned.clone(), redeemed: false })
    }

    /// Queues the uploads, the NTT chain and the optional h download of one job into `slot`. Returns the event
    /// that marks the end of the uploads.
    pub(super) fn queue_job(
        &mut self,
        slot: usize,
        job: PartitionJob<'_>,
        rec: &mut PhaseRecorder,
        transfer: &std::sync::Arc<CudaStream>,
    ) -> Result<CudaEvent> {
        let gpu = self.gpu;
        let compute = gpu.stream().clone();
        let s = &mut self.slots[slot];
        // One event after each of b, a, c: each vector's transforms wait for its own upload only. B first: its
        // buffer's last reader is the previous job's NTT chain, where A's is the previous job's H MSM, which
        // reads it to the end of that job's MSM stage; B's transforms then run while A uploads. Where C shares
        // B's buffer its upload comes last, after B's product into A (below).
        upload(rec, transfer, "h2d.b", job.b, &mut s.b)?;
        let b_done = transfer.record_event(None)?;
        upload(rec, transfer, "h2d.a", job.a, &mut s.a)?;
        let a_done = transfer.record_event(None)?;
        if let Some(c) = &mut s.c {
            upload(rec, transfer, "h2d.c", job.c, c)?;
        }
        let c_done = transfer.record_event(None)?;
        for (i, input) in job.assignments.iter().enumerate() {
            upload(rec, transfer, &format!("h2d.tail{i}"), input.tail, &mut s.tails[i])?;
            upload(rec, transfer, &format!("h2d.tail_index{i}"), input.tail_index, &mut s.tail_index[i])?;
            s.tail_len[i] = input.tail.len();
            let len = self.layout.shape.assignments[i];
            upload_ones(rec, transfer, &format!("h2d.ones{i}"), &input.ones[..len.div_ceil(32)], len, s, i)?;
            if let Some(w) = self.layout.windows[i] {
                s.tail_windows[i] = window_ranges(input.tail_index, w, len.div_ceil(w));
            }
        }
        // Ntt::groth16_h in its parts, one phase each. The compute stream waits for a vector's upload before
        // the phase's start event (the explicit form of what cudarc's buffer events would also enforce), so
        // the NTTs of b overlap the upload of a (and so on) and no phase counts a wait for a copy as busy.
        // Phases: b's transforms; a's and b's product into a; a's interpolation (while C uploads into B's
        // buffer where it shares it); c's transforms; c's subtraction.
        let ntt = &self.ntt;
        compute.wait(&b_done)?;
        rec.phase("ntt.h.b", PhaseKind::Kernel, 0, &compute, |_| ntt.groth16_h_prepare(&mut s.b))?;
        compute.wait(&a_done)?;
        rec.phase("ntt.h.a", PhaseKind::Kernel, 0, &compute, |_| {
            ntt.groth16_h_prepare(&mut s.a)?;
            ntt.groth16_h_multiply(&mut s.a, &s.b)
        })?;
        let c_done = match &s.c {
            Some(_) => c_done,
            None => {
                // B is consumed once its product into A has run: C overwrites it.
                transfer.wait(&compute.record_event(None)?)?;
                upload(rec, transfer, "h2d.c", job.c, &mut s.b)?;
                transfer.record_event(None)?
            }
        };
        let inputs = transfer.record_event(None)?;
        rec.phase("ntt.h.interpolate", PhaseKind::Kernel, 0, &compute, |_| ntt.groth16_h_interpolate(&mut s.a))?;
        compute.wait(&c_done)?;
        let c = s.c.as_mut().unwrap_or(&mut s.b);
        rec.phase("ntt.h.c", PhaseKind::Kernel, 0, &compute, |_| ntt.groth16_h_prepare_c(c))?;
        let c = s.c.as_ref().unwrap_or(&s.b);
        rec.phase("ntt.h.subtract", PhaseKind::Kernel, 0, &compute, |_| ntt.groth16_h_subtract(&mut s.a, c))?;
        if let Some(h_out) = job.h_out {
            let copy = gpu.copy_stream().clone();
            copy.wait(&compute.record_event(None)?)?;
            let id = rec.begin("d2h.h", PhaseKind::D2h, s.a.byte_len(), &copy)?;
            gpu.download_async(&mut s.a, h_out)?;
            rec.end(id, &copy)?;
        }
        Ok(inputs)
    }

    /// Collects the job whose MSM stage is queued (if any), then queues the MSM stage of the oldest job that
    /// waits for it. Errors end the job they belong to (kept for its `finish`), not the engine.
    pub(super) fn advance(&mut self) {
        if let Some(owner) = self.msm_owner.take() {
            let result = self.collect(owner);
            if let Some(job) = self.jobs.iter_mut().find(|j| j.id == owner) {
                job.stage = Stage::Done(result);
            }
        }
        let Some(index) = self.jobs.iter().position(|j| matches!(j.stage, Stage::Ntt { .. })) else {
            return;
        };
        let mut rec = std::mem::take(&mut self.jobs[index].rec);
        let (slot, id) = (self.jobs[index].slot, self.jobs[index].id);
        // The stage is replaced below in every case; take the upload event out to queue behind it.
        let stage = std::mem::replace(&mut self.jobs[index].stage, Stage::Msm);
        let queued = match &stage {
            Stage::Ntt { inputs } => self.queue_msm_stage(slot, inputs, &mut rec),
            _ => Ok(()),
        };
        let job = &mut self.jobs[index];
        job.rec = rec;
        match queued {
            Ok(()) => {
                job.stage = Stage::Msm;
                self.msm_owner = Some(id);
            }
            Err(e) => {
                tracing::warn!(job = id, error = %e, "pipeline job failed while queueing its MSM stage");
                job.stage = Stage::Done(Err(e));
                // Free every engine the failed stage may have queued on.
                let _ = self.collect_raw();
            }
        }
    }

    /// Queues the job's MSM stage, in slot `slot`: the work whose bases are on the device first (a resident H
    /// MSM, the resident query groups), then what streams, interleaved step by step ([`queue_streamed`]): the
    /// copies are its bottleneck, so the first ones upload while the resident work runs, and one streamed MSM's
    /// uploads run beside another's kernels.
    pub(super) fn queue_msm_stage(&mut self, slot: usize, inputs: &CudaEvent, rec: &mut PhaseRecorder) -> Result<()> {
        let compute = self.gpu.stream().clone();
        compute.wait(inputs)?;
        let s = &self.slots[slot];
        let (h_msm, srs, queries) = (&mut self.h_msm, &mut self.srs, &mut self.queries);
        if let HQuery::Device(h) = &srs.h {
            rec.phase("msm.h", PhaseKind::Kernel, 0, &compute, |_| {
                h_msm.enqueue(Bases::Device(h), Scalars::Device(&s.a))
            })?;
        }
        for (i, ((g1, g2), bases)) in queries.iter_mut().zip(&srs.assignments).enumerate() {
            if let (Some(group), Queries::Device(q)) = (g1, &bases.g1) {
                group.enqueue(q, s, i, rec, &compute, &format!("{i}.g1"))?;
            }
            if let (Some(group), Queries::Device(q)) = (g2, &bases.g2) {
                group.enqueue(q, s, i, rec, &compute, &format!("{i}.g2"))?;
            }
        }
        let interleave = self.config.interleave_streamed;
        let queued = queue_streamed(h_msm, srs, queries, s, rec, self.gpu, interleave);
        if queued.is_err() {
            // Nothing queued may go on reading the SRS's pinned memory unaccounted for.
            let _ = self.gpu.synchronize();
        }
        queued
    }

    /// Waits for the queued MSM stage and returns its results (every engine is finished, whatever fails).
    pub(super) fn collect_raw(&mut self) -> Result<PartitionResults> {
        let h = self.h_msm.finish();
        let assignments: Vec<Result<AssignmentOutput>> = self
            .queries
            .iter_mut()
            .map(|(g1, g2)| {
                let g1 = g1.as_mut().map_or(Ok(Vec::new()), QueryGroup::collect);
                let g2 = g2.as_mut().map_or(Ok(Vec::new()), QueryGroup::collect);
                Ok(AssignmentOutput { g1: g1?, g2: g2? })
            })
            .collect();
        Ok(PartitionResults { h: h?, assignments: assignments.into_iter().collect::<Result<_>>()? })
    }

    /// [`PartitionEngine::collect_raw`] for job `id`, with the result downloads as a phase.
    pub(super) fn collect(&mut self, id: u64) -> Result<PartitionResults> {
        let _span = tracing::info_span!("zkgpu.pipeline.collect", job = id).entered();
        let compute = self.gpu.stream().clone();
        let mut rec = match self.jobs.iter_mut().find(|j| j.id == id) {
            Some(job) => std::mem::take(&mut job.rec),
            None => PhaseRecorder::new(),
        };
        let phase = rec.begin("d2h.results", PhaseKind::D2h, self.result_bytes(), &compute);
        let result = self.collect_raw();
        if let Ok(p) = phase {
            let _ = rec.end(p, &compute);
        }
        if let Some(job) = self.jobs.iter_mut().find(|j| j.id == id) {
            job.rec = rec;
        }
        result
    }

    /// Bytes of the downloaded results (one point per MSM and per batch addition).
    pub(super) fn result_bytes(&self) -> usize {
        let (p1, p2) = (size_of::<G1Projective>(), size_of::<G2Projective>());
        p1 + self.srs.assignments.iter().map(|a| 2 * (a.g1.len() * p1 + a.g2.len() * p2)).sum::<usize>()
    }

    /// Drops job `ticket` without its results: waits for its GPU work (its slot and buffers are reused after
    /// it), then forgets it. A job that failed on the GPU is cancelled all the same; a lost GPU
    /// ([`Error::is_fatal`]) is reported. `Err(Pipeline)` for a ticket of another engine.
    pub fn cancel(&mut self, ticket: JobTicket) -> Result<()> {
        if ticket.engine != self.id {
            return Err(Error::Pipeline(format!("job {} was started on another engine", ticket.id)));
        }
        let id = ticket.redeem();
        self.reap();
        self.cancel_id(id)
    }

    /// [`Self::cancel`] of job `id`.
    fn cancel_id(&mut self, id: u64) -> Result<()> {
        if !self.jobs.iter().any(|j| j.id == id) {
            return Err(Error::Pipeline(format!("job {id} is not in flight on this engine")));
        }
        match self.finish_id(id) {
            Ok(_) => Ok(()),
            Err(e) if e.is_fatal() => Err(e),
            Err(e) => {
                tracing::debug!(job = id, %e, "a cancelled job had failed");
                Ok(())
            }
        }
    }

    /// Waits for job `ticket` and returns its results and phase report. Earlier jobs of this engine are
    /// collected on the way (their results wait for their own `finish`). `Err(Pipeline)` for a ticket of
    /// another engine; the job's own error if its GPU work failed.
    pub fn finish(&mut self, ticket: JobTicket) -> Result<PartitionOutput> {
        if ticket.engine != self.id {
            return Err(Error::Pipeline(format!("job {} was started on another engine", ticket.id)));
        }
        let id = ticket.redeem();
        self.reap();
        self.finish_id(id)
    }

    /// [`Self::finish`] of job `id`.
    fn finish_id(&mut self, id: u64) -> Result<PartitionOutput> {
        let span = tracing::info_span!("zkgpu.pipeline.finish", gpu = self.gpu.info().ordinal, job = id);
        let _entered = span.enter();
        let index = loop {
            let Some(i) = self.jobs.iter().position(|j| j.id == id) else {
                return Err(Error::Pipeline(format!("job {id} is not in flight on this engine")));
            };
            if matches!(self.jobs[i].stage, Stage::Done(_)) {
                break i;
            }
            self.advance();
        };
        let job = self.jobs.remove(index).ok_or_else(|| Error::Pipeline("job vanished".into()))?;
        // Keep the engines busy with the next job before the host resolves this one's timings.
        if self.msm_owner.is_none() {
            self.advance();
        }
        let Stage::Done(results) = job.stage else {
            return Err(Error::Pipeline(format!("job {} finished in an unexpected stage", job.id)));
        };
        let results = results?;
        let report = PhaseReport::from_phases(job.rec.resolve(&self.epoch)?);
        report.emit(&format!("pipeline gpu {} job {}", self.gpu.info().ordinal, job.id));
        Ok(PartitionOutput {
            results,
            report,
            latency_ms: job.started.elapsed().as_secs_f64() * 1e3,
            start_wait_ms: job.start_wait_ms,
        })
    }
}

/// One streamed MSM of a job's stage: the H MSM, or assignment `i`'s G1 or G2 queries.
enum StreamedWork {
    H,
    G1(usize),
    G2(usize),
}

/// Which of the streamed MSMs (steps queued, steps in all) queues a step next: the least far along by its
/// share of steps queued (ties: the first), or without `interleave` the first unfinished; `None` when all are.
fn next_streamed(runs: &[(usize, usize)], interleave: bool) -> Option<usize> {
    let mut open = runs.iter().enumerate().filter(|(_, (queued, all))| queued < all);
    if !interleave {
        return open.next().map(|(i, _)| i);
    }
    // queued / all compared as cross products: exact, and equal shares tie.
    open.min_by(|&(_, &(q1, a1)), &(_, &(q2, a2))| (q1 * a2).cmp(&(q2 * a1))).map(|(i, _)| i)
}

/// Queues the streamed part of a job's MSM stage in slot `s`: the streamed query groups and a streamed H MSM,
/// step by step ([`next_streamed`]), so that they all progress together: one MSM's uploads then run beside
/// another's kernels (a streamed H's chunks are compute-heavy, query windows copy-heavy), where one after the
/// other they would leave the copy stream idle during the first and the compute stream waiting during the
/// second. Phases: `msm.h` or `msm.stream.{name}` per MSM (from its first step to its last, so they overlap
/// and include waits: [`PhaseKind::Span`]) and per step ([`StepPhases`], named `h` or `{i}.g1`):
/// `h2d.{name}.{k}`, `add.{name}.{k}`, `chunk.{name}.{k}`.
/// The pinned tables are marked as read on the copy stream once everything is queued.
fn queue_streamed(
    h_msm: &mut Msm<'_, G1>,
    srs: &mut PartitionSrs,
    queries: &mut [AssignmentEngines<'_>],
    s: &Slot,
    rec: &mut PhaseRecorder,
    gpu: &Gpu,
    interleave: bool,
) -> Result<()> {
    let (compute, copy) = (gpu.stream(), gpu.copy_stream());
    let h_scalars = Scalars::Device(&s.a);
    {
        let h_table: Vec<&PinnedBuffer<G1Affine>> = match &srs.h {
            HQuery::Pinned(h) => vec![h],
            HQuery::Device(_) => Vec::new(),
        };
        let g1_tables: Vec<_> = srs.assignments.iter().map(|a| a.g1.pinned()).collect();
        let g2_tables: Vec<_> = srs.assignments.iter().map(|a| a.g2.pinned()).collect();
        let mut runs = Vec::new();
        for (i, (g1, g2)) in queries.iter_mut().enumerate() {
            if let (Some(group), false) = (g1, g1_tables[i].is_empty()) {
                let phase = rec.begin(format!("msm.stream.{i}.g1"), PhaseKind::Span, 0, compute)?;
                runs.push((StreamedWork::G1(i), group.begin(&g1_tables[i], s, i)?, phase));
            }
            if let (Some(group), false) = (g2, g2_tables[i].is_empty()) {
                let phase = rec.begin(format!("msm.stream.{i}.g2"), PhaseKind::Span, 0, compute)?;
                runs.push((StreamedWork::G2(i), group.begin(&g2_tables[i], s, i)?, phase));
            }
        }
        if let Some(h) = h_table.first() {
            let phase = rec.begin("msm.h", PhaseKind::Span, 0, compute)?;
            runs.push((StreamedWork::H, h_msm.begin_pinned(h, &h_scalars)?, phase));
        }
        let counts = |runs: &[(StreamedWork, Streamed, PhaseId)]| runs.iter().map(|r| r.1.counts()).collect::<Vec<_>>();
        while let Some(index) = next_streamed(&counts(&runs), interleave) {
            let (work, run, phase) = &mut runs[index];
            match *work {
                StreamedWork::H => {
                    h_msm.queue_step(run, &h_table, &h_scalars, StepPhases::new(rec, "h"), |_, _, _| Ok(()))?
                }
                StreamedWork::G1(i) => {
                    let (group, name) = (queries[i].0.as_mut(), format!("{i}.g1"));
                    let group = group.ok_or_else(|| Error::Pipeline("a streamed run without its group".into()))?;
                    group.step(run, &g1_tables[i], s, i, StepPhases::new(rec, &name))?
                }
                StreamedWork::G2(i) => {
                    let (group, name) = (queries[i].1.as_mut(), format!("{i}.g2"));
                    let group = group.ok_or_else(|| Error::Pipeline("a streamed run without its group".into()))?;
                    group.step(run, &g2_tables[i], s, i, StepPhases::new(rec, &name))?
                }
            }
            if run.is_done() {
                rec.end(*phase, compute)?;
            }
        }
    }
    if let HQuery::Pinned(h) = &mut srs.h {
        h.mark_read_by(copy)?;
    }
    for a in &mut srs.assignments {
        a.g1.mark_read_by(copy)?;
        a.g2.mark_read_by(copy)?;
    }
    Ok(())
}

/// Copies an assignment's bitmap words `ones` (of `len` bits) into slot `s`'s buffer of assignment `i` on
/// `stream`, as phase `name`, the bits past `len` cleared (a streamed assignment's windows read them): all
/// words but the last from the caller's memory, the last masked through the slot's pinned word.
fn upload_ones(
    rec: &mut PhaseRecorder,
    stream: &std::sync::Arc<CudaStream>,
    name: &str,
    ones: &[u32],
    len: usize,
    s: &mut Slot,
    i: usize,
) -> Result<()> {
    let Some((&last, full)) = ones.split_last() else {
        return Ok(());
    };
    let mask = if len.is_multiple_of(32) { u32::MAX } else { (1u32 << (len % 32)) - 1 };
    s.last_ones[i] = last & mask;
    let (dst, last_ones) = (&mut s.ones[i], &mut s.last_ones);
    rec.phase(name, PhaseKind::H2d, size_of_val(ones), stream, |st| {
        if !full.is_empty() {
            st.memcpy_htod(as_bytes(full), &mut dst.raw_range_mut(0..full.len())?)?;
        }
        st.memcpy_htod(as_bytes(&last_ones[i..i + 1]), &mut dst.raw_range_mut(full.len()..full.len() + 1)?)?;
        Ok(())
    })?;
    last_ones.mark_read_by(stream)
}

/// Copies `src` into the first `src.len()` elements of `dst` on `stream`, as phase `name`.
pub(super) fn upload<T: DeviceSafe>(
    rec: &mut PhaseRecorder,
    stream: &std::sync::Arc<CudaStream>,
    name: &str,
    src: &[T],
    dst: &mut DeviceBuffer<T>,
) -> Result<()> {
    if src.len() > dst.len() {
        return Err(Error::LengthMismatch { what: "pipeline upload", expected: dst.len(), actual: src.len() });
    }
    if src.is_empty() {
        return Ok(());
    }
    rec.phase(name, PhaseKind::H2d, size_of_val(src), stream, |st| {
        Ok(st.memcpy_htod(as_bytes(src), &mut dst.raw_range_mut(0..src.len())?)?)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 1 << 20;
    const SLOT: usize = 150 << 20;
    const ONE_SLOT: usize = 2 << 30;
    const LIMITS: DeviceLimits = DeviceLimits { memory_bytes: usize::MAX, total_bytes: 80 << 30, sm_count: 132 };

    fn placed(h_pinned: bool, budget: usize, slot_bytes: usize) -> std::result::Result<(usize, HPlacement), usize> {
        placed_with(h_pinned, budget, slot_bytes, Vec::new()).map(|p| {
            assert_eq!(p.streamed, 0);
            (p.slots, p.h)
        })
    }

    fn placed_with(
        h_pinned: bool,
        budget: usize,
        slot_bytes: usize,
        pinned: Vec<(usize, usize)>,
    ) -> std::result::Result<Placement, usize> {
        placed_sharing(h_pinned, budget, slot_bytes, 0, pinned)
    }

    /// [`placed_with`] where a slot whose C shares B's buffer saves `vector_bytes`.
    fn placed_sharing(
        h_pinned: bool,
        budget: usize,
        slot_bytes: usize,
        vector_bytes: usize,
        pinned: Vec<(usize, usize)>,
    ) -> std::result::Result<Placement, usize> {
        let config = PartitionConfig::default();
        let (one_slot, limits) = (ONE_SLOT, LIMITS);
        let input = PlacementInput {
            n: N,
            h_pinned,
            config: &config,
            one_slot,
            slot_bytes,
            vector_bytes,
            pinned,
            query_window: 1 << 22,
            budget,
            limits,
        };
        place(&input).expect("a valid configuration")
    }

    /// The least device memory a streamed H MSM takes (its smallest plan).
    fn least_streamed_h() -> usize {
        let streamed = MsmConfig { precompute: 0, ..MsmConfig::default() };
        let nothing = DeviceLimits { memory_bytes: 0, ..LIMITS };
        match MsmPlan::within_streamed_bases::<G1>(N, &streamed, N, &nothing) {
            Err(Error::OutOfMemory { requested, .. }) => requested,
            other => panic!("no plan fits 0 bytes: {other:?}"),
        }
    }

    /// The resident H MSM's plan and bytes, and H's bytes.
    fn resident() -> (MsmPlan, usize, usize) {
        let config = MsmConfig { chunk: Some(H_MSM_CHUNK), ..MsmConfig::default() };
        let plan = MsmPlan::new(N, &config, false).unwrap();
        (plan, plan.device_bytes::<G1>(false), N * size_of::<G1Affine>())
    }

    /// A configured window is kept (up to the assignment's length in whole words); a chosen one is also at most
    /// a quarter of the assignment. Either way a positive multiple of 32.
    #[test]
    fn chosen_windows_are_at_most_a_quarter_of_the_assignment() {
        assert_eq!(query_window((1 << 27) + 5, 1 << 24, true), 1 << 24);
        assert_eq!(query_window((1 << 24) + 37, 1 << 24, true), 1 << 22);
        assert_eq!(query_window((1 << 24) + 37, 1 << 24, false), 1 << 24);
        assert_eq!(query_window(1000, 1 << 24, false), 1024);
        assert_eq!(query_window(100, 1 << 12, true), 32);
        for len in (1..5000).step_by(7).chain([1 << 20, (1 << 20) + 1, (1 << 27) - 3]) {
            for w in QUERY_WINDOWS {
                for chosen in [false, true] {
                    let window = query_window(len, w, chosen);
                    assert!(window > 0 && window.is_multiple_of(32) && window <= w, "{len} {w} {chosen}: {window}");
                    assert!(!chosen || window <= (len / 4).max(32), "{len} {w}: {window}");
                }
            }
        }
        assert!(query_windows(&PartitionConfig { query_window: Some(48), ..PartitionConfig::default() }).is_err());
        assert!(query_windows(&PartitionConfig { query_window: Some(0), ..PartitionConfig::default() }).is_err());
    }

    #[test]
    fn the_most_slots_then_h_resident_then_fewer_slots() {
        let (plan, msm, h) = resident();
        let two_resident = ONE_SLOT + SLOT + h + msm;
        assert_eq!(placed(true, usize::MAX, SLOT), Ok((2, HPlacement::Resident(plan))));
        assert_eq!(placed(true, two_resident, SLOT), Ok((2, HPlacement::Resident(plan))));
        // A byte short: H streams, both slots kept, the streamed plan within what is left.
        match placed(true, two_resident - 1, SLOT) {
            Ok((2, HPlacement::Streamed(streamed))) => {
                let bytes = streamed.scratch_bytes::<G1>() + streamed.staging_bytes::<G1>(true, false);
                assert!(bytes <= two_resident - 1 - ONE_SLOT - SLOT, "{streamed:?}");
                assert_eq!(streamed.copies, 1, "streamed bases cannot be a precomputed table");
                // The streamed plan for the room left (fewest chunks first).
                let config = MsmConfig { precompute: 0, ..MsmConfig::default() };
                let room = DeviceLimits { memory_bytes: two_resident - 1 - ONE_SLOT - SLOT, ..LIMITS };
                assert_eq!(MsmPlan::within_streamed_bases::<G1>(N, &config, N, &room).unwrap(), streamed);
            }
            other => panic!("{other:?}"),
        }
        // H on the device cannot stream: one slot.
        assert_eq!(placed(false, ONE_SLOT + SLOT + msm - 1, SLOT), Ok((1, HPlacement::Resident(plan))));
        // A second slot that never fits: one slot, H resident when it fits beside it.
        assert_eq!(placed(true, ONE_SLOT + h + msm, 1 << 40), Ok((1, HPlacement::Resident(plan))));
    }

    /// Beside a streamed assignment H streams in chunks of at most half a window; alone, in the fewest chunks
    /// that fit.
    #[test]
    fn streamed_h_chunks_are_at_most_half_a_window_beside_streamed_assignments() {
        let (_, msm, h) = resident();
        let config = PartitionConfig::default();
        // An assignment that only fits streamed (10 MB), a budget a byte short of H resident beside it.
        let streamed_group = 10 << 20;
        let budget = ONE_SLOT + streamed_group + h + msm - 1;
        let input = PlacementInput {
            n: N,
            h_pinned: true,
            config: &config,
            one_slot: ONE_SLOT,
            slot_bytes: 1 << 40,
            vector_bytes: 0,
            pinned: vec![(1 << 40, streamed_group)],
            query_window: 1 << 18,
            budget,
            limits: LIMITS,
        };
        let chunk = match place(&input).expect("a valid configuration") {
            Ok(Placement { slots: 1, h: HPlacement::Streamed(p), streamed: 1, .. }) => p.chunk,
            other => panic!("{other:?}"),
        };
        assert_eq!(chunk, 1 << 17, "half a window of 2^18");
        // The same room without the cap: fewer, larger chunks.
        let room = DeviceLimits { memory_bytes: budget - ONE_SLOT - streamed_group, ..LIMITS };
        let alone = MsmPlan::within_streamed_bases::<G1>(N, &MsmConfig { precompute: 0, ..config.h_msm }, N, &room);
        assert!(alone.unwrap().chunk > chunk);
    }

    /// Pinned assignments stay resident while everything fits; then H streams first, then the assignments in
    /// their order, one at a time; a second slot is dropped only when even all of that does not fit.
    #[test]
    fn pinned_assignments_stream_after_h_in_order() {
        let (plan, msm, h) = resident();
        let pinned = vec![(900 << 20, 100 << 20), (1200 << 20, 150 << 20)];
        let resident_groups = (900 + 1200) << 20;
        let all = ONE_SLOT + SLOT + h + msm + resident_groups;
        let at = |budget| placed_with(true, budget, SLOT, pinned.clone());
        assert_eq!(at(all), Ok(Placement { slots: 2, c_shares_b: false, h: HPlacement::Resident(plan), streamed: 0 }));
        match at(all - 1) {
            Ok(Placement { slots: 2, c_shares_b: false, h: HPlacement::Streamed(_), streamed: 0 }) => {}
            other => panic!("H streams first: {other:?}"),
        }
        // Room for the groups only once the first assignment streams (H streamed too, its smallest plan).
        let small_h = match at(ONE_SLOT + SLOT + resident_groups + (64 << 20)) {
            Ok(Placement { slots: 2, c_shares_b: false, h: HPlacement::Streamed(p), streamed: 0 }) => p,
            other => panic!("{other:?}"),
        };
        let streamed_h = small_h.scratch_bytes::<G1>() + small_h.staging_bytes::<G1>(true, false);
        let first = ONE_SLOT + SLOT + (100 << 20) + (1200 << 20) + h + msm;
        assert_eq!(
            at(first),
            Ok(Placement { slots: 2, c_shares_b: false, h: HPlacement::Resident(plan), streamed: 1 })
        );
        let both = ONE_SLOT + SLOT + (250 << 20) + streamed_h;
        match at(both) {
            Ok(Placement { slots: 2, c_shares_b: false, h: HPlacement::Streamed(_), streamed: 2 }) => {}
            other => panic!("both stream with H: {other:?}"),
        }
        match at(both - SLOT) {
            Ok(Placement { slots: 1, c_shares_b: false, h: HPlacement::Streamed(_), streamed }) => {
                assert!(streamed >= 1)
            }
            other => panic!("one slot: {other:?}"),
        }
    }

    /// Two-vector slots (C in B's buffer) come after H streams and before any assignment streams; the smallest
    /// working set counts them.
    #[test]
    fn c_shares_b_after_h_streams_before_the_assignments() {
        const VECTOR: usize = 40 << 20;
        let (_, msm, h) = resident();
        let least_h = least_streamed_h();
        let pinned = vec![(900 << 20, 100 << 20)];
        let at = |budget| placed_sharing(true, budget, SLOT, VECTOR, pinned.clone());
        // Both slots whole, H streamed, the assignment resident.
        let whole = ONE_SLOT + SLOT + (900 << 20) + least_h;
        match at(whole) {
            Ok(Placement { slots: 2, c_shares_b: false, h: HPlacement::Streamed(_), streamed: 0 }) => {}
            other => panic!("whole slots while they fit: {other:?}"),
        }
        match at(whole - 1) {
            Ok(Placement { slots: 2, c_shares_b: true, streamed: 0, .. }) => {}
            other => panic!("C shares B's buffer before the assignment streams: {other:?}"),
        }
        match at(whole - 2 * VECTOR - 1) {
            Ok(Placement { slots: 2, c_shares_b: false, streamed: 1, .. }) => {}
            other => panic!("then the assignment streams, with whole slots again: {other:?}"),
        }
        // The smallest working set: one slot of two vectors, everything streamed.
        let least = ONE_SLOT - VECTOR + (100 << 20) + least_h.min(h + msm);
        assert_eq!(at(0), Err(least));
        match at(least) {
            Ok(Placement { slots: 1, c_shares_b: true, streamed: 1, .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn tail_capacity_is_the_fraction_rounded_up() {
        let with = |f| PartitionConfig { max_tail_fraction: f, ..PartitionConfig::default() };
        assert_eq!(tail_capacity(1 << 27, &PartitionConfig::default()).unwrap(), 1 << 27);
        assert_eq!(tail_capacity(1 << 27, &with(0.1)).unwrap(), 13_421_773);
        assert_eq!(tail_capacity(10, &with(0.25)).unwrap(), 3);
        assert_eq!(tail_capacity(10, &with(0.0)).unwrap(), 0);
        assert_eq!(tail_capacity(0, &with(0.5)).unwrap(), 0);
        for bad in [-0.1, 1.5, f64::NAN] {
            assert!(matches!(tail_capacity(10, &with(bad)), Err(Error::Pipeline(_))), "{bad}");
        }
    }

    /// A tail plan's accumulate threads are sized for the entries expected (the tail fraction of the
    /// positions), not for every position: where a plan sized for a whole window would give each thread
    /// hundreds of entries and leave the GPU idle, a streamed window's plan gives it tens. Its chunk is four
    /// times the expected entries of a window, so its scratch is less than a whole window's plan.
    #[test]
    fn tail_plans_size_their_threads_for_the_expected_entries() {
        let config = PartitionConfig::default();
        let whole = |plan: &MsmPlan, chunk: Option<usize>, n: usize| {
            let c = MsmConfig { window_bits: Some(plan.window_bits), chunk, precompute: 0, ..config.tail_msm };
            MsmPlan::new(n, &c, false).unwrap()
        };
        for (log_n, log_w) in [(22, 20), (24, 22), (27, 22), (27, 23)] {
            let (n, w) = (1usize << log_n, 1usize << log_w);
            let what = format!("2^{log_n} in windows of 2^{log_w}");
            let streamed = windowed_tail_plan(n, &config, Some(w)).unwrap();
            let full = whole(&streamed, Some(w), n);
            assert_eq!(streamed.chunk, (w * 4).div_ceil(10), "{what}: four times the expected entries");
            assert!(streamed.seg < full.seg, "{what}: {streamed:?} vs {full:?}");
            streamed.validate().unwrap();
            // The expected entries (10% of a window, every MSM window) keep at least 2^15 threads busy.
            let busy = w / 10 * streamed.windows as usize / streamed.seg as usize;
            assert!(busy >= 1 << 15, "{what}: {busy} threads with work");
            assert!(streamed.scratch_bytes::<G1>() < full.scratch_bytes::<G1>(), "{what}: less scratch");
        }
        // Dense tails take whole windows; a window of one position still has a chunk.
        let dense = PartitionConfig { tail_fraction: 1.0, ..PartitionConfig::default() };
        assert_eq!(windowed_tail_plan(1 << 20, &dense, Some(1 << 16)).unwrap().chunk, 1 << 16);
        assert_eq!(window_part(1, 0.1), 1);
        assert_eq!(window_part(4096, 0.0), 1);
        // Resident at 2^27 the expected tail already fills the threads: the same plan as for the whole chunk.
        let resident = windowed_tail_plan(1 << 27, &config, None).unwrap();
        assert_eq!(resident, whole(&resident, None, 1 << 27));
    }

    /// Interleaved, every MSM's share of steps queued stays within one step of the others' (a streamed H of 32
    /// chunks gets one step for every three of each query group's 96); serial, one after the other.
    #[test]
    fn streamed_steps_interleave_by_share() {
        let all = [32usize, 96, 96, 1];
        for interleave in [true, false] {
            let mut queued = [0usize; 4];
            let mut order = Vec::new();
            while let Some(i) = next_streamed(&[0, 1, 2, 3].map(|i| (queued[i], all[i])), interleave) {
                queued[i] += 1;
                order.push(i);
                if interleave {
                    // Among the long runs the shares differ by at most the largest step, H's 1/32.
                    let shares = [0, 1, 2].map(|j| queued[j] as f64 / all[j] as f64);
                    let (lo, hi) = shares.iter().fold((f64::MAX, 0f64), |(lo, hi), &s| (lo.min(s), hi.max(s)));
                    assert!(hi - lo <= 1.0 / 32.0 + 1e-12, "{queued:?}");
                }
            }
            assert_eq!(queued, all, "every step queued once");
            if interleave {
                assert_eq!(&order[..5], &[0, 1, 2, 3, 1], "ties go to the first");
                // H's steps spread over the whole stage, not bunched at one end.
                let h: Vec<usize> = order.iter().enumerate().filter(|&(_, &r)| r == 0).map(|(k, _)| k).collect();
                assert!(h.windows(2).all(|w| w[1] - w[0] <= 8), "{h:?}");
            } else {
                let mut serial: Vec<usize> = Vec::new();
                for (i, &n) in all.iter().enumerate() {
                    serial.extend(std::iter::repeat_n(i, n));
                }
                assert_eq!(order, serial);
            }
        }
        assert_eq!(next_streamed(&[(3, 3), (0, 0)], true), None, "nothing left");
    }

    #[test]
    fn below_the_smallest_working_set_the_error_states_it() {
        let (_, msm, h) = resident();
        let requested = least_streamed_h();
        assert_eq!(placed(true, ONE_SLOT, SLOT), Err(ONE_SLOT + requested.min(h + msm)));
        assert_eq!(placed(false, ONE_SLOT, SLOT), Err(ONE_SLOT + msm));
        assert_eq!(placed(true, 0, SLOT), Err(ONE_SLOT + requested.min(h + msm)));
    }
}
