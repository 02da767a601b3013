//! NTT over Fr: the pieces shared by the GPU kernels (`entry/ntt.rs`), the host driver (`zkgpu::ntt`) and the
//! CPU emulation of the kernels in the tests.
//!
//! # Algorithm
//! A size-`n = 2^L` transform is radix-2 Cooley-Tukey, run as a few *passes* of up to [`MAX_PASS_BITS`] stages
//! each (2^24 = 8 + 8 + 8 stages, 2^28 = 10 + 9 + 9 from the low bits up). One pass works on index bits
//! `[b, b + k)`: write an index as `(hi, m, lo)` with `lo` the low `b` bits and `m` the `k` pass bits; for
//! each `(hi, lo)` the `2^k` elements `(hi, *, lo)` go through `k` radix-2 stages. A thread block loads a
//! *tile* of such groups into shared memory (`2^log_h` values of hi x `2^k` values of m x `2^log_l`
//! consecutive values of lo, [`TILE_BITS`] elements at most), runs the `k` stages there with a barrier
//! between stages, and writes the tile back. Each warp owns a *region* of the tile (its top bits): stages that
//! pair slots within regions are separated by warp barriers only ([`PassParams::warp_local`]).
//!
//! - DIF (Gentleman-Sande, natural order in, bit-reversed out): passes from the top bits down; butterfly
//!   `(x, y) -> (x + y, (x - y) w)`.
//! - DIT (bit-reversed in, natural out): passes from the low bits up; butterfly `(x, y) -> (x + w y, x - w y)`.
//!
//! The twiddle of a butterfly at index `j` in a stage of span `h` is `w_{2h}^(j mod h)`, read from one table
//! `T[e] = w_N^e` (`e <= N/2`, so `T[N/2] = -1`) built for the largest size `N >= n` in use: `w_{2h}^t =
//! T[t * N / (2h)]`. The inverse transform reads the same table mirrored, `w_N^-t = -T[N/2 - t]`, and folds
//! the sign into its butterflies as a swap of operands or results ([`butterfly`]): no second table, no extra
//! field operation.
//!
//! Scaling by `n^-1` (inverse) and by the coset powers `g^(+-i)` is folded into the load of the first pass
//! (forward coset: input coefficient `i` times `g^i`) or the store of the last pass (inverse: output `i` times
//! `n^-1 g^-i`), as one multiplication by `lo[i mod 2^s] * hi[i >> s]` from two small tables (or by one
//! constant). Natural <-> bit-reversed reorderings that neither DIF nor DIT give for free (NN, RR) are an
//! in-place swap pass ([`bit_reverse`]).
//!
//! A batch of transforms of one size lies back to back in memory; `hi` then simply runs over all of them, so
//! batching costs nothing extra.
use crate::field::{Field, Fr};

/// Most radix-2 stages one pass runs in shared memory.
pub const MAX_PASS_BITS: u32 = 10;
/// log2 of the most elements one block holds in shared memory (2^10 x 32 B = 32 KiB: under the 48 KiB
/// default, several blocks per SM).
pub const TILE_BITS: u32 = 10;
/// log2 of the number of tiles below which a pass uses smaller tiles (more, smaller blocks).
pub const SMALL_GRID_LOG_TILES: u32 = 8;
/// Threads per block of a pass (fewer when the tile has fewer than 2x as many elements). 128 beat 256 by
/// 4-6% on the H200 (more, smaller blocks: a barrier waits for 4 warps, not 8; each thread has 4 independent
/// butterflies per stage of a 2^10 tile).
pub const MAX_THREADS: u32 = 128;
/// Largest supported log2 size (Fr's two-adicity is 32; memory ends well before).
pub const MAX_LOG_N: u32 = 31;
/// Bytes per Fr element.
pub const ELEMENT_BYTES: usize = 32;

/// `x`'s low `bits` bits reversed (`bits <= 64`; 0 bits gives 0).
#[inline(always)]
pub fn bit_reverse(x: u64, bits: u32) -> u64 {
    if bits == 0 { 0 } else { x.reverse_bits() >> (64 - bits) }
}

