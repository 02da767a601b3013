//! The embedded PTX modules, the rule that picks an architecture's set for a device, and how a module gets
//! onto the device.
//!
//! `build.rs` writes the production PTX per target architecture split into one module per kernel family
//! ([`Family`]: NTT, MSM per curve, batch addition per curve, benchmarks), plus the test module; all are
//! embedded here. [`crate::Gpu`] loads a family's module the first time one of its kernels is asked for, so an
//! NTT-only program never compiles MSM code. PTX is forward compatible: the driver JIT-compiles sm_80 PTX for
//! any later GPU, and sm_90 PTX for sm_90 and later.
//!
//! [`load`] tries, in order: a prebuilt cubin from `$ZKGPU_CUBIN_DIR` (`cargo xtask bundle` ships the sm_90
//! ones; named by a fingerprint of the PTX text, so a stale cubin is never loaded), the SASS embedded for the
//! device's exact compute capability ([`PREBUILT_SASS`]: a build with `ZKGPU_SASS=sm_80,sm_86,...` and
//! ptxas), zkgpu's cache of compiled modules ([`module_cache`](crate::module_cache)), then the driver's JIT,
//! whose output is stored in that cache for the next process.

use std::ffi::{CString, c_void};
use std::path::Path;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaModule, DriverError, sys};
use cudarc::nvrtc::Ptx;
pub use zkgpu_kernels::modules::Family;

use crate::error::{Error, Result};
use crate::module_cache::{CacheKey, ModuleCache};
use crate::raw;

/// One embedded module: a production kernel family's (`family: Some`) or the test module (`None`) of one
/// architecture.
macro_rules! embedded {
    ($arch:literal, $family:expr, $stem:literal) => {
        PtxModule {
            stem: concat!("zkgpu_", $arch, "_", $stem),
            arch: $arch,
            family: Some($family),
            deflated: include_bytes!(concat!(env!("OUT_DIR"), "/zkgpu_", $arch, "_", $stem, ".ptx.deflate")),
        }
    };
    ($arch:literal) => {
        ArchModules {
            arch: $arch,
            families: [
                embedded!($arch, Family::Ntt, "ntt"),
                embedded!($arch, Family::Msm, "msm"),
                embedded!($arch, Family::MsmG1, "msm_g1"),
                embedded!($arch, Family::MsmG2, "msm_g2"),
                embedded!($arch, Family::SetSumG1, "set_sum_g1"),
                embedded!($arch, Family::SetSumG2, "set_sum_g2"),
                embedded!($arch, Family::BatchAdd, "batch_add"),
                embedded!($arch, Family::BatchAddG1, "batch_add_g1"),
                embedded!($arch, Family::BatchAddG2, "batch_add_g2"),
                embedded!($arch, Family::Bench, "bench"),
            ],
            test: PtxModule {
                stem: concat!("zkgpu_test_", $arch),
                arch: $arch,
                family: None,
                deflated: include_bytes!(concat!(env!("OUT_DIR"), "/zkgpu_test_", $arch, ".ptx.deflate")),
            },
        }
    };
}

/// PTX for compute capability 9.0 and later (H100, H200, B200, ...).
pub static SM90: ArchModules = embedded!("sm_90");
/// PTX for compute capability 8.x (A100, A10, RTX 30xx, L4/L40 (8.9), ...).
pub static SM80: ArchModules = embedded!("sm_80");

/// The modules of one architecture: one per [`Family`] (in [`Family::ALL`] order) and the test module.
#[derive(Debug)]
pub struct ArchModules {
    /// "sm_90" or "sm_80".
    pub arch: &'static str,
    /// Indexed by [`Family::index`].
    pub families: [PtxModule; Family::ALL.len()],
    /// Single-operation kernels (`arith_*`, `device_api_*`) used only by the test suite. Empty when the crate
    /// was built from the committed PTX (no kernel toolchain).
    pub test: PtxModule,
}

impl ArchModules {
    /// Whether this build embeds the architecture's modules (all do unless built with `ZKGPU_EMBED_ARCHES`).
    pub fn is_embedded(&self) -> bool {
        self.families.iter().all(|m| !m.is_empty())
    }

    /// The module of `family`.
    pub fn family(&self, family: Family) -> &PtxModule {
        &self.families[family.index()]
    }
}

