//! The runtime layer: everything between cudarc and the algorithms. The driver guard and the few raw driver
//! calls ([`raw`]), devices and their streams ([`device`]), device and pinned memory ([`memory`], [`pinned`]),
//! the embedded PTX modules ([`module`]), launch shapes ([`launch`]), timing ([`timing`], [`profile`]) and the
//! one error type ([`error`]). Nothing here knows about fields, curves or algorithms.
pub mod device;
pub mod error;
pub mod launch;
pub mod memory;
pub mod module;
pub mod pinned;
pub mod profile;
pub mod raw;
pub mod timing;
