//! Which GPUs this process has lost to a fault.
//!
//! A kernel that faults (illegal address, trap, misaligned access, ...) leaves its CUDA context in a *sticky*
//! error state: every later call in that context fails, and `Gpu::new` would reopen the same broken primary
//! context. Nothing short of a new process brings the GPU back. So the first sticky error a call sees is
//! recorded here against its device, and from then on every zkgpu call that launches, synchronizes or opens
//! that device returns [`Error::ContextLost`] at once instead of a confusing driver error (or a hang).
//!
//! Recovery, for a daemon: on an error whose [`Error::is_fatal`] is true, stop taking work for that GPU, let
//! in-flight calls return (they fail fast), and exit the process (or the worker process that owns the GPU)
//! so that a supervisor starts a new one; other GPUs of the process are unaffected until then.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use cudarc::driver::{DriverError, sys};

use crate::error::Error;

/// Device ordinal -> the sticky error that lost it.
static LOST: Mutex<BTreeMap<usize, DriverError>> = Mutex::new(BTreeMap::new());
/// Whether `LOST` holds anything: every launch checks, so the common case takes no lock.
static ANY_LOST: AtomicBool = AtomicBool::new(false);

/// Whether a driver error leaves the context unusable (CUDA's "sticky" errors: the context must be destroyed,
/// which for a primary context means the process must exit).
pub fn is_sticky(error: &DriverError) -> bool {
    use sys::CUresult::*;
    matches!(
        error.0,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_CONTEXT_IS_DESTROYED
            | CUDA_ERROR_CONTEXT_ALREADY_IN_USE
    )
}

/// The error that lost device `ordinal`, if one did.
pub fn lost(ordinal: usize) -> Option<DriverError> {
    if !ANY_LOST.load(Ordering::Acquire) {
        return None;
    }
    LOST.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&ordinal).copied()
}

/// Every device this process has lost, with the error that lost it.
pub fn lost_gpus() -> Vec<(usize, DriverError)> {
    LOST.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().map(|(&o, &e)| (o, e)).collect()
}

/// `Err(ContextLost)` when device `ordinal` is lost.
pub fn check(ordinal: usize) -> Result<(), Error> {
    match lost(ordinal) {
        Some(cause) => Err(Error::ContextLost { ordinal: Some(ordinal), cause }),
        None => Ok(()),
    }
}

/// Records a sticky `cause` against `ordinal` (the first one stays) and returns the error to report.
pub(crate) fn record(ordinal: Option<usize>, cause: DriverError) -> Error {
    if let Some(ordinal) = ordinal {
        let mut lost = LOST.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let first = *lost.entry(ordinal).or_insert(cause);
        ANY_LOST.store(true, Ordering::Release);
        tracing::error!(ordinal, %first, "GPU lost to a sticky fault: every later call on it fails; restart the process");
    }
    Error::ContextLost { ordinal, cause }
}

/// The device of the context current on this thread: the one a failing driver call was made in (zkgpu and
/// cudarc make a context current before every call). `None` if the driver cannot say.
pub(crate) fn current_device() -> Option<usize> {
    let mut device: sys::CUdevice = 0;
    // SAFETY: a sticky error came from the driver, so the library is loaded; the out-pointer is valid.
    let result = unsafe { sys::cuCtxGetDevice(&mut device) };
    (result == sys::CUresult::CUDA_SUCCESS).then(|| usize::try_from(device).ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sticky_errors_are_classified() {
        for code in [sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, sys::CUresult::CUDA_ERROR_LAUNCH_FAILED] {
            assert!(is_sticky(&DriverError(code)), "{code:?}");
        }
        for code in [
            sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY,
            sys::CUresult::CUDA_ERROR_INVALID_VALUE,
            sys::CUresult::CUDA_ERROR_NOT_FOUND,
            sys::CUresult::CUDA_ERROR_NOT_READY,
        ] {
            assert!(!is_sticky(&DriverError(code)), "{code:?}");
        }
    }

    /// A recorded loss answers every later check for that ordinal (the first cause stays), and no other.
    #[test]
    fn a_lost_device_stays_lost() {
        // Ordinals no machine has, so this cannot disturb other tests of the process.
        let (a, b) = (10_001, 10_002);
        assert!(check(a).is_ok());
        let illegal = DriverError(sys::CUresult::CUDA_ERROR_ILLEGAL_ADDRESS);
        let err = record(Some(a), illegal);
        assert!(err.is_fatal(), "{err}");
        assert!(matches!(err, Error::ContextLost { ordinal: Some(10_001), .. }));
        record(Some(a), DriverError(sys::CUresult::CUDA_ERROR_LAUNCH_FAILED));
        match check(a) {
            Err(Error::ContextLost { ordinal: Some(o), cause }) => assert_eq!((o, cause), (a, illegal)),
            other => panic!("{other:?}"),
        }
        assert!(check(b).is_ok());
        assert!(lost_gpus().contains(&(a, illegal)));
        // An error with no known device is still fatal, but marks no device.
        assert!(record(None, illegal).is_fatal());
        assert!(check(b).is_ok());
    }
}
