//! bellperson's parameter file, read in parallel into heap or page-locked memory.
//!
//! bellperson's `Parameters::read` decodes one point after another on one thread; a key holds millions of
//! uncompressed points (a 2^27 partition's is tens of GiB), so decoding is most of a prover's start. After
//! each section's length prefix the format is fixed-width, so every section is cut into chunks that threads
//! read with positioned reads and decode on their own, writing straight into the destination: a `Vec`, or
//! pinned memory that the GPU copies from at PCIe line rate. A point is accepted or rejected exactly as
//! bellperson's reader does it (its encoding, the subgroup check when `checked`, no point at infinity), and a
//! bad file reports the first bad point in file order, whatever the threads' timing.
use std::fs::File;
use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

use bellperson::groth16::VerifyingKey;
use blstrs::{Bls12, G1Affine, G2Affine};
use group::UncompressedEncoding;
use group::prime::PrimeCurveAffine;
use rayon::prelude::*;

use super::key::{Points, ProvingKey};
use crate::device::Gpu;
use crate::error::{Error, Result};
use crate::memory::DeviceSafe;
use crate::pinned::PinnedMode;

/// Points decoded per task: large enough that a positioned read is efficient, small enough to balance.
const CHUNK: usize = 1 << 14;

/// Where the sections' points go.
pub(super) enum Storage<'g> {
    Heap,
    /// Page-locked memory of `gpu`'s context (portable, so every GPU copies from it at DMA speed), cached so
    /// the CPU's reads of the public inputs' bases stay fast.
    Pinned(&'g Gpu),
}

impl Storage<'_> {
    fn alloc<T: DeviceSafe + Default>(&self, len: usize) -> Result<Points<T>> {
        Ok(match self {
            Storage::Heap => Points::Heap(Arc::new(vec![T::default(); len])),
            Storage::Pinned(gpu) => Points::Pinned(Arc::new(gpu.alloc_pinned(len, PinnedMode::ReadBack)?)),
        })
    }
}

/// Reads the key at `path` (bellperson's `Parameters::write` format) into `storage`.
pub(super) fn read_key(path: &Path, checked: bool, storage: Storage<'_>) -> Result<ProvingKey> {
    let invalid = |what: String| Error::InvalidKey(format!("{}: {what}", path.display()));
    let file = File::open(path).map_err(|e| invalid(e.to_string()))?;
    let file_len = file.metadata().map_err(|e| invalid(e.to_string()))?.len();
    let vk = VerifyingKey::<Bls12>::read(BufReader::new(&file)).map_err(|e| invalid(format!("verifying key: {e}")))?;
    let (g1, g2) = (
        size_of::<<G1Affine as UncompressedEncoding>::Uncompressed>() as u64,
        size_of::<<G2Affine as UncompressedEncoding>::Uncompressed>() as u64,
    );
    // α, β, δ in G1 and β, γ, δ in G2, then the input terms after their count.
    let mut offset = 3 * g1 + 3 * g2 + 4 + g1 * vk.ic.len() as u64;
    let mut section = |name: &'static str, width: u64| -> Result<(u64, usize)> {
        let mut len = [0u8; 4];
        read_exact_at(&file, &mut len, offset).map_err(|e| invalid(format!("{name} length: {e}")))?;
        let len = u32::from_be_bytes(len) as usize;
        let start = offset + 4;
        let end = start + width * len as u64;
        if end > file_len {
            return Err(invalid(format!(
                "truncated: the {name} query's {len} points end at byte {end}, the file has {file_len}"
            )));
        }
        offset = end;
        Ok((start, len))
    };
    // Every section's bounds are checked against the file before any memory is taken.
    let (h, l, a, b_g1) = (section("H", g1)?, section("L", g1)?, section("A", g1)?, section("B (G1)", g1)?);
    let b_g2 = section("B (G2)", g2)?;
    let g1_query = |name: &str, (start, len): (u64, usize)| {
        read_points::<G1Affine>(&file, name, start, len, checked, &storage).map_err(&invalid)
    };
    let key = ProvingKey {
        h: g1_query("H", h)?,
        l: g1_query("L", l)?,
        a: g1_query("A", a)?,
        b_g1: g1_query("B (G1)", b_g1)?,
        b_g2: read_points::<G2Affine>(&file, "B (G2)", b_g2.0, b_g2.1, checked, &storage).map_err(&invalid)?,
        vk,
    };
    key.validate()?;
    Ok(key)
}