/// What a pass multiplies each element by, on the way in or out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScaleMode {
    /// No scaling.
    None,
    /// Every element times `lo[0]`.
    Constant,
    /// Element with logical index `i` times `lo[i mod 2^lo_bits] * hi[i >> lo_bits]`.
    Powers,
}

/// Where a pass applies its scaling and how it finds an element's logical index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scale {
    pub mode: ScaleMode,
    /// true: on load (before the first stage); false: on store (after the last stage).
    pub on_load: bool,
    /// The data at that point is in bit-reversed order: logical index = bit_reverse(position, log_n).
    pub bit_reversed: bool,
    /// Bits of the logical index that select the `lo` table entry.
    pub lo_bits: u32,
}

impl Scale {
    pub const NONE: Scale = Scale { mode: ScaleMode::None, on_load: false, bit_reversed: false, lo_bits: 0 };
}

/// Geometry of one pass, as the kernel receives it (packed into two u32 words by [`PassParams::encode`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassParams {
    /// log2 of the transform size.
    pub log_n: u32,
    /// Index bits below the pass's bits.
    pub log_b: u32,
    /// Stages (index bits) in this pass, 1..=MAX_PASS_BITS.
    pub log_k: u32,
    /// log2 of the consecutive `lo` values per tile (<= log_b).
    pub log_l: u32,
    /// log2 of the `hi` values per tile.
    pub log_h: u32,
    /// log2 of the twiddle table's transform size N (the table holds N/2 + 1 entries), >= log_n.
    pub log_table: u32,
    pub scale: Scale,
    /// The element at position `g` is read from `src` at `g`'s bit-reversed position within its transform
    /// ([`Self::source_index`]): a bit-reversal permutation folded into the load (RR as one DIF sweep).
    pub reverse_in: bool,
    /// The element at position `g` is written to `dst` at `g`'s bit-reversed position (NN as one DIF sweep).
    /// Unless the tile holds whole transforms, a reversing pass must not run in place: its reads and writes
    /// belong to different tiles.
    pub reverse_out: bool,
}

/// One butterfly: tile positions of its two elements and the twiddle table index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Butterfly {
    pub a: u32,
    pub b: u32,
    pub twiddle: u64,
}

impl PassParams {
    /// log2 of the elements per tile.
    #[inline(always)]
    pub fn log_tile(&self) -> u32 {
        self.log_h + self.log_k + self.log_l
    }

    /// Threads per block for this pass.
    #[inline(always)]
    pub fn threads(&self) -> u32 {
        let half = 1u32 << (self.log_tile() - 1);
        if half < MAX_THREADS { half } else { MAX_THREADS }
    }

    /// log2 of the warps per block (0 for a block of at most one warp).
    #[inline(always)]
    pub fn log_warps(&self) -> u32 {
        (self.threads() / 32).max(1).trailing_zeros()
    }

    /// Threads of a warp that take part: 32, or every thread of a smaller block.
    #[inline(always)]
    pub fn warp_width(&self) -> u32 {
        self.threads().min(32)
    }

    /// Whether stage `stage` keeps every warp inside its *region* (the slots whose top [`Self::log_warps`]
    /// bits are the warp's index): its butterflies pair slots differing in a lower bit. Between two such
    /// steps a warp needs only `bar.warp.sync`, not a block barrier: stages on a tile's `hi`/`lo` rows or low
    /// pass bits run without waiting for the other warps (2^24's 8-bit passes: 6 of 8 stages).
    #[inline(always)]
    pub fn warp_local(&self, dit: bool, stage: u32) -> bool {
        let lg_span_m = if dit { stage } else { self.log_k - 1 - stage };
        lg_span_m + self.log_l + self.log_warps() < self.log_tile()
    }

    /// The tile slot that lane `lane` of warp `warp` loads and stores in its `r`-th trip: consecutive lanes
    /// take consecutive slots of the warp's region (`r < 2^(log_tile - log_warps) / warp_width`).
    #[inline(always)]
    pub fn region_slot(&self, warp: u32, lane: u32, r: u32) -> u32 {
        (warp << (self.log_tile() - self.log_warps())) + lane + r * self.warp_width()
    }

