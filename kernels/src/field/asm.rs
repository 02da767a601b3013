//! Inline-PTX carry chains for Fr (8 limbs) and Fq (12 limbs), generated from one macro source.
//!
//! # Montgomery multiplication: operand scanning with even/odd accumulators
//! A product `a_j * b_i` lands on words `j` (lo) and `j+1` (hi). Chaining `mad.lo.cc`/`madc.hi.cc` over all `j`
//! would hit every word twice, so the products are split by the parity of `j`: the **even** accumulator E
//! (words 0..=N) takes `j = 0, 2, 4, ...` (word pairs (0,1), (2,3), ...) and the **odd** accumulator O, one word
//! higher (`O[k]` is word k+1), takes `j = 1, 3, 5, ...`. Each of the two then is one unbroken carry chain of
//! `mad.lo.cc`/`madc.hi.cc` pairs, which ptxas turns into `IMAD.WIDE.U32(.X)` on a register pair.
//!
//! Round i (b_i the multiplier word):
//! 1. *shift + odd products*: dividing the running value by 2^32 moves word 1 of both accumulators to word 0.
//!    The old O (shifted) becomes the new E as is (pure renaming, the roles swap every round); the old E, shifted
//!    by one word, must become the new O, which starts one word higher, so its word 1 (now word 0) is added into
//!    the new `E[0]` with `add.cc` and the carry flows straight into the chain that adds `a_odd * b_i` while moving
//!    E two words down (`madc.lo.cc O[k], a_{k+1}, b_i, E[k+2]`): the shift costs no instruction.
//! 2. *even products*: `E += a_even * b_i`, carry into `E[N]`.
//! 3. `m = E[0] * (-p^-1) mod 2^32` (word 0 lives only in E).
//! 4. `O += p_odd * m`, `E += p_even * m`: `E[0]` becomes 0.
//!
//! Round 0 has no running value, so it uses plain `mul.lo`/`mul.hi`. After round N-1 the value is
//! `E[1..] + O[0..]` (< 2p): one add chain merges them, one sub chain and `selp` make it canonical.
//! Per multiplication: 4N² + N multiply instructions (N² lo and N² hi for a·b and for m·p, N for m) and about
//! 5N cheap adds.
//!
//! # Squaring
//! `a²` first as a full 2N-word number: the cross products `a_i·a_j` (i < j) once, split the same way into
//! pairs starting at even words (`%ce`) and odd words (`%co`), one chain per row and parity, then
//! `2·(ce + co) + Σ a_i²·2^(64i)`. The reduction `S_high + (S_low + M·p)/R` reuses the rounds above without the
//! `a·b_i` part (the fold's carry now survives the `mul.lo` computing m). 3N² + 2N multiply instructions
//! (Fq 456 instead of 588). Each carry chain lives inside the single `asm!` block (the carry flag does not survive
//! between blocks).
//!
//! # Why one text, three users
//! The PTX text is produced by `concat!` macros from index tables (macro_rules cannot compute `k+1`, so the
//! tables list the indices) and the modulus literals of the field. The same text is used by `asm!` on nvptx64 and,
//! on the host, by the interpreter in [`crate::field::ptx_emu`], so the CPU tests run the GPU's instructions.

/// Index tables for 8 limbs, handed to a macro: `limb_tables_8!(callback! { args... })`.
/// `pairs`: word pairs of the even products; `shift`/`shift_last`: (write, limb, read, read) of the shifting
/// chain; `succ`: (k, k+1); `rounds`: (i, E set, O set); squaring: `sq_rows` = (i, [(j, lo word, hi word)] of
/// the cross products a_i·a_j starting at an even word, carry word, [same, odd words], carry word), `diag`,
/// `high` = (k, N+k).
macro_rules! limb_tables_8 {
    ($cb:ident ! { $($args:tt)* }) => {
        $cb! { $($args)*
            n: 8, words: 9, top: 8,
            limbs: [0 1 2 3 4 5 6 7],
            b_ops: [8 9 10 11 12 13 14 15],
            r_ops: [16 17 18 19 20 21 22 23],
            p_ops: [24 25 26 27 28 29 30 31],
            o_ops: [32 33 34 35 36 37 38 39],
            pairs: [(0 1) (2 3) (4 5) (6 7)],
            shift: [(0 1 2 3) (2 3 4 5) (4 5 6 7)], shift_last: (6 7 8),
            succ: [(0 1) (1 2) (2 3) (3 4) (4 5) (5 6) (6 7) (7 8)],
            words2: 16,
            wide: [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15],
            diag: [(0 0 1) (1 2 3) (2 4 5) (3 6 7) (4 8 9) (5 10 11) (6 12 13) (7 14 15)],
            high: [(0 8) (1 9) (2 10) (3 11) (4 12) (5 13) (6 14) (7 15)],
            sq_rows: [
                (0 [(2 2 3) (4 4 5) (6 6 7)] 8 [(1 1 2) (3 3 4) (5 5 6) (7 7 8)] 9)
                (1 [(3 4 5) (5 6 7) (7 8 9)] 10 [(2 3 4) (4 5 6) (6 7 8)] 9)
                (2 [(4 6 7) (6 8 9)] 10 [(3 5 6) (5 7 8) (7 9 10)] 11)
                (3 [(5 8 9) (7 10 11)] 12 [(4 7 8) (6 9 10)] 11)
                (4 [(6 10 11)] 12 [(5 9 10) (7 11 12)] 13)
                (5 [(7 12 13)] 14 [(6 11 12)] 13)
                (6 [] 0 [(7 13 14)] 15)
            ],
            rounds: [(1 y x) (2 x y) (3 y x) (4 x y) (5 y x) (6 x y) (7 y x)],
            last: (y x)
        }
    };
}

