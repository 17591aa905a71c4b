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
/// 50 % at 4.60 dB. \[DERIVED\]
///
/// This is the hot path of the channel (several calls per frame and receiver), so it reads a
/// precomputed table with linear interpolation (step 0.001 dB; absolute error < 1e-6 against
/// [`prr_exact`], checked by a test). Below 2 dB the value is < 1e-9 and returns 0; above
/// 10 dB it is 1 − 1e-12 and returns 1.
#[inline]
pub fn prr(sinr_db: f64) -> f64 {
    if sinr_db.is_nan() || sinr_db <= TABLE_LO {
        return 0.0;
    }
    if sinr_db >= TABLE_HI {
        return 1.0;
    }
    let table = table();
    let x = (sinr_db - TABLE_LO) * TABLE_STEPS_PER_DB;
    let i = x as usize;
    let f = x - i as f64;
    table[i] + (table[i + 1] - table[i]) * f
}

/// The exact curve with exponent 46 (slow: erfc and pow per call).
pub fn prr_exact(sinr_db: f64) -> f64 {
    prr_with_exponent(sinr_db, TOSSIM_EXPONENT)
}

const TABLE_LO: f64 = 2.0;
const TABLE_HI: f64 = 10.0;

/// [`prr`] is exactly 1.0 at and above this SINR (dB), so a coin against it never fails.
pub const PRR_ONE_FROM_DB: f64 = TABLE_HI;
/// [`prr_with_exponent`] is exactly 1.0 at and above this SINR (dB), for every exponent.
pub const PRR_EXPONENT_ONE_FROM_DB: f64 = SURE_ABOVE_DB;
/// [`prr_oqpsk`] is exactly 1.0 at and above this SINR (dB), for every frame length: from there
/// on the table holds `ln(1 − BER) = 0` exactly (BER below 2⁻⁵³), and `exp(0) = 1`. About 6 dB,
/// well below the table's upper end (12 dB).
pub fn prr_oqpsk_one_from_db() -> f64 {
    oqpsk_table().1
}
const TABLE_STEPS_PER_DB: f64 = 1000.0;

fn table() -> &'static [f64] {
    static TABLE: std::sync::OnceLock<Vec<f64>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let n = ((TABLE_HI - TABLE_LO) * TABLE_STEPS_PER_DB) as usize + 2;
        (0..n).map(|i| prr_exact(TABLE_LO + i as f64 / TABLE_STEPS_PER_DB)).collect()
    })
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
    let e = if exponent > 0.0 { exponent } else { 0.0 };
    if e == 0.0 {
        return 1.0;
    }
    // Outside this band 1 − PSE is exactly 1.0 or 0.0 in f64, so the result is exact without
    // evaluating erfc (a speed shortcut, checked bit for bit by the tests).
    if sinr_db >= SURE_ABOVE_DB {
        return 1.0;
    }
    if sinr_db <= NEVER_BELOW_DB {
        return 0.0;
    }
    let pse = 0.5 * libm::erfc(BETA1 * (sinr_db - BETA2) / core::f64::consts::SQRT_2);
    let ok = (1.0 - pse).clamp(0.0, 1.0);
    let p = if e.fract() == 0.0 && e <= u32::MAX as f64 { powu(ok, e as u32) } else { libm::pow(ok, e) };
    p.clamp(0.0, 1.0)
}

/// SINR (dB) at and above which `1 − PSE` rounds to exactly 1.0: erfc argument ≥ 6.0
/// (erfc(6)/2 ≈ 1.1·10⁻¹⁷ < 2⁻⁵⁴), i.e. x ≥ β2 + 6·√2/β1 = 11.05 dB. \[DERIVED\]
const SURE_ABOVE_DB: f64 = 11.1;
/// SINR (dB) at and below which `1 − PSE` is exactly 0.0 (erfc rounds to 2): x ≤ β2 − 8.66.
/// \[DERIVED\]
const NEVER_BELOW_DB: f64 = -6.3;