    /// The butterfly (the `q` of [`Self::butterfly`]) that lane `lane` of warp `warp` runs in its `r`-th trip
    /// of a stage: consecutive lanes take consecutive butterflies of the warp's region
    /// (`r < 2^(log_tile - 1 - log_warps) / warp_width`); in a [`Self::warp_local`] stage both its slots lie in
    /// the region.
    #[inline(always)]
    pub fn region_butterfly(&self, warp: u32, lane: u32, r: u32) -> u32 {
        (warp << (self.log_tile() - 1 - self.log_warps())) + lane + r * self.warp_width()
    }

    /// Packs into two words (the kernel's arguments).
    pub fn encode(&self) -> [u32; 2] {
        let w0 = self.log_n
            | self.log_b << 5
            | self.log_k << 10
            | self.log_l << 15
            | self.log_h << 20
            | self.log_table << 25;
        let mode = match self.scale.mode {
            ScaleMode::None => 0,
            ScaleMode::Constant => 1,
            ScaleMode::Powers => 2,
        };
        let w1 = mode
            | (self.scale.on_load as u32) << 2
            | (self.scale.bit_reversed as u32) << 3
            | self.scale.lo_bits << 4
            | (self.reverse_in as u32) << 9
            | (self.reverse_out as u32) << 10;
        [w0, w1]
    }

    /// Inverse of [`PassParams::encode`].
    #[inline(always)]
    pub fn decode(w0: u32, w1: u32) -> PassParams {
        let mode = match w1 & 3 {
            1 => ScaleMode::Constant,
            2 => ScaleMode::Powers,
            _ => ScaleMode::None,
        };
        PassParams {
            log_n: w0 & 31,
            log_b: (w0 >> 5) & 31,
            log_k: (w0 >> 10) & 31,
            log_l: (w0 >> 15) & 31,
            log_h: (w0 >> 20) & 31,
            log_table: (w0 >> 25) & 31,
            scale: Scale { mode, on_load: (w1 >> 2) & 1 == 1, bit_reversed: (w1 >> 3) & 1 == 1, lo_bits: (w1 >> 4) & 31 },
            reverse_in: (w1 >> 9) & 1 == 1,
            reverse_out: (w1 >> 10) & 1 == 1,
        }
    }

    /// Whether the geometry is one the kernel handles (checked by the host before launching and by the
    /// kernel, which does nothing for an invalid one).
    #[inline(always)]
    pub fn is_valid(&self) -> bool {
        self.log_k >= 1
            && self.log_k <= MAX_PASS_BITS
            && self.log_b + self.log_k <= self.log_n
            && self.log_l <= self.log_b
            && self.log_tile() <= TILE_BITS.max(MAX_PASS_BITS)
            && self.log_table >= self.log_n
            && self.log_table <= MAX_LOG_N
            && self.scale.lo_bits <= 31
    }

    /// Global element index of tile element `e` in tile `tile`.
    #[inline(always)]
    pub fn global_index(&self, tile: u64, e: u32) -> u64 {
        let e = e as u64;
        let l = e & ((1 << self.log_l) - 1);
        let m = (e >> self.log_l) & ((1 << self.log_k) - 1);
        let h = e >> (self.log_l + self.log_k);
        let lo_blocks_log = self.log_b - self.log_l;
        let lo_block = tile & ((1 << lo_blocks_log) - 1);
        let tile_hi = tile >> lo_blocks_log;
        ((((tile_hi << self.log_h) + h) << (self.log_b + self.log_k)) | (m << self.log_b) | (lo_block << self.log_l)) | l
    }

    /// `g` with its position inside its transform bit-reversed (the transform's base unchanged).
    #[inline(always)]
    pub fn reversed_position(&self, g: u64) -> u64 {
        let mask = (1u64 << self.log_n) - 1;
        (g & !mask) | bit_reverse(g & mask, self.log_n)
    }

    /// Where the element for position `g` is read from.
    #[inline(always)]
    pub fn source_index(&self, g: u64) -> u64 {
        if self.reverse_in { self.reversed_position(g) } else { g }
    }

    /// Where the element at position `g` is written to.
    #[inline(always)]
    pub fn destination_index(&self, g: u64) -> u64 {
        if self.reverse_out { self.reversed_position(g) } else { g }
    }