/// One embedded PTX module. The text is stored deflate-compressed (build.rs): PTX of fully inlined field
/// arithmetic is large (megabytes) and compresses about 20x, which keeps every binary that links zkgpu small.
#[derive(Debug, PartialEq, Eq)]
pub struct PtxModule {
    /// File stem, e.g. "zkgpu_sm_90_ntt" (names its cubin, see [`cubin_file_name`], and its cache file).
    pub stem: &'static str,
    /// The architecture it was compiled for, e.g. "sm_90".
    pub arch: &'static str,
    /// The kernel family it holds; `None` for the test module.
    pub family: Option<Family>,
    /// The PTX text, deflate-compressed.
    deflated: &'static [u8],
}
impl PtxModule {
    /// True for a module this build does not carry (the test module of a build from the committed PTX).
    pub fn is_empty(&self) -> bool {
        self.deflated.is_empty()
    }

    /// The PTX text (decompressed on each call; a few milliseconds).
    pub fn text(&self) -> Result<String> {
        let bytes = miniz_oxide::inflate::decompress_to_vec(self.deflated).map_err(|e| Error::ModuleLoad {
            arch: self.arch,
            source: cudarc::driver::DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_PTX),
            log: format!("\nthe embedded PTX does not decompress: {e:?}"),
        })?;
        String::from_utf8(bytes).map_err(|_| Error::ModuleLoad {
            arch: self.arch,
            source: cudarc::driver::DriverError(cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_PTX),
            log: "\nthe embedded PTX is not UTF-8".to_string(),
        })
    }
}

/// SASS assembled by ptxas at build time for one module and one exact compute capability (see build.rs,
/// `ZKGPU_SASS`). Deflate-compressed like the PTX.
#[derive(Debug)]
pub struct PrebuiltSass {
    /// The module it was assembled from, e.g. "zkgpu_sm_80_ntt" (for an sm_86 device).
    pub stem: &'static str,
    /// The device architecture it runs on, exactly.
    pub compute_capability: (u32, u32),
    deflated: &'static [u8],
}

impl PrebuiltSass {
    /// The cubin image.
    pub fn image(&self) -> Result<Vec<u8>> {
        miniz_oxide::inflate::decompress_to_vec(self.deflated).map_err(|e| Error::ModuleLoad {
            arch: "prebuilt SASS",
            source: DriverError(sys::CUresult::CUDA_ERROR_INVALID_IMAGE),
            log: format!("\nthe embedded SASS of {} does not decompress: {e:?}", self.stem),
        })
    }
}

/// The SASS this build embeds (empty unless it was built with `ZKGPU_SASS`).
pub static PREBUILT_SASS: &[PrebuiltSass] = include!(concat!(env!("OUT_DIR"), "/prebuilt_sass.rs"));

/// Environment variable: `off` makes [`load`] ignore [`PREBUILT_SASS`] (to measure or rule out the JIT path).
pub const EMBEDDED_SASS_ENV: &str = "ZKGPU_EMBEDDED_SASS";

/// Chooses the embedded modules for a compute capability: >= 9.0 -> sm_90, 8.x -> sm_80, anything older is
/// unsupported (the kernels use instructions and limits of sm_80+).
/// A build with `ZKGPU_EMBED_ARCHES` that left the device's architecture out answers `UnsupportedArch` too.
pub fn select_ptx(major: u32, minor: u32) -> Result<&'static ArchModules> {
    let arch = match major {
        9.. => &SM90,
        8 => &SM80,
        _ => return Err(Error::UnsupportedArch { major, minor }),
    };
    if arch.is_embedded() { Ok(arch) } else { Err(Error::UnsupportedArch { major, minor }) }
}

/// The architectures this build embeds, e.g. "sm_90,sm_80" (build.rs; `ZKGPU_EMBED_ARCHES` narrows it).
pub const EMBEDDED_ARCHES: &str = env!("ZKGPU_EMBEDDED_ARCHES");

/// Environment variable naming a folder of cubins for the embedded modules (see the module docs).
pub const CUBIN_DIR_ENV: &str = "ZKGPU_CUBIN_DIR";

