//! Physical-layer building blocks of the CC2420 radio model.
//!
//! - [`prr`]: the packet reception curve PRR(SINR) of TOSSIM's CPM radio model (spec §4.1).
//! - [`noise`]: per-node noise processes (closest-pattern matching, trace replay, constant floor,
//!   floor plus Gaussian; spec §3).
//! - [`lqi`]: the SNR → LQI draw from CC2420 measurements (spec §4.5).
//!
//! Power values are in dBm, ratios in dB. Powers are added in the linear domain with
//! [`dbm_to_mw`] and [`mw_to_dbm`] (the `⊕` of the spec).

pub mod lqi;
mod lqi_table;
pub mod noise;
pub mod prr;

/// Converts a power in dBm to milliwatts: `10^(dbm / 10)`. `-∞` dBm gives 0 mW.
#[inline]
pub fn dbm_to_mw(dbm: f64) -> f64 {
    // std's exp (the platform libm) is several times faster than the soft-float libm crate here.
    (dbm * (core::f64::consts::LN_10 / 10.0)).exp()
}

/// Converts a power in milliwatts to dBm: `10 · log10(mw)`. Zero or negative power gives
/// `f64::NEG_INFINITY` (no energy at all).
#[inline]
pub fn mw_to_dbm(mw: f64) -> f64 {
    if mw <= 0.0 {
        f64::NEG_INFINITY
    } else {
        10.0 * mw.log10()
    }
}

/// Lowest and highest power of the [`whole_dbm`] table, dBm.
const WHOLE_DBM_LO: i32 = -200;
const WHOLE_DBM_HI: i32 = 50;

/// Exact conversions of a whole-dBm power `dbm` (−200 ..= 50 dBm), read from a table:
/// `(dbm_to_mw(dbm), mw_to_dbm(dbm_to_mw(dbm)))`, bit for bit what the two functions return.
/// `None` for a fractional or out-of-range value.
///
/// Noise traces are whole dBm (and so is a node's sample when its noise offset is 0), so the
/// channel reads most noise powers here instead of calling `exp` and `log10` for every new 1-ms
/// noise sample.
#[inline]
pub fn whole_dbm(dbm: f64) -> Option<(f64, f64)> {
    // Saturating cast; NaN gives 0, which fails the equality test below.
    let k = dbm as i32;
    if k as f64 != dbm || !(WHOLE_DBM_LO..=WHOLE_DBM_HI).contains(&k) {
        return None;
    }
    static TABLE: std::sync::OnceLock<Vec<(f64, f64)>> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        (WHOLE_DBM_LO..=WHOLE_DBM_HI)
            .map(|k| {
                let mw = dbm_to_mw(k as f64);
                (mw, mw_to_dbm(mw))
            })
            .collect()
    });
    Some(t[(k - WHOLE_DBM_LO) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_trip_and_add_powers() {
        assert!((dbm_to_mw(0.0) - 1.0).abs() < 1e-12);
        assert!((dbm_to_mw(-30.0) - 1e-3).abs() < 1e-15);
        assert!((mw_to_dbm(100.0) - 20.0).abs() < 1e-12);
        assert_eq!(mw_to_dbm(0.0), f64::NEG_INFINITY);
        assert_eq!(mw_to_dbm(-1.0), f64::NEG_INFINITY);
        assert_eq!(dbm_to_mw(f64::NEG_INFINITY), 0.0);
        for v in [-115.0, -98.5, -72.0, 0.0, 12.3] {
            assert!((mw_to_dbm(dbm_to_mw(v)) - v).abs() < 1e-9);
        }
        // The whole-dBm table is exactly the functions.
        for k in WHOLE_DBM_LO..=WHOLE_DBM_HI {
            let d = k as f64;
            let (mw, back) = whole_dbm(d).unwrap();
            assert_eq!(mw.to_bits(), dbm_to_mw(d).to_bits());
            assert_eq!(back.to_bits(), mw_to_dbm(dbm_to_mw(d)).to_bits());
        }
        for d in [-98.5, -201.0, 51.0, f64::NAN, f64::NEG_INFINITY, 1e300] {
            assert!(whole_dbm(d).is_none(), "{d}");
        }
        // Two equal powers add up to +3.01 dB.
        let sum = mw_to_dbm(dbm_to_mw(-90.0) + dbm_to_mw(-90.0));
        assert!((sum - (-90.0 + 10.0 * 2f64.log10())).abs() < 1e-9);
    }
}
