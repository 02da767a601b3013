//! zkgpu's own cache of compiled kernel modules: the SASS the driver's JIT made from an embedded PTX module,
//! kept on disk so the next process loads it in milliseconds instead of compiling again.
//!
//! The driver has a JIT cache of its own, but it is small by default, shared with every CUDA program,
//! disabled in some containers (`CUDA_CACHE_DISABLE`) and gone with a fresh home folder; a deployment cannot
//! rely on it or fill it ahead of time. This one lives in [`CACHE_DIR_ENV`] (default: the user's cache folder,
//! e.g. `~/.cache/zkgpu`), is filled by `warm_up` and holds one file per (module, device architecture,
//! driver version).
//!
//! Files are written to a temporary name and renamed into place, so two processes filling the same cache
//! both succeed and a reader never sees half a file. Each file carries a digest of its key and of its
//! contents: a truncated, corrupt or foreign file is ignored (and replaced), never loaded.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// Environment variable naming the cache folder; `off` disables the cache.
pub const CACHE_DIR_ENV: &str = "ZKGPU_CACHE_DIR";

/// First bytes of every cache file (format version 1).
const MAGIC: &[u8; 11] = b"ZKGPUSASS1\n";
/// Magic, key digest, payload length, payload digest.
const HEADER_BYTES: usize = MAGIC.len() + 32 + 8 + 32;

/// Where compiled modules are kept, if anywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModuleCache {
    /// No cache: every process compiles (the driver's own cache may still help).
    Off,
    /// The cache folder (created on the first store).
    At(PathBuf),
}

impl ModuleCache {
    /// The cache [`CACHE_DIR_ENV`] names: `off` -> [`ModuleCache::Off`], a path -> that folder, unset or empty
    /// -> `zkgpu` in the user's cache folder (off where the platform has none).
    pub fn from_env() -> ModuleCache {
        ModuleCache::from_setting(std::env::var_os(CACHE_DIR_ENV).as_deref().map(Path::new), dirs::cache_dir())
    }

    /// [`ModuleCache::from_env`] for a given setting and user cache folder.
    pub fn from_setting(setting: Option<&Path>, user_cache: Option<PathBuf>) -> ModuleCache {
        match setting {
            Some(path) if path.as_os_str() == "off" => ModuleCache::Off,
            Some(path) if !path.as_os_str().is_empty() => ModuleCache::At(path.to_path_buf()),
            _ => user_cache.map_or(ModuleCache::Off, |dir| ModuleCache::At(dir.join("zkgpu"))),
        }
    }

    /// The compiled module stored for `key`: `Ok(None)` when there is none (or the cache is off), `Err` with
    /// the reason when a file is there but is not a valid entry for `key` (the caller compiles and stores
    /// anew, which replaces it).
    pub fn lookup(&self, key: &CacheKey) -> Result<Option<Vec<u8>>, String> {
        let ModuleCache::At(dir) = self else { return Ok(None) };
        let path = dir.join(key.file_name());
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        decode(key, &bytes).map(|image| Some(image.to_vec())).map_err(|why| format!("{}: {why}", path.display()))
    }

    /// Stores `image` for `key`: written to a temporary file beside its final name, then renamed over it, so
    /// concurrent stores of the same key leave one complete file and readers never see a partial one.
    /// Returns the file's path (`None` when the cache is off).
    pub fn store(&self, key: &CacheKey, image: &[u8]) -> std::io::Result<Option<PathBuf>> {
        let ModuleCache::At(dir) = self else { return Ok(None) };
        std::fs::create_dir_all(dir)?;
        let path = dir.join(key.file_name());
        let tmp = dir.join(format!(".{}.{}.tmp", key.file_name(), unique_suffix()));
        let written = std::fs::File::create(&tmp).and_then(|mut file| {
            file.write_all(&encode(key, image))?;
            file.sync_all()
        });
        match written.and_then(|()| std::fs::rename(&tmp, &path)) {
            Ok(()) => Ok(Some(path)),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(e)
            }
        }
    }
}

/// What a compiled module depends on: the exact PTX text, the device's architecture and the driver that
/// compiled it (a new driver may compile differently, and may not load an older one's SASS for a new GPU).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheKey {
    /// The module's file stem, e.g. `zkgpu_sm_90_ntt` (for people reading the folder; the digest decides).
    pub stem: String,
    /// SHA-256 of the PTX text.
    pub ptx_sha256: [u8; 32],
    /// The device's compute capability (major, minor): the SASS is for exactly this architecture.
    pub compute_capability: (u32, u32),
    /// `cuDriverGetVersion`, e.g. 13000.
    pub driver_version: i32,
}