/// FNV-1a (64-bit) of a module's PTX text: the fingerprint in its cubin's file name. `cargo xtask bundle`
/// computes the same function (xtask/src/bundle.rs) when it names the cubins it assembles.
pub fn ptx_fingerprint(text: &str) -> u64 {
    zkgpu_kernels::modules::fingerprint(text.as_bytes())
}

/// The cubin file for `module` whose PTX is `text`: `<stem>-<fingerprint as 16 hex digits>.cubin`.
pub fn cubin_file_name(module: &PtxModule, text: &str) -> String {
    format!("{}-{:016x}.cubin", module.stem, ptx_fingerprint(text))
}

/// How [`load`] got a module onto the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleImage {
    /// The embedded PTX, compiled by the driver's JIT in this process (or taken from the driver's own cache).
    Ptx,
    /// SASS from zkgpu's module cache, compiled from exactly the embedded PTX by an earlier load.
    Cached,
    /// SASS embedded at build time for this compute capability ([`PREBUILT_SASS`]).
    Embedded,
    /// A cubin from the folder in [`CUBIN_DIR_ENV`], assembled from exactly the embedded PTX.
    Cubin,
}

/// What identifies a device to the module cache: its compute capability and the driver version.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceKey {
    /// (major, minor).
    pub compute_capability: (u32, u32),
    /// `cuDriverGetVersion`, e.g. 13000.
    pub driver_version: i32,
}

/// Loads `module` into `ctx`: its cubin from `$ZKGPU_CUBIN_DIR` when one matches the embedded PTX and loads,
/// else its SASS from `cache` when a valid entry is there and loads, else the PTX through the driver's JIT
/// (whose output then goes into `cache`; a failed store is logged, not an error). On failure the error
/// carries the JIT compiler's log.
pub fn load(
    ctx: &Arc<CudaContext>,
    module: &PtxModule,
    cache: &ModuleCache,
    device: DeviceKey,
) -> Result<(Arc<CudaModule>, ModuleImage)> {
    let ptx = module.text()?;
    let span =
        tracing::info_span!("zkgpu.module_load", ordinal = ctx.ordinal(), module = module.stem, ptx_bytes = ptx.len());
    let _entered = span.enter();
    let started = std::time::Instant::now();
    if let Some(dir) = std::env::var_os(CUBIN_DIR_ENV) {
        let path = Path::new(&dir).join(cubin_file_name(module, &ptx));
        match std::fs::read(&path) {
            Ok(cubin) => match ctx.load_module(Ptx::from_binary(cubin)) {
                Ok(loaded) => {
                    tracing::debug!(path = %path.display(), "cubin loaded");
                    return Ok((loaded, ModuleImage::Cubin));
                }
                Err(e) => tracing::warn!(path = %path.display(), %e, "cubin did not load; using the PTX"),
            },
            Err(e) => tracing::debug!(path = %path.display(), %e, "no cubin for this PTX; using the PTX"),
        }
    }
    let embedded =
        PREBUILT_SASS.iter().find(|s| s.stem == module.stem && s.compute_capability == device.compute_capability);
    if let Some(sass) = embedded.filter(|_| std::env::var_os(EMBEDDED_SASS_ENV).is_none_or(|v| v != "off")) {
        match sass.image().map(|image| ctx.load_module(Ptx::from_binary(image))) {
            Ok(Ok(loaded)) => return Ok((loaded, ModuleImage::Embedded)),
            Ok(Err(e)) => tracing::warn!(%e, "the embedded SASS did not load; using the PTX"),
            Err(e) => tracing::warn!(%e, "the embedded SASS is unreadable; using the PTX"),
        }
    }
    let key = CacheKey::new(module.stem, &ptx, device.compute_capability, device.driver_version);
    match cache.lookup(&key) {
        Ok(Some(image)) => match ctx.load_module(Ptx::from_binary(image)) {
            Ok(loaded) => {
                tracing::debug!(elapsed_ms = started.elapsed().as_secs_f64() * 1e3, "loaded from the module cache");
                return Ok((loaded, ModuleImage::Cached));
            }
            Err(e) => tracing::warn!(%e, file = key.file_name(), "a cached module did not load; compiling again"),
        },
        Ok(None) => {}
        Err(why) => tracing::warn!(%why, "ignoring a bad module cache file; compiling again"),
    }
    // cudarc turns the PTX into a C string and unwraps: refuse interior NULs here instead of panicking there.
    let c_ptx = CString::new(ptx.as_str()).map_err(|_| Error::ModuleLoad {
        arch: module.arch,
        source: DriverError(sys::CUresult::CUDA_ERROR_INVALID_PTX),
        log: "\nthe embedded PTX contains a NUL byte".to_string(),
    })?;
    // The JIT through the linker hands back the SASS it made, which is what the cache keeps. Should the
    // linker fail, loading the PTX directly is the fallback (and gives the JIT's error log).
    let compiled = if matches!(cache, ModuleCache::Off) { None } else { jit_to_sass(ctx, &c_ptx, module.stem).ok() };
    if let Some(sass) = compiled {
        if let Ok(loaded) = ctx.load_module(Ptx::from_binary(sass.clone())) {
            let elapsed_ms = started.elapsed().as_secs_f64() * 1e3;
            match cache.store(&key, &sass) {
                Ok(path) => tracing::info!(elapsed_ms, path = ?path, "PTX compiled and cached"),
                Err(e) => tracing::warn!(elapsed_ms, %e, "PTX compiled; storing it in the module cache failed"),
            }
            return Ok((loaded, ModuleImage::Ptx));
        }
    }
    match ctx.load_module(Ptx::from_src(ptx)) {
        Ok(loaded) => {
            tracing::info!(elapsed_ms = started.elapsed().as_secs_f64() * 1e3, "PTX compiled");
            Ok((loaded, ModuleImage::Ptx))
        }
        // A context already lost to a fault fails every load: report that, not a JIT error.
        Err(source) if crate::health::is_sticky(&source) => Err(Error::from(source)),
        Err(source) => {
            let log = raw::jit_error_log(&c_ptx);
            tracing::error!(%source, %log, "PTX module failed to load");
            Err(Error::ModuleLoad { arch: module.arch, source, log })
        }
    }
}

