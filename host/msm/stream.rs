//! Streamed MSMs: bases in pinned host memory, uploaded step by step (a chunk of the plan, or a window of
//! positions) into the engine's double-buffered staging on the copy stream, each step's kernels on the
//! compute stream. [`Msm::begin_pinned`] / [`Msm::begin_pinned_windows`] check the inputs and list the
//! steps; [`Msm::queue_step`] queues one, so that a pipeline can interleave the steps of several MSMs (one
//! MSM's uploads beside another's kernels, where queueing them one after the other would leave the copy
//! stream idle during the first and the compute stream waiting during the second). The caller marks the
//! pinned tables as read on the copy stream once every step is queued.
use super::*;
use crate::pinned::PinnedBuffer;

/// Where a streamed MSM records its copies: H2D phases named `{prefix}.{k}` for step `k`.
pub(crate) struct CopyPhases<'r> {
    pub(super) recorder: &'r mut PhaseRecorder,
    pub(super) prefix: &'r str,
    pub(super) count: usize,
}

impl<'r> CopyPhases<'r> {
    /// Phases from step `count` on.
    pub(crate) fn new(recorder: &'r mut PhaseRecorder, prefix: &'r str, count: usize) -> Self {
        CopyPhases { recorder, prefix, count }
    }
}

/// One step: the upload of table `table`'s bases `stage.bases` into staging slot `stage.slot`, the caller's
/// work on that window (`window`, windows only), the kernels of `parts` (the step's scalars split at the
/// plan's chunk; `true` for the table's first part, whose fixup stores the buckets rather than adding to
/// them), and after the table's last step its final stages (`finish`).
struct Step {
    table: usize,
    stage: Chunk,
    window: Option<usize>,
    parts: Vec<(Chunk, bool)>,
    finish: bool,
}

/// A streamed MSM whose steps are being queued ([`Msm::queue_step`]), for the inputs it was begun with
/// ([`Msm::begin_pinned`], [`Msm::begin_pinned_windows`]): every step takes them again.
pub(crate) struct Streamed {
    steps: Vec<Step>,
    next: usize,
    tables: usize,
    rows: usize,
    scalars: usize,
}

impl Streamed {
    /// Every step is queued.
    pub(crate) fn is_done(&self) -> bool {
        self.next == self.steps.len()
    }

    /// The fraction of its steps queued (1 when there are none).
    pub(crate) fn progress(&self) -> f64 {
        if self.steps.is_empty() { 1.0 } else { self.next as f64 / self.steps.len() as f64 }
    }
}

