//! Kernel entry points (`extern "ptx-kernel"`, `#[unsafe(no_mangle)]`), one file per algorithm or purpose.
//! Only compiled for nvptx64. Every kernel documents its thread mapping, bounds and aliasing in `# Safety`.
mod arith;
mod bench_mul;
mod device_api;
mod smoke;
