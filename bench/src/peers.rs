//! Recorded peer figures: sppark (@17278d74, CUDA) measured on an NVIDIA H200 on 2026-11-30 (medians), copied
//! from the "Peer figures" section of `shared/design.md`. The single place the bench table, the plot and the
//! README take their "vs sppark" column from; new ops (NTT, MSM, batch add) find their rows here already.
//!
//! A ratio above 1 always means zkgpu is faster (higher throughput or lower time).
use crate::results::Row;

pub const PEER_NAME: &str = "sppark@17278d74";
pub const PEER_GPU: &str = "NVIDIA H200";

/// What was measured: a median time, a multiplication throughput, or a transfer rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Figure {
    Ms(f64),
    GmulS(f64),
    Gbps(f64),
}

/// One recorded figure for (op, log_n, inputs), using zkgpu's op names.
#[derive(Clone, Copy, Debug)]
pub struct Peer {
    pub op: &'static str,
    pub log_n: u32,
    pub inputs: &'static str,
    pub figure: Figure,
}

const fn ms(op: &'static str, log_n: u32, inputs: &'static str, v: f64) -> Peer {
    Peer { op, log_n, inputs, figure: Figure::Ms(v) }
}

/// sppark on the H200. MSM: 255-bit scalars. NTT: Fr; "device" rows are kernel time, "pinned"/"pageable" rows
/// are end to end (alloc, copy in, NTT, copy out, no overlap). Batch addition: points on device, kernel only.
/// Transfers: 1 GiB (log_n = 30 bytes). Multiplication: 2^22 threads, dependent chains.
pub const SPPARK_H200: &[Peer] = &[
    // MSM G1: device-resident / host pinned / host pageable
    ms("msm_g1", 16, "device", 7.5),
    ms("msm_g1", 16, "pinned", 7.6),
    ms("msm_g1", 16, "pageable", 8.0),
    ms("msm_g1", 18, "device", 20.0),
    ms("msm_g1", 18, "pinned", 20.0),
    ms("msm_g1", 18, "pageable", 21.0),
    ms("msm_g1", 20, "device", 21.2),
    ms("msm_g1", 20, "pinned", 22.1),
    ms("msm_g1", 20, "pageable", 36.1),
    ms("msm_g1", 22, "device", 53.7),
    ms("msm_g1", 22, "pinned", 57.3),
    ms("msm_g1", 22, "pageable", 96.6),
    ms("msm_g1", 24, "device", 155.5),
    ms("msm_g1", 24, "pinned", 168.0),
    ms("msm_g1", 24, "pageable", 362.0),
    ms("msm_g1", 26, "device", 558.0),
    ms("msm_g1", 26, "pinned", 614.0),
    ms("msm_g1", 26, "pageable", 1388.0),
    // NTT Fr, device only: fwd NN / fwd NR / fwd RN / fwd RR / inv NN / coset fwd NR
    ms("ntt_fwd_nn", 16, "device", 0.029),
    ms("ntt_fwd_nr", 16, "device", 0.025),
    ms("ntt_fwd_rn", 16, "device", 0.026),
    ms("ntt_fwd_rr", 16, "device", 0.029),
    ms("ntt_inv_nn", 16, "device", 0.032),
    ms("ntt_coset_fwd_nr", 16, "device", 0.030),
    ms("ntt_fwd_nn", 20, "device", 0.276),
    ms("ntt_fwd_nr", 20, "device", 0.259),
    ms("ntt_fwd_rn", 20, "device", 0.256),
    ms("ntt_fwd_rr", 20, "device", 0.281),
    ms("ntt_inv_nn", 20, "device", 0.293),
    ms("ntt_coset_fwd_nr", 20, "device", 0.300),
    ms("ntt_fwd_nn", 22, "device", 1.12),
    ms("ntt_fwd_nr", 22, "device", 1.05),
    ms("ntt_fwd_rn", 22, "device", 1.03),
    ms("ntt_fwd_rr", 22, "device", 1.13),
    ms("ntt_inv_nn", 22, "device", 1.18),
    ms("ntt_coset_fwd_nr", 22, "device", 1.20),
    ms("ntt_fwd_nn", 24, "device", 4.75),
    ms("ntt_fwd_nr", 24, "device", 4.43),
    ms("ntt_fwd_rn", 24, "device", 4.41),
    ms("ntt_fwd_rr", 24, "device", 4.76),
    ms("ntt_inv_nn", 24, "device", 5.01),
    ms("ntt_coset_fwd_nr", 24, "device", 5.02),
    ms("ntt_fwd_nn", 26, "device", 23.9),
    ms("ntt_fwd_nr", 26, "device", 20.9),
    ms("ntt_fwd_rn", 26, "device", 22.5),
    ms("ntt_fwd_rr", 26, "device", 22.3),
    ms("ntt_inv_nn", 26, "device", 24.9),
    ms("ntt_coset_fwd_nr", 26, "device", 23.3),
    ms("ntt_fwd_nn", 27, "device", 44.4),
    ms("ntt_fwd_nr", 27, "device", 42.3),
    ms("ntt_fwd_rn", 27, "device", 41.6),
    ms("ntt_fwd_rr", 27, "device", 45.0),
    ms("ntt_inv_nn", 27, "device", 46.9),
    ms("ntt_coset_fwd_nr", 27, "device", 47.0),
    ms("ntt_fwd_nn", 28, "device", 104.3),
    ms("ntt_fwd_nr", 28, "device", 93.0),
    ms("ntt_fwd_rn", 28, "device", 98.8),
    ms("ntt_fwd_rr", 28, "device", 98.5),
    ms("ntt_inv_nn", 28, "device", 108.3),
    ms("ntt_coset_fwd_nr", 28, "device", 102.5),
    // NTT end to end (sppark's order for this measurement was the natural-order forward transform)
    ms("ntt_fwd_nn", 24, "pinned", 24.2),
    ms("ntt_fwd_nn", 24, "pageable", 104.0),
    ms("ntt_fwd_nn", 27, "pinned", 199.7),
    ms("ntt_fwd_nn", 27, "pageable", 835.0),
    ms("ntt_fwd_nn", 28, "pinned", 416.7),
    ms("ntt_fwd_nn", 28, "pageable", 1806.0),
    // batch addition G1: all points / 50% random bitmap
    ms("batch_add_g1_all", 20, "device", 0.58),
    ms("batch_add_g1_half", 20, "device", 0.38),
    ms("batch_add_g1_all", 22, "device", 2.01),
    ms("batch_add_g1_half", 22, "device", 1.22),
    ms("batch_add_g1_all", 24, "device", 7.74),
    ms("batch_add_g1_half", 24, "device", 4.46),
    ms("batch_add_g1_all", 26, "device", 30.2),
    ms("batch_add_g1_half", 26, "device", 17.1),
    // PCIe, 1 GiB (pageable H2D was 6.6-8.6 GB/s; the upper end is recorded)
    Peer { op: "h2d", log_n: 30, inputs: "pinned", figure: Figure::Gbps(55.4) },
    Peer { op: "d2h", log_n: 30, inputs: "pinned", figure: Figure::Gbps(55.2) },
    Peer { op: "h2d", log_n: 30, inputs: "pageable", figure: Figure::Gbps(8.6) },
    // Field multiplication throughput, 2^22 threads, dependent chains
    Peer { op: "mul_fq", log_n: 22, inputs: "device", figure: Figure::GmulS(27.4) },
    Peer { op: "mul_fr", log_n: 22, inputs: "device", figure: Figure::GmulS(60.0) },
];

