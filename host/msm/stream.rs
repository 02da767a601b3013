//! Streamed MSMs: bases in pinned host memory, uploaded step by step (a chunk of the plan, or a window of
//! positions) into the engine's double-buffered staging on the copy stream, each step's kernels on the
//! compute stream. [`Msm::begin_pinned`] / [`Msm::begin_pinned_windows`] check the inputs and list the
//! steps; [`Msm::queue_step`] queues one, so that a pipeline can interleave the steps of several MSMs (one
//! MSM's uploads beside another's kernels, where queueing them one after the other would leave the copy
//! stream idle during the first and the compute stream waiting during the second). The caller marks the
//! pinned tables as read on the copy stream once every step is queued.
use super::*;
use crate::pinned::PinnedBuffer;

/// Where a streamed MSM named `name` records its step `k`: the copy as the H2D phase `h2d.{name}.{k}`, the
/// caller's work on the staged window as `add.{name}.{k}` and the MSM's kernels as `chunk.{name}.{k}` (both
/// timed from when the copy is done, so they count kernels, not the wait: with interleaved MSMs the phases of
/// whole MSMs overlap, these do not).
pub(crate) struct StepPhases<'r> {
    pub(super) recorder: &'r mut PhaseRecorder,
    pub(super) name: &'r str,
}

impl<'r> StepPhases<'r> {
    pub(crate) fn new(recorder: &'r mut PhaseRecorder, name: &'r str) -> Self {
        StepPhases { recorder, name }
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

    /// Steps queued, and steps in all.
    pub(crate) fn counts(&self) -> (usize, usize) {
        (self.next, self.steps.len())
    }
}

/// The steps of a dense streamed MSM of `n` scalars: one per chunk of `chunk`, staged in slots 0 and 1 in
/// turn; the first stores the buckets, the last finishes.
fn dense_steps(n: usize, chunk: usize) -> Vec<Step> {
    let mut steps: Vec<Step> = whole_chunks(n, chunk)
        .enumerate()
        .map(|(k, range)| {
            let part = Chunk::dense(k % 2, range.start, range.len());
            Step { table: 0, stage: part.clone(), window: None, parts: vec![(part, k == 0)], finish: false }
        })
        .collect();
    if let Some(last) = steps.last_mut() {
        last.finish = true;
    }
    steps
}

/// The steps of windowed streamed MSMs over `tables` tables of `rows` bases: per table, one per window of
/// `window` positions, staged in `slots` slots in turn, with the scalars `ranges[k]` split at `chunk`. A
/// table's first part (its first non-empty one) stores the buckets; its last window finishes it when there
/// are any scalars.
fn window_steps(
    tables: usize,
    rows: usize,
    window: usize,
    ranges: &[Range<usize>],
    chunk: usize,
    slots: usize,
) -> Vec<Step> {
    let (windows, chunk, slots) = (ranges.len(), chunk.max(1), slots.max(1));
    let any = ranges.last().is_some_and(|r| r.end > 0);
    let mut steps = Vec::with_capacity(tables * windows);
    for table in 0..tables {
        let mut first_part = true;
        for (k, range) in ranges.iter().enumerate() {
            let slot = steps.len() % slots;
            let bases = k * window..((k + 1) * window).min(rows);
            // A window with more entries than the plan's chunk (a dense window; or indices not ascending, some
            // then outside the window and counted bad) is sorted in parts, each within the scratch.
            let mut parts = Vec::new();
            let mut first = range.start;
            while first < range.end {
                let last = (first + chunk).min(range.end);
                parts.push((Chunk { slot, scalars: first..last, bases: bases.clone() }, first_part));
                first_part = false;
                first = last;
            }
            let stage = Chunk { slot, scalars: range.clone(), bases };
            steps.push(Step { table, stage, window: Some(k), parts, finish: any && k + 1 == windows });
        }
    }
    steps
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
        self.begin(dense_steps(n, self.plan.chunk), 1, n, n, None)
    }

