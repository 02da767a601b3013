//! The runtime layer: everything between cudarc and the algorithms. The driver guard and the few raw driver
//! calls ([`raw`]), devices and their streams ([`device`]), device and pinned memory ([`memory`], [`pinned`]),
//! the embedded PTX modules and their cache ([`module`], [`module_cache`]), launch shapes ([`launch`]), typed
//! launches of the production kernels ([`kernel_args`]), timing
//! ([`timing`], [`profile`]), the one error type ([`error`]) and the record of GPUs lost to faults
//! ([`health`]). Nothing here knows about fields, curves or algorithms.
pub mod device;
pub mod error;
pub mod health;
pub mod kernel_args;
pub mod launch;
pub mod memory;
pub mod module;
pub mod module_cache;
pub mod pinned;
pub mod profile;
pub mod raw;
pub mod timing;
