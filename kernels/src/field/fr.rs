//! Fr: the BLS12-381 scalar field (r has 255 bits), 8 limbs, R = 2^256. Bit-identical to `blstrs::Scalar`.

super::prime::prime_field! {
    /// An element of Fr in Montgomery form, fully reduced, little-endian 32-bit limbs.
    Fr, limbs: 8, tables: limb_tables_8,
    modulus: [0x00000001 0xffffffff 0xfffe5bfe 0x53bda402 0x09a1d805 0x3339d808 0x299d7d48 0x73eda753],
    inv: 0xffffffff,
    // inv = 2^32 - 1: as an immediate, ptxas rewrites m = -E[0] and splits every m·r product into IMAD.X +
    // IMAD.HI (305 instead of 264 IMAD-pipe units per mul); read from the constant bank it stays opaque
    // (docs/log/kernels-notes.md, "Fr tuning": 51.5 -> 59.5 G mul/s on the H200). `_low`: r_0 = 1, so m·r_0 = m is
    // added without multiplying (docs/log/kernels-notes.md, "Fr: m·r_0 without a product": 266 -> 251 IMAD units per mul).
    inv_from: constbank_low,
    // No one-reduction a·b − c·d: 3r·2^32 would overflow the 9-word accumulators (see `ptx_mont_sop_text`).
    sum_of_products: false,
    // No lazy reduction either: 4r > 2^256, a product of two values < 2r would not stay below 2r.
    lazy: none,
    r: [0xfffffffe 0x00000001 0x00034802 0x5884b7fa 0xecbc4ff5 0x998c4fef 0xacc5056f 0x1824b159],
    r2: [0xf3f29c6d 0xc999e990 0x87925c23 0x2b6cedcb 0x7254398f 0x05d31496 0x9f59ff11 0x0748d9d9]
}
