//! Kernel entry points (`extern "ptx-kernel"`, `#[unsafe(no_mangle)]`), one file per algorithm or purpose.
//! Only compiled for nvptx64. Every kernel documents its thread mapping, bounds and aliasing in `# Safety`.
mod bench_mul;
mod curve_ops;
mod device_api;
mod field_ops;
mod smoke;
