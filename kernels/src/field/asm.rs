//! Inline-PTX carry chains for Fr (8 limbs) and Fq (12 limbs), generated from one macro source.
//!
//! # Montgomery multiplication: operand scanning with even/odd accumulators
//! A product `a_j * b_i` lands on words `j` (lo) and `j+1` (hi). Chaining `mad.lo.cc`/`madc.hi.cc` over all `j`
//! would hit every word twice, so the products are split by the parity of `j`: the **even** accumulator E
//! (words 0..=N) takes `j = 0, 2, 4, ...` (word pairs (0,1), (2,3), ...) and the **odd** accumulator O, one word
//! higher (O[k] is word k+1), takes `j = 1, 3, 5, ...`. Each of the two then is one unbroken carry chain of
//! `mad.lo.cc`/`madc.hi.cc` pairs, which ptxas turns into `IMAD.WIDE.U32(.X)` on a register pair.
//!
//! Round i (b_i the multiplier word):
//! 1. *shift + odd products*: dividing the running value by 2^32 moves word 1 of both accumulators to word 0.
//!    The old O (shifted) becomes the new E as is (pure renaming, the roles swap every round); the old E, shifted
//!    by one word, must become the new O, which starts one word higher, so its word 1 (now word 0) is added into
//!    the new E[0] with `add.cc` and the carry flows straight into the chain that adds `a_odd * b_i` while moving
//!    E two words down (`madc.lo.cc O[k], a_{k+1}, b_i, E[k+2]`): the shift costs no instruction.
//! 2. *even products*: `E += a_even * b_i`, carry into E[N].
//! 3. `m = E[0] * (-p^-1) mod 2^32` (word 0 lives only in E).
//! 4. `O += p_odd * m`, `E += p_even * m`: E[0] becomes 0.
//!
//! Round 0 has no running value, so it uses plain `mul.lo`/`mul.hi`. After round N-1 the value is
//! `E[1..] + O[0..]` (< 2p): one add chain merges them, one sub chain and `selp` make it canonical.
//! Per multiplication: 4N² + N multiply instructions (N² lo and N² hi for a·b and for m·p, N for m) and about
//! 5N cheap adds. Each carry chain lives inside the single `asm!` block (the carry flag does not survive
//! between blocks).
//!
//! # Why one text, three users
//! The PTX text is produced by `concat!` macros from index tables (macro_rules cannot compute `k+1`, so the
//! tables list the indices) and the modulus literals of the field. The same text is used by `asm!` on nvptx64 and,
//! on the host, by the interpreter in [`$crate::field::ptx_emu`], so the CPU tests run the GPU's instructions.

/// Index tables for 8 limbs, handed to a macro: `limb_tables_8!(callback! { args... })`.
macro_rules! limb_tables_8 {
    ($cb:ident ! { $($args:tt)* }) => {
        $cb! { $($args)*
            n: 8, words: 9, top: 8,
            limbs: [0 1 2 3 4 5 6 7],
            b_ops: [8 9 10 11 12 13 14 15],
            r_ops: [16 17 18 19 20 21 22 23],
            pairs: [(0 1) (2 3) (4 5) (6 7)],
            shift: [(0 1 2 3) (2 3 4 5) (4 5 6 7)], shift_last: (6 7 8),
            succ: [(0 1) (1 2) (2 3) (3 4) (4 5) (5 6) (6 7) (7 8)],
            rounds: [(1 y x) (2 x y) (3 y x) (4 x y) (5 y x) (6 x y) (7 y x)],
            last: (y x)
        }
    };
}

/// Index tables for 12 limbs (see [`limb_tables_8`]).
macro_rules! limb_tables_12 {
    ($cb:ident ! { $($args:tt)* }) => {
        $cb! { $($args)*
            n: 12, words: 13, top: 12,
            limbs: [0 1 2 3 4 5 6 7 8 9 10 11],
            b_ops: [12 13 14 15 16 17 18 19 20 21 22 23],
            r_ops: [24 25 26 27 28 29 30 31 32 33 34 35],
            pairs: [(0 1) (2 3) (4 5) (6 7) (8 9) (10 11)],
            shift: [(0 1 2 3) (2 3 4 5) (4 5 6 7) (6 7 8 9) (8 9 10 11)], shift_last: (10 11 12),
            succ: [(0 1) (1 2) (2 3) (3 4) (4 5) (5 6) (6 7) (7 8) (8 9) (9 10) (10 11) (11 12)],
            rounds: [(1 y x) (2 x y) (3 y x) (4 x y) (5 y x) (6 x y) (7 y x) (8 x y) (9 y x) (10 x y) (11 y x)],
            last: (y x)
        }
    };
}

