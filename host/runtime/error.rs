//! The one error type of the host library.
//!
//! Every fallible call returns [`Result`]. Nothing on a path that a caller's data reaches panics: a machine
//! without the NVIDIA driver gets [`Error::NoDriver`], an allocation the device cannot satisfy gets
//! [`Error::OutOfMemory`], and any other driver failure is carried unchanged in [`Error::Cuda`].

use cudarc::driver::DriverError;

/// Result alias used across the host library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong between a caller and the GPU.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `libcuda` could not be loaded: the NVIDIA driver is not installed (or not on the loader path).
    #[error("no CUDA driver: libcuda could not be loaded (is the NVIDIA driver installed?)")]
    NoDriver,

    /// The driver is installed but reports no CUDA device.
    #[error("no CUDA device found")]
    NoDevice,

    /// The driver is older than the PTX in this crate needs.
    #[error("CUDA driver {found} is too old: zkgpu needs a driver for CUDA {required} or newer")]
    DriverTooOld {
        /// `cuDriverGetVersion`, e.g. 13000 for CUDA 13.0.
        found: i32,
        /// The oldest accepted version, in the same encoding.
        required: i32,
    },

    /// A device ordinal past the number of devices.
    #[error("GPU {ordinal} does not exist ({count} GPU(s) present)")]
    DeviceIndex {
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the driver reports.
        count: usize,
    },

    /// The device's compute capability has no PTX in this crate (we ship sm_80 and sm_90).
    #[error("compute capability {major}.{minor} is not supported (zkgpu ships PTX for sm_80 and sm_90)")]
    UnsupportedArch {
        /// Compute capability major version.
        major: u32,
        /// Compute capability minor version.
        minor: u32,
    },

    /// The driver rejected the PTX module (JIT failure, PTX version newer than the driver, ...).
    #[error("loading the {arch} PTX module failed: {source}{log}")]
    ModuleLoad {
        /// Which embedded PTX was being loaded, e.g. "sm_90".
        arch: &'static str,
        /// The driver's error.
        source: DriverError,
        /// The JIT compiler's error log as "\nJIT log:\n...", or empty when the driver gave none.
        log: String,
    },

    /// No kernel of this name in the loaded module.
    #[error("kernel {0:?} is not in the PTX module")]
    MissingKernel(String),

    /// A device allocation the device could not satisfy. The context stays usable.
    #[error("out of device memory: asked for {requested} bytes, {free} of {total} bytes free")]
    OutOfMemory {
        /// Bytes asked for.
        requested: usize,
        /// Free device memory at the time of the failure, in bytes.
        free: usize,
        /// Total device memory, in bytes.
        total: usize,
    },

    /// The work does not fit the device-memory budget it was given (e.g.
    /// [`crate::pipeline::PartitionConfig::max_device_bytes`]). Nothing it allocated is kept.
    #[error("a device-memory budget of {budget} bytes is too small: {what} needs at least {needed} bytes")]
    DeviceBudget {
        /// The budget, in bytes.
        budget: usize,
        /// The least device memory the work can run in, in bytes.
        needed: usize,
        /// What needs it.
        what: String,
    },

    /// Page-locked host memory could not be allocated (the OS refused to pin that much).
    #[error("could not allocate {requested} bytes of pinned host memory: {source}")]
    PinnedAlloc {
        /// Bytes asked for.
        requested: usize,
        /// The driver's error.
        source: DriverError,
    },

    /// A [`crate::PinnedPool`] with a cap would exceed it: the blocks lent out leave no room.
    #[error(
        "pinned pool exhausted: {requested} more bytes asked for, {pinned} of {limit} bytes already pinned and lent"
    )]
    PinnedPoolExhausted {
        /// Bytes asked for.
        requested: usize,
        /// Bytes the pool has pinned (all lent: idle blocks are unpinned first).
        pinned: usize,
        /// The pool's cap.
        limit: usize,
    },

    /// A buffer of one GPU passed to an operation on another (refused before anything is queued: a kernel
    /// would fault on the foreign address and lose the GPU).
    #[error("{what}: the buffer lives on GPU {buffer_device}, the operation runs on GPU {gpu}")]
    WrongDevice {
        /// Which argument, e.g. "Ntt::run data".
        what: &'static str,
        /// The buffer's device.
        buffer_device: usize,
        /// The device of the operation.
        gpu: usize,
    },

    /// Two lengths that must agree do not.
    #[error("length mismatch in {what}: expected {expected}, got {actual}")]
    LengthMismatch {
        /// Which operation, e.g. "upload_into".
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },

    /// A selection bitmap with fewer bits than there are points.
    #[error("bitmap too short: {words} words hold fewer bits than the {points} points (need {needed} words)")]
    BitmapTooShort {
        /// 32-bit words given.
        words: usize,
        /// Words needed (`ceil(points / 32)`).
        needed: usize,
        /// Points to select from.
        points: usize,
    },

    /// Indices that must name elements of a table, `count` of which do not (`>= limit`). An MSM over
    /// device-resident indices finds this on the GPU and reports it from `finish`.
    #[error("{what}: {count} out of range (the table has {limit} entries)")]
    IndexOutOfRange {
        /// Which indices, e.g. "msm base indices".
        what: &'static str,
        /// How many indices are out of range.
        count: usize,
        /// Entries in the table (every index must be below it).
        limit: usize,
    },

    /// Point-set boundaries that do not describe sets of the given points.
    #[error("invalid point sets: {0}")]
    InvalidSets(String),

    /// A length or byte count that does not fit the type or API it must pass through.
    #[error("size overflow: {0}")]
    SizeOverflow(String),

    /// A launch that cannot run as asked (too many threads, too much shared memory, ...).
    #[error("invalid launch: {0}")]
    InvalidLaunch(String),

    /// An NTT size that is not a power of two (or is zero).
    #[error("NTT size {n} is not a power of two")]
    NttSize {
        /// The size asked for.
        n: usize,
    },

    /// An NTT larger than this crate supports.
    #[error("NTT size 2^{log_n} is larger than the supported 2^{max_log_n}")]
    NttTooLarge {
        /// log2 of the size asked for.
        log_n: u32,
        /// log2 of the largest supported size.
        max_log_n: u32,
    },

    /// A batch buffer that is not a whole, non-zero number of transforms, or batched buffers of unequal length.
    #[error("NTT batch shape: {len} elements is not a positive multiple of the transform size {n}")]
    NttBatchShape {
        /// Elements in the buffer.
        len: usize,
        /// The transform size.
        n: usize,
    },

    /// An MSM configuration that cannot run: window bits out of range, more precomputed copies than windows,
    /// bases precomputed for another plan.
    #[error("MSM configuration: {0}")]
    MsmConfig(String),

    /// A kernel launch the driver refused, or (with `CUDA_LAUNCH_BLOCKING=1`, which makes every launch wait)
    /// a kernel that faulted. Without blocking launches a fault surfaces at the next synchronization as
    /// [`Error::Cuda`] instead.
    #[error("kernel {kernel}: {source}")]
    Launch {
        /// The kernel's name.
        kernel: String,
        /// The driver's error.
        source: DriverError,
    },

    /// A pipeline job that cannot be started or collected: a ticket from another engine, a job whose GPU work
    /// failed earlier (the message says how), an engine built for another GPU's SRS.
    #[error("pipeline: {0}")]
    Pipeline(String),

    /// Groth16: the circuit's own synthesis failed (its `SynthesisError`, e.g. a missing assignment).
    #[error("circuit synthesis failed: {0}")]
    Synthesis(String),

    /// Groth16: constraint `constraint` (0-based, in synthesis order) does not hold for the witness, so no
    /// valid proof exists.
    #[error("the circuit is not satisfied: constraint {constraint} ({annotation}) fails: a·b != c")]
    Unsatisfied {
        /// Index of the first failing constraint.
        constraint: usize,
        /// The circuit's annotation of that constraint (its namespace is not tracked).
        annotation: String,
    },

    /// Groth16: the proving key was made for another circuit (constraint count, input count, aux count or a
    /// query too short for the circuit's densities).
    #[error("proving key does not match the circuit: {0}")]
    KeyMismatch(String),

    /// Groth16: the proving key itself is unusable (unreadable file, malformed sizes, an identity δ).
    #[error("invalid proving key: {0}")]
    InvalidKey(String),

    /// The GPU's context is unusable after a fault (an illegal address, a trapped kernel, ...): every later
    /// call on that GPU in this process fails with this error (see [`crate::health`]). Restart the process.
    #[error(
        "GPU {} is lost to a fault ({cause}): every call on it fails until the process restarts",
        ordinal.map_or_else(|| "?".to_string(), |o| o.to_string())
    )]
    ContextLost {
        /// The device, when the driver could say which.
        ordinal: Option<usize>,
        /// The sticky driver error that lost it.
        cause: DriverError,
    },

    /// Any other error the CUDA driver returned.
    #[error("CUDA driver error: {0}")]
    Cuda(DriverError),
}

impl Error {
    /// True when the GPU this error came from cannot be used again by this process ([`Error::ContextLost`]):
    /// what a long-running prover checks to decide to stop using that GPU and restart. Every other error
    /// leaves the GPU usable (an out-of-memory, a bad input, a failed job).
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::ContextLost { .. })
    }
}

/// A driver error becomes [`Error::Cuda`], except a sticky one, which loses the device of the current context
/// ([`crate::health`]) and becomes [`Error::ContextLost`].
impl From<DriverError> for Error {
    fn from(error: DriverError) -> Error {
        if crate::health::is_sticky(&error) {
            crate::health::record(crate::health::current_device(), error)
        } else {
            Error::Cuda(error)
        }
    }
}
