//! Device discovery and the per-device handle [`Gpu`]: a context, the kernel modules of the device's
//! architecture (each loaded on first use), and two streams (compute and copy) so transfers can overlap
//! kernels.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaStream, DriverError, sys};

use crate::error::{Error, Result};
use crate::module::{DeviceKey, DeviceModules, Family, LoadedModule};
use crate::module_cache::ModuleCache;
use crate::{health, module, raw};

/// What a [`Gpu`] is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// CUDA device ordinal.
    pub ordinal: usize,
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// (major, minor) compute capability, e.g. (9, 0).
    pub compute_capability: (u32, u32),
    /// Number of streaming multiprocessors.
    pub sm_count: u32,
    /// Device memory in bytes.
    pub total_memory: usize,
    /// Driver's CUDA version, e.g. "13.0".
    pub driver_version: String,
    /// The embedded PTX loaded for it: "sm_90" or "sm_80".
    pub ptx_arch: &'static str,
    /// Largest dynamic shared memory a block may opt in to (bytes); above 48 KiB a kernel needs
    /// [`Gpu::allow_dynamic_shared`].
    pub max_shared_per_block_optin: usize,
    /// Most threads a block may have.
    pub max_threads_per_block: u32,
}

/// One GPU, ready to run zkgpu's kernels. Cheap to clone (shared handles).
#[derive(Clone, Debug)]
pub struct Gpu {
    pub(crate) ctx: Arc<CudaContext>,
    /// Shared by every handle of the device in this process: a module loads once, whichever asks first.
    pub(crate) modules: Arc<DeviceModules>,
    pub(crate) compute: Arc<CudaStream>,
    pub(crate) copy: Arc<CudaStream>,
    pub(crate) info: DeviceInfo,
}

impl Gpu {
    /// Number of CUDA devices. `Err(Error::NoDriver)` when the NVIDIA driver is not installed; `Ok(0)` when it
    /// is but sees no device.
    pub fn count() -> Result<usize> {
        raw::device_count()
    }

    /// Opens device `ordinal`: its primary context and two streams. No kernel is compiled or loaded here: each
    /// family's module loads when one of its kernels is first asked for (see [`Gpu::warm_up`]), through zkgpu's
    /// module cache ([`ModuleCache::from_env`]).
    pub fn new(ordinal: usize) -> Result<Gpu> {
        let span = tracing::info_span!("zkgpu.gpu_new", ordinal);
        let _entered = span.enter();
        let count = Gpu::count()?;
        if count == 0 {
            return Err(Error::NoDevice);
        }
        if ordinal >= count {
            return Err(Error::DeviceIndex { ordinal, count });
        }
        // A device lost to a fault would come back as the same broken primary context.
        health::check(ordinal)?;
        let ctx = CudaContext::new(ordinal)?;
        let (major, minor) = ctx.compute_capability()?;
        let compute_capability = (non_negative(major)?, non_negative(minor)?);
        let arch = module::select_ptx(compute_capability.0, compute_capability.1)?;
        let device = DeviceKey { compute_capability, driver_version: raw::driver_version()? };
        let modules =
            DeviceModules::shared(ordinal, || DeviceModules::new(ctx.clone(), arch, device, ModuleCache::from_env()));
        let info = DeviceInfo {
            ordinal,
            name: ctx.name()?,
            compute_capability,
            sm_count: non_negative(ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?)?,
            total_memory: ctx.total_mem()?,
            driver_version: raw::driver_version_string()?,
            ptx_arch: arch.arch,
            max_shared_per_block_optin: non_negative(
                ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            )? as usize,
            max_threads_per_block: non_negative(
                ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            )?,
        };
        let compute = ctx.new_stream()?;
        let copy = ctx.new_stream()?;
        tracing::info!(name = %info.name, cc = ?info.compute_capability, ptx = info.ptx_arch, "GPU ready");
        Ok(Gpu { ctx, modules, compute, copy, info })
    }

    /// Opens every device, in ordinal order. `Err(NoDevice)` when there is none.
    pub fn all() -> Result<Vec<Gpu>> {
        let count = Gpu::count()?;
        if count == 0 {
            return Err(Error::NoDevice);
        }
        (0..count).map(Gpu::new).collect()
    }

