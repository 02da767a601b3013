//! What a partition job is: the shapes it must have, its inputs and results, and the assignment split
//! ([`split_assignment`]) that turns a scalar vector into the batch addition's bitmap and the tail MSM's input.
use super::*;

/// Which streams carry the uploads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum StreamMode {
    /// Uploads on the copy stream (with one slot a stream of their own), overlapping compute (the default).
    #[default]
    Two,
    /// Uploads on the compute stream, serialized with compute (a baseline for measuring the overlap).
    One,
}

/// Points per chunk of the H MSM unless configured. An engine holds the whole partition's working set anyway
/// (~100 GB at 2^27), so it can afford larger chunks than a standalone MSM's default (2^25, sized for the
/// 16 GB bound at 2^26): at 2^27 two chunks of 2^26 beat both 2^25 and one chunk on the H200 (the bucket
/// work per chunk against the sort's larger windows; figures in docs/log/kernels-notes.md).
pub const H_MSM_CHUNK: usize = 1 << 26;

/// Engine choices; `Default` is the production setting.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PartitionConfig {
    /// Where the uploads run.
    pub streams: StreamMode,
    /// Device input slots (at least 1): 2 lets one job's uploads overlap the previous job's compute.
    pub slots: usize,
    /// The H MSM's plan choices; without an explicit chunk, XYZZ accumulation runs chunks of [`H_MSM_CHUNK`]
    /// points.
    pub h_msm: MsmConfig,
    /// The tail MSMs' plan choices; without explicit window bits the window is chosen for
    /// `tail_fraction · len` non-zero scalars.
    pub tail_msm: MsmConfig,
    /// Expected fraction of an assignment's scalars that are neither 0 nor 1 (sizes the tail MSMs' window;
    /// any fraction up to 1 works).
    pub tail_fraction: f64,
    /// Most of an assignment's scalars a job's tail may hold, as a fraction of its length (0 to 1; 1, the
    /// default: any split). The input slots hold tails of `⌈max_tail_fraction · len⌉` entries, so a smaller
    /// fraction makes them smaller (at 2^27 a full-length tail is 4.8 GB per slot, ~10% is typical); a job with
    /// a longer tail is refused by [`PartitionEngine::start`] (`LengthMismatch`, nothing queued).
    pub max_tail_fraction: f64,
    /// The batch additions' method ([`Method::Affine`] holds ~10 GB of level scratch per curve group at
    /// 2^27, shared by the group's queries).
    pub batch_add: Method,
    /// Most jobs started and not yet finished, cancelled or dropped (at least 1): [`PartitionEngine::start`]
    /// beyond it is `Err(Pipeline)`, so results a caller does not collect cannot pile up on the engine.
    pub max_in_flight: usize,
    /// Device memory the engine may hold, the SRS included (`None`: what the device has free when the engine
    /// is made, plus the SRS already on it), as the driver counts it: [`BUDGET_RESERVE`] of it is left for the
    /// driver's rounding of the engine's allocations. An H query given in pinned host memory
    /// ([`PartitionSrs::pinned`]) is uploaded when the whole working set fits, else streamed through the H MSM
    /// chunk by chunk in every job; then likewise assignment queries given in pinned memory
    /// ([`PartitionSrs::add_assignment_pinned`], window by window of [`Self::query_window`]); where even
    /// that does not fit, fewer [`Self::slots`] are made (one job's
    /// uploads then wait for the previous job's compute); below the smallest working set [`PartitionEngine::new`] is
    /// `Err(DeviceBudget)`, stating it. Jobs allocate nothing, so a job never exceeds it.
    pub max_device_bytes: Option<usize>,
    /// Positions per window of an assignment whose queries stream from pinned host memory
    /// ([`PartitionSrs::add_assignment_pinned`]; a positive multiple of 32): each window of every such query
    /// is uploaded once per job, double-buffered against the previous window's batch addition and tail MSM
    /// chunk. Larger windows take fewer launches and more device memory (staged points, and batch-addition and
    /// MSM scratch for one window). `None` (the default): the largest of [`QUERY_WINDOWS`], at most a quarter
    /// of the assignment, with which the working set fits the budget, before more slots (a larger window gained
    /// more than a second slot in the measured budgets: DESIGN.md, section 9); [`PartitionEngine::memory`] says
    /// which.
    pub query_window: Option<usize>,
    /// Staging buffers per streamed query group (at least 2, the default: fewer count as 2): with more, the
    /// windows' copies run further ahead of their kernels, so that a window whose copy outlasts its kernels,
    /// or one slowed by other copies, is less likely to keep the kernels waiting. Each is a window of points.
    pub window_staging: usize,
    /// Streamed MSMs (a streamed H, streamed query groups) are queued step by step, interleaved (`true`, the
    /// default: one MSM's uploads run beside another's kernels), or one after the other (`false`: the query
    /// groups, then H; the benchmark's `-serial` A/B).
    pub interleave_streamed: bool,
}

