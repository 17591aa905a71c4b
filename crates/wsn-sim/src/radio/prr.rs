//! Packet reception ratio as a function of SINR (spec §4.1).
//!
//! TOSSIM's CPM radio model turns a signal-to-(noise + interference) ratio `x` (dB) into a
//! symbol error probability `PSE(x) = ½·erfc(β1·(x − β2)/√2)` and then into a frame reception
//! probability `PRR(x) = (1 − PSE(x))^46`. The same curve judges data frames and ACKs.
//! The 10 %–90 % transition is only 1.2 dB wide (4.08 dB → 5.28 dB).

/// Slope of the CC2420 symbol-error fit. [CODE t2: CpmModelC.nc]
pub const BETA1: f64 = 0.9794;
/// Offset (dB) of the CC2420 symbol-error fit. [CODE t2: CpmModelC.nc]
pub const BETA2: f64 = 2.3851;
/// Number of independent symbol decisions per frame in TOSSIM (written there as 23 × 2, i.e. a
/// 23-byte reference frame), independent of the real frame length. [CODE t2: CpmModelC.nc],
/// [AMBIG-3 → fixed 46 by default; see [`prr_with_exponent`] for the length-scaled option]
pub const TOSSIM_EXPONENT: f64 = 46.0;

/// Probability that a frame is received at SINR `sinr_db` (dB), TOSSIM's curve with the fixed
/// exponent 46. Clamped to `[0, 1]`; NaN input gives 0.
///
/// Reference values: 0.068 at 4.0 dB, 0.411 at 4.5, 0.786 at 5.0, 0.949 at 5.5, 0.991 at 6.0;
/// 50 % at 4.60 dB. [DERIVED]
#[inline]
pub fn prr(sinr_db: f64) -> f64 {
    prr_with_exponent(sinr_db, TOSSIM_EXPONENT)
}

/// Like [`prr`] but with the exponent given: `(1 − PSE(x))^exponent`. For the
/// `prr_length_scaling` option the exponent is 2 × (bytes on air after the SHR), i.e. one decision
/// per 4-bit symbol. [REC, AMBIG-3] A non-positive or NaN exponent is treated as 0 (PRR 1 unless
/// the SINR is NaN).
#[inline]
pub fn prr_with_exponent(sinr_db: f64, exponent: f64) -> f64 {
    if sinr_db.is_nan() {
        return 0.0;
    }
    let pse = 0.5 * libm::erfc(BETA1 * (sinr_db - BETA2) / core::f64::consts::SQRT_2);
    let ok = (1.0 - pse).clamp(0.0, 1.0);
    let e = if exponent > 0.0 { exponent } else { 0.0 };
    libm::pow(ok, e).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SINR at which the curve reaches `p` (bisection; the curve is increasing).
    fn inverse(p: f64) -> f64 {
        let (mut lo, mut hi) = (0.0, 10.0);
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if prr(mid) < p {
                lo = mid
            } else {
                hi = mid
            }
        }
        0.5 * (lo + hi)
    }

    #[test]
    fn matches_spec_table() {
        // Spec §4.1 table, 3 decimals.
        let table = [
            (3.0, 0.000),
            (3.5, 0.001),
            (4.0, 0.068),
            (4.5, 0.411),
            (5.0, 0.786),
            (5.5, 0.949),
            (6.0, 0.991),
            (6.5, 0.999),
            (7.0, 1.000),
        ];
        for (x, want) in table {
            let got = prr(x);
            assert!((got - want).abs() <= 0.0005 + 1e-12, "PRR({x}) = {got}, want {want}");
        }
        assert_eq!(prr(-20.0), 0.0);
        assert!(prr(30.0) > 0.999_999 && prr(30.0) <= 1.0);
        assert_eq!(prr(f64::NAN), 0.0);
        assert_eq!(prr(f64::NEG_INFINITY), 0.0);
        assert_eq!(prr(f64::INFINITY), 1.0);
    }

    #[test]
    fn transition_points() {
        for (p, x) in [(0.01, 3.72), (0.1, 4.08), (0.5, 4.60), (0.9, 5.28), (0.99, 5.98)] {
            let got = inverse(p);
            assert!((got - x).abs() < 0.006, "PRR {p} at {got} dB, want {x}");
        }
    }

    #[test]
    fn exponent_scaling() {
        assert_eq!(prr_with_exponent(4.5, 46.0), prr(4.5));
        // A longer frame (more symbol decisions) is received less often at the same SINR.
        let short = prr_with_exponent(4.5, 46.0);
        let long = prr_with_exponent(4.5, 2.0 * 120.0);
        assert!(long < short);
        // (1 − PSE)^240 = ((1 − PSE)^46)^(240/46).
        assert!((long - short.powf(240.0 / 46.0)).abs() < 1e-12);
        assert_eq!(prr_with_exponent(4.5, 0.0), 1.0);
        assert_eq!(prr_with_exponent(4.5, -3.0), 1.0);
    }
}