impl<C: Curve> Msm<'_, C> {
    /// Checks and lists the steps of `Σ scalars[i]·bases[i]`, the bases in pinned host memory, the scalars
    /// dense on the device (as many as the bases): one step per chunk of the plan. The MSM counts as queued
    /// from here ([`Msm::finish`] collects it once every step is queued). Errors as [`Msm::enqueue`], and
    /// `MsmConfig` for host scalars.
    pub(crate) fn begin_pinned(&mut self, bases: &PinnedBuffer<C::Affine>, scalars: &Scalars<'_>) -> Result<Streamed> {
        self.check_free("Msm::begin_pinned")?;
        if !matches!(scalars, Scalars::Device(_)) {
            return Err(Error::MsmConfig("a streamed MSM takes dense device scalars".into()));
        }
        self.check_inputs(&Bases::Host(bases), scalars)?;
        let n = scalars.len();
        self.reserve_tables(1)?;
        self.reserve_host_bases()?;
        let chunk = self.plan.chunk.max(1);
        let mut steps = Vec::with_capacity(n.div_ceil(chunk));
        let mut first = 0;
        while first < n {
            let part = Chunk::dense(steps.len() % 2, first, chunk.min(n - first));
            first = part.scalars.end;
            steps.push(Step {
                table: 0,
                stage: part.clone(),
                window: None,
                parts: vec![(part, steps.is_empty())],
                finish: false,
            });
        }
        if let Some(last) = steps.last_mut() {
            last.finish = true;
        }
        self.begin(steps, 1, n, n, None)
    }

    /// Checks and lists the steps of the MSMs of sparse device scalars (`scalars[j]` times base `indices[j]`,
    /// `j` below `ranges`' end) over every table of `tables` (pinned host bases, all `rows` long), window by
    /// window: one step per table and window `k` (positions `k·window ..`, the last one shorter), whose
    /// scalars are `ranges[k]`. Those must name positions inside window `k` (ascending indices split by
    /// position do); any other index is counted bad and [`Msm::finish_tables`] returns `IndexOutOfRange`,
    /// having read only staged bases. `ranges` are consecutive from 0, one per window; `window` is at most the
    /// plan's chunk. The MSM counts as queued from here.
    pub(crate) fn begin_pinned_windows(
        &mut self,
        tables: &[&PinnedBuffer<C::Affine>],
        scalars: (&DeviceBuffer<Scalar>, &DeviceBuffer<u32>),
        ranges: &[Range<usize>],
        window: usize,
    ) -> Result<Streamed> {
        self.check_free("Msm::begin_pinned_windows")?;
        let rows = tables.first().map_or(0, |t| t.len());
        let chunk = self.plan.chunk.min(self.plan.n);
        if window == 0 || window > chunk || rows > self.plan.n {
            return Err(Error::MsmConfig(format!(
                "windows of {window} over {rows} bases with a plan of {} (chunks of {chunk})",
                self.plan.n
            )));
        }
        if let Some(t) = tables.iter().find(|t| t.len() != rows) {
            return Err(Error::LengthMismatch {
                what: "msm window tables (all the same length)",
                expected: rows,
                actual: t.len(),
            });
        }
        let windows = rows.div_ceil(window);
        if ranges.len() != windows {
            return Err(Error::LengthMismatch {
                what: "msm window ranges (one per window)",
                expected: windows,
                actual: ranges.len(),
            });
        }
        let mut end = 0;
        for r in ranges {
            if r.start != end || r.end < r.start {
                return Err(Error::MsmConfig(format!("window ranges must be consecutive from 0: {r:?} after {end}")));
            }
            end = r.end;
        }
        let (s, indices) = scalars;
        self.gpu.owns("msm scalars", s)?;
        self.gpu.owns("msm base indices", indices)?;
        if s.len() < end || indices.len() < end {
            return Err(Error::LengthMismatch {
                what: "msm window scalars and indices",
                expected: end,
                actual: s.len().min(indices.len()),
            });
        }
        self.reserve_tables(tables.len())?;
        self.reserve_host_bases()?;
        if self.staged_bases.iter().any(|b| b.len() < window) || (windows > 1 && self.staged_bases.len() < 2) {
            return Err(Error::MsmConfig(format!("staging of {chunk} bases for windows of {window}")));
        }
        let mut steps = Vec::with_capacity(tables.len() * windows);
        for table in 0..tables.len() {
            let mut first_part = true;
            for (k, range) in ranges.iter().enumerate() {
                let slot = steps.len() % self.staged_bases.len();
                let bases = k * window..((k + 1) * window).min(rows);
                // More entries than the plan's chunk only when the indices are not ascending: then some are
                // outside the window and counted bad, but each part still sorts within its scratch.
                let mut parts = Vec::new();
                let mut first = range.start;
                while first < range.end {
                    let last = (first + chunk).min(range.end);
                    parts.push((Chunk { slot, scalars: first..last, bases: bases.clone() }, first_part));
                    first_part = false;
                    first = last;
                }
                let stage = Chunk { slot, scalars: range.clone(), bases };
                steps.push(Step { table, stage, window: Some(k), parts, finish: end > 0 && k + 1 == windows });
            }
        }
        self.begin(steps, tables.len(), rows, end, Some(rows))
    }

    /// Marks the MSM queued (its results: `tables`, the identity each when there are no scalars), resets the
    /// bad-index count, and returns the cursor over `steps`.
    fn begin(
        &mut self,
        steps: Vec<Step>,
        tables: usize,
        rows: usize,
        scalars: usize,
        index_limit: Option<usize>,
    ) -> Result<Streamed> {
        let reset = self.gpu.stream().memset_zeros(self.bad_indices.raw_mut()).map_err(Error::from);
        self.settle(reset)?;
        self.pending = Some(if scalars == 0 { Queued::Empty { tables } } else { Queued::Run { index_limit, tables } });
        Ok(Streamed { steps, next: 0, tables, rows, scalars })
    }

    /// Queues the next step of `run` (nothing when every step is queued) for the inputs it was begun with:
    /// `tables` and `scalars` (dense for [`Msm::begin_pinned`], sparse for [`Msm::begin_pinned_windows`]);
    /// the step's copy is a phase of `copies` (from step `k`'s name on); `per_window(table, k, staged)`
    /// queues the caller's work on window `k`'s staged bases (windows only). The step's upload waits for the
    /// kernels that read its staging slot two steps before. On an error the MSM is forgotten and the GPU
    /// synchronized.
    pub(crate) fn queue_step(
        &mut self,
        run: &mut Streamed,
        tables: &[&PinnedBuffer<C::Affine>],
        scalars: &Scalars<'_>,
        mut copies: CopyPhases<'_>,
        per_window: impl FnOnce(usize, usize, &DeviceBuffer<C::Affine>) -> Result<()>,
    ) -> Result<()> {
        if run.is_done() {
            return Ok(());
        }
        let index = run.next;
        run.next += 1;
        let step = &run.steps[index];
        let same =
            tables.len() == run.tables && tables.iter().all(|t| t.len() == run.rows) && scalars.len() == run.scalars;
        let queued = (|| {
            if !same {
                return Err(Error::MsmConfig("a streamed MSM's step given other inputs than it was begun with".into()));
            }
            let bases = Bases::Host(&tables[step.table][..]);
            copies.count = index;
            self.stage(&step.stage, &bases, scalars, Some(&mut copies))?;
            if let Some(k) = step.window {
                per_window(step.table, k, &self.staged_bases[step.stage.slot])?;
            }
            for (part, first) in &step.parts {
                self.enqueue_chunk(part, &bases, scalars, *first)?;
            }
            self.staging_read[step.stage.slot] = Some(self.gpu.stream().record_event(None)?);
            if step.finish { self.enqueue_finish(step.table) } else { Ok(()) }
        })();
        self.settle(queued)
    }
}