/// The windows [`PartitionConfig::query_window`]`: None` chooses from, largest first: 2^24 down to 2^12.
pub const QUERY_WINDOWS: [usize; 13] = {
    let mut windows = [0; 13];
    let mut i = 0;
    while i < windows.len() {
        windows[i] = 1 << (24 - i);
        i += 1;
    }
    windows
};

impl Default for PartitionConfig {
    fn default() -> Self {
        PartitionConfig {
            streams: StreamMode::Two,
            slots: 2,
            h_msm: MsmConfig::default(),
            tail_msm: MsmConfig::default(),
            tail_fraction: 0.1,
            max_tail_fraction: 1.0,
            batch_add: Method::Affine,
            max_in_flight: 64,
            max_device_bytes: None,
            query_window: None,
            window_staging: 2,
            interleave_streamed: true,
        }
    }
}

/// The sizes a job must have: `n` for a, b, c (a power of two) and one length per assignment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionShape {
    pub n: usize,
    pub assignments: Vec<usize>,
}

/// One assignment of a job, split as [`split_assignment`] does: the points with scalar 1 (a bitmap) and the
/// other non-zero scalars with their positions (the tail MSM's sparse input).
#[derive(Clone, Copy, Debug)]
pub struct AssignmentInput<'a> {
    /// The scalars that are neither 0 nor 1 (at most the assignment's length).
    pub tail: &'a [Scalar],
    /// `tail_index[j]`: the position of `tail[j]` in the assignment, below its length (a position past it
    /// fails the job at `finish` with [`Error::IndexOutOfRange`]). As many as `tail`. Ascending where the
    /// assignment's queries stream ([`PartitionSrs::add_assignment_pinned`]; [`split_assignment`] writes them
    /// so): there an entry out of order fails the job the same way.
    pub tail_index: &'a [u32],
    /// Bit `i` of word `i / 32` set where scalar `i` is 1 (batch addition); at least `⌈len / 32⌉` words
    /// (only those are read).
    pub ones: &'a [u32],
}

/// One partition's inputs. Host slices: pass [`PinnedBuffer`]s (they deref to slices) for DMA at line rate;
/// ordinary memory works and is staged by the driver.
#[derive(Debug)]
pub struct PartitionJob<'a> {
    pub a: &'a [Scalar],
    pub b: &'a [Scalar],
    pub c: &'a [Scalar],
    /// One per assignment of the engine's SRS, in order.
    pub assignments: Vec<AssignmentInput<'a>>,
    /// Where to download `h`'s coefficients (natural order), if wanted: copied on the copy stream after the
    /// NTTs, overlapping the MSMs; the buffer's own `Deref` waits for the copy.
    pub h_out: Option<&'a mut PinnedBuffer<Scalar>>,
}