// ---- PTX text pieces (each expands to one string literal) ------------------------------------------------

/// `X += Y_j * M` over the even (`even`) or odd (`odd`) limbs j, one carry chain, carry into `X[top]`.
/// `M` is given as (register prefix, index), e.g. `(b 3)` for `%b3` or `(m "")` for `%m`.
macro_rules! ptx_mad_chain {
    (even, $x:ident, $y:ident, ($mr:ident $mi:tt), $top:literal, [($k0:literal $k1:literal) $(($k:literal $kk:literal))*]) => {
        concat!(
            "mad.lo.cc.u32 %", stringify!($x), $k0, ", %", stringify!($y), $k0, ", %", stringify!($mr), $mi, ", %", stringify!($x), $k0, ";\n",
            "madc.hi.cc.u32 %", stringify!($x), $k1, ", %", stringify!($y), $k0, ", %", stringify!($mr), $mi, ", %", stringify!($x), $k1, ";\n",
            $(
                "madc.lo.cc.u32 %", stringify!($x), $k, ", %", stringify!($y), $k, ", %", stringify!($mr), $mi, ", %", stringify!($x), $k, ";\n",
                "madc.hi.cc.u32 %", stringify!($x), $kk, ", %", stringify!($y), $k, ", %", stringify!($mr), $mi, ", %", stringify!($x), $kk, ";\n",
            )*
            "addc.u32 %", stringify!($x), $top, ", %", stringify!($x), $top, ", 0;\n",
        )
    };
    (odd, $x:ident, $y:ident, ($mr:ident $mi:tt), $top:literal, [($k0:literal $k1:literal) $(($k:literal $kk:literal))*]) => {
        concat!(
            "mad.lo.cc.u32 %", stringify!($x), $k0, ", %", stringify!($y), $k1, ", %", stringify!($mr), $mi, ", %", stringify!($x), $k0, ";\n",
            "madc.hi.cc.u32 %", stringify!($x), $k1, ", %", stringify!($y), $k1, ", %", stringify!($mr), $mi, ", %", stringify!($x), $k1, ";\n",
            $(
                "madc.lo.cc.u32 %", stringify!($x), $k, ", %", stringify!($y), $kk, ", %", stringify!($mr), $mi, ", %", stringify!($x), $k, ";\n",
                "madc.hi.cc.u32 %", stringify!($x), $kk, ", %", stringify!($y), $kk, ", %", stringify!($mr), $mi, ", %", stringify!($x), $kk, ";\n",
            )*
            "addc.u32 %", stringify!($x), $top, ", %", stringify!($x), $top, ", 0;\n",
        )
    };
}

/// Round 0: `E = a_even * b0`, `O = a_odd * b0` (disjoint word pairs, no carries).
macro_rules! ptx_first_round {
    ($e:ident, $o:ident, $top:literal, [$(($k:literal $kk:literal))*]) => {
        concat!(
            $(
                "mul.lo.u32 %", stringify!($e), $k, ", %a", $k, ", %b0;\n",
                "mul.hi.u32 %", stringify!($e), $kk, ", %a", $k, ", %b0;\n",
                "mul.lo.u32 %", stringify!($o), $k, ", %a", $kk, ", %b0;\n",
                "mul.hi.u32 %", stringify!($o), $kk, ", %a", $kk, ", %b0;\n",
            )*
            "mov.u32 %", stringify!($e), $top, ", 0;\n",
            "mov.u32 %", stringify!($o), $top, ", 0;\n",
        )
    };
}