    /// Checks and lists the steps of the MSMs of sparse device scalars (`scalars[j]` times base `indices[j]`,
    /// `j` below `ranges`' end) over every table of `tables` (pinned host bases, all `rows` long), window by
    /// window: one step per table and window `k` (positions `k·window ..`, the last one shorter), whose
    /// scalars are `ranges[k]`. Those must name positions inside window `k` (ascending indices split by
    /// position do); any other index is counted bad and [`Msm::finish_tables`] returns `IndexOutOfRange`,
    /// having read only staged bases. `ranges` are consecutive from 0, one per window; `window` is at most the
    /// plan's `n` (it may exceed the plan's chunk: a window's entries are split into parts of at most a chunk,
    /// each sorted on its own, while the window's bases stay staged; [`Msm::reserve_window_staging`]). The MSM
    /// counts as queued from here.
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
        if window == 0 || window > self.plan.n || rows > self.plan.n {
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
        // Deeper staging reserved beforehand (a pipeline's query groups) is kept.
        self.reserve_window_staging(window, self.staged_bases.len())?;
        let steps = window_steps(tables.len(), rows, window, ranges, chunk, self.staged_bases.len());
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
    /// its copy and kernels are phases of `phases`; `per_window(table, k, staged)` queues the caller's work on
    /// window `k`'s staged bases (windows only). The step's upload waits for the kernels that read its staging
    /// slot two steps before, its kernels for its upload. On an error the MSM is forgotten and the GPU
    /// synchronized.
    pub(crate) fn queue_step(
        &mut self,
        run: &mut Streamed,
        tables: &[&PinnedBuffer<C::Affine>],
        scalars: &Scalars<'_>,
        phases: StepPhases<'_>,
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
            let (rec, name) = (phases.recorder, phases.name);
            self.stage(&step.stage, &bases, scalars, Some((&mut *rec, format!("h2d.{name}.{index}"))))?;
            // The kernels wait for the copy here, explicitly (cudarc's buffer events would too), so that their
            // phases start once it is done.
            let compute = self.gpu.stream().clone();
            compute.wait(&self.gpu.copy_stream().record_event(None)?)?;
            if let Some(k) = step.window {
                let add = rec.begin(format!("add.{name}.{index}"), PhaseKind::Kernel, 0, &compute)?;
                per_window(step.table, k, &self.staged_bases[step.stage.slot])?;
                rec.end(add, &compute)?;
            }
            let chunk = rec.begin(format!("chunk.{name}.{index}"), PhaseKind::Kernel, 0, &compute)?;
            for (part, first) in &step.parts {
                self.enqueue_chunk(part, &bases, scalars, *first)?;
            }
            self.staging_read[step.stage.slot] = Some(compute.record_event(None)?);
            if step.finish {
                self.enqueue_finish(step.table)?;
            }
            rec.end(chunk, &compute)
        })();
        self.settle(queued)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks `steps` (of `tables` tables of `rows` bases and `scalars` scalars each): per table, bases and
    /// scalars covered in order, parts within the step's stage and at most `chunk` long, one first part and one
    /// finish when there are scalars; staging slots in turn.
    fn check_cover(steps: &[Step], tables: usize, rows: usize, scalars: usize, slots: usize, chunk: usize) {
        for table in 0..tables {
            let mine: Vec<&Step> = steps.iter().filter(|s| s.table == table).collect();
            // Bases and scalars covered in order, each once.
            let (mut bases, mut next) = (0, 0);
            for s in &mine {
                assert_eq!(s.stage.bases.start, bases, "table {table}: bases in order");
                bases = s.stage.bases.end;
                assert_eq!(s.stage.scalars.start, next, "table {table}: scalars in order");
                for (part, _) in &s.parts {
                    assert_eq!((part.scalars.start, part.slot, &part.bases), (next, s.stage.slot, &s.stage.bases));
                    assert!(!part.scalars.is_empty() && part.scalars.len() <= chunk, "{part:?}");
                    next = part.scalars.end;
                }
                assert_eq!(next, s.stage.scalars.end);
            }
            assert_eq!((bases, next), (rows, scalars), "table {table} covered");
            // One first part, the table's first; the last step finishes when there are scalars.
            let firsts: Vec<bool> = mine.iter().flat_map(|s| s.parts.iter().map(|p| p.1)).collect();
            assert_eq!(firsts.iter().filter(|&&f| f).count(), usize::from(scalars > 0), "table {table}");
            assert!(firsts.first().is_none_or(|&f| f), "table {table}: the first part stores the buckets");
            let finishes: Vec<bool> = mine.iter().map(|s| s.finish).collect();
            assert_eq!(finishes.iter().filter(|&&f| f).count(), usize::from(scalars > 0), "table {table}");
            assert!(scalars == 0 || finishes.last() == Some(&true), "table {table}: its last step finishes");
        }
        // Staging slots in turn over all steps, so a step's upload waits for the kernels of the step `slots` before.
        for (i, s) in steps.iter().enumerate() {
            assert_eq!(s.stage.slot, i % slots, "step {i}");
        }
    }

