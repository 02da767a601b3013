//! One macro defines both prime fields (Fr and Fq) so their API and dispatch cannot drift apart.

/// Defines a Montgomery-form prime field type over `N` 32-bit limbs.
///
/// The modulus limbs are given once, as literals, and feed both the Rust constants and the PTX text of the
/// inline-asm chains: `tables` names the limb-index table macro of [`crate::field::asm`] for this limb count,
/// and the generated `ptx` submodule holds the texts and the functions running them. `inv_from` says where the
/// default multiplication and squaring take -p⁻¹ mod 2³² from: `imm` (an immediate) or `constbank` (a
/// constant-bank word ptxas cannot see through; see `ptx_load_inv` in [`crate::field::asm`]).
/// `sum_of_products: true` gives the field a one-reduction [`crate::field::Field::mul_sub_mul`] on the GPU
/// (`ptx::mul_add_mul`; needs `inv_from: imm` and a modulus below `R/2` with room in the accumulators, see
/// `ptx_mont_sop_text`). `lazy: (two_p: [2p as literals])` gives it lazily reduced operations (values in
/// `[0, 2p)`, the `*_lazy` methods of [`crate::field::Field`]; needs the sum of products and `8p < R`, see
/// `ptx_lazy`); `lazy: none` keeps the canonical defaults.
macro_rules! prime_field {
    (
        $(#[$meta:meta])*
        $name:ident, limbs: $n:literal, tables: $tables:ident,
        modulus: [$($p:literal)*], inv: $inv:literal, inv_from: $inv_from:ident, sum_of_products: $sop:ident,
        lazy: $lazy:tt, r: [$($r:literal)*], r2: [$($r2:literal)*]
    ) => {
        /// The PTX carry chains of this field, generated from its modulus (see [`crate::field::asm`]).
        pub mod ptx {
            use $crate::field::asm::ptx_field;
            $crate::field::asm::$tables!(ptx_field! { modulus: [$($p)*], inv: $inv, inv_from: $inv_from, });
            $crate::field::prime::prime_field!(@sop_text $sop, $tables, [$($p)*], $inv);
            $crate::field::prime::prime_field!(@lazy_text $lazy, $tables, [$($p)*], $inv);
        }

        $(#[$meta])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
        #[repr(C, align(8))]
        pub struct $name(pub(crate) [u32; $n]);

        impl $name {
            /// Number of 32-bit limbs.
            pub const LIMBS: usize = $n;
            /// The modulus p, little-endian limbs.
            pub const MODULUS: [u32; $n] = [$($p),*];
            /// -p^-1 mod 2^32, the Montgomery reduction factor.
            pub const INV: u32 = $inv;
            /// R mod p (the Montgomery form of 1).
            pub const R: [u32; $n] = [$($r),*];
            /// R^2 mod p (converts canonical values into Montgomery form).
            pub const R2: [u32; $n] = [$($r2),*];
            /// Fermat exponent p - 2 for the portable (reference) inversion.
            const P_MINUS_2: [u32; $n] = $crate::field::mont::sub_small([$($p),*], 2);
            /// The modulus in the divstep inversion's 30-bit limbs (`Field::inverse`).
            const DIVSTEP_MODULUS: $crate::field::inverse::Modulus<$n, { 32 * $n / 30 + 1 }> =
                $crate::field::inverse::Modulus::new([$($p),*], $inv);

            /// Wraps Montgomery-form limbs (must be < p; not checked, as on the GPU there is no one to tell).
            #[inline(always)]
            pub const fn from_limbs(limbs: [u32; $n]) -> Self {
                Self(limbs)
            }

            /// The Montgomery-form limbs.
            #[inline(always)]
            pub const fn limbs(&self) -> [u32; $n] {
                self.0
            }

            /// Converts an ordinary (canonical) integer to Montgomery form; any `N`-limb value is reduced mod p.
            #[inline(always)]
            pub fn from_canonical_limbs(limbs: [u32; $n]) -> Self {
                Self($crate::field::mont::mul(&limbs, &Self::R2, &Self::MODULUS, Self::INV))
            }

            /// The canonical integer value (leaves Montgomery form).
            #[inline(always)]
            pub fn to_canonical_limbs(&self) -> [u32; $n] {
                let mut one = [0u32; $n];
                one[0] = 1;
                $crate::field::mont::mul(&self.0, &one, &Self::MODULUS, Self::INV)
            }

            #[inline(always)]
            pub fn add_portable(&self, rhs: &Self) -> Self {
                Self($crate::field::mont::add(&self.0, &rhs.0, &Self::MODULUS))
            }
            #[inline(always)]
            pub fn sub_portable(&self, rhs: &Self) -> Self {
                Self($crate::field::mont::sub(&self.0, &rhs.0, &Self::MODULUS))
            }
            #[inline(always)]
            pub fn neg_portable(&self) -> Self {
                Self($crate::field::mont::neg(&self.0, &Self::MODULUS))
            }
            #[inline(always)]
            pub fn double_portable(&self) -> Self {
                self.add_portable(self)
            }
            #[inline(always)]
            pub fn mul_portable(&self, rhs: &Self) -> Self {
                Self($crate::field::mont::mul(&self.0, &rhs.0, &Self::MODULUS, Self::INV))
            }
            #[inline(always)]
            pub fn square_portable(&self) -> Self {
                self.mul_portable(self)
            }
            /// Inverse by Fermat (a^(p-2)) using the portable multiplication; `0 -> 0`.
            #[inline(always)]
            pub fn inverse_portable(&self) -> Self {
                self.pow_with(&Self::P_MINUS_2, Self::mul_portable, Self::square_portable)
            }

            /// Inverse by Fermat (`a^(p−2)`) with the default multiplication (the asm chains on the GPU): what
            /// `Field::inverse` was before the divsteps, kept as the benchmarks' comparison point; `0 -> 0`.
            #[inline(always)]
            pub fn inverse_fermat(&self) -> Self {
                self.pow_with(
                    &Self::P_MINUS_2,
                    <Self as $crate::field::Field>::mul,
                    <Self as $crate::field::Field>::square,
                )
            }

            /// Square-and-multiply over a public exponent, with the multiplication given explicitly so the
            /// portable and the asm paths each stay pure.
            #[inline(always)]
            fn pow_with(&self, exp: &[u32; $n], mul: impl Fn(&Self, &Self) -> Self, square: impl Fn(&Self) -> Self) -> Self {
                let mut acc = Self(Self::R);
                let mut started = false;
                let mut k = $n;
                while k > 0 {
                    k -= 1;
                    let mut bit = 32;
                    while bit > 0 {
                        bit -= 1;
                        if started {
                            acc = square(&acc);
                        }
                        if (exp[k] >> bit) & 1 == 1 {
                            acc = mul(&acc, self);
                            started = true;
                        }
                    }
                }
                acc
            }

            /// The PTX multiplication run by an interpreter on the host: checks the GPU's exact instructions.
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn mul_ptx_emulated(&self, rhs: &Self) -> Result<Self, $crate::field::ptx_emu::PtxEmuError> {
                ptx::mul_emulated(&self.0, &rhs.0).map(Self)
            }
            /// The PTX squaring run by the host interpreter.
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn square_ptx_emulated(&self) -> Result<Self, $crate::field::ptx_emu::PtxEmuError> {
                ptx::square_emulated(&self.0).map(Self)
            }
            /// The PTX addition run by the host interpreter.
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn add_ptx_emulated(&self, rhs: &Self) -> Result<Self, $crate::field::ptx_emu::PtxEmuError> {
                ptx::add_emulated(&self.0, &rhs.0).map(Self)
            }
            /// The PTX subtraction run by the host interpreter.
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn sub_ptx_emulated(&self, rhs: &Self) -> Result<Self, $crate::field::ptx_emu::PtxEmuError> {
                ptx::sub_emulated(&self.0, &rhs.0).map(Self)
            }
            /// The PTX negation run by the host interpreter.
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn neg_ptx_emulated(&self) -> Result<Self, $crate::field::ptx_emu::PtxEmuError> {
                ptx::neg_emulated(&self.0).map(Self)
            }
        }

        /// On nvptx64 the operations run inline-PTX carry chains; elsewhere the portable Rust.
        impl $crate::field::Field for $name {
            const ZERO: Self = Self([0; $n]);
            const ONE: Self = Self(Self::R);

            #[inline(always)]
            fn add(&self, rhs: &Self) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return Self(ptx::add(&self.0, &rhs.0));
                #[cfg(not(target_arch = "nvptx64"))]
                return self.add_portable(rhs);
            }
            #[inline(always)]
            fn sub(&self, rhs: &Self) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return Self(ptx::sub(&self.0, &rhs.0));
                #[cfg(not(target_arch = "nvptx64"))]
                return self.sub_portable(rhs);
            }
            #[inline(always)]
            fn mul(&self, rhs: &Self) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return Self(ptx::mul(&self.0, &rhs.0));
                #[cfg(not(target_arch = "nvptx64"))]
                return self.mul_portable(rhs);
            }
            #[inline(always)]
            fn neg(&self) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return Self(ptx::neg(&self.0));
                #[cfg(not(target_arch = "nvptx64"))]
                return self.neg_portable();
            }
            #[inline(always)]
            fn double(&self) -> Self {
                $crate::field::Field::add(self, self)
            }
            #[inline(always)]
            fn square(&self) -> Self {
                #[cfg(target_arch = "nvptx64")]
                return Self(ptx::square(&self.0));
                #[cfg(not(target_arch = "nvptx64"))]
                return self.square_portable();
            }
            /// Divsteps ([`crate::field::inverse`]) give the integer `(aR)⁻¹ = a⁻¹R⁻¹`; two Montgomery products
            /// by `R²` turn it into `a⁻¹R`, the Montgomery form of `a⁻¹`.
            #[inline(always)]
            fn inverse(&self) -> Self {
                let r2 = Self(Self::R2);
                Self($crate::field::inverse::invert(&self.0, &Self::DIVSTEP_MODULUS)).mul(&r2).mul(&r2)
            }
            #[inline(always)]
            fn is_zero(&self) -> bool {
                $crate::field::mont::is_zero(&self.0)
            }
            $crate::field::prime::prime_field!(@sop_method $sop);
            $crate::field::prime::prime_field!(@lazy_methods $lazy);
        }
    };

    (@sop_text true, $tables:ident, [$($p:literal)*], $inv:literal) => {
        use $crate::field::asm::ptx_sop;
        $crate::field::asm::$tables!(ptx_sop! { modulus: [$($p)*], inv: $inv, });
    };
    (@sop_text false, $($rest:tt)*) => {};
    (@sop_method true) => {
        /// On nvptx64 one Montgomery reduction for both products (`ptx::mul_add_mul` of `self, b, c, −d`).
        #[inline(always)]
        fn mul_sub_mul(&self, b: &Self, c: &Self, d: &Self) -> Self {
            #[cfg(target_arch = "nvptx64")]
            return Self(ptx::mul_add_mul(&self.0, &b.0, &c.0, &ptx::neg(&d.0)));
            #[cfg(not(target_arch = "nvptx64"))]
            return self.mul_portable(b).sub_portable(&c.mul_portable(d));
        }
    };
    (@sop_method false) => {};
    (@lazy_text (two_p: [$($t:literal)*]), $tables:ident, [$($p:literal)*], $inv:literal) => {
        use $crate::field::asm::ptx_lazy;
        $crate::field::asm::$tables!(ptx_lazy! { modulus: [$($p)*], two_p: [$($t)*], inv: $inv, });
        /// `2p`, the bound of the lazy values (the literals the texts subtract and add).
        pub const TWO_P: [u32; { let limbs: &[u32] = &[$($t),*]; limbs.len() }] = [$($t),*];
        const _: () = assert!(
            $crate::field::mont::equal(&$crate::field::mont::double_const([$($p),*]), &TWO_P),
            "the `two_p` literals must be twice the modulus"
        );
    };
    (@lazy_text none, $($rest:tt)*) => {};
    (@lazy_methods (two_p: $t:tt)) => {
        /// On nvptx64 the product without its final subtraction (`ptx::mul_lazy`).
        #[inline(always)]
        fn mul_lazy(&self, rhs: &Self) -> Self {
            #[cfg(target_arch = "nvptx64")]
            return Self(ptx::mul_lazy(&self.0, &rhs.0));
            #[cfg(not(target_arch = "nvptx64"))]
            return Self($crate::field::mont::mul_lazy(&self.0, &rhs.0, &Self::MODULUS, Self::INV));
        }
        #[inline(always)]
        fn square_lazy(&self) -> Self {
            #[cfg(target_arch = "nvptx64")]
            return Self(ptx::square_lazy(&self.0));
            #[cfg(not(target_arch = "nvptx64"))]
            return self.mul_lazy(self);
        }
        /// `a − b`, adding `2p` on a borrow.
        #[inline(always)]
        fn sub_lazy(&self, rhs: &Self) -> Self {
            #[cfg(target_arch = "nvptx64")]
            return Self(ptx::sub_lazy(&self.0, &rhs.0));
            #[cfg(not(target_arch = "nvptx64"))]
            return Self($crate::field::mont::sub(&self.0, &rhs.0, &ptx::TWO_P));
        }
        /// On nvptx64 one reduction for both products, `d` negated as `2p − d`.
        #[inline(always)]
        fn mul_sub_mul_lazy(&self, b: &Self, c: &Self, d: &Self) -> Self {
            #[cfg(target_arch = "nvptx64")]
            return Self(ptx::mul_add_mul_lazy(&self.0, &b.0, &c.0, &ptx::neg_lazy(&d.0)));
            #[cfg(not(target_arch = "nvptx64"))]
            return self.mul_lazy(b).sub_lazy(&c.mul_lazy(d));
        }
        /// 0 and p are the two lazy zeros.
        #[inline(always)]
        fn is_zero_lazy(&self) -> bool {
            $crate::field::mont::is_zero(&self.0) | $crate::field::mont::equal(&self.0, &Self::MODULUS)
        }
        #[inline(always)]
        fn canonical(&self) -> Self {
            #[cfg(target_arch = "nvptx64")]
            return Self(ptx::canonical(&self.0));
            #[cfg(not(target_arch = "nvptx64"))]
            return Self($crate::field::mont::reduce_once(&self.0, &Self::MODULUS));
        }
    };
    (@lazy_methods none) => {};
}
pub(crate) use prime_field;