/// `x^n` by binary exponentiation (exact integer powers, portable and much cheaper than `pow`).
#[inline]
fn powu(mut x: f64, mut n: u32) -> f64 {
    let mut acc = 1.0;
    while n > 0 {
        if n & 1 == 1 {
            acc *= x;
        }
        x *= x;
        n >>= 1;
    }
    acc
}

/// Bit error rate of the 2.4 GHz O-QPSK PHY at a linear SNR, the formula of IEEE 802.15.4-2006
/// Annex E that ns-3's `LrWpanErrorModel` uses:
/// `BER = (8/15)·(1/16)·Σ_{k=2..16} (−1)^k·C(16,k)·exp(20·SNR·(1/k − 1))` [LIT: IEEE 802.15.4-2006
/// §E.4.1.8]. Used by the `ieee802154` reception curve to mirror ns-3 runs.
pub fn oqpsk_ber(snr_linear: f64) -> f64 {
    let mut sum = 0.0;
    let mut binom = 1.0f64; // C(16, 0)
    for k in 1..=16u32 {
        binom = binom * (17 - k) as f64 / k as f64;
        if k >= 2 {
            let sign = if k % 2 == 0 { 1.0 } else { -1.0 };
            sum += sign * binom * (20.0 * snr_linear * (1.0 / k as f64 - 1.0)).exp();
        }
    }
    (8.0 / 15.0 / 16.0 * sum).clamp(0.0, 0.5)
}

/// Chance that `bits` bits pass at a linear SINR under the O-QPSK BER: `(1 − BER)^bits`, the
/// chunk success rate of ns-3's `LrWpanErrorModel`, evaluated exactly (fifteen exponentials;
/// the reference for [`oqpsk_chunk_success_db`]).
pub fn oqpsk_chunk_success(sinr_linear: f64, bits: u32) -> f64 {
    if sinr_linear.is_nan() {
        return 0.0;
    }
    powu(1.0 - oqpsk_ber(sinr_linear.max(0.0)), bits)
}

/// [`oqpsk_chunk_success`] at a SINR in dB, read from the `ln(1 − BER)` table of [`prr_oqpsk`]
/// (0.001-dB steps, linear interpolation; hot path of the `ns3` reception model). Below the
/// table's −10 dB (rare: a strong interferer) the exact formula is evaluated; exactly 1 from
/// [`prr_oqpsk_one_from_db`] on.
pub fn oqpsk_chunk_success_db(sinr_db: f64, bits: u32) -> f64 {
    if sinr_db.is_nan() {
        return 0.0;
    }
    if sinr_db >= OQPSK_HI {
        return 1.0;
    }
    if sinr_db <= OQPSK_LO {
        return oqpsk_chunk_success((sinr_db * (core::f64::consts::LN_10 / 10.0)).exp(), bits);
    }
    let lnq = oqpsk_ln_ok(sinr_db);
    if lnq == 0.0 {
        return 1.0;
    }
    (bits as f64 * lnq).exp()
}