/// The recorded sppark figure for this (op, log_n, inputs), if there is one.
pub fn sppark(op: &str, log_n: u32, inputs: &str) -> Option<&'static Peer> {
    SPPARK_H200.iter().find(|p| p.op == op && p.log_n == log_n && p.inputs == inputs)
}

/// zkgpu's speed relative to sppark for a measured row (> 1: zkgpu is faster). `None` when sppark has no
/// figure for the row or the row lacks the matching quantity.
pub fn ratio_to_sppark(row: &Row) -> Option<f64> {
    let peer = sppark(&row.op, row.log_n, &row.inputs)?;
    let r = match peer.figure {
        Figure::Ms(ms) => ms / row.median_ms,
        Figure::GmulS(g) => row.gmul_s? / g,
        Figure::Gbps(g) => row.gbps? / g,
    };
    r.is_finite().then_some(r)
}

impl Figure {
    /// Short human form: "27.4 G mul/s", "53.7 ms", "55.4 GB/s".
    pub fn describe(&self) -> String {
        match self {
            Figure::Ms(v) => format!("{v} ms"),
            Figure::GmulS(v) => format!("{v} G mul/s"),
            Figure::Gbps(v) => format!("{v} GB/s"),
        }
    }
}

/// H200 integer multiply-add rate: 132 SMs x 1.98 GHz x 64 IMAD/SM/clk (32-bit).
pub const H200_IMAD_PER_S: f64 = 16.7e12;
/// 32-bit IMADs per Montgomery multiplication with 32-bit limbs: `4n^2 + n` for Fq (12 limbs); for Fr (8 limbs)
/// `4n^2 − n`, since r_0 = 1 makes the n products m·r_0 additions (DESIGN.md, "Fr tuning").
pub const IMAD_PER_MUL_FQ: f64 = 588.0;
pub const IMAD_PER_MUL_FR: f64 = 248.0;