/// Compiles `ptx` for the current device with the driver's linker (`cuLinkCreate`, `cuLinkAddData`,
/// `cuLinkComplete`) and returns the SASS image it produced. `ctx` is made current first.
fn jit_to_sass(ctx: &Arc<CudaContext>, ptx: &CString, stem: &str) -> std::result::Result<Vec<u8>, DriverError> {
    ctx.bind_to_thread()?;
    let name = CString::new(stem).unwrap_or_default();
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: no options are passed (null arrays of length zero); `state` is a valid out-pointer.
    unsafe { sys::cuLinkCreate_v2(0, std::ptr::null_mut(), std::ptr::null_mut(), &mut state) }.result()?;
    // SAFETY: `state` was created above and is destroyed below on every path. The PTX is NUL-terminated and its
    // length includes the terminator, as the driver expects for PTX input; the driver reads it during the call
    // only. The image `cuLinkComplete` returns belongs to `state` and is copied out before the destroy.
    let sass = unsafe {
        let added = sys::cuLinkAddData_v2(
            state,
            sys::CUjitInputType::CU_JIT_INPUT_PTX,
            ptx.as_ptr() as *mut c_void,
            ptx.as_bytes_with_nul().len(),
            name.as_ptr(),
            0,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
        .result();
        let mut image: *mut c_void = std::ptr::null_mut();
        let mut size = 0usize;
        let completed = added.and_then(|()| sys::cuLinkComplete(state, &mut image, &mut size).result());
        let sass = completed.map(|()| {
            if image.is_null() { Vec::new() } else { std::slice::from_raw_parts(image.cast::<u8>(), size).to_vec() }
        });
        let destroyed = sys::cuLinkDestroy(state).result();
        sass.and_then(|sass| destroyed.map(|()| sass))
    }?;
    if sass.is_empty() {
        return Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_IMAGE));
    }
    Ok(sass)
}

/// One module as a device holds it: how it got there and how long that took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadedModule {
    /// The module's file stem, e.g. "zkgpu_sm_90_ntt".
    pub stem: &'static str,
    /// Its family; `None` for the test module.
    pub family: Option<Family>,
    /// Prebuilt cubin, zkgpu's cache, or the JIT.
    pub image: ModuleImage,
    /// Wall time of the load (decompression, cache lookup or compilation, and the driver's load).
    pub load_ms: f64,
}