    /// Windows streamed, replayed on the CPU: each step's parts name their bases in the staged window by the
    /// kernels' own rule (`BaseNaming`: index less the window's first position, wrapping), and the steps' sums
    /// add up to the sparse MSM over each whole table. A tail that is not ascending names bases outside the
    /// window it falls in, which the rule makes bad.
    #[test]
    fn window_steps_name_the_staged_bases_as_the_kernels_do() {
        use blstrs::G1Projective;
        use group::Group;
        use zkgpu_kernels::msm::BaseNaming;
        // A chunk below the window, so that windows split into parts (in the engine only a tail that is not
        // ascending puts more entries than the chunk in a window; the split is the same).
        let (rows, window, chunk) = (300usize, 64usize, 48usize);
        let g = G1Projective::generator();
        let tables: Vec<Vec<G1Projective>> =
            (0..2u64).map(|t| (0..rows as u64).map(|i| g * Scalar::from(1000 * t + i + 1)).collect()).collect();
        let seed = 0x5eed_u64;
        println!("seed {seed}");
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        // About a third of the positions, ascending (positions 64..128 left empty), with small scalars.
        let (mut indices, mut scalars) = (Vec::new(), Vec::new());
        for p in (0..rows as u32).filter(|p| !(64..128).contains(p)) {
            if next() % 3 == 0 {
                indices.push(p);
                scalars.push(Scalar::from(next() % 1000 + 2));
            }
        }
        let replay = |indices: &[u32]| {
            let ranges = crate::pipeline::window_ranges(indices, window, rows.div_ceil(window));
            let (mut sums, mut bad) = (vec![G1Projective::identity(); 2], 0);
            for step in window_steps(2, rows, window, &ranges, chunk, 2) {
                let staged = &tables[step.table][step.stage.bases.clone()];
                for (part, _) in &step.parts {
                    let named = &indices[part.scalars.clone()];
                    let naming = BaseNaming {
                        first: step.stage.bases.start as u32,
                        limit: staged.len() as u32,
                        indices: named.as_ptr(),
                    };
                    for (i, j) in part.scalars.clone().enumerate() {
                        // SAFETY: `indices` points at the part's `named` indices, and `i` is below their count.
                        let index = unsafe { naming.named_index(i as u32) };
                        match staged.get(index as usize) {
                            Some(base) if index < naming.limit => sums[step.table] += base * scalars[j],
                            _ => bad += 1,
                        }
                    }
                }
            }
            (sums, bad)
        };
        let (sums, bad) = replay(&indices);
        assert_eq!(bad, 0);
        for (t, table) in tables.iter().enumerate() {
            let direct: G1Projective = indices.iter().zip(&scalars).map(|(&p, s)| table[p as usize] * s).sum();
            assert_eq!(sums[t], direct, "table {t}");
        }
        let reversed: Vec<u32> = indices.iter().rev().copied().collect();
        assert!(replay(&reversed).1 > 0, "entries outside their window are bad");
    }

    #[test]
    fn dense_steps_cover_the_scalars_in_chunks() {
        for (n, chunk) in [(1, 1), (5, 8), (8, 8), (9, 8), (1 << 20, 1 << 18), (1000, 333), (0, 4)] {
            let steps = dense_steps(n, chunk);
            assert_eq!(steps.len(), n.div_ceil(chunk), "n {n}, chunk {chunk}");
            assert!(
                steps.iter().all(|s| s.window.is_none() && s.parts.len() == 1 && s.parts[0].0.bases == s.stage.bases)
            );
            check_cover(&steps, 1, n, n, 2, chunk);
        }
    }

    #[test]
    fn window_steps_cover_every_table_and_window() {
        let seed = 0x57ea_u64;
        println!("seed {seed}");
        let mut state = seed;
        let mut next = |m: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) as usize) % m.max(1)
        };
        for (rows, window, chunk, tables) in
            [(100usize, 32usize, 32usize, 3usize), (4096, 64, 64, 1), (20_037, 4096, 4096, 2), (64, 64, 64, 2)]
        {
            let windows = rows.div_ceil(window);
            // Random entries per window (some empty, some past the chunk: not ascending input), and none at all.
            for empty in [false, true] {
                let mut ranges = Vec::new();
                let mut end = 0;
                for _ in 0..windows {
                    let count = if empty { 0 } else { [0, 1, next(window), window + next(2 * window)][next(4)] };
                    ranges.push(end..end + count);
                    end += count;
                }
                // Double-buffered staging, and deeper (`PartitionConfig::window_staging`).
                for slots in [2, 3] {
                    let steps = window_steps(tables, rows, window, &ranges, chunk, slots);
                    assert_eq!(steps.len(), tables * windows);
                    for (i, s) in steps.iter().enumerate() {
                        assert_eq!((s.table, s.window), (i / windows, Some(i % windows)));
                        assert_eq!(s.stage.scalars, ranges[i % windows]);
                    }
                    check_cover(&steps, tables, rows, end, slots, chunk);
                }
            }
        }
    }
}