    /// Butterfly `q` (`q < tile/2`) of stage `stage` (`< log_k`) in tile `tile`, of a forward or an `inverse`
    /// transform. DIF stages run from the largest span down, DIT stages from the smallest up.
    #[inline(always)]
    pub fn butterfly(&self, dit: bool, inverse: bool, tile: u64, stage: u32, q: u32) -> Butterfly {
        let lg_span_m = if dit { stage } else { self.log_k - 1 - stage };
        let lg_span_e = lg_span_m + self.log_l;
        let a = ((q >> lg_span_e) << (lg_span_e + 1)) | (q & ((1 << lg_span_e) - 1));
        let b = a + (1 << lg_span_e);
        let m_low = ((a >> self.log_l) & ((1 << lg_span_m) - 1)) as u64;
        let lo_block = tile & ((1u64 << (self.log_b - self.log_l)) - 1);
        let lo = (lo_block << self.log_l) | (a & ((1 << self.log_l) - 1)) as u64;
        let j = (m_low << self.log_b) | lo;
        // Span h = 2^(lg_span_m + log_b); twiddle w_{2h}^j = T[j * N / 2h], or mirrored for the inverse:
        // w_{2h}^-j = -T[N/2 - j * N / 2h] (the sign is the butterfly's).
        let t = j << (self.log_table - 1 - (lg_span_m + self.log_b));
        let twiddle = if inverse { (1u64 << (self.log_table - 1)) - t } else { t };
        Butterfly { a, b, twiddle }
    }

    /// Whether every twiddle of `stage` is 1 (span-1 stage: the last DIF stage, the first DIT stage), so the
    /// butterflies need no multiplication.
    #[inline(always)]
    pub fn unit_twiddles(&self, dit: bool, stage: u32) -> bool {
        let lg_span_m = if dit { stage } else { self.log_k - 1 - stage };
        lg_span_m + self.log_b == 0
    }

    /// The logical index (within its transform) of the element at global position `g`, for scaling.
    #[inline(always)]
    pub fn scale_index(&self, g: u64) -> u64 {
        let p = g & ((1u64 << self.log_n) - 1);
        if self.scale.bit_reversed { bit_reverse(p, self.log_n) } else { p }
    }
}

/// The scale factor for logical index `i`, read through `read(table, index)` (`table`: 0 = lo, 1 = hi).
#[inline(always)]
pub fn scale_factor(scale: &Scale, i: u64, read: impl Fn(u32, u64) -> Fr) -> Fr {
    match scale.mode {
        ScaleMode::None => Fr::ONE,
        ScaleMode::Constant => read(0, 0),
        ScaleMode::Powers => {
            let lo = read(0, i & ((1u64 << scale.lo_bits) - 1));
            let hi = read(1, i >> scale.lo_bits);
            lo.mul(&hi)
        }
    }
}

/// DIF butterfly: `(x, y) -> (x + y, (x - y) w)`.
#[inline(always)]
pub fn butterfly_dif(x: &Fr, y: &Fr, w: &Fr) -> (Fr, Fr) {
    (x.add(y), x.sub(y).mul(w))
}

/// DIT butterfly: `(x, y) -> (x + w y, x - w y)`.
#[inline(always)]
pub fn butterfly_dit(x: &Fr, y: &Fr, w: &Fr) -> (Fr, Fr) {
    let wy = y.mul(w);
    (x.add(&wy), x.sub(&wy))
}

/// A pass's butterfly with `w` as read from the table at [`Butterfly::twiddle`]: the twiddle itself forward,
/// its negation for the `inverse` (the table read mirrored), whose sign costs only a swap:
/// DIF `(x + y, (x - y)(-w)) = (y + x, (y - x) w)`, DIT `(x + (-w) y, x - (-w) y) = (x - w y, x + w y)`.
#[inline(always)]
pub fn butterfly(dit: bool, inverse: bool, x: &Fr, y: &Fr, w: &Fr) -> (Fr, Fr) {
    match (dit, inverse) {
        (false, false) => butterfly_dif(x, y, w),
        (false, true) => butterfly_dif(y, x, w),
        (true, false) => butterfly_dit(x, y, w),
        (true, true) => {
            let (sum, difference) = butterfly_dit(x, y, w);
            (difference, sum)
        }
    }
}