impl PartitionShape {
    /// Checks a job against the shape. Every error leaves everything as it was (nothing is queued yet).
    pub fn check(&self, job: &PartitionJob<'_>) -> Result<()> {
        for (what, v) in [("partition a", job.a), ("partition b", job.b), ("partition c", job.c)] {
            if !v.len().is_power_of_two() {
                return Err(Error::NttSize { n: v.len() });
            }
            if v.len() != self.n {
                return Err(Error::LengthMismatch { what, expected: self.n, actual: v.len() });
            }
        }
        if job.assignments.len() != self.assignments.len() {
            return Err(Error::LengthMismatch {
                what: "partition assignments",
                expected: self.assignments.len(),
                actual: job.assignments.len(),
            });
        }
        for (input, &len) in job.assignments.iter().zip(&self.assignments) {
            if input.tail.len() > len {
                return Err(Error::LengthMismatch {
                    what: "partition assignment tail (at most its length)",
                    expected: len,
                    actual: input.tail.len(),
                });
            }
            if input.tail_index.len() != input.tail.len() {
                return Err(Error::LengthMismatch {
                    what: "partition assignment tail_index",
                    expected: input.tail.len(),
                    actual: input.tail_index.len(),
                });
            }
            crate::batch_add::check_bitmap(input.ones.len(), len)?;
        }
        if let Some(h) = &job.h_out {
            if h.len() != self.n {
                return Err(Error::LengthMismatch { what: "partition h_out", expected: self.n, actual: h.len() });
            }
        }
        Ok(())
    }

    /// Most bytes a job uploads: a, b, c, full-length tails with their indices, and the bitmaps.
    pub fn upload_bytes(&self) -> usize {
        let scalar = size_of::<Scalar>();
        3 * self.n * scalar + self.assignments.iter().map(|&m| m * (scalar + 4) + m.div_ceil(32) * 4).sum::<usize>()
    }
}

/// Splits an assignment for a job: sets bit `i` of `ones` where `values[i] == 1`, and writes the values that
/// are neither 0 nor 1 to `tail` and their positions to `tail_index`, in order. Returns how many there are
/// (`k`: pass `&tail[..k]` and `&tail_index[..k]` to [`AssignmentInput`]). `ones` must have `⌈len / 32⌉` words
/// (all overwritten); `tail` and `tail_index` need room for `k` (the assignment's length always suffices); on
/// a length error nothing is written. Runs on all cores for large inputs; writes each output once without
/// reading it, so all three may be write-combined [`PinnedBuffer`]s.
pub fn split_assignment(
    values: &[Scalar],
    ones: &mut [u32],
    tail: &mut [Scalar],
    tail_index: &mut [u32],
) -> Result<usize> {
    let n = values.len();
    if ones.len() != n.div_ceil(32) {
        return Err(Error::LengthMismatch {
            what: "split_assignment ones",
            expected: n.div_ceil(32),
            actual: ones.len(),
        });
    }
    if n > u32::MAX as usize {
        return Err(Error::SizeOverflow(format!("an assignment of {n} values: positions are u32")));
    }
    let is_tail = |v: &Scalar| *v != Scalar::ZERO && *v != Scalar::ONE;
    // Chunks of whole bitmap words, one per thread: count each chunk's tail first, so every thread knows
    // where its part of the compacted tail starts.
    let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
    let words_per = ones.len().div_ceil(threads).max(1024);
    let chunks: Vec<&[Scalar]> = values.chunks(words_per * 32).collect();
    let counts: Vec<usize> = if chunks.len() <= 1 {
        chunks.iter().map(|c| c.iter().filter(|v| is_tail(v)).count()).collect()
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> =
                chunks.iter().map(|c| scope.spawn(move || c.iter().filter(|v| is_tail(v)).count())).collect();
            handles.into_iter().map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
        })
    };
    let k: usize = counts.iter().sum();
    for (what, room) in [("split_assignment tail", tail.len()), ("split_assignment tail_index", tail_index.len())] {
        if room < k {
            return Err(Error::LengthMismatch { what, expected: k, actual: room });
        }
    }
    // Each output is written once and never read, which write-combined pinned memory needs to be fast.
    let work = |first: usize, values: &[Scalar], ones: &mut [u32], tail: &mut [Scalar], tail_index: &mut [u32]| {
        let mut out = tail.iter_mut().zip(tail_index.iter_mut());
        for (w, (vs, word)) in values.chunks(32).zip(ones.iter_mut()).enumerate() {
            let mut bits = 0u32;
            for (b, v) in vs.iter().enumerate() {
                if *v == Scalar::ONE {
                    bits |= 1 << b;
                } else if *v != Scalar::ZERO {
                    if let Some((t, ix)) = out.next() {
                        *t = *v;
                        *ix = (first + 32 * w + b) as u32;
                    }
                }
            }
            *word = bits;
        }
    };
    let (mut tail, mut tail_index, mut ones) = (&mut tail[..k], &mut tail_index[..k], ones);
    std::thread::scope(|scope| {
        for (c, (v, &count)) in chunks.iter().zip(&counts).enumerate() {
            let (t, rest) = std::mem::take(&mut tail).split_at_mut(count);
            tail = rest;
            let (ix, rest) = std::mem::take(&mut tail_index).split_at_mut(count);
            tail_index = rest;
            let (o, rest) = std::mem::take(&mut ones).split_at_mut(v.len().div_ceil(32));
            ones = rest;
            let first = c * words_per * 32;
            if chunks.len() == 1 {
                work(first, v, o, t, ix);
            } else {
                scope.spawn(move || work(first, v, o, t, ix));
            }
        }
    });
    Ok(k)
}

