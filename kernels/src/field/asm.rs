//! Inline-PTX carry chains (placeholder: delegates to the portable code until the chains land).
macro_rules! stub {
    ($m:ident, $t:ident, $n:literal) => {
        pub mod $m {
            use crate::field::mont;
            use crate::field::$t as F;
            pub fn mul(a: &[u32; $n], b: &[u32; $n]) -> [u32; $n] { mont::mul(a, b, &F::MODULUS, F::INV) }
            pub fn square(a: &[u32; $n]) -> [u32; $n] { mul(a, a) }
            pub fn add(a: &[u32; $n], b: &[u32; $n]) -> [u32; $n] { mont::add(a, b, &F::MODULUS) }
            pub fn sub(a: &[u32; $n], b: &[u32; $n]) -> [u32; $n] { mont::sub(a, b, &F::MODULUS) }
            pub fn neg(a: &[u32; $n]) -> [u32; $n] { mont::neg(a, &F::MODULUS) }
            pub use {mul as mul_emulated, square as square_emulated, add as add_emulated, sub as sub_emulated, neg as neg_emulated};
        }
    };
}
stub!(fr, Fr, 8);
stub!(fq, Fq, 12);