/// Steps 3-4 of a round: `m = E[0] * inv`, then `O += p_odd * m`, `E += p_even * m`.
macro_rules! ptx_reduce {
    ($e:ident, $o:ident, $top:literal, $pairs:tt, $inv:literal) => {
        concat!(
            "mul.lo.u32 %m, %", stringify!($e), "0, ", $inv, ";\n",
            $crate::field::asm::ptx_mad_chain!(odd, $o, p, (m ""), $top, $pairs),
            $crate::field::asm::ptx_mad_chain!(even, $e, p, (m ""), $top, $pairs),
        )
    };
}

/// Step 1 of round i: fold the previous E's word 1 into the new E[0] (= previous O[0]) and, in the same carry
/// chain, build the new O (in the previous E's registers, shifted down two words) plus `a_odd * b_i`.
macro_rules! ptx_shift_odd {
    ($e:ident, $o:ident, $i:literal, $top:literal, [$(($k:literal $k1:literal $k2:literal $k3:literal))*], ($l:literal $l1:literal $l2:literal)) => {
        concat!(
            "add.cc.u32 %", stringify!($e), "0, %", stringify!($e), "0, %", stringify!($o), "1;\n",
            $(
                "madc.lo.cc.u32 %", stringify!($o), $k, ", %a", $k1, ", %b", $i, ", %", stringify!($o), $k2, ";\n",
                "madc.hi.cc.u32 %", stringify!($o), $k1, ", %a", $k1, ", %b", $i, ", %", stringify!($o), $k3, ";\n",
            )*
            "madc.lo.cc.u32 %", stringify!($o), $l, ", %a", $l1, ", %b", $i, ", %", stringify!($o), $l2, ";\n",
            // hi(a*b) <= 2^32 - 2, so adding the carry cannot overflow: the new top word is 0.
            "madc.hi.u32 %", stringify!($o), $l1, ", %a", $l1, ", %b", $i, ", 0;\n",
            "mov.u32 %", stringify!($o), $top, ", 0;\n",
        )
    };
}

/// One full round i >= 1 with E/O register sets `$e`/`$o`.
macro_rules! ptx_round {
    ($i:literal, $e:ident, $o:ident, $top:literal, $pairs:tt, $shift:tt, $shift_last:tt, $inv:literal) => {
        concat!(
            $crate::field::asm::ptx_shift_odd!($e, $o, $i, $top, $shift, $shift_last),
            $crate::field::asm::ptx_mad_chain!(even, $e, a, (b $i), $top, $pairs),
            $crate::field::asm::ptx_reduce!($e, $o, $top, $pairs, $inv),
        )
    };
}

/// Merge `E[1..] + O[0..]` into O, subtract p into E, keep whichever is canonical.
macro_rules! ptx_final {
    ($e:ident, $o:ident, [$($k:literal)*], [$($ro:literal)*],
     [($s0:literal $s1:literal) $(($s:literal $ss:literal))*], [$l0:literal $($l:literal)*]) => {
        concat!(
            "add.cc.u32 %", stringify!($o), $s0, ", %", stringify!($o), $s0, ", %", stringify!($e), $s1, ";\n",
            $( "addc.cc.u32 %", stringify!($o), $s, ", %", stringify!($o), $s, ", %", stringify!($e), $ss, ";\n", )*
            "sub.cc.u32 %", stringify!($e), $l0, ", %", stringify!($o), $l0, ", %p", $l0, ";\n",
            $( "subc.cc.u32 %", stringify!($e), $l, ", %", stringify!($o), $l, ", %p", $l, ";\n", )*
            // %m = all-ones when the subtraction borrowed, i.e. the merged value was already < p.
            "subc.u32 %m, 0, 0;\n",
            "setp.ne.u32 %q, %m, 0;\n",
            $( "selp.b32 {", $ro, "}, %", stringify!($o), $k, ", %", stringify!($e), $k, ", %q;\n", )*
        )
    };
}