impl CacheKey {
    /// The key of module `stem` with PTX `ptx` on a device of `compute_capability` under `driver_version`.
    pub fn new(stem: &str, ptx: &str, compute_capability: (u32, u32), driver_version: i32) -> CacheKey {
        CacheKey {
            stem: stem.to_string(),
            ptx_sha256: Sha256::digest(ptx.as_bytes()).into(),
            compute_capability,
            driver_version,
        }
    }

    /// `<stem>-<first 16 hex digits of the PTX digest>-sm_<major><minor>-cuda<driver>.sass`.
    pub fn file_name(&self) -> String {
        let (major, minor) = self.compute_capability;
        format!("{}-{}-sm_{major}{minor}-cuda{}.sass", self.stem, hex(&self.ptx_sha256[..8]), self.driver_version)
    }

    /// SHA-256 over every field: what a file must carry to count as this key's.
    fn digest(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(self.stem.as_bytes());
        h.update([0]);
        h.update(self.ptx_sha256);
        h.update(self.compute_capability.0.to_le_bytes());
        h.update(self.compute_capability.1.to_le_bytes());
        h.update(self.driver_version.to_le_bytes());
        h.finalize().into()
    }
}

/// A cache file: magic, key digest, payload length (u64 LE), payload digest, payload.
fn encode(key: &CacheKey, image: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + image.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&key.digest());
    out.extend_from_slice(&(image.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(image));
    out.extend_from_slice(image);
    out
}

/// The payload of a cache file for `key`, or why the file is not one.
fn decode<'a>(key: &CacheKey, bytes: &'a [u8]) -> Result<&'a [u8], &'static str> {
    if bytes.len() < HEADER_BYTES || !bytes.starts_with(MAGIC) {
        return Err("not a zkgpu cache file (or truncated)");
    }
    let (header, image) = bytes.split_at(HEADER_BYTES);
    let key_digest = &header[MAGIC.len()..MAGIC.len() + 32];
    let length = u64::from_le_bytes(header[MAGIC.len() + 32..MAGIC.len() + 40].try_into().unwrap_or_default());
    let image_digest = &header[MAGIC.len() + 40..];
    if key_digest != key.digest() {
        return Err("written for another module, device or driver");
    }
    if length != image.len() as u64 {
        return Err("truncated or extended");
    }
    if image_digest != Sha256::digest(image).as_slice() {
        return Err("corrupt (contents do not match their digest)");
    }
    Ok(image)
}