    /// What this device is.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The cudarc context (for what this crate does not wrap).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The compute stream: kernels, and the synchronous `upload`/`download`.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.compute
    }

    /// The copy stream: `upload_async`/`download_async`, overlapping kernels on the compute stream.
    pub fn copy_stream(&self) -> &Arc<CudaStream> {
        &self.copy
    }

    /// The kernel `name`: from its family's module when the name has a family ([`Family::of`]), else from the
    /// test module; `Err(MissingKernel)` when there is no such kernel.
    pub fn function(&self, name: &str) -> Result<CudaFunction> {
        // cudarc unwraps the C-string conversion: a name with a NUL (or an empty one) cannot be a kernel,
        // answer that here.
        if name.is_empty() || name.as_bytes().contains(&0) {
            return Err(Error::MissingKernel(name.to_string()));
        }
        // Every launch gets its kernel here: after a fault, nothing more is queued on a lost GPU.
        health::check(self.info.ordinal)?;
        let module = match Family::of(name) {
            Some(family) => self.modules.family(family)?,
            None => match self.modules.test()? {
                Some(test) => test,
                None => return Err(Error::MissingKernel(name.to_string())),
            },
        };
        self.ctx.bind_to_thread()?;
        match module.load_function(name) {
            Ok(f) => Ok(f),
            Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_FOUND)) => Err(Error::MissingKernel(name.to_string())),
            Err(e) => Err(Error::from(e)),
        }
    }

    /// Loads every production module now (compiling those neither prebuilt nor in the module cache, and
    /// storing them there), so that no later call pays for a compilation: for a service's start-up, or
    /// `zkgpu-bench --warm-up` at deployment to fill the cache. Returns every module loaded so far.
    pub fn warm_up(&self) -> Result<Vec<LoadedModule>> {
        let span = tracing::info_span!("zkgpu.warm_up", ordinal = self.info.ordinal);
        let _entered = span.enter();
        std::thread::scope(|s| {
            // Compilation is single-threaded per module in the driver: the families compile side by side.
            let loads: Vec<_> =
                Family::PRODUCTION.iter().map(|&family| s.spawn(move || self.modules.family(family))).collect();
            loads.into_iter().try_for_each(|load| match load.join() {
                Ok(result) => result.map(drop),
                Err(_) => Err(Error::ModuleLoad {
                    arch: self.info.ptx_arch,
                    source: DriverError(sys::CUresult::CUDA_ERROR_UNKNOWN),
                    log: "\na module-loading thread panicked".to_string(),
                }),
            })
        })?;
        Ok(self.loaded_modules())
    }

    /// Loads, now, the code of every production kernel of the modules loaded so far and has the driver reserve
    /// their per-thread local memory (stack frames and spills). The driver otherwise does both at a kernel's
    /// first launch (lazy loading; local memory grows by hundreds of megabytes on a large GPU), allocating
    /// device memory inside whatever job launches it first: engines call this from `new()`, after loading
    /// their modules, so that their jobs allocate nothing.
    pub fn preload_kernels(&self) -> Result<()> {
        let loaded: Vec<Family> = self.loaded_modules().iter().filter_map(|m| m.family).collect();
        let mut need = 0usize;
        for kernel in
            zkgpu_kernels::interface::kernels().iter().filter(|k| k.family().is_some_and(|f| loaded.contains(&f)))
        {
            let function = self.function(kernel.name)?;
            raw::load_function(&function)?;
            let local = function.get_attribute(sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?;
            need = need.max(non_negative(local)? as usize);
        }
        self.ctx.bind_to_thread()?;
        if need > self.ctx.get_limit(sys::CUlimit::CU_LIMIT_STACK_SIZE)? {
            self.ctx.set_limit(sys::CUlimit::CU_LIMIT_STACK_SIZE, need)?;
        }
        Ok(())
    }

    /// The modules loaded onto this device in this process so far: which, how (cubin, cache, JIT), how long.
    pub fn loaded_modules(&self) -> Vec<LoadedModule> {
        self.modules.loaded()
    }

    /// Waits for all work on both streams.
    pub fn synchronize(&self) -> Result<()> {
        health::check(self.info.ordinal)?;
        self.ctx.synchronize()?;
        Ok(())
    }

    /// `Err(ContextLost)` once this GPU is lost to a fault (see [`crate::health`]), including a fault that an
    /// asynchronous operation reported to cudarc but no call has returned yet; `Ok` otherwise. Does not wait
    /// for the GPU.
    pub fn health(&self) -> Result<()> {
        health::check(self.info.ordinal)?;
        self.ctx.check_err()?;
        Ok(())
    }

    /// Makes later work on the compute stream wait for everything queued so far on the copy stream (without
    /// blocking the host). Buffers passed as kernel arguments are ordered automatically; this is for
    /// anything else.
    pub fn compute_waits_for_copy(&self) -> Result<()> {
        self.compute.join(&self.copy)?;
        Ok(())
    }

    /// Makes later work on the copy stream wait for everything queued so far on the compute stream.
    pub fn copy_waits_for_compute(&self) -> Result<()> {
        self.copy.join(&self.compute)?;
        Ok(())
    }

    /// Free and total device memory in bytes.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        Ok(self.ctx.mem_get_info()?)
    }
}

/// Driver attributes are `i32`s that are never negative; a negative one is reported, not unwrapped.
fn non_negative(value: i32) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::Cuda(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE)))
}