/// A cheap estimate of the chunk success chance that the `ns3` reception model compares its coin
/// with, `oqpsk_chunk_success_db(10·log10(ratio), bits)` (the exact chain: a logarithm, the dB
/// table and an exponential), for deciding a coin without the exact chain when the coin is not
/// near the chance.
///
/// Returns `Some((p, err))` only when the exact chance is certainly below 1 (so the exact chain
/// would draw a coin too) and `|p − exact| ≤ err`; `None` outside the estimate's range (ratios
/// below 0.1 or from 8 on, chunks over 2,048 bits) or when the chance may round to 1, where the
/// caller evaluates the exact chain. A coin `u` with `u < p − err` passes and `u > p + err`
/// fails under the exact chain as well, so deciding those without it changes no outcome; the
/// bound is checked against the exact chain by tests on a dense grid and on random inputs.
///
/// How: `ln(1 − BER)` read from a table indexed by the ratio's binary exponent and top 11
/// mantissa bits (2,048 steps per octave, linear in the ratio; no logarithm), and the
/// exponential from a 32-entry table of 2^(j/32) and a cubic (relative error below 10⁻⁸). `err` allows 10⁻³ of `p·|ln p|`, 10⁻⁷ of `p` and 10⁻¹⁸. Measured on 400,000
/// ratios × 6 chunk lengths: the error is below 5·10⁻⁶ of `p·|ln p|` where `|ln p| > 10⁻⁴`,
/// and at most 0.4 % of `err` everywhere (the largest near certain success, where the dB
/// table's last steps bend sharply and the 10⁻⁷ term covers it). \[DERIVED\]
#[inline]
pub fn oqpsk_chunk_estimate(ratio: f64, bits: u32) -> Option<(f64, f64)> {
    // `contains` is false for NaN too.
    if !(EST_LO_RATIO..EST_HI_RATIO).contains(&ratio) || bits > EST_MAX_BITS {
        return None;
    }
    let t = est_table();
    let b = ratio.to_bits();
    let i = ((b >> EST_FRAC_BITS) - EST_BASE) as usize;
    let frac = (b & ((1u64 << EST_FRAC_BITS) - 1)) as f64 * EST_FRAC_SCALE;
    let (lo, hi) = (t[i] as f64, t[i + 1] as f64);
    let y = bits as f64 * (lo + (hi - lo) * frac);
    if y > -EST_MIN_NEG_LOG {
        // The exact chance may round to 1 (no coin): only the exact chain can tell.
        return None;
    }
    let p = exp_estimate(y);
    Some((p, p * (EST_REL_LOG * -y + EST_REL_EXP) + EST_ABS))
}

/// Table steps per octave of [`oqpsk_chunk_estimate`]: 2^11.
const EST_STEP_BITS: u32 = 11;
/// Mantissa bits below the table index.
const EST_FRAC_BITS: u32 = 52 - EST_STEP_BITS;
/// `2^−EST_FRAC_BITS`: the fraction of a table step from the mantissa's low bits.
const EST_FRAC_SCALE: f64 = 1.0 / (1u64 << EST_FRAC_BITS) as f64;
/// Lowest octave of the table: ratios from 2^−4 (the table's node values below the dB table's
/// −10 dB come from the formula).
const EST_MIN_EXP: i32 = -4;
/// Octaves covered: 2^−4 … 2^3.
const EST_OCTAVES: usize = 7;
/// `(biased exponent, top mantissa bits)` of 2^−4, subtracted to get the table index.
const EST_BASE: u64 = ((1023 + EST_MIN_EXP) as u64) << EST_STEP_BITS;
/// Range of the estimate: above the dB table's −10 dB (where the exact chain switches to the
/// formula), below the table's end 2^3 (9 dB, above the ≈ 6 dB from which the chance is 1).
const EST_LO_RATIO: f64 = 0.1001;
const EST_HI_RATIO: f64 = 8.0;
/// Longest chunk estimated: 2,048 bits, more than an 802.15.4 frame (133 bytes on the air).
const EST_MAX_BITS: u32 = 2048;
/// `|ln p|` below which the exact chance may be 1 (`exp` rounds −2⁻⁵⁴ ≈ −5.6·10⁻¹⁷ and above to 1).
const EST_MIN_NEG_LOG: f64 = 1e-12;
/// Error allowance: relative to `|ln p|` (the table's interpolation), relative to `p` (the
/// polynomial) and absolute (below the coin's 2⁻⁵³ granularity).
const EST_REL_LOG: f64 = 1e-3;
const EST_REL_EXP: f64 = 1e-7;
const EST_ABS: f64 = 1e-18;