/// Unique among this process's temporary files and, with the process id, among processes.
fn unique_suffix() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{}-{}-{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> CacheKey {
        CacheKey::new("zkgpu_sm_90_ntt", ".version 7.8\n.target sm_90\n", (9, 0), 13000)
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("zkgpu-module-cache-{name}-{}", unique_suffix()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn setting_picks_the_folder() {
        let user = Some(PathBuf::from("/home/u/.cache"));
        assert_eq!(ModuleCache::from_setting(Some(Path::new("off")), user.clone()), ModuleCache::Off);
        assert_eq!(
            ModuleCache::from_setting(Some(Path::new("/srv/zk")), user.clone()),
            ModuleCache::At(PathBuf::from("/srv/zk"))
        );
        let default = ModuleCache::At(PathBuf::from("/home/u/.cache/zkgpu"));
        assert_eq!(ModuleCache::from_setting(None, user.clone()), default);
        assert_eq!(ModuleCache::from_setting(Some(Path::new("")), user), default);
        assert_eq!(ModuleCache::from_setting(None, None), ModuleCache::Off);
    }

    /// Any field of the key changes the file and the digest a file must carry.
    #[test]
    fn key_covers_ptx_device_and_driver() {
        let base = key();
        let others = [
            CacheKey::new("zkgpu_sm_90_msm", ".version 7.8\n.target sm_90\n", (9, 0), 13000),
            CacheKey::new("zkgpu_sm_90_ntt", ".version 7.8\n.target sm_90\n\n", (9, 0), 13000),
            CacheKey::new("zkgpu_sm_90_ntt", ".version 7.8\n.target sm_90\n", (10, 0), 13000),
            CacheKey::new("zkgpu_sm_90_ntt", ".version 7.8\n.target sm_90\n", (9, 0), 13010),
        ];
        for other in &others {
            assert_ne!(other.digest(), base.digest(), "{other:?}");
            assert_ne!(other.file_name(), base.file_name(), "{other:?}");
        }
        assert!(base.file_name().starts_with("zkgpu_sm_90_ntt-"), "{}", base.file_name());
        assert!(base.file_name().ends_with("-sm_90-cuda13000.sass"), "{}", base.file_name());
    }

    #[test]
    fn stores_and_finds() {
        let cache = ModuleCache::At(scratch("roundtrip"));
        assert_eq!(cache.lookup(&key()), Ok(None), "an empty (absent) folder is a miss");
        let image: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let path = cache.store(&key(), &image).expect("stores").expect("the cache is on");
        assert_eq!(cache.lookup(&key()), Ok(Some(image.clone())));
        // Storing again replaces the file (and leaves no temporary behind).
        cache.store(&key(), b"second").expect("stores");
        assert_eq!(cache.lookup(&key()), Ok(Some(b"second".to_vec())));
        let dir = path.parent().expect("a folder");
        let files: Vec<_> = std::fs::read_dir(dir).expect("lists").map(|e| e.expect("entry").file_name()).collect();
        assert_eq!(files, vec![path.file_name().expect("a name").to_owned()]);
        std::fs::remove_dir_all(dir).expect("cleans up");
    }

    #[test]
    fn off_stores_nothing() {
        assert_eq!(ModuleCache::Off.store(&key(), b"image").expect("nothing to fail"), None);
        assert_eq!(ModuleCache::Off.lookup(&key()), Ok(None));
    }

    /// Truncated, corrupt, foreign and junk files are reported (so the caller rebuilds), never returned.
    #[test]
    fn rejects_bad_files() {
        let dir = scratch("bad");
        let cache = ModuleCache::At(dir.clone());
        let path = cache.store(&key(), b"the real image").expect("stores").expect("on");
        let good = std::fs::read(&path).expect("reads");
        let foreign = encode(&CacheKey::new("zkgpu_sm_90_ntt", "other ptx", (9, 0), 13000), b"the real image");
        let mut flipped = good.clone();
        *flipped.last_mut().expect("non-empty") ^= 1;
        let mut lengthened = good.clone();
        lengthened.push(0);
        let cases: [(&str, Vec<u8>); 6] = [
            ("empty", Vec::new()),
            ("junk", b"\x7fELF not ours at all, but long enough to hold a header of ours and then some".to_vec()),
            ("truncated", good[..good.len() - 3].to_vec()),
            ("lengthened", lengthened),
            ("bit flip", flipped),
            ("foreign key", foreign),
        ];
        for (what, bytes) in cases {
            std::fs::write(&path, &bytes).expect("writes");
            let found = cache.lookup(&key());
            assert!(found.is_err(), "{what}: {found:?}");
            // A store replaces the bad file with a good one.
            cache.store(&key(), b"the real image").expect("stores");
            assert_eq!(cache.lookup(&key()), Ok(Some(b"the real image".to_vec())), "{what}");
        }
        std::fs::remove_dir_all(dir).expect("cleans up");
    }

    /// Many writers of one key at once, with readers between them: every store succeeds, every read is either
    /// a miss or one writer's complete image, and one complete image is left.
    #[test]
    fn concurrent_stores_leave_one_complete_file() {
        let dir = scratch("race");
        let cache = ModuleCache::At(dir.clone());
        let images: Vec<Vec<u8>> = (0..8u8).map(|w| vec![w; 200_000 + usize::from(w)]).collect();
        std::thread::scope(|s| {
            for image in &images {
                let cache = &cache;
                s.spawn(move || {
                    for _ in 0..5 {
                        cache.store(&key(), image).expect("a concurrent store succeeds");
                    }
                });
            }
            for _ in 0..2 {
                s.spawn(|| {
                    for _ in 0..50 {
                        match cache.lookup(&key()) {
                            Ok(None) => {}
                            Ok(Some(found)) => assert!(images.contains(&found), "a read saw a mixed image"),
                            Err(why) => panic!("a read saw a partial file: {why}"),
                        }
                    }
                });
            }
        });
        let left = cache.lookup(&key()).expect("valid").expect("present");
        assert!(images.contains(&left));
        assert_eq!(std::fs::read_dir(&dir).expect("lists").count(), 1, "temporary files left behind");
        std::fs::remove_dir_all(dir).expect("cleans up");
    }
}
