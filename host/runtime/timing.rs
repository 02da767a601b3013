//! Device-side timing with CUDA events: what a kernel took on the GPU, not what the host waited.

use std::sync::Arc;

use cudarc::driver::{CudaEvent, CudaStream, sys};

use crate::device::Gpu;
use crate::error::Result;

/// A start event recorded on a stream; [`EventTimer::stop`] records the end and returns the milliseconds
/// between the two (waiting for the end event).
#[derive(Debug)]
pub struct EventTimer {
    start: CudaEvent,
    stream: Arc<CudaStream>,
}

/// A timing-enabled event recorded on `stream` (after the work already queued there). Timing must be asked
/// for explicitly: cudarc's default events have `CU_EVENT_DISABLE_TIMING`.
pub(crate) fn timing_event(stream: &Arc<CudaStream>) -> Result<CudaEvent> {
    Ok(stream.record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?)
}

impl EventTimer {
    /// Records the start on `stream` (after the work already queued there).
    pub fn start(stream: &Arc<CudaStream>) -> Result<EventTimer> {
        Ok(EventTimer { start: timing_event(stream)?, stream: stream.clone() })
    }

    /// Records the end and returns the device time since the start, in milliseconds.
    pub fn stop(self) -> Result<f32> {
        let end = timing_event(&self.stream)?;
        Ok(self.start.elapsed_ms(&end)?)
    }
}

impl Gpu {
    /// Times the GPU work `work` queues on the compute stream, with CUDA events: returns milliseconds of
    /// device time (waits for the work to finish).
    pub fn time_ms(&self, work: impl FnOnce(&Arc<CudaStream>) -> Result<()>) -> Result<f32> {
        let timer = EventTimer::start(&self.compute)?;
        work(&self.compute)?;
        timer.stop()
    }
}