/// The whole Montgomery multiplication. Operands: a limbs 0..N, b limbs N..2N (in), result 2N..3N (out).
macro_rules! ptx_mont_mul_text {
    (
        modulus: [$($p:literal)*], inv: $inv:literal,
        n: $n:literal, words: $w:literal, top: $top:literal,
        limbs: [$($k:literal)*], b_ops: [$($bo:literal)*], r_ops: $r_ops:tt,
        pairs: $pairs:tt, shift: $shift:tt, shift_last: $shift_last:tt, succ: $succ:tt,
        rounds: [$(($i:literal $e:ident $o:ident))*], last: ($le:ident $lo:ident)
    ) => {
        concat!(
            "{{\n",
            ".reg .u32 %a<", $n, ">, %b<", $n, ">, %p<", $n, ">, %x<", $w, ">, %y<", $w, ">, %m;\n",
            ".reg .pred %q;\n",
            $( "mov.u32 %a", $k, ", {", $k, "};\n", )*
            $( "mov.u32 %b", $k, ", {", $bo, "};\n", )*
            $( "mov.u32 %p", $k, ", ", $p, ";\n", )*
            $crate::field::asm::ptx_first_round!(x, y, $top, $pairs),
            $crate::field::asm::ptx_reduce!(x, y, $top, $pairs, $inv),
            $( $crate::field::asm::ptx_round!($i, $e, $o, $top, $pairs, $shift, $shift_last, $inv), )*
            $crate::field::asm::ptx_final!($le, $lo, [$($k)*], $r_ops, $succ, [$($k)*]),
            "}}\n",
        )
    };
}

/// `selp.b32 {r_k}, %X_k, %Y_k, %q` for every limb: X where %q holds, else Y (Y may be the literal `0`).
macro_rules! ptx_select {
    ($x:ident, zero, [$($k:literal)*], [$($ro:literal)*]) => {
        concat!($( "selp.b32 {", $ro, "}, %", stringify!($x), $k, ", 0, %q;\n", )*)
    };
    ($x:ident, $y:ident, [$($k:literal)*], [$($ro:literal)*]) => {
        concat!($( "selp.b32 {", $ro, "}, %", stringify!($x), $k, ", %", stringify!($y), $k, ", %q;\n", )*)
    };
}

/// `%s_k = %m & p_k` for every limb (p where the subtraction borrowed, else 0).
macro_rules! ptx_and_mask {
    ([$($k:literal)*], [$($p:literal)*]) => {
        concat!($( "and.b32 %s", $k, ", %m, ", $p, ";\n", )*)
    };
}

/// Modular addition. Operands: a 0..N, b N..2N (in), result 2N..3N (out).
macro_rules! ptx_add_text {
    ($n:literal, [$k0:literal $($k:literal)*], [$b0:literal $($bo:literal)*], $r_ops:tt, [$p0:literal $($p:literal)*]) => {
        concat!(
            "{{\n.reg .u32 %s<", $n, ">, %d<", $n, ">, %m;\n.reg .pred %q;\n",
            "add.cc.u32 %s", $k0, ", {", $k0, "}, {", $b0, "};\n",
            $( "addc.cc.u32 %s", $k, ", {", $k, "}, {", $bo, "};\n", )*
            // a + b < 2p < 2^(32N): no carry out. Now s - p; keep s if that borrows.
            "sub.cc.u32 %d", $k0, ", %s", $k0, ", ", $p0, ";\n",
            $( "subc.cc.u32 %d", $k, ", %s", $k, ", ", $p, ";\n", )*
            "subc.u32 %m, 0, 0;\n",
            "setp.ne.u32 %q, %m, 0;\n",
            $crate::field::asm::ptx_select!(s, d, [$k0 $($k)*], $r_ops),
            "}}\n",
        )
    };
}

/// Modular subtraction. Operands: a 0..N, b N..2N (in), result 2N..3N (out).
macro_rules! ptx_sub_text {
    ($n:literal, [$k0:literal $($k:literal)*], [$b0:literal $($bo:literal)*], [$r0:literal $($ro:literal)*], [$($p:literal)*]) => {
        concat!(
            "{{\n.reg .u32 %s<", $n, ">, %d<", $n, ">, %m;\n",
            "sub.cc.u32 %d", $k0, ", {", $k0, "}, {", $b0, "};\n",
            $( "subc.cc.u32 %d", $k, ", {", $k, "}, {", $bo, "};\n", )*
            // %m = all-ones when a < b: then add p back.
            "subc.u32 %m, 0, 0;\n",
            $crate::field::asm::ptx_and_mask!([$k0 $($k)*], [$($p)*]),
            "add.cc.u32 {", $r0, "}, %d", $k0, ", %s", $k0, ";\n",
            $( "addc.cc.u32 {", $ro, "}, %d", $k, ", %s", $k, ";\n", )*
            "}}\n",
        )
    };
}

