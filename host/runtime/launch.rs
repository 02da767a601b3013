//! Launch helpers: 1-D grid sizing and the opt-in for more than 48 KiB of dynamic shared memory.

use cudarc::driver::{CudaFunction, DriverError, LaunchConfig, sys};

use crate::device::Gpu;
use crate::error::{Error, Result};

/// Most dynamic shared memory a block gets without opting in (CUDA's default limit).
pub const DEFAULT_DYNAMIC_SHARED_LIMIT: usize = 48 * 1024;

/// One thread per element: `grid = ceil(n / block)` blocks of `block` threads, no dynamic shared memory.
///
/// `n == 0` gives a zero-block grid, which the driver rejects: callers skip the launch when there is nothing
/// to do (that decision is theirs, not an error). `block` is clamped to 1..=1024 and the grid to `u32::MAX`
/// so this never panics; [`try_launch_config_1d`] reports such inputs instead.
pub fn launch_config_1d(n: usize, block: u32) -> LaunchConfig {
    let block = block.clamp(1, 1024);
    let grid = n.div_ceil(block as usize).min(u32::MAX as usize) as u32;
    LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 }
}

/// [`launch_config_1d`], checked: `Err(InvalidLaunch)` for `block` outside 1..=1024 or `n` that does not fit
/// the kernels' `u32` element count. `n == 0` is accepted (grid 0: skip the launch).
pub fn try_launch_config_1d(n: usize, block: u32) -> Result<LaunchConfig> {
    if !(1..=1024).contains(&block) {
        return Err(Error::InvalidLaunch(format!("block size {block} is not in 1..=1024")));
    }
    if u32::try_from(n).is_err() {
        return Err(Error::InvalidLaunch(format!("{n} elements do not fit a u32 element count")));
    }
    Ok(launch_config_1d(n, block))
}

impl Gpu {
    /// Lets `function` be launched with up to `bytes` of dynamic shared memory (sets
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`). Needed before any launch asking for more than
    /// 48 KiB; harmless below. `Err(InvalidLaunch)` when the device cannot give that much.
    pub fn allow_dynamic_shared(&self, function: &CudaFunction, bytes: usize) -> Result<()> {
        let limit = self.info.max_shared_per_block_optin;
        if bytes > limit {
            return Err(Error::InvalidLaunch(format!(
                "{bytes} bytes of dynamic shared memory asked for, the device allows {limit} per block"
            )));
        }
        let value = i32::try_from(bytes).map_err(|_| Error::SizeOverflow(format!("{bytes} bytes of shared memory")))?;
        self.ctx.bind_to_thread()?;
        function.set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value)?;
        Ok(())
    }

    /// Asks the driver to give `function` the largest shared-memory share of the L1/shared storage
    /// (`CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT` = 100 %), for kernels whose occupancy is bound by
    /// their shared memory rather than by the L1 cache.
    pub fn prefer_max_shared(&self, function: &CudaFunction) -> Result<()> {
        self.ctx.bind_to_thread()?;
        function.set_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 100)?;
        Ok(())
    }

    /// The kernel `name`, already allowed `dynamic_shared_bytes` of dynamic shared memory, and a launch config
    /// asking for that much on top of `config`.
    pub fn function_with_shared(
        &self,
        name: &str,
        config: LaunchConfig,
        dynamic_shared_bytes: usize,
    ) -> Result<(CudaFunction, LaunchConfig)> {
        let function = self.function(name)?;
        self.allow_dynamic_shared(&function, dynamic_shared_bytes)?;
        let shared_mem_bytes = u32::try_from(dynamic_shared_bytes)
            .map_err(|_| Error::SizeOverflow(format!("{dynamic_shared_bytes} bytes of shared memory")))?;
        Ok((function, LaunchConfig { shared_mem_bytes, ..config }))
    }
}

/// Names the kernel in a launch's error ([`Error::Launch`]); with `CUDA_LAUNCH_BLOCKING=1` that is also the
/// kernel that faulted.
/// A sticky error (the launch found the context already broken, or a blocking launch faulted) is
/// [`Error::ContextLost`] instead.
pub(crate) fn launched<T>(kernel: &str, result: std::result::Result<T, DriverError>) -> Result<T> {
    result.map_err(|source| match Error::from(source) {
        lost @ Error::ContextLost { .. } => lost,
        _ => Error::Launch { kernel: kernel.to_string(), source },
    })
}