/// Tiled bit-reversal (`ntt_bit_reverse_tiled`): index bits of a size-2^log_n transform are split as
/// `(a, M, c)` with `a`, `c` of [`PERMUTE_EDGE_BITS`] bits each and `M` the middle; `bit_reverse(a, M, c) =
/// (rev(c), rev(M), rev(a))`. A block takes the middle value `M` and its mirror `M' = rev(M)` (blocks with
/// `M > M'` have nothing to do), loads both 16 x 16 tiles (rows `a`, runs of 16 consecutive `c`), and writes
/// each transposed and bit-reversed into the other's place (runs of 16 consecutive `rev(a)`): reads and writes
/// are both 512-byte runs, unlike the element-wise swap.
pub const PERMUTE_EDGE_BITS: u32 = 4;
/// Elements per tile of the tiled bit-reversal (16 x 16).
pub const PERMUTE_TILE: u32 = 1 << (2 * PERMUTE_EDGE_BITS);
/// Row pitch of a tile in shared memory, in elements (one element of padding against bank conflicts).
pub const PERMUTE_PITCH: u32 = (1 << PERMUTE_EDGE_BITS) + 1;
/// Smallest log2 size the tiled bit-reversal handles (two edges; the middle may be empty).
pub const PERMUTE_MIN_LOG_N: u32 = 2 * PERMUTE_EDGE_BITS;

/// The tiled bit-reversal's view of one block: transform base and the two middle values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PermuteBlock {
    /// First element of the transform.
    pub base: u64,
    /// This block's middle value.
    pub middle: u64,
    /// Its mirror, `bit_reverse(middle, log_n - 2 * PERMUTE_EDGE_BITS)`.
    pub mirror: u64,
}

impl PermuteBlock {
    /// Block `block` of the grid (`batch << (log_n - 8)` blocks), `log_n >= PERMUTE_MIN_LOG_N`.
    #[inline(always)]
    pub fn new(block: u64, log_n: u32) -> PermuteBlock {
        let middle_bits = log_n - PERMUTE_MIN_LOG_N;
        let middle = block & ((1u64 << middle_bits) - 1);
        let base = (block >> middle_bits) << log_n;
        PermuteBlock { base, middle, mirror: bit_reverse(middle, middle_bits) }
    }

    /// Whether this block does the work for its pair (the one with the smaller middle value).
    #[inline(always)]
    pub fn active(&self) -> bool {
        self.middle <= self.mirror
    }

    /// Global position of tile element `(row, col)` (`row`, `col` < 16) for middle value `m`.
    #[inline(always)]
    pub fn position(&self, log_n: u32, m: u64, row: u32, col: u32) -> u64 {
        self.base + ((row as u64) << (log_n - PERMUTE_EDGE_BITS)) + (m << PERMUTE_EDGE_BITS) + col as u64
    }
}

/// The host-side plan: how a transform is split into passes (also used by the CPU emulation in the tests).
#[cfg(not(target_arch = "nvptx64"))]
pub mod plan {
    use super::*;

    /// Stages per pass for a size-2^log_n transform from the low index bits up: as few passes as
    /// [`MAX_PASS_BITS`] allows, as even as possible, larger ones on the low bits. Empty for log_n = 0.
    pub fn pass_bits(log_n: u32) -> Vec<u32> {
        if log_n == 0 {
            return Vec::new();
        }
        let passes = log_n.div_ceil(MAX_PASS_BITS);
        (0..passes).map(|p| log_n / passes + u32::from(p < log_n % passes)).collect()
    }