/// Why a section could not be read, for [`Error::InvalidKey`] (which the caller prefixes with the path).
type SectionError = String;

/// Decodes `len` points of section `name` starting at byte `start`.
fn read_points<T>(
    file: &File,
    name: &str,
    start: u64,
    len: usize,
    checked: bool,
    storage: &Storage<'_>,
) -> std::result::Result<Points<T>, SectionError>
where
    T: UncompressedEncoding + PrimeCurveAffine + DeviceSafe + Default,
{
    let mut points = storage.alloc::<T>(len).map_err(|e| format!("{name} query: {e}"))?;
    let dest = points.unique_mut().ok_or_else(|| format!("{name} query: storage already shared"))?;
    let width = size_of::<T::Uncompressed>();
    let chunk_results: Vec<std::result::Result<(), SectionError>> = dest
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map_init(
            || vec![0u8; CHUNK * width],
            |bytes, (c, out)| {
                let bytes = &mut bytes[..out.len() * width];
                let at = start + (c * CHUNK * width) as u64;
                read_exact_at(file, bytes, at).map_err(|e| format!("{name} query at byte {at}: {e}"))?;
                for (i, (point, raw)) in out.iter_mut().zip(bytes.chunks_exact(width)).enumerate() {
                    let mut repr = T::Uncompressed::default();
                    repr.as_mut().copy_from_slice(raw);
                    let decoded =
                        if checked { T::from_uncompressed(&repr) } else { T::from_uncompressed_unchecked(&repr) };
                    let index = c * CHUNK + i;
                    let decoded: T = Option::from(decoded)
                        .ok_or_else(|| format!("{name} query point {index}: not a valid curve point encoding"))?;
                    if bool::from(decoded.is_identity()) {
                        return Err(format!("{name} query point {index}: the point at infinity"));
                    }
                    *point = decoded;
                }
                Ok(())
            },
        )
        .collect();
    // The first failure in file order, so the report does not depend on which thread finished first.
    chunk_results.into_iter().collect::<std::result::Result<(), _>>()?;
    Ok(points)
}

#[cfg(unix)]
fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
}

#[cfg(windows)]
fn read_exact_at(file: &File, mut buf: &mut [u8], mut offset: u64) -> std::io::Result<()> {
    while !buf.is_empty() {
        match std::os::windows::fs::FileExt::seek_read(file, buf, offset)? {
            0 => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            n => {
                buf = &mut buf[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

impl ProvingKey {
    /// Reads a key written by bellperson's `Parameters::write`, decoding on every core. `checked` also
    /// verifies that every point is in the prime-order subgroup (several times slower); unchecked reading
    /// still rejects points off the curve but trusts them to be in the subgroup, as bellperson's does.
    pub fn read(path: impl AsRef<Path>, checked: bool) -> Result<Self> {
        read_key(path.as_ref(), checked, Storage::Heap)
    }

    /// [`ProvingKey::read`] into page-locked host memory: the GPU prover uploads the key at PCIe line rate
    /// (and, within a device budget, streams from it) instead of staging pageable memory through the
    /// driver. The memory is portable, so one key serves provers on every GPU.
    pub fn read_pinned(gpu: &Gpu, path: impl AsRef<Path>, checked: bool) -> Result<Self> {
        read_key(path.as_ref(), checked, Storage::Pinned(gpu))
    }
}