/// Index tables for 12 limbs (see `limb_tables_8`).
macro_rules! limb_tables_12 {
    ($cb:ident ! { $($args:tt)* }) => {
        $cb! { $($args)*
            n: 12, words: 13, top: 12,
            limbs: [0 1 2 3 4 5 6 7 8 9 10 11],
            b_ops: [12 13 14 15 16 17 18 19 20 21 22 23],
            r_ops: [24 25 26 27 28 29 30 31 32 33 34 35],
            p_ops: [36 37 38 39 40 41 42 43 44 45 46 47],
            o_ops: [48 49 50 51 52 53 54 55 56 57 58 59],
            pairs: [(0 1) (2 3) (4 5) (6 7) (8 9) (10 11)],
            shift: [(0 1 2 3) (2 3 4 5) (4 5 6 7) (6 7 8 9) (8 9 10 11)], shift_last: (10 11 12),
            succ: [(0 1) (1 2) (2 3) (3 4) (4 5) (5 6) (6 7) (7 8) (8 9) (9 10) (10 11) (11 12)],
            words2: 24,
            wide: [0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23],
            diag: [(0 0 1) (1 2 3) (2 4 5) (3 6 7) (4 8 9) (5 10 11) (6 12 13) (7 14 15) (8 16 17) (9 18 19) (10 20 21) (11 22 23)],
            high: [(0 12) (1 13) (2 14) (3 15) (4 16) (5 17) (6 18) (7 19) (8 20) (9 21) (10 22) (11 23)],
            sq_rows: [
                (0 [(2 2 3) (4 4 5) (6 6 7) (8 8 9) (10 10 11)] 12 [(1 1 2) (3 3 4) (5 5 6) (7 7 8) (9 9 10) (11 11 12)] 13)
                (1 [(3 4 5) (5 6 7) (7 8 9) (9 10 11) (11 12 13)] 14 [(2 3 4) (4 5 6) (6 7 8) (8 9 10) (10 11 12)] 13)
                (2 [(4 6 7) (6 8 9) (8 10 11) (10 12 13)] 14 [(3 5 6) (5 7 8) (7 9 10) (9 11 12) (11 13 14)] 15)
                (3 [(5 8 9) (7 10 11) (9 12 13) (11 14 15)] 16 [(4 7 8) (6 9 10) (8 11 12) (10 13 14)] 15)
                (4 [(6 10 11) (8 12 13) (10 14 15)] 16 [(5 9 10) (7 11 12) (9 13 14) (11 15 16)] 17)
                (5 [(7 12 13) (9 14 15) (11 16 17)] 18 [(6 11 12) (8 13 14) (10 15 16)] 17)
                (6 [(8 14 15) (10 16 17)] 18 [(7 13 14) (9 15 16) (11 17 18)] 19)
                (7 [(9 16 17) (11 18 19)] 20 [(8 15 16) (10 17 18)] 19)
                (8 [(10 18 19)] 20 [(9 17 18) (11 19 20)] 21)
                (9 [(11 20 21)] 22 [(10 19 20)] 21)
                (10 [] 0 [(11 21 22)] 23)
            ],
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

/// `E += p_even * m` as [`ptx_mad_chain`] for a modulus with `p_0 = 1` (Fr): the first product, `m·p_0 = m`
/// with hi word 0, is added without a multiplication (ptxas keeps `hi(m·1)` as an `IMAD.HI`, 2 IMAD-pipe units).
macro_rules! ptx_mad_chain_low {
    (even, $x:ident, $top:literal, [($k0:literal $k1:literal) $(($k:literal $kk:literal))*]) => {
        concat!(
            "add.cc.u32 %", stringify!($x), $k0, ", %", stringify!($x), $k0, ", %m;\n",
            "addc.cc.u32 %", stringify!($x), $k1, ", %", stringify!($x), $k1, ", 0;\n",
            $(
                "madc.lo.cc.u32 %", stringify!($x), $k, ", %p", $k, ", %m, %", stringify!($x), $k, ";\n",
                "madc.hi.cc.u32 %", stringify!($x), $kk, ", %p", $k, ", %m, %", stringify!($x), $kk, ";\n",
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

/// Steps 3-4 of a round: `m = E[0] * inv`, then `O += p_odd * m`, `E += p_even * m`. `inv` is
/// `(general operand)` for any modulus or `(low operand)` for one with `p_0 = 1` (see `ptx_load_inv`).
macro_rules! ptx_reduce {
    ($e:ident, $o:ident, $top:literal, $pairs:tt, (general $inv:literal)) => {
        concat!(
            "mul.lo.u32 %m, %", stringify!($e), "0, ", $inv, ";\n",
            $crate::field::asm::ptx_mad_chain!(odd, $o, p, (m ""), $top, $pairs),
            $crate::field::asm::ptx_mad_chain!(even, $e, p, (m ""), $top, $pairs),
        )
    };
    ($e:ident, $o:ident, $top:literal, $pairs:tt, (low $inv:literal)) => {
        concat!(
            "mul.lo.u32 %m, %", stringify!($e), "0, ", $inv, ";\n",
            $crate::field::asm::ptx_mad_chain!(odd, $o, p, (m ""), $top, $pairs),
            $crate::field::asm::ptx_mad_chain_low!(even, $e, $top, $pairs),
        )
    };
}

/// Start of round i >= 1: the previous E's word 1 and the previous O's word 0 (now the new `E[0]`) sit at the
/// same position after the shift; add them, leaving the carry in the flag for `ptx_shift_chain`.
macro_rules! ptx_fold {
    ($e:ident, $o:ident) => {
        concat!("add.cc.u32 %", stringify!($e), "0, %", stringify!($e), "0, %", stringify!($o), "1;\n")
    };
}

/// Builds the new O (in the previous E's registers, reading two words higher than it writes, i.e. shifted)
/// plus `Y_odd * M`, consuming the carry of `ptx_fold`. `M` as in `ptx_mad_chain`.
macro_rules! ptx_shift_chain {
    ($o:ident, $y:ident, ($mr:ident $mi:tt), $top:literal, [$(($k:literal $k1:literal $k2:literal $k3:literal))*], ($l:literal $l1:literal $l2:literal)) => {
        concat!(
            $(
                "madc.lo.cc.u32 %", stringify!($o), $k, ", %", stringify!($y), $k1, ", %", stringify!($mr), $mi, ", %", stringify!($o), $k2, ";\n",
                "madc.hi.cc.u32 %", stringify!($o), $k1, ", %", stringify!($y), $k1, ", %", stringify!($mr), $mi, ", %", stringify!($o), $k3, ";\n",
            )*
            "madc.lo.cc.u32 %", stringify!($o), $l, ", %", stringify!($y), $l1, ", %", stringify!($mr), $mi, ", %", stringify!($o), $l2, ";\n",
            // hi(y*m) <= 2^32 - 2, so adding the carry cannot overflow: the new top word is 0.
            "madc.hi.u32 %", stringify!($o), $l1, ", %", stringify!($y), $l1, ", %", stringify!($mr), $mi, ", 0;\n",
            "mov.u32 %", stringify!($o), $top, ", 0;\n",
        )
    };
}

/// One full multiplication round i >= 1 with E/O register sets `$e`/`$o`.
macro_rules! ptx_round {
    ($i:literal, $e:ident, $o:ident, $top:literal, $pairs:tt, $shift:tt, $shift_last:tt, $inv:tt) => {
        concat!(
            $crate::field::asm::ptx_fold!($e, $o),
            $crate::field::asm::ptx_shift_chain!($o, a, (b $i), $top, $shift, $shift_last),
            $crate::field::asm::ptx_mad_chain!(even, $e, a, (b $i), $top, $pairs),
            $crate::field::asm::ptx_reduce!($e, $o, $top, $pairs, $inv),
        )
    };
}

/// One reduction-only round i >= 1 (squaring): fold, `m = E[0] * inv` (the carry flag survives `mul`), then
/// the shifted `O += p_odd * m` and `E += p_even * m`. `inv` as in [`ptx_reduce`].
macro_rules! ptx_redc_round {
    ($e:ident, $o:ident, $top:literal, $pairs:tt, $shift:tt, $shift_last:tt, (general $inv:literal)) => {
        concat!(
            $crate::field::asm::ptx_fold!($e, $o),
            "mul.lo.u32 %m, %", stringify!($e), "0, ", $inv, ";\n",
            $crate::field::asm::ptx_shift_chain!($o, p, (m ""), $top, $shift, $shift_last),
            $crate::field::asm::ptx_mad_chain!(even, $e, p, (m ""), $top, $pairs),
        )
    };
    ($e:ident, $o:ident, $top:literal, $pairs:tt, $shift:tt, $shift_last:tt, (low $inv:literal)) => {
        concat!(
            $crate::field::asm::ptx_fold!($e, $o),
            "mul.lo.u32 %m, %", stringify!($e), "0, ", $inv, ";\n",
            $crate::field::asm::ptx_shift_chain!($o, p, (m ""), $top, $shift, $shift_last),
            $crate::field::asm::ptx_mad_chain_low!(even, $e, $top, $pairs),
        )
    };
}

/// After the last round the value is `E[1..] + O[0..]`: add it into O.
macro_rules! ptx_merge {
    ($e:ident, $o:ident, [($s0:literal $s1:literal) $(($s:literal $ss:literal))*]) => {
        concat!(
            "add.cc.u32 %", stringify!($o), $s0, ", %", stringify!($o), $s0, ", %", stringify!($e), $s1, ";\n",
            $( "addc.cc.u32 %", stringify!($o), $s, ", %", stringify!($o), $s, ", %", stringify!($e), $ss, ";\n", )*
        )
    };
}

/// O (< 2p) to canonical: subtract p into E, write O or E (whichever is < p) to the output operands.
macro_rules! ptx_canonical {
    ($e:ident, $o:ident, [$l0:literal $($l:literal)*], $r_ops:tt) => {
        concat!(
            "sub.cc.u32 %", stringify!($e), $l0, ", %", stringify!($o), $l0, ", %p", $l0, ";\n",
            $( "subc.cc.u32 %", stringify!($e), $l, ", %", stringify!($o), $l, ", %p", $l, ";\n", )*
            // %m = all-ones when the subtraction borrowed, i.e. O was already < p.
            "subc.u32 %m, 0, 0;\n",
            "setp.ne.u32 %q, %m, 0;\n",
            $crate::field::asm::ptx_select!($o, $e, [$l0 $($l)*], $r_ops),
        )
    };
}

/// `%p_k` = modulus limb k: from immediates (`imm`) or from input operands (`ops`, opaque to ptxas).
macro_rules! ptx_load_modulus {
    ([$($k:literal)*], (imm [$($p:literal)*])) => {
        concat!($( "mov.u32 %p", $k, ", ", $p, ";\n", )*)
    };
    ([$($k:literal)*], (ops [$($po:literal)*])) => {
        concat!($( "mov.u32 %p", $k, ", {", $po, "};\n", )*)
    };
}

/// Where `m = E[0]·inv` gets `inv`: an immediate (`imm`; for Fr, inv = 2^32 - 1, so ptxas rewrites m = -E[0]
/// and then splits every m·p product into `IMAD.X` + `IMAD.HI.U32.X`, 3 IMAD-pipe units instead of 2), or
/// `%inv` loaded from the constant bank (`constbank`: symbol `zkgpu_inv_<value>`, declared by `ptx_field`),
/// which ptxas cannot see through; `constbank_low` is `constbank` for a modulus with `p_0 = 1` (Fr), whose
/// reductions add `m·p_0 = m` without multiplying ([`ptx_mad_chain_low`]: one `IMAD.HI` fewer per round).
macro_rules! ptx_load_inv {
    (imm, $inv:literal) => { "" };
    (constbank, $inv:literal) => {
        concat!(".reg .u32 %inv;\n", "ld.const.u32 %inv, [zkgpu_inv_", stringify!($inv), "];\n")
    };
    (constbank_low, $inv:literal) => {
        $crate::field::asm::ptx_load_inv!(constbank, $inv)
    };
}

/// The result O (< 2p) to the output operands: `canonical` (subtract p if needed) or `lazy` (as is, < 2p).
macro_rules! ptx_output {
    (canonical, $e:ident, $o:ident, $limbs:tt, $r_ops:tt) => {
        $crate::field::asm::ptx_canonical!($e, $o, $limbs, $r_ops)
    };
    (lazy, $e:ident, $o:ident, [$($k:literal)*], [$($ro:literal)*]) => {
        concat!($( "mov.u32 {", $ro, "}, %", stringify!($o), $k, ";\n", )*)
    };
}

/// End of the multiplication: merge the accumulators, then [`ptx_output`] (`canonical` or `lazy`).
macro_rules! ptx_finish {
    ($finish:ident, $e:ident, $o:ident, $limbs:tt, $r_ops:tt, $succ:tt) => {
        concat!(
            $crate::field::asm::ptx_merge!($e, $o, $succ),
            $crate::field::asm::ptx_output!($finish, $e, $o, $limbs, $r_ops),
        )
    };
}

/// The whole Montgomery multiplication. Operands: a limbs 0..N, b limbs N..2N (in), result 2N..3N (out).
/// The `@with` form picks where the modulus comes from (`(imm [literals])`, or `(ops [operand numbers])` for
/// limbs passed in registers so ptxas cannot specialise the products), where `inv` comes from (`imm` or
/// `constbank`, see `ptx_load_inv`) and the end (`canonical`, or `lazy`: no final subtraction, output < 2p
/// when one input is < p and the other < 2p, since 2p < 2^(32N)).
macro_rules! ptx_mont_mul_text {
    (@with p_from: $p_from:tt, inv_from: imm, finish: $finish:ident, inv: $inv:literal, $($rest:tt)*) => {
        $crate::field::asm::ptx_mont_mul_text!(@body p_from: $p_from, inv_from: imm, inv_use: (general $inv),
            finish: $finish, inv: $inv, $($rest)*)
    };
    (@with p_from: $p_from:tt, inv_from: constbank, finish: $finish:ident, inv: $inv:literal, $($rest:tt)*) => {
        $crate::field::asm::ptx_mont_mul_text!(@body p_from: $p_from, inv_from: constbank, inv_use: (general "%inv"),
            finish: $finish, inv: $inv, $($rest)*)
    };
    (@with p_from: (imm $modulus:tt), inv_from: constbank_low, finish: $finish:ident, inv: $inv:literal, $($rest:tt)*) => {
        $crate::field::asm::ptx_mont_mul_text!(@body p_from: (imm $modulus), inv_from: constbank_low,
            inv_use: (low "%inv"), finish: $finish, inv: $inv, $($rest)*)
    };
    (
        @body p_from: $p_from:tt, inv_from: $inv_from:ident, inv_use: $inv_use:tt, finish: $finish:ident,
        inv: $inv:literal,
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
            $crate::field::asm::ptx_load_modulus!([$($k)*], $p_from),
            $crate::field::asm::ptx_load_inv!($inv_from, $inv),
            $crate::field::asm::ptx_first_round!(x, y, $top, $pairs),
            $crate::field::asm::ptx_reduce!(x, y, $top, $pairs, $inv_use),
            $( $crate::field::asm::ptx_round!($i, $e, $o, $top, $pairs, $shift, $shift_last, $inv_use), )*
            $crate::field::asm::ptx_finish!($finish, $le, $lo, [$($k)*], $r_ops, $succ),
            "}}\n",
        )
    };
}

// ---- sum of two products ---------------------------------------------------------------------------------

/// One round i >= 1 of [`ptx_mont_sop_text`]: the multiplication round's chains for `a·b_i`, the same two
/// chains for `c·d_i` into the same accumulators, then one reduction step for both.
macro_rules! ptx_sop_round {
    ($i:literal, $e:ident, $o:ident, $top:literal, $pairs:tt, $shift:tt, $shift_last:tt, $inv:tt) => {
        concat!(
            $crate::field::asm::ptx_fold!($e, $o),
            $crate::field::asm::ptx_shift_chain!($o, a, (b $i), $top, $shift, $shift_last),
            $crate::field::asm::ptx_mad_chain!(even, $e, a, (b $i), $top, $pairs),
            $crate::field::asm::ptx_mad_chain!(odd, $o, c, (d $i), $top, $pairs),
            $crate::field::asm::ptx_mad_chain!(even, $e, c, (d $i), $top, $pairs),
            $crate::field::asm::ptx_reduce!($e, $o, $top, $pairs, $inv),
        )
    };
}

/// `(a·b + c·d) / R mod p` with one Montgomery reduction instead of two (saves `2N² + N` multiply
/// instructions, 300 for Fq). Operands: a 0..N, b N..2N, c 2N..3N, d 3N..4N (in, all < p), out 4N..5N.
///
/// Bounds: with `a, c < p` the running value stays below `3p` after every round, so each accumulator (N + 1
/// words) holds at most `3p·2^32`; the end value is `< p + 2p²/R`, below `2p` when `p < R/2`, so the usual
/// one subtraction makes it canonical. For Fq (`p < 2^381`, accumulators of 416 bits) both hold; for Fr the
/// accumulators (288 bits) would not hold `3r·2^32`, so only Fq uses it.
macro_rules! ptx_mont_sop_text {
    (
        modulus: $modulus:tt, inv: $inv:literal, finish: $finish:ident, n: $n:literal, words: $w:literal,
        top: $top:literal, limbs: [$($k:literal)*], b_ops: [$($bo:literal)*], r_ops: [$($co:literal)*],
        p_ops: [$($do:literal)*],
        o_ops: $o_ops:tt, pairs: $pairs:tt, shift: $shift:tt, shift_last: $shift_last:tt, succ: $succ:tt,
        rounds: [$(($i:literal $e:ident $o:ident))*], last: ($le:ident $lo:ident)
    ) => {
        concat!(
            "{{\n",
            ".reg .u32 %a<", $n, ">, %b<", $n, ">, %c<", $n, ">, %d<", $n, ">, %p<", $n, ">, %x<", $w, ">, %y<", $w,
            ">, %m;\n",
            ".reg .pred %q;\n",
            $( "mov.u32 %a", $k, ", {", $k, "};\n", )*
            $( "mov.u32 %b", $k, ", {", $bo, "};\n", )*
            $( "mov.u32 %c", $k, ", {", $co, "};\n", )*
            $( "mov.u32 %d", $k, ", {", $do, "};\n", )*
            $crate::field::asm::ptx_load_modulus!([$($k)*], (imm $modulus)),
            $crate::field::asm::ptx_first_round!(x, y, $top, $pairs),
            $crate::field::asm::ptx_mad_chain!(odd, y, c, (d 0), $top, $pairs),
            $crate::field::asm::ptx_mad_chain!(even, x, c, (d 0), $top, $pairs),
            $crate::field::asm::ptx_reduce!(x, y, $top, $pairs, (general $inv)),
            $( $crate::field::asm::ptx_sop_round!($i, $e, $o, $top, $pairs, $shift, $shift_last, (general $inv)), )*
            $crate::field::asm::ptx_finish!($finish, $le, $lo, [$($k)*], $o_ops, $succ),
            "}}\n",
        )
    };
}

/// Generates [`ptx_mont_sop_text`]'s text (`MUL_ADD_MUL`), the nvptx64 function running it and the host
/// function interpreting it, for a field whose `inv` is an immediate (Fq). Invoked through the limb tables.
macro_rules! ptx_sop {
    (
        modulus: $modulus:tt, inv: $inv:literal,
        n: $n:literal, words: $w:literal, top: $top:literal,
        limbs: [$($k:literal)*], b_ops: $b_ops:tt, r_ops: $r_ops:tt, p_ops: $p_ops:tt, o_ops: $o_ops:tt,
        pairs: $pairs:tt, shift: $shift:tt, shift_last: $shift_last:tt, succ: $succ:tt,
        words2: $w2:literal, wide: $wide:tt, diag: $diag:tt, high: $high:tt, sq_rows: $sq_rows:tt,
        rounds: $rounds:tt, last: $last:tt
    ) => {
        /// PTX of `(a·b + c·d) / R mod p` with one reduction (operands: a, b, c, d, out; see
        /// `ptx_mont_sop_text`).
        pub const MUL_ADD_MUL: &str = $crate::field::asm::ptx_mont_sop_text!(
            modulus: $modulus, inv: $inv, finish: canonical, n: $n, words: $w, top: $top, limbs: [$($k)*], b_ops: $b_ops,
            r_ops: $r_ops, p_ops: $p_ops, o_ops: $o_ops, pairs: $pairs, shift: $shift, shift_last: $shift_last,
            succ: $succ, rounds: $rounds, last: $last
        );
        /// Montgomery `a·b + c·d` (all < p) with one reduction, canonical output (the text of [`MUL_ADD_MUL`]).
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn mul_add_mul(a: &[u32; $n], b: &[u32; $n], c: &[u32; $n], d: &[u32; $n]) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: pure register arithmetic: no memory access, no stack, all registers declared in the block.
            unsafe {
                core::arch::asm!(
                    $crate::field::asm::ptx_mont_sop_text!(
                        modulus: $modulus, inv: $inv, finish: canonical, n: $n, words: $w, top: $top, limbs: [$($k)*],
                        b_ops: $b_ops, r_ops: $r_ops, p_ops: $p_ops, o_ops: $o_ops, pairs: $pairs, shift: $shift,
                        shift_last: $shift_last, succ: $succ, rounds: $rounds, last: $last
                    ),
                    $( in(reg32) a[$k], )*
                    $( in(reg32) b[$k], )*
                    $( in(reg32) c[$k], )*
                    $( in(reg32) d[$k], )*
                    $( out(reg32) r[$k], )*
                    options(pure, nomem, nostack)
                );
            }
            r
        }
        /// Host: interpret [`MUL_ADD_MUL`].
        #[cfg(not(target_arch = "nvptx64"))]
        pub fn mul_add_mul_emulated(
            a: &[u32; $n],
            b: &[u32; $n],
            c: &[u32; $n],
            d: &[u32; $n],
        ) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
            $crate::field::ptx_emu::run_cached::<$n, 4>(MUL_ADD_MUL, [a, b, c, d], &MUL_ADD_MUL_PROGRAM)
        }
        #[cfg(not(target_arch = "nvptx64"))]
        static MUL_ADD_MUL_PROGRAM: $crate::field::ptx_emu::ProgramCache = $crate::field::ptx_emu::ProgramCache::new();
    };
}

// ---- lazy reduction: values in [0, 2p) -------------------------------------------------------------------

/// Generates the lazily reduced operations of a field (Fq): inputs and outputs in `[0, 2p)` instead of
/// `[0, p)`, so the products skip their final subtraction (`MUL_LAZY`, `SQR_LAZY`, `MUL_ADD_MUL_LAZY`),
/// subtraction adds `2p` on a borrow (`SUB_LAZY`), the negation is `2p − a` without a zero test (`NEG_LAZY`,
/// result in `(0, 2p]`) and `CANONICAL` is the one conditional subtraction back to `[0, p)`. Invoked through
/// the limb tables with the modulus and `2p` as literals.
///
/// Bounds (why Fq, `p < 2^381` with `R = 2^384`): a product of two values `< 2p` is `< 4p²/R + p < 2p`
/// because `4p < R`; the one-reduction `a·b + c·d` with `a, c < 2p` and `b, d ≤ 2p` ends `< 8p²/R + p < 2p`
/// because `8p < R`, its running value staying `< 5p·2^32 < 2^416` (the 13-word accumulators). Fr has no room
/// (`4r > 2^256`). docs/log/kernels-notes.md, MSM, "lazy reduction", has the instruction counts.
macro_rules! ptx_lazy {
    (
        modulus: $modulus:tt, two_p: $two_p:tt, inv: $inv:literal,
        n: $n:literal, words: $w:literal, top: $top:literal,
        limbs: [$($k:literal)*], b_ops: $b_ops:tt, r_ops: $r_ops:tt, p_ops: $p_ops:tt, o_ops: $o_ops:tt,
        pairs: $pairs:tt, shift: $shift:tt, shift_last: $shift_last:tt, succ: $succ:tt,
        words2: $w2:literal, wide: $wide:tt, diag: $diag:tt, high: $high:tt, sq_rows: $sq_rows:tt,
        rounds: $rounds:tt, last: $last:tt
    ) => {
        /// PTX of the Montgomery product without its final subtraction (operands: a, b, out; all `< 2p`).
        pub const MUL_LAZY: &str = $crate::field::asm::ptx_mont_mul_text!(
            @with p_from: (imm $modulus), inv_from: imm, finish: lazy, inv: $inv, n: $n, words: $w, top: $top,
            limbs: [$($k)*], b_ops: $b_ops, r_ops: $r_ops, pairs: $pairs, shift: $shift, shift_last: $shift_last,
            succ: $succ, rounds: $rounds, last: $last
        );
        /// PTX of the Montgomery square without its final subtraction (operands: a, out; both `< 2p`).
        pub const SQR_LAZY: &str = $crate::field::asm::ptx_mont_sqr_text!(
            modulus: $modulus, inv_from: imm, inv: $inv, finish: lazy, n: $n, words: $w, top: $top,
            limbs: [$($k)*], r_ops: $b_ops, pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ,
            words2: $w2, wide: $wide, diag: $diag, high: $high, sq_rows: $sq_rows, rounds: $rounds, last: $last
        );
        /// PTX of `(a·b + c·d) / R` with one reduction and no final subtraction (operands: a, b, c, d, out;
        /// `a, c < 2p`, `b, d ≤ 2p`, out `< 2p`).
        pub const MUL_ADD_MUL_LAZY: &str = $crate::field::asm::ptx_mont_sop_text!(
            modulus: $modulus, inv: $inv, finish: lazy, n: $n, words: $w, top: $top, limbs: [$($k)*],
            b_ops: $b_ops, r_ops: $r_ops, p_ops: $p_ops, o_ops: $o_ops, pairs: $pairs, shift: $shift,
            shift_last: $shift_last, succ: $succ, rounds: $rounds, last: $last
        );
        /// PTX of `a − b`, adding `2p` on a borrow (operands: a, b, out; all `< 2p`).
        pub const SUB_LAZY: &str = $crate::field::asm::ptx_sub_text!($n, [$($k)*], $b_ops, $r_ops, $two_p);
        /// PTX of `2p − a` (operands: a `< 2p`, out in `(0, 2p]`): the negation an operand `d ≤ 2p` of
        /// [`MUL_ADD_MUL_LAZY`] may take, without `NEG`'s zero test.
        pub const NEG_LAZY: &str = $crate::field::asm::ptx_lazy!(@neg [$($k)*], $b_ops, $two_p);
        /// PTX of the conditional subtraction of p (operands: a `< 2p`, out `< p`).
        pub const CANONICAL: &str = $crate::field::asm::ptx_lazy!(@canonical $n, [$($k)*], $b_ops, $modulus);

        $crate::field::asm::ptx_pure_fn!(
            /// `a·b / R`, `< 2p` for `a, b < 2p` (the text of [`MUL_LAZY`]).
            mul_lazy, $n, [$($k)*], (a, b), {
            $crate::field::asm::ptx_mont_mul_text!(
                @with p_from: (imm $modulus), inv_from: imm, finish: lazy, inv: $inv, n: $n, words: $w, top: $top,
                limbs: [$($k)*], b_ops: $b_ops, r_ops: $r_ops, pairs: $pairs, shift: $shift,
                shift_last: $shift_last, succ: $succ, rounds: $rounds, last: $last
            )
        });
        $crate::field::asm::ptx_pure_fn!(
            /// `a² / R`, `< 2p` for `a < 2p` (the text of [`SQR_LAZY`]).
            square_lazy, $n, [$($k)*], (a), {
            $crate::field::asm::ptx_mont_sqr_text!(
                modulus: $modulus, inv_from: imm, inv: $inv, finish: lazy, n: $n, words: $w, top: $top,
                limbs: [$($k)*], r_ops: $b_ops, pairs: $pairs, shift: $shift, shift_last: $shift_last,
                succ: $succ, words2: $w2, wide: $wide, diag: $diag, high: $high, sq_rows: $sq_rows,
                rounds: $rounds, last: $last
            )
        });
        $crate::field::asm::ptx_pure_fn!(
            /// `(a·b + c·d) / R`, `< 2p` (the text of [`MUL_ADD_MUL_LAZY`]).
            mul_add_mul_lazy, $n, [$($k)*], (a, b, c, d), {
            $crate::field::asm::ptx_mont_sop_text!(
                modulus: $modulus, inv: $inv, finish: lazy, n: $n, words: $w, top: $top, limbs: [$($k)*],
                b_ops: $b_ops, r_ops: $r_ops, p_ops: $p_ops, o_ops: $o_ops, pairs: $pairs, shift: $shift,
                shift_last: $shift_last, succ: $succ, rounds: $rounds, last: $last
            )
        });
        $crate::field::asm::ptx_pure_fn!(
            /// `a − b` in `[0, 2p)` (the text of [`SUB_LAZY`]).
            sub_lazy, $n, [$($k)*], (a, b), {
            $crate::field::asm::ptx_sub_text!($n, [$($k)*], $b_ops, $r_ops, $two_p)
        });
        $crate::field::asm::ptx_pure_fn!(
            /// `2p − a` in `(0, 2p]` (the text of [`NEG_LAZY`]).
            neg_lazy, $n, [$($k)*], (a), {
            $crate::field::asm::ptx_lazy!(@neg [$($k)*], $b_ops, $two_p)
        });
        $crate::field::asm::ptx_pure_fn!(
            /// `a mod p` for `a < 2p` (the text of [`CANONICAL`]).
            canonical, $n, [$($k)*], (a), {
            $crate::field::asm::ptx_lazy!(@canonical $n, [$($k)*], $b_ops, $modulus)
        });

        $crate::field::asm::ptx_emulated_fn!(
            /// Host: interpret [`MUL_LAZY`].
            mul_lazy_emulated, MUL_LAZY, $n, (a, b));
        $crate::field::asm::ptx_emulated_fn!(
            /// Host: interpret [`SQR_LAZY`].
            square_lazy_emulated, SQR_LAZY, $n, (a));
        $crate::field::asm::ptx_emulated_fn!(
            /// Host: interpret [`MUL_ADD_MUL_LAZY`].
            mul_add_mul_lazy_emulated, MUL_ADD_MUL_LAZY, $n, (a, b, c, d));
        $crate::field::asm::ptx_emulated_fn!(
            /// Host: interpret [`SUB_LAZY`].
            sub_lazy_emulated, SUB_LAZY, $n, (a, b));
        $crate::field::asm::ptx_emulated_fn!(
            /// Host: interpret [`NEG_LAZY`].
            neg_lazy_emulated, NEG_LAZY, $n, (a));
        $crate::field::asm::ptx_emulated_fn!(
            /// Host: interpret [`CANONICAL`].
            canonical_emulated, CANONICAL, $n, (a));
    };

    // `2p − a` (operands: a 0..N, out N..2N).
    (@neg [$k0:literal $($k:literal)*], [$r0:literal $($ro:literal)*], [$t0:literal $($t:literal)*]) => {
        concat!(
            "sub.cc.u32 {", $r0, "}, ", $t0, ", {", $k0, "};\n",
            $( "subc.cc.u32 {", $ro, "}, ", $t, ", {", $k, "};\n", )*
        )
    };
    // `a − p` if that does not borrow, else `a` (operands: a 0..N, out N..2N).
    (@canonical $n:literal, [$($k:literal)*], $r_ops:tt, $modulus:tt) => {
        concat!(
            "{{\n.reg .u32 %x<", $n, ">, %d<", $n, ">, %p<", $n, ">, %m;\n.reg .pred %q;\n",
            $( "mov.u32 %x", $k, ", {", $k, "};\n", )*
            $crate::field::asm::ptx_load_modulus!([$($k)*], (imm $modulus)),
            $crate::field::asm::ptx_canonical!(d, x, [$($k)*], $r_ops),
            "}}\n",
        )
    };
}

/// nvptx64: `pub fn name(a, ..) -> [u32; N]` running one PTX text (the `{ .. }` tokens: a string macro) on
/// register operands, inputs in argument order, then the output. The text must be pure register arithmetic.
macro_rules! ptx_pure_fn {
    (@fn $(#[$m:meta])* $name:ident, $n:literal, ($($arg:ident),+), ($($ins:tt)*), [$($k:literal)*], { $($text:tt)* }) => {
        $(#[$m])*
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn $name($($arg: &[u32; $n]),+) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: pure register arithmetic: no memory access, no stack, all registers declared in the block.
            unsafe {
                core::arch::asm!($($text)*, $($ins)* $( out(reg32) r[$k], )* options(pure, nomem, nostack));
            }
            r
        }
    };
    ($(#[$m:meta])* $name:ident, $n:literal, [$($k:literal)*], ($a:ident), $text:tt) => {
        $crate::field::asm::ptx_pure_fn!(@fn $(#[$m])* $name, $n, ($a), ($( in(reg32) $a[$k], )*), [$($k)*], $text);
    };
    ($(#[$m:meta])* $name:ident, $n:literal, [$($k:literal)*], ($a:ident, $b:ident), $text:tt) => {
        $crate::field::asm::ptx_pure_fn!(@fn $(#[$m])* $name, $n, ($a, $b),
            ($( in(reg32) $a[$k], )* $( in(reg32) $b[$k], )*), [$($k)*], $text);
    };
    ($(#[$m:meta])* $name:ident, $n:literal, [$($k:literal)*], ($a:ident, $b:ident, $c:ident, $d:ident), $text:tt) => {
        $crate::field::asm::ptx_pure_fn!(@fn $(#[$m])* $name, $n, ($a, $b, $c, $d),
            ($( in(reg32) $a[$k], )* $( in(reg32) $b[$k], )* $( in(reg32) $c[$k], )* $( in(reg32) $d[$k], )*),
            [$($k)*], $text);
    };
}

/// Host: `pub fn name(a, ..) -> Result<[u32; N], _>` interpreting the PTX text `$text` ([`crate::field::ptx_emu`]).
macro_rules! ptx_emulated_fn {
    ($(#[$m:meta])* $name:ident, $text:ident, $n:literal, ($($arg:ident),+)) => {
        $(#[$m])*
        #[cfg(not(target_arch = "nvptx64"))]
        pub fn $name($($arg: &[u32; $n]),+) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
            static PROGRAM: $crate::field::ptx_emu::ProgramCache = $crate::field::ptx_emu::ProgramCache::new();
            $crate::field::ptx_emu::run_cached($text, [$($arg),+], &PROGRAM)
        }
    };
}

// ---- squaring ------------------------------------------------------------------------------------------

/// Cross products `a_i * a_j` of one parity class of row i into accumulator `%acc` (one chain, carry into
/// word `c`). An empty class expands to nothing.
macro_rules! ptx_sq_chain {
    ($acc:ident, $i:literal, [], $c:literal) => {
        ""
    };
    ($acc:ident, $i:literal, [($j0:literal $w0:literal $v0:literal) $(($j:literal $w:literal $v:literal))*], $c:literal) => {
        concat!(
            "mad.lo.cc.u32 %", stringify!($acc), $w0, ", %a", $i, ", %a", $j0, ", %", stringify!($acc), $w0, ";\n",
            "madc.hi.cc.u32 %", stringify!($acc), $v0, ", %a", $i, ", %a", $j0, ", %", stringify!($acc), $v0, ";\n",
            $(
                "madc.lo.cc.u32 %", stringify!($acc), $w, ", %a", $i, ", %a", $j, ", %", stringify!($acc), $w, ";\n",
                "madc.hi.cc.u32 %", stringify!($acc), $v, ", %a", $i, ", %a", $j, ", %", stringify!($acc), $v, ";\n",
            )*
            "addc.u32 %", stringify!($acc), $c, ", %", stringify!($acc), $c, ", 0;\n",
        )
    };
}

/// Row i of the cross products: pairs starting at even words into `%ce`, at odd words into `%co`.
macro_rules! ptx_sq_rows {
    ([$(($i:literal $even:tt $ce:literal $odd:tt $co:literal))*]) => {
        concat!($(
            $crate::field::asm::ptx_sq_chain!(ce, $i, $even, $ce),
            $crate::field::asm::ptx_sq_chain!(co, $i, $odd, $co),
        )*)
    };
}

/// `%ce = 2 * (%ce + %co) + sum a_i^2 * 2^(64 i)`: the full 2N-word square in `%ce`.
macro_rules! ptx_sq_combine {
    ([$w0:literal $($w:literal)*], [($d0:literal $dl0:literal $dh0:literal) $(($d:literal $dl:literal $dh:literal))*]) => {
        concat!(
            "add.cc.u32 %ce", $w0, ", %ce", $w0, ", %co", $w0, ";\n",
            $( "addc.cc.u32 %ce", $w, ", %ce", $w, ", %co", $w, ";\n", )*
            "add.cc.u32 %ce", $w0, ", %ce", $w0, ", %ce", $w0, ";\n",
            $( "addc.cc.u32 %ce", $w, ", %ce", $w, ", %ce", $w, ";\n", )*
            "mad.lo.cc.u32 %ce", $dl0, ", %a", $d0, ", %a", $d0, ", %ce", $dl0, ";\n",
            "madc.hi.cc.u32 %ce", $dh0, ", %a", $d0, ", %a", $d0, ", %ce", $dh0, ";\n",
            $(
                "madc.lo.cc.u32 %ce", $dl, ", %a", $d, ", %a", $d, ", %ce", $dl, ";\n",
                "madc.hi.cc.u32 %ce", $dh, ", %a", $d, ", %a", $d, ", %ce", $dh, ";\n",
            )*
        )
    };
}

/// `O += S_high` (words N..2N of the square, in `%ce`).
macro_rules! ptx_add_high {
    ($o:ident, [($k0:literal $h0:literal) $(($k:literal $h:literal))*]) => {
        concat!(
            "add.cc.u32 %", stringify!($o), $k0, ", %", stringify!($o), $k0, ", %ce", $h0, ";\n",
            $( "addc.cc.u32 %", stringify!($o), $k, ", %", stringify!($o), $k, ", %ce", $h, ";\n", )*
        )
    };
}

/// Montgomery squaring: the square S = a² (cross products once, doubled, plus the diagonal: n² + n products
/// instead of 2n²), then `S_high + (S_low + M·p) / R` with the reduction rounds of the multiplication (no
/// `a·b_i` part). 3n² + 2n multiply instructions. Operands: a 0..N (in), result N..2N (out).
/// `inv_from` as in the multiplication (`imm` or `constbank`, see `ptx_load_inv`).
macro_rules! ptx_mont_sqr_text {
    (modulus: $modulus:tt, inv_from: imm, inv: $inv:literal, $($rest:tt)*) => {
        $crate::field::asm::ptx_mont_sqr_text!(@body modulus: $modulus, inv_from: imm, inv_use: (general $inv),
            inv: $inv, $($rest)*)
    };
    (modulus: $modulus:tt, inv_from: constbank, inv: $inv:literal, $($rest:tt)*) => {
        $crate::field::asm::ptx_mont_sqr_text!(@body modulus: $modulus, inv_from: constbank,
            inv_use: (general "%inv"), inv: $inv, $($rest)*)
    };
    (modulus: $modulus:tt, inv_from: constbank_low, inv: $inv:literal, $($rest:tt)*) => {
        $crate::field::asm::ptx_mont_sqr_text!(@body modulus: $modulus, inv_from: constbank_low,
            inv_use: (low "%inv"), inv: $inv, $($rest)*)
    };
    (
        @body modulus: [$($p:literal)*], inv_from: $inv_from:ident, inv_use: $inv_use:tt, inv: $inv:literal,
        finish: $finish:ident, n: $n:literal, words: $w:literal, top: $top:literal,
        limbs: [$($k:literal)*], r_ops: $r_ops:tt,
        pairs: $pairs:tt, shift: $shift:tt, shift_last: $shift_last:tt, succ: $succ:tt,
        words2: $w2:literal, wide: [$($wi:literal)*], diag: $diag:tt, high: $high:tt, sq_rows: $sq_rows:tt,
        rounds: [$(($i:literal $e:ident $o:ident))*], last: ($le:ident $lo:ident)
    ) => {
        concat!(
            "{{\n",
            ".reg .u32 %a<", $n, ">, %p<", $n, ">, %ce<", $w2, ">, %co<", $w2, ">, %x<", $w, ">, %y<", $w, ">, %m;\n",
            ".reg .pred %q;\n",
            $( "mov.u32 %a", $k, ", {", $k, "};\n", )*
            $( "mov.u32 %p", $k, ", ", $p, ";\n", )*
            $crate::field::asm::ptx_load_inv!($inv_from, $inv),
            $( "mov.u32 %ce", $wi, ", 0;\n", "mov.u32 %co", $wi, ", 0;\n", )*
            $crate::field::asm::ptx_sq_rows!($sq_rows),
            $crate::field::asm::ptx_sq_combine!([$($wi)*], $diag),
            // Reduction: E = S_low, O = 0.
            $( "mov.u32 %x", $k, ", %ce", $k, ";\n", "mov.u32 %y", $k, ", 0;\n", )*
            "mov.u32 %x", $top, ", 0;\n",
            "mov.u32 %y", $top, ", 0;\n",
            $crate::field::asm::ptx_reduce!(x, y, $top, $pairs, $inv_use),
            $( $crate::field::asm::ptx_redc_round!($e, $o, $top, $pairs, $shift, $shift_last, $inv_use), )*
            $crate::field::asm::ptx_merge!($le, $lo, $succ),
            $crate::field::asm::ptx_add_high!($lo, $high),
            $crate::field::asm::ptx_output!($finish, $le, $lo, [$($k)*], $r_ops),
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
        modulus: $modulus:tt, inv: $inv:literal, inv_from: $inv_from:ident,
        n: $n:literal, words: $w:literal, top: $top:literal,
        limbs: $limbs:tt, b_ops: $b_ops:tt, r_ops: $r_ops:tt, p_ops: $p_ops:tt, o_ops: $o_ops:tt,
        pairs: $pairs:tt, shift: $shift:tt, shift_last: $shift_last:tt, succ: $succ:tt,
        words2: $w2:literal, wide: $wide:tt, diag: $diag:tt, high: $high:tt, sq_rows: $sq_rows:tt,
        rounds: $rounds:tt, last: $last:tt
    ) => {
            /// PTX of the Montgomery squaring (operands: a 0..N, out N..2N; `inv` as in [`MUL`]).
            pub const SQR: &str = $crate::field::asm::ptx_mont_sqr_text!(
                modulus: $modulus, inv_from: $inv_from, inv: $inv, finish: canonical, n: $n, words: $w, top: $top,
                limbs: $limbs, r_ops: $b_ops,
                pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ,
                words2: $w2, wide: $wide, diag: $diag, high: $high, sq_rows: $sq_rows,
                rounds: $rounds, last: $last
            );
            /// PTX of the Montgomery multiplication (operands: a 0..N, b N..2N, out 2N..3N): modulus limbs as
            /// immediates, `inv` from where the field's `inv_from` says (immediate or constant bank).
            pub const MUL: &str = $crate::field::asm::ptx_mont_mul_text!(
                @with p_from: (imm $modulus), inv_from: $inv_from, finish: canonical, inv: $inv, n: $n, words: $w,
                top: $top, limbs: $limbs, b_ops: $b_ops, r_ops: $r_ops,
                pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ, rounds: $rounds, last: $last
            );
            /// Tuning variant `constinv_lazy`: immediates for p, `inv` from the constant bank, no final
            /// subtraction (output < 2p when one input is < p and the other < 2p, because 2p < 2^(32N)).
            pub const MUL_CONSTINV_LAZY: &str = $crate::field::asm::ptx_mont_mul_text!(
                @with p_from: (imm $modulus), inv_from: constbank, finish: lazy, inv: $inv, n: $n, words: $w,
                top: $top, limbs: $limbs, b_ops: $b_ops, r_ops: $r_ops,
                pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ, rounds: $rounds, last: $last
            );
            /// Tuning variant `modreg`: modulus limbs from registers, `inv` from the constant bank
            /// (operands: a 0..N, b N..2N, p 2N..3N, out 3N..4N).
            pub const MUL_MODREG: &str = $crate::field::asm::ptx_mont_mul_text!(
                @with p_from: (ops $r_ops), inv_from: constbank, finish: canonical, inv: $inv, n: $n, words: $w,
                top: $top, limbs: $limbs, b_ops: $b_ops, r_ops: $p_ops,
                pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ, rounds: $rounds, last: $last
            );
            /// PTX of the modular addition (operands: a 0..N, b N..2N, out 2N..3N).
            pub const ADD: &str = $crate::field::asm::ptx_add_text!($n, $limbs, $b_ops, $r_ops, $modulus);
            /// PTX of the modular subtraction (operands: a 0..N, b N..2N, out 2N..3N).
            pub const SUB: &str = $crate::field::asm::ptx_sub_text!($n, $limbs, $b_ops, $r_ops, $modulus);
            /// PTX of the negation (operands: a 0..N, out N..2N).
            pub const NEG: &str = $crate::field::asm::ptx_neg_text!($n, $limbs, $b_ops, $modulus);

            $crate::field::asm::ptx_field!(@check_low $inv_from, $modulus);
            $crate::field::asm::ptx_field!(@device inv_from: $inv_from, $n, $limbs, modulus: $modulus, inv: $inv,
                words: $w, top: $top,
                b_ops: $b_ops, r_ops: $r_ops, pairs: $pairs, shift: $shift, shift_last: $shift_last,
                succ: $succ, words2: $w2, wide: $wide, diag: $diag, high: $high, sq_rows: $sq_rows,
                rounds: $rounds, last: $last);
            // The constant-bank word holding `inv` for every `constbank` text (the host interpreter reads the
            // value from the name, see `ptx_emu`).
            #[cfg(target_arch = "nvptx64")]
            core::arch::global_asm!(concat!(".const .align 4 .b32 zkgpu_inv_", stringify!($inv), " = ", stringify!($inv), ";"));
            $crate::field::asm::ptx_field!(@variant mul_constinv_lazy, (imm $modulus), lazy, $n, $limbs, inv: $inv,
                words: $w, top: $top, b_ops: $b_ops, r_ops: $r_ops, pairs: $pairs, shift: $shift,
                shift_last: $shift_last, succ: $succ, rounds: $rounds, last: $last);
            $crate::field::asm::ptx_field!(@modreg mul_modreg, $n, $limbs, inv: $inv, words: $w,
                top: $top, b_ops: $b_ops, r_ops: $r_ops, p_ops: $p_ops, pairs: $pairs, shift: $shift,
                shift_last: $shift_last, succ: $succ, rounds: $rounds, last: $last);

            /// Host: interpret [`MUL_CONSTINV_LAZY`] (output < 2p, see there).
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn mul_constinv_lazy_emulated(a: &[u32; $n], b: &[u32; $n]) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
                $crate::field::ptx_emu::run_cached::<$n, 2>(MUL_CONSTINV_LAZY, [a, b], &MUL_CONSTINV_LAZY_PROGRAM)
            }
            /// Host: interpret [`MUL_MODREG`] with this field's modulus as the register operands.
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn mul_modreg_emulated(a: &[u32; $n], b: &[u32; $n]) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
                $crate::field::ptx_emu::run_cached::<$n, 3>(MUL_MODREG, [a, b, &MODULUS_LIMBS], &MUL_MODREG_PROGRAM)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            const MODULUS_LIMBS: [u32; $n] = $crate::field::asm::ptx_field!(@array $modulus);
            #[cfg(not(target_arch = "nvptx64"))]
            static MUL_CONSTINV_LAZY_PROGRAM: $crate::field::ptx_emu::ProgramCache = $crate::field::ptx_emu::ProgramCache::new();
            #[cfg(not(target_arch = "nvptx64"))]
            static MUL_MODREG_PROGRAM: $crate::field::ptx_emu::ProgramCache = $crate::field::ptx_emu::ProgramCache::new();

            /// Host: interpret [`MUL`].
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn mul_emulated(a: &[u32; $n], b: &[u32; $n]) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
                $crate::field::ptx_emu::run_cached::<$n, 2>(MUL, [a, b], &MUL_PROGRAM)
            }
            /// Host: interpret [`SQR`].
            #[cfg(not(target_arch = "nvptx64"))]
            pub fn square_emulated(a: &[u32; $n]) -> Result<[u32; $n], $crate::field::ptx_emu::PtxEmuError> {
                $crate::field::ptx_emu::run_cached::<$n, 1>(SQR, [a], &SQR_PROGRAM)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            static SQR_PROGRAM: $crate::field::ptx_emu::ProgramCache = $crate::field::ptx_emu::ProgramCache::new();
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

    (@array [$($p:literal)*]) => { [$($p),*] };

    // `constbank_low` adds m·p_0 as m: only for p_0 = 1.
    (@check_low constbank_low, $modulus:tt) => {
        const _: () = {
            let p: &[u32] = &$crate::field::asm::ptx_field!(@array $modulus);
            assert!(p[0] == 1, "inv_from: constbank_low needs p_0 = 1");
        };
    };
    (@check_low $inv_from:ident, $modulus:tt) => {};

    // nvptx64: tuning variants of the multiplication with `inv` from the constant bank (see `ptx_load_inv`).
    (@variant $fn_name:ident, $p_from:tt, $finish:ident, $n:literal, [$($k:literal)*], inv: $inv:literal,
        words: $w:literal, top: $top:literal, b_ops: $b_ops:tt, r_ops: $r_ops:tt, pairs: $pairs:tt, shift: $shift:tt,
        shift_last: $shift_last:tt, succ: $succ:tt, rounds: $rounds:tt, last: $last:tt) => {
        /// Montgomery product, tuning variant (see [`MUL_CONSTINV_LAZY`]): `inv` from the constant bank;
        /// `_lazy` skips the final subtraction (output < 2p when one input is < p and the other < 2p).
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn $fn_name(a: &[u32; $n], b: &[u32; $n]) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: register arithmetic plus one read of the constant-bank word declared by `ptx_field`.
            unsafe {
                core::arch::asm!(
                    $crate::field::asm::ptx_mont_mul_text!(
                        @with p_from: $p_from, inv_from: constbank, finish: $finish, inv: $inv, n: $n, words: $w,
                        top: $top, limbs: [$($k)*], b_ops: $b_ops, r_ops: $r_ops,
                        pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ,
                        rounds: $rounds, last: $last
                    ),
                    $( in(reg32) a[$k], )*
                    $( in(reg32) b[$k], )*
                    $( out(reg32) r[$k], )*
                    options(pure, readonly, nostack)
                );
            }
            r
        }
    };

    // nvptx64: the `modreg` variant, modulus limbs passed in registers.
    (@modreg $fn_name:ident, $n:literal, [$($k:literal)*], inv: $inv:literal, words: $w:literal,
        top: $top:literal, b_ops: $b_ops:tt, r_ops: $r_ops:tt, p_ops: $p_ops:tt, pairs: $pairs:tt, shift: $shift:tt,
        shift_last: $shift_last:tt, succ: $succ:tt, rounds: $rounds:tt, last: $last:tt) => {
        /// Montgomery product with the modulus limbs taken from registers (`p` must be this field's modulus,
        /// loaded from somewhere ptxas cannot see through) and `inv` from the constant bank: every product is
        /// a uniform `IMAD.WIDE`, as in Fq. Canonical output.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn $fn_name(a: &[u32; $n], b: &[u32; $n], p: &[u32; $n]) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: register arithmetic plus one read of the constant-bank word declared by `ptx_field`.
            unsafe {
                core::arch::asm!(
                    $crate::field::asm::ptx_mont_mul_text!(
                        @with p_from: (ops $r_ops), inv_from: constbank, finish: canonical, inv: $inv, n: $n,
                        words: $w, top: $top, limbs: [$($k)*], b_ops: $b_ops, r_ops: $p_ops,
                        pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ,
                        rounds: $rounds, last: $last
                    ),
                    $( in(reg32) a[$k], )*
                    $( in(reg32) b[$k], )*
                    $( in(reg32) p[$k], )*
                    $( out(reg32) r[$k], )*
                    options(pure, readonly, nostack)
                );
            }
            r
        }
    };

    // nvptx64: the same texts inside `asm!` (a `const` cannot be an asm template, so the macros run again).
    // With `inv` from the constant bank the block reads memory (an immutable constant-bank word): `readonly`
    // instead of `nomem`.
    (@device inv_from: imm, $($rest:tt)*) => {
        $crate::field::asm::ptx_field!(@device_with inv_from: imm, inv_mem: nomem, $($rest)*);
    };
    (@device inv_from: constbank, $($rest:tt)*) => {
        $crate::field::asm::ptx_field!(@device_with inv_from: constbank, inv_mem: readonly, $($rest)*);
    };
    (@device inv_from: constbank_low, $($rest:tt)*) => {
        $crate::field::asm::ptx_field!(@device_with inv_from: constbank_low, inv_mem: readonly, $($rest)*);
    };
    (@device_with inv_from: $inv_from:ident, inv_mem: $inv_mem:ident, $n:literal, [$($k:literal)*], modulus: $modulus:tt, inv: $inv:literal, words: $w:literal, top: $top:literal,
        b_ops: $b_ops:tt, r_ops: $r_ops:tt, pairs: $pairs:tt, shift: $shift:tt, shift_last: $shift_last:tt,
        succ: $succ:tt, words2: $w2:literal, wide: $wide:tt, diag: $diag:tt, high: $high:tt, sq_rows: $sq_rows:tt,
        rounds: $rounds:tt, last: $last:tt) => {
        /// Montgomery product `a * b / R mod p`, canonical output (the text of [`MUL`]).
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn mul(a: &[u32; $n], b: &[u32; $n]) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: register arithmetic, no stack, all registers declared in the block; the only memory read
            // (with `inv_from: constbank`) is the immutable constant-bank word declared by `ptx_field`.
            unsafe {
                core::arch::asm!(
                    $crate::field::asm::ptx_mont_mul_text!(
                        @with p_from: (imm $modulus), inv_from: $inv_from, finish: canonical, inv: $inv, n: $n,
                        words: $w, top: $top, limbs: [$($k)*], b_ops: $b_ops, r_ops: $r_ops,
                        pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ,
                        rounds: $rounds, last: $last
                    ),
                    $( in(reg32) a[$k], )*
                    $( in(reg32) b[$k], )*
                    $( out(reg32) r[$k], )*
                    options(pure, $inv_mem, nostack)
                );
            }
            r
        }
        /// Montgomery square `a² / R mod p` (dedicated: cross products computed once), canonical output.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn square(a: &[u32; $n]) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: as `mul` (register arithmetic, at most the constant-bank read of `inv`).
            unsafe {
                core::arch::asm!(
                    $crate::field::asm::ptx_mont_sqr_text!(
                        modulus: $modulus, inv_from: $inv_from, inv: $inv, finish: canonical, n: $n, words: $w, top: $top,
                        limbs: [$($k)*], r_ops: $b_ops,
                        pairs: $pairs, shift: $shift, shift_last: $shift_last, succ: $succ,
                        words2: $w2, wide: $wide, diag: $diag, high: $high, sq_rows: $sq_rows,
                        rounds: $rounds, last: $last
                    ),
                    $( in(reg32) a[$k], )*
                    $( out(reg32) r[$k], )*
                    options(pure, $inv_mem, nostack)
                );
            }
            r
        }
        /// `a + b mod p`.
        #[cfg(target_arch = "nvptx64")]
        #[inline(always)]
        pub fn add(a: &[u32; $n], b: &[u32; $n]) -> [u32; $n] {
            let mut r = [0u32; $n];
            // SAFETY: pure register arithmetic: no memory access, no stack, all registers declared in the block.
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
            // SAFETY: pure register arithmetic (see `add`).
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
            // SAFETY: pure register arithmetic (see `add`).
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
    limb_tables_8, limb_tables_12, ptx_mad_chain, ptx_first_round, ptx_reduce, ptx_fold, ptx_shift_chain, ptx_round,
    ptx_redc_round, ptx_mad_chain_low, ptx_merge, ptx_canonical, ptx_output, ptx_sq_chain, ptx_sq_rows, ptx_sq_combine, ptx_add_high,
    ptx_mont_sqr_text, ptx_mont_mul_text, ptx_sop_round, ptx_mont_sop_text, ptx_sop, ptx_lazy, ptx_pure_fn, ptx_emulated_fn, ptx_load_modulus, ptx_load_inv, ptx_finish, ptx_select, ptx_and_mask, ptx_add_text, ptx_sub_text, ptx_neg_text, ptx_field,
};