/// `ln(1 − BER)` at the ratios `2^(EST_MIN_EXP + k/2048)`, as the exact chain computes it there
/// (the dB table from −10 dB on, the formula below), in `f32` (56 KB).
fn est_table() -> &'static [f32] {
    static TABLE: std::sync::OnceLock<Vec<f32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let n = EST_OCTAVES << EST_STEP_BITS;
        (0..=n)
            .map(|k| {
                let ratio = f64::from_bits((EST_BASE + k as u64) << EST_FRAC_BITS);
                let db = 10.0 * ratio.log10();
                let lnq = if db > OQPSK_LO { oqpsk_ln_ok(db) } else { (1.0 - oqpsk_ber(ratio)).ln() };
                lnq as f32
            })
            .collect()
    })
}

/// `exp(y)` for `y ≤ 0`, relative error below 10⁻⁸: with `k` an integer within ½ of
/// `32·y·log2(e)`, `exp(y) = 2^⌊k/32⌋ · 2^((k mod 32)/32) · e^g` where `|g| ≤ ln(2)/64`; the middle
/// factor from a 32-entry table, `e^g` by its Taylor polynomial of degree 3 (remainder
/// `g⁴/24·e^|g|` < 6·10⁻¹⁰). 0 below −700 (the exact value is below 10⁻³⁰⁴ there).
#[inline]
fn exp_estimate(y: f64) -> f64 {
    if y < -700.0 {
        return 0.0;
    }
    // `as` truncates toward zero, i.e. rounds z − ½ ≤ 0 up: z − ½ ≤ k < z + ½.
    let k = (y * (32.0 * core::f64::consts::LOG2_E) - 0.5) as i64;
    let g = y - k as f64 * (core::f64::consts::LN_2 / 32.0);
    let e = 1.0 + g * (1.0 + g * (0.5 + g * (1.0 / 6.0)));
    // 2^(k >> 5) as a double: k >> 5 ≥ −1010 here, within the normal range.
    e * EXP2_32THS[(k & 31) as usize] * f64::from_bits((((k >> 5) + 1023) as u64) << 52)
}

/// `2^(j/32)` for `j` in 0..32 (to the last digit or so, checked against `exp2` by a test; the
/// last digit does not matter at the estimate's 10⁻⁸).
static EXP2_32THS: [f64; 32] = [
    1.0,
    1.0218971486541166,
    1.0442737824274138,
    1.0671404006768237,
    1.0905077326652577,
    1.1143867425958924,
    1.1387886347566916,
    1.1637248587775775,
    1.189207115002721,
    1.215247359980469,
    1.241857812073484,
    1.2690509571917332,
    1.2968395546510096,
    1.3252366431597413,
    1.3542555469368927,
    1.383909881963832,
    core::f64::consts::SQRT_2,
    1.4451808069770467,
    1.4768261459394993,
    1.5091644275934228,
    1.5422108254079407,
    1.5759808451078865,
    1.6104903319492543,
    1.645755478153965,
    1.681792830507429,
    1.718619298122478,
    1.7562521603732995,
    1.7947090750031072,
    1.8340080864093424,
    1.8741676341103,
    1.9152065613971474,
    1.9571441241754002,
];

/// `ln(1 − BER)` at `sinr_db` in (−10, 12) dB, interpolated in the table.
#[inline]
fn oqpsk_ln_ok(sinr_db: f64) -> f64 {
    let t = &oqpsk_table().0;
    let x = (sinr_db - OQPSK_LO) * 1000.0;
    let i = x as usize;
    t[i] + (t[i + 1] - t[i]) * (x - i as f64)
}

/// Upper end of the O-QPSK table (dB); [`prr_oqpsk`] returns 1 from there on.
const OQPSK_HI: f64 = 12.0;

