//! Link quality indicator (LQI) of a received frame (spec §4.5).
//!
//! The CC2420 reports a 7-bit chip-correlation value, about 50 (worst) to 110 (best). TOSSIM draws
//! it from measured per-SNR distributions (`lqi_table.rs`, restated from `sim_lqi.h`): it
//! takes the measured row whose SNR is nearest to the end-of-frame SINR (anything below 0 dB uses
//! the 0-dB row, anything above 31 dB the 31-dB row) and samples that row's empirical CDF.
//!
//! Differences from TOSSIM, both deliberate:
//! - TOSSIM draws an integer coin in 0..99 and compares it with the row's cumulative percents
//!   truncated to integers, which slightly distorts rows with many small steps. Here the coin is a
//!   real number in [0, 100) compared with the exact cumulative percents, i.e. the measured
//!   distribution itself. [CODE t2: sim_lqi.c] \[REC\]
//! - Ties between two rows (SINR exactly half-way, e.g. 4 dB between the 3- and 5-dB rows) go to
//!   the lower SNR. TOSSIM's choice depends on the order of its array; it also picks the lower row
//!   for the integer gaps 1, 4 and 9 dB. Ties have probability zero for a continuous SINR.
//!
//! Means of the rows: 76.6 at 0 dB, 88.6 at 5 dB, 100.4 at 10 dB, 106.9 at 20 dB. [MEASURED-HERE]

use super::lqi_table::{LqiRow, LQI_ROWS};
use crate::rng::SimRng;
use rand::Rng;

/// The measured row nearest to `sinr_db` (ties → lower SNR; NaN → the 0-dB row).
fn row_for(sinr_db: f64) -> &'static LqiRow {
    let first = &LQI_ROWS[0];
    if sinr_db.is_nan() || sinr_db <= first.0 as f64 {
        return first;
    }
    // Index of the first row with SNR ≥ sinr_db.
    let hi = LQI_ROWS.partition_point(|r| (r.0 as f64) < sinr_db);
    if hi >= LQI_ROWS.len() {
        return &LQI_ROWS[LQI_ROWS.len() - 1];
    }
    let (lo_row, hi_row) = (&LQI_ROWS[hi - 1], &LQI_ROWS[hi]);
    if hi_row.0 as f64 - sinr_db < sinr_db - lo_row.0 as f64 {
        hi_row
    } else {
        lo_row
    }
}

/// Draws the LQI of a frame received at end-of-frame SINR `sinr_db` (dB), from TOSSIM's
/// measured CC2420 table (nearest SNR row). Uses exactly one uniform draw of `rng`.
/// The result is always in 52..=108 (the range of the measurements).
pub fn sample_lqi(sinr_db: f64, rng: &mut SimRng) -> u8 {
    let row = row_for(sinr_db).1;
    let coin: f64 = rng.gen::<f64>() * 100.0;
    for &(lqi, cum) in row {
        if coin < cum {
            return lqi;
        }
    }
    // Unreachable in practice: every row ends at exactly 100.
    row[row.len() - 1].0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};

    fn mean_lqi(snr: f64, n: usize) -> f64 {
        let mut rng = stream(11, 0, 3, Purpose::Reception);
        let mut sum = 0u64;
        for _ in 0..n {
            let v = sample_lqi(snr, &mut rng);
            assert!((40..=110).contains(&v), "LQI {v} out of range");
            sum += v as u64;
        }
        sum as f64 / n as f64
    }

    #[test]
    fn table_is_well_formed() {
        assert_eq!(LQI_ROWS.len(), 29);
        for w in LQI_ROWS.windows(2) {
            assert!(w[0].0 < w[1].0);
        }
        for (snr, row) in LQI_ROWS.iter() {
            let mut prev = 0.0;
            for &(lqi, cum) in row.iter() {
                assert!(cum >= prev, "row {snr} not cumulative");
                assert!((52..=108).contains(&lqi));
                prev = cum;
            }
            assert_eq!(prev, 100.0, "row {snr} does not end at 100");
        }
    }

    #[test]
    fn means_match_spec() {
        // Spec §4.5: mean LQI 88.6 at 5 dB, 106.9 at 20 dB, 76.6 at 0 dB, 100.4 at 10 dB.
        for (snr, want) in [(5.0, 88.6), (20.0, 106.9), (0.0, 76.6), (10.0, 100.4)] {
            let m = mean_lqi(snr, 40_000);
            assert!((m - want).abs() < 1.5, "mean LQI at {snr} dB = {m}, want {want}");
        }
        // Below the table uses the 0-dB row; above, the 31-dB row.
        assert!((mean_lqi(-12.0, 20_000) - 76.6).abs() < 1.5);
        assert!((mean_lqi(60.0, 20_000) - 107.35).abs() < 1.0);
    }

    #[test]
    fn nearest_row_selection() {
        assert_eq!(row_for(-3.0).0, 0);
        assert_eq!(row_for(f64::NAN).0, 0);
        assert_eq!(row_for(1.0).0, 0); // tie 0/2 → lower
        assert_eq!(row_for(1.2).0, 2);
        assert_eq!(row_for(4.0).0, 3); // tie 3/5 → lower, as TOSSIM
        assert_eq!(row_for(4.3).0, 5);
        assert_eq!(row_for(9.0).0, 8);
        assert_eq!(row_for(9.6).0, 10);
        assert_eq!(row_for(20.4).0, 20);
        assert_eq!(row_for(31.0).0, 31);
        assert_eq!(row_for(f64::INFINITY).0, 31);
    }
}

#[cfg(test)]
mod audit34 {
    use super::*;
    use crate::rng::{stream, Purpose};

    #[test]
    fn samples_follow_each_rows_measured_distribution() {
        // Module doc: the coin is a real number in [0, 100) compared with the exact cumulative
        // percents, i.e. a draw reproduces the measured distribution itself, including its last
        // (highest-cumulative) entries.
        let n = 60_000usize;
        for (snr, row) in LQI_ROWS.iter() {
            let mut want = [0.0f64; 256];
            let mut prev = 0.0;
            for &(lqi, cum) in row.iter() {
                want[lqi as usize] += (cum - prev) / 100.0;
                prev = cum;
            }
            let mut rng = stream(34, 0, *snr as u32, Purpose::Reception);
            let mut got = [0usize; 256];
            for _ in 0..n {
                got[sample_lqi(*snr as f64, &mut rng) as usize] += 1;
            }
            for (v, (&p, &g)) in want.iter().zip(got.iter()).enumerate() {
                let f = g as f64 / n as f64;
                let tol = 5.0 * (p * (1.0 - p) / n as f64).sqrt() + 1e-4;
                assert!((f - p).abs() <= tol, "row {snr} dB, LQI {v}: frequency {f}, measured {p}");
            }
        }
    }
}