/// Modular negation (`-0 = 0`). Operands: a 0..N (in), result N..2N (out).
macro_rules! ptx_neg_text {
    ($n:literal, [$k0:literal $($k:literal)*], $r_ops:tt, [$p0:literal $($p:literal)*]) => {
        concat!(
            "{{\n.reg .u32 %d<", $n, ">, %m;\n.reg .pred %q;\n",
            "mov.u32 %m, {", $k0, "};\n",
            $( "or.b32 %m, %m, {", $k, "};\n", )*
            "setp.ne.u32 %q, %m, 0;\n",
            "sub.cc.u32 %d", $k0, ", ", $p0, ", {", $k0, "};\n",
            $( "subc.cc.u32 %d", $k, ", ", $p, ", {", $k, "};\n", )*
            $crate::field::asm::ptx_select!(d, zero, [$k0 $($k)*], $r_ops),
            "}}\n",
        )
    };
}

// ---- per-field modules ------------------------------------------------------------------------------------

/// Generates, in the invoking module, the PTX texts (`MUL`, `ADD`, `SUB`, `NEG`), the nvptx64 functions running
/// them and the host functions interpreting them. Invoked by `prime_field!` through the limb tables:
/// `limb_tables_12!(ptx_field! { modulus: [...], inv: ..., })`.
macro_rules! ptx_field {
    (
        modulus: $modulus:tt, inv: $inv:literal,
        n: $n:literal, words: $w:literal, top: $top:literal,
        limbs: $limbs:tt, b_ops: $b_ops:tt, r_ops: $r_ops:tt,
        pairs: $pairs:tt, shift: $shift:tt, shift_last: $shift_last:tt, succ: $succ:tt,
        rounds: $rounds:tt, last: $last:tt
    ) => {
            /// PTX of the Montgomery multiplication (operands: a 0..N, b N..2N, out 2N..3N).
            pub const MUL: &str = $crate::field::asm::ptx_mont_mul_text!(
                modulus: $modulus, inv: $inv, n: $n, words: $w, top: $top,
                limbs: $limbs, b_ops: $b_ops, r_ops: $r_ops,
                pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ,
                rounds: $rounds, last: $last
            );
            /// PTX of the modular addition (operands: a 0..N, b N..2N, out 2N..3N).
            pub const ADD: &str = $crate::field::asm::ptx_add_text!($n, $limbs, $b_ops, $r_ops, $modulus);
            /// PTX of the modular subtraction (operands: a 0..N, b N..2N, out 2N..3N).
            pub const SUB: &str = $crate::field::asm::ptx_sub_text!($n, $limbs, $b_ops, $r_ops, $modulus);
            /// PTX of the negation (operands: a 0..N, out N..2N).
            pub const NEG: &str = $crate::field::asm::ptx_neg_text!($n, $limbs, $b_ops, $modulus);

            $crate::field::asm::ptx_field!(@device $n, $limbs, modulus: $modulus, inv: $inv, words: $w, top: $top,
                b_ops: $b_ops, r_ops: $r_ops, pairs: $pairs, shift: $shift, shift_last: $shift_last,
                succ: $succ, rounds: $rounds, last: $last);

            /// Host: interpret [`MUL`].
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn mul_emulated(a: &[u32; $n], b: &[u32; $n]) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
                $crate::field::ptx_emu::run_cached::<$n, 2>(MUL, [a, b], &MUL_PROGRAM)
            }
            /// Host: interpret [`MUL`] with both operands `a` (what `square` runs on the GPU).
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn square_emulated(a: &[u32; $n]) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
                mul_emulated(a, a)
            }
            /// Host: interpret [`ADD`].
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn add_emulated(a: &[u32; $n], b: &[u32; $n]) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
                $crate::field::ptx_emu::run_cached::<$n, 2>(ADD, [a, b], &ADD_PROGRAM)
            }
            /// Host: interpret [`SUB`].
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn sub_emulated(a: &[u32; $n], b: &[u32; $n]) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
                $crate::field::ptx_emu::run_cached::<$n, 2>(SUB, [a, b], &SUB_PROGRAM)
            }
            /// Host: interpret [`NEG`].
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn neg_emulated(a: &[u32; $n]) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
                $crate::field::ptx_emu::run_cached::<$n, 1>(NEG, [a], &NEG_PROGRAM)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            static MUL_PROGRAM: $crate::field::ptx_emu::ProgramCache = $crate::field::ptx_emu::ProgramCache::new();
            #[cfg(not(target_arch = "nvptx64"))]
            static ADD_PROGRAM: $crate::field::ptx_emu::ProgramCache = $crate::field::ptx_emu::ProgramCache::new();
            #[cfg(not(target_arch = "nvptx64"))]
            static SUB_PROGRAM: $crate::field::ptx_emu::ProgramCache = $crate::field::ptx_emu::ProgramCache::new();
            #[cfg(not(target_arch = "nvptx64"))]
            static NEG_PROGRAM: $crate::field::ptx_emu::ProgramCache = $crate::field::ptx_emu::ProgramCache::new();
    };

    // nvptx64: the same texts inside `asm!` (a `const` cannot be an asm template, so the macros run again).
    (@device $n:literal, [$($k:literal)*], modulus: $modulus:tt, inv: $inv:literal, words: $w:literal, top: $top:literal,
        b_ops: $b_ops:tt, r_ops: $r_ops:tt, pairs: $pairs:tt, shift: $shift:tt, shift_last: $shift_last:tt,
        succ: $succ:tt, rounds: $rounds:tt, last: $last:tt) => {
        /// Montgomery product `a * b / R mod p`, canonical output.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn mul(a: &[u32; $n], b: &[u32; $n]) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: pure register arithmetic: no memory access, no stack, all registers declared in the block.
            unsafe {
                core::arch::asm!(
                    $crate::field::asm::ptx_mont_mul_text!(
                        modulus: $modulus, inv: $inv, n: $n, words: $w, top: $top,
                        limbs: [$($k)*], b_ops: $b_ops, r_ops: $r_ops,
                        pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ,
                        rounds: $rounds, last: $last
                    ),
                    $( in(reg32) a[$k], )*
                    $( in(reg32) b[$k], )*
                    $( out(reg32) r[$k], )*
                    options(pure, nomem, nostack)
                );
            }
            r
        }
        /// Montgomery square (the multiplication with both operands `a`).
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn square(a: &[u32; $n]) -> [u32; $n] {
            mul(a, a)
        }
        /// `a + b mod p`.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn add(a: &[u32; $n], b: &[u32; $n]) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: pure register arithmetic (see `mul`).
            unsafe {
                core::arch::asm!(
                    $crate::field::asm::ptx_add_text!($n, [$($k)*], $b_ops, $r_ops, $modulus),
                    $( in(reg32) a[$k], )*
                    $( in(reg32) b[$k], )*
                    $( out(reg32) r[$k], )*
                    options(pure, nomem, nostack)
                );
            }
            r
        }
        /// `a - b mod p`.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn sub(a: &[u32; $n], b: &[u32; $n]) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: pure register arithmetic (see `mul`).
            unsafe {
                core::arch::asm!(
                    $crate::field::asm::ptx_sub_text!($n, [$($k)*], $b_ops, $r_ops, $modulus),
                    $( in(reg32) a[$k], )*
                    $( in(reg32) b[$k], )*
                    $( out(reg32) r[$k], )*
                    options(pure, nomem, nostack)
                );
            }
            r
        }
        /// `-a mod p`.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn neg(a: &[u32; $n]) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: pure register arithmetic (see `mul`).
            unsafe {
                core::arch::asm!(
                    $crate::field::asm::ptx_neg_text!($n, [$($k)*], $b_ops, $modulus),
                    $( in(reg32) a[$k], )*
                    $( out(reg32) r[$k], )*
                    options(pure, nomem, nostack)
                );
            }
            r
        }
    };
}

pub(crate) use {
    limb_tables_8, limb_tables_12, ptx_mad_chain, ptx_first_round, ptx_reduce, ptx_shift_odd, ptx_round, ptx_final, ptx_mont_mul_text, ptx_select, ptx_and_mask, ptx_add_text, ptx_sub_text, ptx_neg_text, ptx_field,
};