/// Frame reception probability under the IEEE 802.15.4 O-QPSK curve: `(1 − BER)^(8·bytes)`,
/// read from a table of `ln(1 − BER)` over [−10, 12] dB in 0.001-dB steps (hot path).
pub fn prr_oqpsk(sinr_db: f64, bytes: usize) -> f64 {
    if sinr_db.is_nan() || sinr_db <= OQPSK_LO {
        return 0.0;
    }
    if sinr_db >= OQPSK_HI {
        return 1.0;
    }
    let lnq = oqpsk_ln_ok(sinr_db);
    if lnq == 0.0 {
        // exp(±0) is exactly 1; skip the call.
        return 1.0;
    }
    (8.0 * bytes as f64 * lnq).exp()
}

/// Lower end of the O-QPSK table (dB).
const OQPSK_LO: f64 = -10.0;

/// The table of `ln(1 − BER)` over [`OQPSK_LO`, `OQPSK_HI`] in 0.001-dB steps, and the SINR
/// from which [`prr_oqpsk`] is certainly 1 (see [`prr_oqpsk_one_from_db`]).
fn oqpsk_table() -> &'static (Vec<f64>, f64) {
    static TABLE: std::sync::OnceLock<(Vec<f64>, f64)> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let n = ((OQPSK_HI - OQPSK_LO) * 1000.0) as usize + 2;
        let t: Vec<f64> = (0..n)
            .map(|i| {
                let x = OQPSK_LO + i as f64 / 1000.0;
                (1.0 - oqpsk_ber((x * (core::f64::consts::LN_10 / 10.0)).exp())).ln()
            })
            .collect();
        // First index k with t[j] = 0 for every j ≥ k. A SINR one step above grid point k has
        // an index ≥ k whatever the rounding of the index computation, so both interpolation
        // ends are 0 there.
        let k = t.iter().rposition(|&v| v != 0.0).map_or(0, |j| j + 1);
        let one_from = (OQPSK_LO + (k + 1) as f64 / 1000.0).min(OQPSK_HI);
        (t, one_from)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn oqpsk_chunk_table_matches_the_formula() {
        for i in -150..120 {
            let db = i as f64 / 10.0;
            let lin = 10f64.powf(db / 10.0);
            for bits in [1u32, 8, 88, 456] {
                let exact = super::oqpsk_chunk_success(lin, bits);
                let fast = super::oqpsk_chunk_success_db(db, bits);
                let tol = 1e-6;
                assert!((exact - fast).abs() <= tol, "{db} dB, {bits} bits: {exact} vs {fast}");
            }
        }
        assert_eq!(super::oqpsk_chunk_success_db(super::prr_oqpsk_one_from_db(), 456), 1.0);
    }

    #[test]
    fn oqpsk_curve_is_monotone_and_near_ns3() {
        // ns-3's O-QPSK model delivers a 57-byte frame almost surely a little above 0 dB SNR and
        // almost never below −3 dB.
        assert!(super::prr_oqpsk(2.0, 57) > 0.99);
        assert!(super::prr_oqpsk(-4.0, 57) < 0.01);
        let mut last = 0.0;
        for i in -100..100 {
            let p = super::prr_oqpsk(i as f64 * 0.1, 57);
            assert!(p >= last - 1e-12);
            last = p;
        }
    }

    use super::*;

    #[test]
    fn table_matches_exact_curve() {
        let mut x = -5.0;
        while x < 15.0 {
            assert!((prr(x) - prr_exact(x)).abs() < 1e-6, "at {x} dB");
            x += 0.0137;
        }
        assert_eq!(prr(f64::NAN), 0.0);
    }

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

    /// The formula without shortcuts.
    fn slow(x: f64, e: f64) -> f64 {
        let pse = 0.5 * libm::erfc(BETA1 * (x - BETA2) / core::f64::consts::SQRT_2);
        libm::pow((1.0 - pse).clamp(0.0, 1.0), e)
    }

    #[test]
    fn shortcuts_are_exact() {
        for i in 0..=4000 {
            let x = -30.0 + i as f64 * 0.01;
            for e in [46.0, 2.0, 1.0, 240.0, 0.5] {
                let (a, b) = (prr_with_exponent(x, e), slow(x, e));
                if x >= SURE_ABOVE_DB {
                    assert_eq!(b, 1.0, "x = {x}, e = {e}");
                }
                if x <= NEVER_BELOW_DB {
                    assert_eq!(b, 0.0, "x = {x}, e = {e}");
                }
                assert!((a - b).abs() <= 1e-12 * b.max(1e-300), "x = {x}: {a} vs {b}");
            }
        }
    }

    #[test]
    fn certain_reception_thresholds() {
        for k in 0..2000 {
            let x = k as f64 * 0.01;
            if x >= PRR_ONE_FROM_DB {
                assert_eq!(prr(x), 1.0, "{x}");
            }
            for e in [1.0, 46.0, 240.0, 0.5] {
                if x >= PRR_EXPONENT_ONE_FROM_DB {
                    assert_eq!(prr_with_exponent(x, e), 1.0, "{x}");
                }
            }
            for bytes in [0, 1, 57, 133, 1000] {
                if x >= prr_oqpsk_one_from_db() {
                    assert_eq!(prr_oqpsk(x, bytes), 1.0, "{x}");
                }
            }
        }
        assert_eq!(prr(f64::INFINITY), 1.0);
        assert_eq!(prr_oqpsk(f64::INFINITY, 57), 1.0);
        // The O-QPSK threshold is well below the table's end, and just below it the curve is
        // not yet exactly 1 for long frames.
        let one = prr_oqpsk_one_from_db();
        assert!(one > 0.0 && one < 10.0, "{one}");
        assert!(prr_oqpsk(one - 0.01, 1000) < 1.0);
        eprintln!("O-QPSK PRR exactly 1 from {one} dB");
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

    /// The exact chain the `ns3` reception model compares its coin with (`mw_to_dbm` of the ratio
    /// is `10·log10`).
    fn exact_chunk(ratio: f64, bits: u32) -> f64 {
        oqpsk_chunk_success_db(10.0 * ratio.log10(), bits)
    }

    /// What makes deciding a coin from the estimate give the exact chain's outcome: whenever
    /// the estimate answers, the exact chance is below 1 (the exact chain draws the coin) and
    /// within the stated error, here with a factor of 4 to spare.
    fn check_estimate(ratio: f64, bits: u32) -> bool {
        let Some((p, err)) = oqpsk_chunk_estimate(ratio, bits) else { return false };
        let exact = exact_chunk(ratio, bits);
        assert!(exact < 1.0, "ratio {ratio}, {bits} bits: estimated, but the exact chance is 1");
        assert!((p - exact).abs() <= err / 4.0, "ratio {ratio}, {bits} bits: {p} ± {err} vs {exact}");
        true
    }

    const CHUNK_BITS: [u32; 20] =
        [1, 2, 3, 4, 7, 8, 16, 24, 40, 64, 88, 128, 200, 256, 456, 640, 1000, 1064, 1500, 2048];

    #[test]
    fn chunk_estimate_is_within_its_error_on_a_dense_grid() {
        // 100,000 ratios per decade over the estimate's range (0.1 to 8, about 19 dB), with
        // every table node and midpoint among the probes of the first octaves' steps.
        let (lo, hi) = (0.1f64, 8.0f64);
        let steps = 190_000;
        let mut answered = 0usize;
        for k in 0..=steps {
            let ratio = lo * (hi / lo).powf(k as f64 / steps as f64);
            for bits in CHUNK_BITS {
                answered += check_estimate(ratio, bits) as usize;
            }
        }
        // The estimate answers for most of the range (it is a speed path, not a dead branch):
        // everywhere below the ≈ 6 dB from which the chance is 1, except chunks whose chance is
        // within 10⁻¹² of 1.
        let total = (steps + 1) * CHUNK_BITS.len();
        assert!(answered * 10 > total * 6, "{answered} of {total}");
        // Outside its range it never answers.
        assert_eq!(oqpsk_chunk_estimate(0.0999, 100), None);
        assert_eq!(oqpsk_chunk_estimate(8.0, 100), None);
        assert_eq!(oqpsk_chunk_estimate(f64::NAN, 100), None);
        assert_eq!(oqpsk_chunk_estimate(1.0, 2049), None);
        assert_eq!(oqpsk_chunk_estimate(1.0, 0), None);
        // Near certain success the exact chain decides whether a coin is drawn at all.
        assert_eq!(oqpsk_chunk_estimate(10f64.powf(prr_oqpsk_one_from_db() / 10.0), 1000), None);
    }

    #[test]
    fn exp2_table_is_exact_to_the_last_digits() {
        for (j, &v) in EXP2_32THS.iter().enumerate() {
            let exact = (j as f64 / 32.0).exp2();
            assert!((v - exact).abs() <= 4.0 * f64::EPSILON, "{j}: {v} vs {exact}");
        }
    }

    #[test]
    fn exp_estimate_is_within_1e_8() {
        let mut y = -700.0;
        while y < 0.0 {
            let (a, b) = (exp_estimate(y), y.exp());
            assert!((a - b).abs() <= 1e-8 * b, "{y}: {a} vs {b}");
            y += 0.000_731;
        }
        assert_eq!(exp_estimate(-700.5), 0.0);
        assert!(0.0f64.exp() == exp_estimate(0.0));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
        #[test]
        fn chunk_estimate_is_within_its_error_anywhere(ratio in 0.05f64..9.0, bits in 0u32..2100) {
            check_estimate(ratio, bits);
        }
    }
}