    /// The passes of one DIF (`dit = false`) or DIT transform of size 2^log_n over `batch` back-to-back
    /// transforms, twiddles from a table of size 2^log_table, `scale` applied in the first (on load) or last
    /// (on store) pass. Empty for log_n = 0 (nothing to do).
    pub fn passes(log_n: u32, batch: u64, dit: bool, log_table: u32, scale: Scale) -> Vec<PassParams> {
        // Larger passes on the low bits in both directions (DIF runs from the top, so it takes them in reverse):
        // a pass on the top bits with the full 2^TILE_BITS stages leaves no room for consecutive lo values
        // (`log_l = 0`: single 32-byte elements far apart); its low-bit counterpart reads whole tiles in one run.
        // H200, DIF 2^28 as 9 + 9 + 10 instead of 10 + 9 + 9: 77.1 -> 73.5 ms (docs/log/kernels-notes.md, "NTT").
        let mut bits = pass_bits(log_n);
        if !dit {
            bits.reverse();
        }
        let count = bits.len();
        let batch_tz = if batch == 0 { 0 } else { batch.trailing_zeros() };
        let mut low = if dit { 0 } else { log_n };
        let mut out = Vec::with_capacity(count);
        // Small grids get smaller tiles so that there are at least ~2^SMALL_GRID_LOG_TILES blocks to spread
        // over the SMs (2^16: 256 tiles of 2^8 rather than 64 of 2^10).
        let total = batch.max(1) << log_n;
        let log_total = 63 - total.leading_zeros();
        let tile_bits = log_total.saturating_sub(SMALL_GRID_LOG_TILES).min(TILE_BITS);
        for (p, &k) in bits.iter().enumerate() {
            let log_b = if dit { low } else { low - k };
            let budget = tile_bits.max(k) - k;
            let log_l = log_b.min(budget);
            // hi groups in all: batch * 2^(log_n - log_b - k); a tile takes a power of two that divides it.
            let hi_tz = batch_tz + (log_n - log_b - k);
            let log_h = (budget - log_l).min(hi_tz);
            let applies = if scale.on_load { p == 0 } else { p + 1 == count };
            out.push(PassParams {
                log_n,
                log_b,
                log_k: k,
                log_l,
                log_h,
                log_table,
                scale: if applies { scale } else { Scale::NONE },
                reverse_in: false,
                reverse_out: false,
            });
            low = if dit { low + k } else { low - k };
        }
        out
    }

    /// Emulates the kernel `ntt_pass_{dif,dit}[_inv]` on the CPU block by block: reads `src`, writes `dst` (both
    /// the whole batch; `dst` is `src` for an in-place pass, which the caller models by passing a copy of it as
    /// `src`), `twiddles` the table, `lo`/`hi` the scale tables. Runs exactly the index arithmetic the GPU runs;
    /// a unit-twiddle stage, which the GPU computes without its twiddle, reads the table's one (`T[0]`, or
    /// `T[N/2] = -1` mirrored) and so checks it.
    #[allow(clippy::too_many_arguments)]
    pub fn emulate_pass(
        src: &[Fr],
        dst: &mut [Fr],
        params: &PassParams,
        dit: bool,
        inverse: bool,
        twiddles: &[Fr],
        lo: &[Fr],
        hi: &[Fr],
    ) {
        let tile_len = 1usize << params.log_tile();
        let blocks = src.len() / tile_len;
        let read = |t: u32, i: u64| if t == 0 { lo[i as usize] } else { hi[i as usize] };
        let mut tile_buf = vec![Fr::ZERO; tile_len];
        for tile in 0..blocks as u64 {
            for (e, slot) in tile_buf.iter_mut().enumerate() {
                let g = params.global_index(tile, e as u32);
                let mut x = src[params.source_index(g) as usize];
                if params.scale.on_load && params.scale.mode != ScaleMode::None {
                    x = x.mul(&scale_factor(&params.scale, params.scale_index(g), read));
                }
                *slot = x;
            }
            for stage in 0..params.log_k {
                let unit = params.unit_twiddles(dit, stage);
                let one = if inverse { 1u64 << (params.log_table - 1) } else { 0 };
                for q in 0..(tile_len / 2) as u32 {
                    let bf = params.butterfly(dit, inverse, tile, stage, q);
                    assert!(!unit || bf.twiddle == one, "a unit-twiddle stage reads twiddle {}", bf.twiddle);
                    let w = twiddles[bf.twiddle as usize];
                    let (x, y) = (tile_buf[bf.a as usize], tile_buf[bf.b as usize]);
                    let (x, y) = butterfly(dit, inverse, &x, &y, &w);
                    tile_buf[bf.a as usize] = x;
                    tile_buf[bf.b as usize] = y;
                }
            }
            for (e, &x) in tile_buf.iter().enumerate() {
                let g = params.global_index(tile, e as u32);
                let mut x = x;
                if !params.scale.on_load && params.scale.mode != ScaleMode::None {
                    x = x.mul(&scale_factor(&params.scale, params.scale_index(g), read));
                }
                dst[params.destination_index(g) as usize] = x;
            }
        }
    }