/// The modules of one device, each loaded the first time a kernel of it is asked for. Loading is thread-safe
/// and happens once per device and process ([`DeviceModules::shared`]): concurrent first requests for one module wait for a single load, while different modules
/// load side by side. A failed load is not remembered (the next request tries again).
#[derive(Debug)]
pub struct DeviceModules {
    ctx: Arc<CudaContext>,
    arch: &'static ArchModules,
    device: DeviceKey,
    cache: ModuleCache,
    /// One per family (by [`Family::index`]), then the test module.
    slots: [Slot; Family::ALL.len() + 1],
}

#[derive(Debug, Default)]
struct Slot {
    /// `Some(None)`: the module is empty in this build (the test module without the kernel toolchain).
    loaded: std::sync::OnceLock<Option<(Arc<CudaModule>, LoadedModule)>>,
    loading: std::sync::Mutex<()>,
}

/// Every device's modules in this process while some handle holds them, by ordinal: handles of one device
/// share its primary context, so a module loaded through one serves all.
static SHARED: std::sync::Mutex<Vec<(usize, std::sync::Weak<DeviceModules>)>> = std::sync::Mutex::new(Vec::new());

impl DeviceModules {
    /// Nothing loaded yet; modules of `arch` go into `ctx`, through `cache`.
    pub fn new(ctx: Arc<CudaContext>, arch: &'static ArchModules, device: DeviceKey, cache: ModuleCache) -> Self {
        DeviceModules { ctx, arch, device, cache, slots: Default::default() }
    }

    /// The modules of device `ordinal` that a live handle already holds, else `make()`'s, registered for the
    /// handles opened after it. So a module loads once per device and process, however many handles open it.
    pub fn shared(ordinal: usize, make: impl FnOnce() -> DeviceModules) -> Arc<DeviceModules> {
        // The list stays consistent whatever panicked while it was held: ignore poisoning.
        let mut shared = SHARED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        shared.retain(|(_, weak)| weak.strong_count() > 0);
        if let Some(modules) = shared.iter().find(|(o, _)| *o == ordinal).and_then(|(_, weak)| weak.upgrade()) {
            return modules;
        }
        let modules = Arc::new(make());
        shared.push((ordinal, Arc::downgrade(&modules)));
        modules
    }

    /// The module of `family`, loaded on first use.
    pub fn family(&self, family: Family) -> Result<Arc<CudaModule>> {
        match self.slot(family.index(), self.arch.family(family))? {
            Some(module) => Ok(module),
            // build.rs always writes every family's module: an empty one means a broken build.
            None => Err(Error::MissingKernel(format!("the {} module is empty in this build", family.stem()))),
        }
    }

    /// The test module, loaded on first use; `None` when this build carries none.
    pub fn test(&self) -> Result<Option<Arc<CudaModule>>> {
        self.slot(Family::ALL.len(), &self.arch.test)
    }

    /// The modules loaded so far, in [`Family::ALL`] order, the test module last.
    pub fn loaded(&self) -> Vec<LoadedModule> {
        self.slots.iter().filter_map(|slot| slot.loaded.get().and_then(|l| l.as_ref()).map(|(_, l)| *l)).collect()
    }

    fn slot(&self, index: usize, module: &'static PtxModule) -> Result<Option<Arc<CudaModule>>> {
        let slot = &self.slots[index];
        if let Some(loaded) = slot.loaded.get() {
            return Ok(loaded.as_ref().map(|(m, _)| m.clone()));
        }
        // A panic cannot leave the guarded state half-made (it is the OnceLock below): ignore poisoning.
        let _guard = slot.loading.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(loaded) = slot.loaded.get() {
            return Ok(loaded.as_ref().map(|(m, _)| m.clone()));
        }
        let loaded = if module.is_empty() {
            None
        } else {
            let started = std::time::Instant::now();
            let (cu_module, image) = load(&self.ctx, module, &self.cache, self.device)?;
            let load_ms = started.elapsed().as_secs_f64() * 1e3;
            Some((cu_module, LoadedModule { stem: module.stem, family: module.family, image, load_ms }))
        };
        Ok(slot.loaded.get_or_init(|| loaded).as_ref().map(|(m, _)| m.clone()))
    }
}