/// The H200's IMAD-bound multiplication rate (G mul/s) for a field op, if it is one.
pub fn h200_imad_bound_gmul_s(op: &str) -> Option<f64> {
    let imad = match op {
        "mul_fq" => IMAD_PER_MUL_FQ,
        "mul_fr" => IMAD_PER_MUL_FR,
        _ => return None,
    };
    Some(H200_IMAD_PER_S / imad / 1e9)
}

/// The IMAD bounds in words, from the constants above (the bench table's footer and the README say it).
pub fn h200_imad_bounds_text() -> String {
    let rate = |imad: f64| H200_IMAD_PER_S / imad / 1e9;
    format!(
        "{:.1} T IMAD/s; Fq mul {IMAD_PER_MUL_FQ} IMAD -> {:.1} G mul/s, Fr mul {IMAD_PER_MUL_FR} IMAD -> {:.1} G mul/s",
        H200_IMAD_PER_S / 1e12,
        rate(IMAD_PER_MUL_FQ),
        rate(IMAD_PER_MUL_FR)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn imad_bounds_text_states_the_constants() {
        assert_eq!(
            h200_imad_bounds_text(),
            "16.7 T IMAD/s; Fq mul 588 IMAD -> 28.4 G mul/s, Fr mul 248 IMAD -> 67.3 G mul/s"
        );
    }

    #[test]
    fn imad_bounds_match_design_notes() {
        let fq = h200_imad_bound_gmul_s("mul_fq").unwrap();
        let fr = h200_imad_bound_gmul_s("mul_fr").unwrap();
        assert!((fq - 28.4).abs() < 0.05, "{fq}");
        assert!((fr - 67.3).abs() < 0.05, "{fr}");
    }

    #[test]
    fn peer_rows_are_unique() {
        for (i, a) in SPPARK_H200.iter().enumerate() {
            for b in &SPPARK_H200[i + 1..] {
                assert!(!(a.op == b.op && a.log_n == b.log_n && a.inputs == b.inputs), "duplicate {a:?}");
            }
        }
    }

    #[test]
    fn ratio_uses_the_matching_quantity() {
        let mut row = Row {
            op: "mul_fq".into(),
            variant: "asm".into(),
            log_n: 22,
            inputs: "device".into(),
            median_ms: 1.0,
            min_ms: 1.0,
            max_ms: 1.0,
            reps: 5,
            gmul_s: Some(27.4 * 1.5),
            ginv_s: None,
            gbps: None,
            extra: Default::default(),
        };
        assert!((ratio_to_sppark(&row).unwrap() - 1.5).abs() < 1e-12);
        row.log_n = 20;
        assert!(ratio_to_sppark(&row).is_none());
        row.op = "msm_g1".into();
        row.log_n = 24;
        row.median_ms = 155.5 / 2.0;
        assert!((ratio_to_sppark(&row).unwrap() - 2.0).abs() < 1e-12);
    }
}
