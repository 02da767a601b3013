//! Fq: the BLS12-381 base field (p has 381 bits), 12 limbs, R = 2^384. Bit-identical to `blstrs::Fp`.

super::prime::prime_field! {
    /// An element of Fq in Montgomery form, fully reduced, little-endian 32-bit limbs.
    Fq, limbs: 12, tables: limb_tables_12,
    modulus: [0xffffaaab 0xb9feffff 0xb153ffff 0x1eabfffe 0xf6b0f624 0x6730d2a0
              0xf38512bf 0x64774b84 0x434bacd7 0x4b1ba7b6 0x397fe69a 0x1a0111ea],
    inv: 0xfffcfffd,
    // Nothing for ptxas to specialise in this inv: the immediate form is already at the IMAD bound.
    inv_from: imm,
    // a·b − c·d with one reduction: p < 2^381 leaves room for the sum in the 13-word accumulators.
    sum_of_products: true,
    // Lazily reduced values in [0, 2p) for the MSM's and batch addition's mixed additions: 8p < R = 2^384.
    lazy: (two_p: [0xffff5556 0x73fdffff 0x62a7ffff 0x3d57fffd 0xed61ec48 0xce61a541
                   0xe70a257e 0xc8ee9709 0x869759ae 0x96374f6c 0x72ffcd34 0x340223d4]),
    r: [0x0002fffd 0x76090000 0xc40c0002 0xebf4000b 0x53c758ba 0x5f489857
        0x70525745 0x77ce5853 0xa256ec6d 0x5c071a97 0xfa80e493 0x15f65ec3],
    r2: [0x1c341746 0xf4df1f34 0x09d104f1 0x0a76e6a6 0x4c95b6d5 0x8de5476c
         0x939d83c0 0x67eb88a9 0xb519952d 0x9a793e85 0x92cae3aa 0x11988fe5]
}