/// One assignment's results: per query, `Σ sᵢ·Pᵢ` over the whole assignment (normalized).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssignmentOutput {
    pub g1: Vec<G1Projective>,
    pub g2: Vec<G2Projective>,
}

/// A partition's results (normalized points: equal results have equal bytes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionResults {
    /// `Σ hᵢ·Hᵢ`.
    pub h: G1Projective,
    pub assignments: Vec<AssignmentOutput>,
}

/// What [`PartitionEngine::finish`] returns.
#[derive(Clone, Debug)]
pub struct PartitionOutput {
    pub results: PartitionResults,
    /// The job's phases and their summary (device timeline of this job alone).
    pub report: PhaseReport,
    /// Host time from the `start` call to the end of `finish`, ms.
    pub latency_ms: f64,
    /// Host time `start` spent waiting for the uploads, ms.
    pub start_wait_ms: f64,
}

/// A started job; redeem it with [`PartitionEngine::finish`] (or [`ProverPool::finish`]), or drop its
/// results with [`PartitionEngine::cancel`]. Dropping the ticket cancels the job too: its engine collects it
/// at its next `start`, `finish` or `cancel`, so a lost ticket never keeps its results, or its place under
/// [`PartitionConfig::max_in_flight`], for good. A ticket given to another engine is an error there, and its
/// job is cancelled at its own engine.
#[must_use = "a started job's results are only returned by finish (dropping the ticket cancels the job)"]
pub struct JobTicket {
    pub(super) engine: u64,
    pub(super) id: u64,
    /// Its engine's list of jobs whose tickets were dropped unredeemed.
    pub(super) abandoned: Arc<Mutex<Vec<u64>>>,
    pub(super) redeemed: bool,
}

impl JobTicket {
    /// The job's number on its engine (0, 1, ...).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Consumes the ticket without reporting its job abandoned: `finish` and `cancel` take the job over.
    pub(super) fn redeem(mut self) -> u64 {
        self.redeemed = true;
        self.id
    }
}

impl Drop for JobTicket {
    fn drop(&mut self) {
        if !self.redeemed {
            self.abandoned.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(self.id);
        }
    }
}

impl std::fmt::Debug for JobTicket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JobTicket").field("engine", &self.engine).field("id", &self.id).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ticket dropped unredeemed reports its job to its engine's list; a redeemed one does not.
    #[test]
    fn dropped_tickets_report_their_jobs() {
        let abandoned: Arc<Mutex<Vec<u64>>> = Arc::default();
        let ticket = |id| JobTicket { engine: 1, id, abandoned: abandoned.clone(), redeemed: false };
        drop(ticket(3));
        assert_eq!(ticket(4).redeem(), 4);
        let kept = ticket(5);
        drop(ticket(6));
        assert_eq!(*abandoned.lock().unwrap(), vec![3, 6]);
        drop(kept);
        assert_eq!(*abandoned.lock().unwrap(), vec![3, 6, 5]);
    }
}