    /// Emulates the permutation step on the CPU as the host launches it: `ntt_bit_reverse_tiled` block by
    /// block from 2^[`PERMUTE_MIN_LOG_N`] on, `ntt_bit_reverse` below.
    pub fn emulate_bit_reverse(data: &mut [Fr], log_n: u32) {
        if log_n >= PERMUTE_MIN_LOG_N {
            return emulate_bit_reverse_tiled(data, log_n);
        }
        let n = 1usize << log_n;
        for chunk in data.chunks_mut(n) {
            for p in 0..n {
                let r = bit_reverse(p as u64, log_n) as usize;
                if p < r {
                    chunk.swap(p, r);
                }
            }
        }
    }

    /// Emulates `ntt_bit_reverse_tiled`: each active block loads both tiles, then writes them transposed.
    pub fn emulate_bit_reverse_tiled(data: &mut [Fr], log_n: u32) {
        let edge = 1u32 << PERMUTE_EDGE_BITS;
        let blocks = (data.len() >> PERMUTE_MIN_LOG_N) as u64;
        for block in 0..blocks {
            let pb = PermuteBlock::new(block, log_n);
            if !pb.active() {
                continue;
            }
            let mut tiles = [[Fr::ZERO; PERMUTE_TILE as usize]; 2];
            for (t, m) in [pb.middle, pb.mirror].into_iter().enumerate() {
                for e in 0..PERMUTE_TILE {
                    let (row, col) = (e >> PERMUTE_EDGE_BITS, e & (edge - 1));
                    tiles[t][e as usize] = data[pb.position(log_n, m, row, col) as usize];
                }
            }
            // Tile of `middle` goes to `mirror` and back; when they are equal both writes agree.
            for (t, m) in [pb.mirror, pb.middle].into_iter().enumerate() {
                for e in 0..PERMUTE_TILE {
                    let (row, col) = (e >> PERMUTE_EDGE_BITS, e & (edge - 1));
                    let src_row = bit_reverse(col as u64, PERMUTE_EDGE_BITS) as u32;
                    let src_col = bit_reverse(row as u64, PERMUTE_EDGE_BITS) as u32;
                    data[pb.position(log_n, m, row, col) as usize] = tiles[t][(src_row * edge + src_col) as usize];
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::plan::*;
    use super::*;

    #[test]
    fn encode_round_trips() {
        let p = PassParams {
            log_n: 28,
            log_b: 19,
            log_k: 9,
            log_l: 1,
            log_h: 0,
            log_table: 31,
            scale: Scale { mode: ScaleMode::Powers, on_load: true, bit_reversed: true, lo_bits: 14 },
            reverse_in: false,
            reverse_out: true,
        };
        let [a, b] = p.encode();
        assert_eq!(PassParams::decode(a, b), p);
        let q = PassParams { reverse_in: true, reverse_out: false, ..p };
        let [a, b] = q.encode();
        assert_eq!(PassParams::decode(a, b), q);
        assert!(p.is_valid());
    }

    #[test]
    fn pass_bits_cover_every_size() {
        for log_n in 0..=MAX_LOG_N {
            let bits = pass_bits(log_n);
            assert_eq!(bits.iter().sum::<u32>(), log_n);
            assert!(bits.iter().all(|&k| (1..=MAX_PASS_BITS).contains(&k)));
        }
        assert_eq!(pass_bits(24), vec![8, 8, 8]);
        assert_eq!(pass_bits(28), vec![10, 9, 9]);
    }

    #[test]
    fn both_directions_put_the_largest_pass_on_the_low_bits() {
        for dit in [false, true] {
            let ps = passes(28, 1, dit, 28, Scale::NONE);
            let low = ps.iter().find(|p| p.log_b == 0).map(|p| p.log_k);
            assert_eq!(low, Some(10), "dit = {dit}: {ps:?}");
            // No pass on the top bits reads single elements: every tile row is a run of >= 2.
            assert!(ps.iter().all(|p| p.log_b == 0 || p.log_l >= 1), "dit = {dit}: {ps:?}");
        }
    }

    #[test]
    fn tiled_bit_reverse_is_the_bit_reversal() {
        for log_n in PERMUTE_MIN_LOG_N..=14 {
            for batch in [1usize, 3] {
                let n = 1usize << log_n;
                let data: Vec<Fr> = (0..n * batch).map(|i| Fr::from_limbs([i as u32, 7, 0, 0, 0, 0, 0, 0])).collect();
                let mut tiled = data.clone();
                emulate_bit_reverse_tiled(&mut tiled, log_n);
                for (i, x) in tiled.iter().enumerate() {
                    let (t, p) = (i / n, i % n);
                    assert_eq!(*x, data[t * n + bit_reverse(p as u64, log_n) as usize], "2^{log_n} x{batch} at {i}");
                }
            }
        }
    }

    /// The kernels' thread mapping: every trip of every thread covers each slot (load, store) and each butterfly
    /// (stage) exactly once, and a warp-local stage's butterflies stay in their warp's region.
    #[test]
    fn warp_regions_cover_the_tile_and_hold_local_stages() {
        for log_n in 1..=30 {
            for batch in [1u64, 3] {
                for dit in [false, true] {
                    for p in passes(log_n, batch, dit, log_n, Scale::NONE) {
                        let (tile_len, warps, width) = (1u32 << p.log_tile(), 1u32 << p.log_warps(), p.warp_width());
                        assert_eq!(warps * width, p.threads(), "{p:?}");
                        let region = tile_len / warps;
                        let mut slots = vec![false; tile_len as usize];
                        for w in 0..warps {
                            for lane in 0..width {
                                for r in 0..region / width {
                                    let e = p.region_slot(w, lane, r);
                                    assert_eq!(e / region, w, "{p:?}");
                                    assert!(!std::mem::replace(&mut slots[e as usize], true), "slot {e} twice in {p:?}");
                                }
                            }
                        }
                        assert!(slots.iter().all(|&s| s), "{p:?}");
                        let mut local_stages = 0;
                        for stage in 0..p.log_k {
                            let local = p.warp_local(dit, stage);
                            local_stages += local as u32;
                            let mut seen = vec![false; tile_len as usize / 2];
                            for w in 0..warps {
                                for lane in 0..width {
                                    for r in 0..region / 2 / width {
                                        let q = p.region_butterfly(w, lane, r);
                                        assert!(!std::mem::replace(&mut seen[q as usize], true), "butterfly {q} twice in {p:?}");
                                        let bf = p.butterfly(dit, false, 0, stage, q);
                                        if local {
                                            assert_eq!((bf.a / region, bf.b / region), (w, w), "stage {stage} of {p:?}");
                                        }
                                    }
                                }
                            }
                            assert!(seen.iter().all(|&s| s), "{p:?}");
                        }
                        // Only the stages on the top log_warps slot bits (those that are pass bits) need the block.
                        assert_eq!(p.log_k - local_stages, p.log_warps().saturating_sub(p.log_h).min(p.log_k), "{p:?}");
                    }
                }
            }
        }
        // 2^24 (8-bit passes on 2^10 tiles, 4 warps): 6 of the 8 stages need no block barrier.
        let ps = passes(24, 1, false, 24, Scale::NONE);
        assert!(ps.iter().all(|p| (0..8).filter(|&s| p.warp_local(false, s)).count() >= 6), "{ps:?}");
    }

    #[test]
    fn tiles_partition_the_index_space() {
        for log_n in 1..=14 {
            for batch in [1u64, 2, 3, 4, 6] {
                for dit in [false, true] {
                    let total = (batch << log_n) as usize;
                    for p in passes(log_n, batch, dit, log_n, Scale::NONE) {
                        assert!(p.is_valid(), "{p:?}");
                        let tile_len = 1usize << p.log_tile();
                        assert_eq!(total % tile_len, 0);
                        let mut seen = vec![false; total];
                        for tile in 0..(total / tile_len) as u64 {
                            for e in 0..tile_len as u32 {
                                let g = p.global_index(tile, e) as usize;
                                assert!(!seen[g], "index {g} twice in {p:?}");
                                seen[g] = true;
                            }
                        }
                        assert!(seen.iter().all(|&s| s));
                    }
                }
            }
        }
    }
}
