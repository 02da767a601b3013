//! The production PTX committed to this crate's `ptx/` folder, one file per architecture, gzip-compressed:
//! PTX of fully inlined field arithmetic is ~30 MB of text per architecture and compresses ~20x, so a
//! regeneration adds megabytes to the repository, not tens of megabytes of diff. `cargo xtask ptx` writes them
//! (only when the text changed) and checks them against a fresh build; `gzip -dc` reads them.

use std::io::Read;
use std::path::PathBuf;

/// The architectures a PTX module is committed for, in the order build.rs builds them.
pub const ARCHES: [&str; 2] = ["sm_90", "sm_80"];

/// `ptx/zkgpu_<arch>.ptx.gz` in this crate's folder.
pub fn path(arch: &str) -> PathBuf {
    PathBuf::from(crate::SOURCE_DIR).join("ptx").join(format!("zkgpu_{arch}.ptx.gz"))
}

/// The committed PTX text of `arch`, or why it cannot be read.
pub fn read(arch: &str) -> Result<String, String> {
    let path = path(arch);
    let file = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .map_err(|e| format!("{}: not gzip-compressed UTF-8 PTX: {e}", path.display()))?;
    Ok(text)
}