#[cfg(test)]
mod audit34 {
    use super::*;

    #[test]
    fn a_non_positive_or_nan_exponent_gives_certain_reception_at_any_sinr() {
        // Documented: a non-positive or NaN exponent is treated as 0, so PRR is 1 unless the SINR
        // is NaN, also far below the curve's transition where every real exponent gives 0.
        for x in [-40.0, -6.3, -1.0, 2.0, 4.5, 11.1, 30.0] {
            assert_eq!(prr_with_exponent(x, 0.0), 1.0, "{x} dB, exponent 0");
            assert_eq!(prr_with_exponent(x, -2.0), 1.0, "{x} dB, exponent -2");
            assert_eq!(prr_with_exponent(x, f64::NAN), 1.0, "{x} dB, NaN exponent");
        }
        assert_eq!(prr_with_exponent(f64::NAN, 0.0), 0.0);
        // The same low SINRs with a positive exponent are (nearly) certain losses.
        assert!(prr_with_exponent(-1.0, 46.0) < 1e-9);
    }

    #[test]
    fn the_chunk_estimate_answers_up_to_2048_bits_inclusive() {
        // Documented range: `None` only for chunks *over* 2,048 bits; a 2,048-bit chunk whose
        // chance is clearly below 1 is estimated, within the stated error of the exact chain.
        for ratio in [0.5, 1.0, 1.5, 2.0] {
            let (p, err) = oqpsk_chunk_estimate(ratio, 2048).expect("2,048 bits is within the range");
            let exact = oqpsk_chunk_success_db(10.0 * f64::log10(ratio), 2048);
            assert!(exact < 1.0 && (p - exact).abs() <= err, "ratio {ratio}: {p} ± {err} vs {exact}");
            assert_eq!(oqpsk_chunk_estimate(ratio, 2049), None);
        }
    }

    #[test]
    fn oqpsk_log_table_is_exactly_zero_from_the_one_threshold_on() {
        // From `prr_oqpsk_one_from_db` on, both interpolation ends of the ln(1 − BER) table are 0
        // (the code's stated reason why the O-QPSK chance is exactly 1 there).
        let one = prr_oqpsk_one_from_db();
        let mut x = one;
        while x < one + 0.01 {
            assert_eq!(oqpsk_ln_ok(x), 0.0, "{x} dB (threshold {one})");
            x += 0.000_01;
        }
    }
}
