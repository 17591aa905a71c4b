//! The sink's per-flow estimators: Average Loss Interval (ALI), RTT/RTO by the T…T‴ scheme with
//! feedback ids, the congestion level C_i and the multiplicative-decrease factor M(t).
//!
//! Everything here is a pure function of its inputs, so each piece is tested against the
//! spec's worked examples (spec §10).

use crate::time::{Duration, Instant};

/// Number of loss intervals ALI keeps. [PAPER §3.5: n = 8]
pub const ALI_HISTORY: usize = 8;

/// ALI weights, most recent first. [PAPER §3.5: w = 1, 1, 1, 1, 0.8, 0.6, 0.4, 0.2]
pub const ALI_WEIGHTS: [f64; ALI_HISTORY] = [1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2];

/// Loss-rate estimator by the Average Loss Interval method (spec §2.7).
///
/// A *loss event* is one gap in the sequence numbers, however long [AMBIG-3 → chosen: one
/// event per gap, as the code]. Its interval runs from the last loss of the previous gap to the
/// first loss of this one, so every interval after the first is ≥ 2. Only packets that raise
/// the highest sequence number seen feed the estimator, so retransmissions never do
/// [AMBIG-24].
#[derive(Clone, Debug)]
pub struct Ali {
    /// Loss intervals, newest first; `len` of them are valid.
    intervals: [u32; ALI_HISTORY],
    len: usize,
    /// Sequence number of the last lost packet of the newest event (0 = no event yet).
    last_loss: u32,
    /// The open interval s_0: packets since the last loss.
    open: u32,
    /// Apply the reference code's interval clamps (first ≤ 10 or 2, later [2, 20]).
    clamps: bool,
    weights: [f64; ALI_HISTORY],
}

impl Ali {
    /// An estimator with `weights` (most recent first); `clamps` selects the code's interval
    /// clamps [CODE connectionlist.c update_loss_ali; off in the paper profile, D16].
    pub fn new(weights: [f64; ALI_HISTORY], clamps: bool) -> Ali {
        Ali { intervals: [0; ALI_HISTORY], len: 0, last_loss: 0, open: 0, clamps, weights }
    }

    /// Account for packet `seq` that raised the highest sequence number seen from `last_recv`.
    pub fn on_advance(&mut self, seq: u32, last_recv: u32) {
        if seq <= last_recv {
            return;
        }
        if seq > last_recv + 1 {
            // One loss event: the gap last_recv+1 ..= seq-1.
            let raw = last_recv.saturating_sub(self.last_loss).saturating_add(1);
            let interval = match (self.clamps, self.len) {
                // [CODE] the very first packet already shows a loss.
                (true, 0) if last_recv == 0 => 2,
                // [CODE] first event: avoid under-estimating after a long loss-free start.
                (true, 0) => raw.min(10),
                // [CODE] later events.
                (true, _) => raw.clamp(2, 20),
                // [AMBIG-3 → chosen] paper: only losing seqno 1 can give an interval of 1
                // (the virtual loss is at 0); floor it at 2 so that p ≥ 1/2 and M ≥ 1/3 hold.
                (false, 0) => raw.max(2),
                (false, _) => raw,
            };
            self.intervals.copy_within(0..ALI_HISTORY - 1, 1);
            self.intervals[0] = interval;
            self.len = (self.len + 1).min(ALI_HISTORY);
            self.last_loss = seq - 1;
        }
        self.open = seq - self.last_loss;
    }

    /// Number of loss events recorded (at most [`ALI_HISTORY`]).
    pub fn events(&self) -> usize {
        self.len
    }

    /// The loss intervals, newest first.
    pub fn intervals(&self) -> &[u32] {
        &self.intervals[..self.len]
    }

    /// ŝ = max(ŝ(1,k), ŝ(0,k−1)), or `None` before the first loss event.
    /// [PAPER §3.5 in the TFRC form of AMBIG-2: weight w_{m+1} on s_m; ŝ(0,k−1) only for
    /// k ≥ 2, as the code]
    pub fn mean_interval(&self) -> Option<f64> {
        let k = self.len;
        if k == 0 {
            return None;
        }
        let norm: f64 = self.weights[..k].iter().sum();
        if norm.is_nan() || norm <= 0.0 {
            return None;
        }
        let history: f64 = (0..k).map(|j| self.weights[j] * f64::from(self.intervals[j])).sum::<f64>() / norm;
        let with_open = if k >= 2 {
            (self.weights[0] * f64::from(self.open)
                + (0..k - 1).map(|j| self.weights[j + 1] * f64::from(self.intervals[j])).sum::<f64>())
                / norm
        } else {
            0.0
        };
        Some(history.max(with_open))
    }

    /// Loss-event rate 1/ŝ (0 before the first loss event).
    pub fn loss_rate(&self) -> f64 {
        match self.mean_interval() {
            Some(s) if s > 0.0 => (1.0 / s).min(1.0),
            _ => 0.0,
        }
    }

    /// Delivery ratio p = 1 − 1/ŝ. [PAPER §3.5]
    pub fn delivery_ratio(&self) -> f64 {
        1.0 - self.loss_rate()
    }
}

/// How the RTT estimator orders its two EWMA updates [AMBIG-4].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttOrder {
    /// RFC 6298: the deviation is measured against the *old* mean (paper profile).
    Rfc6298,
    /// The reference code: the mean first, then the deviation against the *new* mean.
    /// [CODE rcrtransport.c update_rtt_estimate]
    MeanFirst,
}

/// Smoothed RTT and mean deviation of one flow, in nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct RttEstimator {
    srtt: Option<u64>,
    rttvar: u64,
    alpha: f64,
    beta: f64,
    order: RttOrder,
}

impl RttEstimator {
    /// An estimator with gains `alpha` (mean) and `beta` (deviation).
    pub fn new(alpha: f64, beta: f64, order: RttOrder) -> RttEstimator {
        RttEstimator { srtt: None, rttvar: 0, alpha, beta, order }
    }

    /// Feed one sample. The first sample replaces the default with a zero deviation
    /// [AMBIG-5; CODE].
    pub fn sample(&mut self, sample: Duration) {
        let s = sample.as_nanos() as f64;
        let Some(old) = self.srtt else {
            self.srtt = Some(sample.as_nanos());
            self.rttvar = 0;
            return;
        };
        let old = old as f64;
        let var = self.rttvar as f64;
        let new = (1.0 - self.alpha) * old + self.alpha * s;
        let reference = match self.order {
            RttOrder::Rfc6298 => old,
            RttOrder::MeanFirst => new,
        };
        let new_var = (1.0 - self.beta) * var + self.beta * super::abs(s - reference);
        self.srtt = Some(new as u64);
        self.rttvar = new_var as u64;
    }

    /// True once a sample has been taken.
    pub fn has_sample(&self) -> bool {
        self.srtt.is_some()
    }

    /// Smoothed RTT, or `None` before the first sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt.map(Duration)
    }

    /// Mean deviation.
    pub fn rttvar(&self) -> Duration {
        Duration(self.rttvar)
    }

    /// Smoothed RTT, or `default` before the first sample.
    pub fn rtt_or(&self, default: Duration) -> Duration {
        self.srtt().unwrap_or(default)
    }

    /// RTO = srtt + `k`·rttvar + `extra`, or `default` before the first sample.
    /// [PAPER §3.7: k = 2, extra 0; CODE feedback_timeout: k = 4, extra 100 ms]
    pub fn rto(&self, k: u64, extra: Duration, default: Duration) -> Duration {
        match self.srtt {
            Some(srtt) => Duration(srtt) + Duration(self.rttvar).saturating_mul(k) + extra,
            None => default,
        }
    }
}

/// The (fid, send time) records of the newest feedback packets of one flow (spec §2.8).
#[derive(Clone, Debug)]
pub struct FidRing {
    slots: alloc::vec::Vec<Option<(u8, Instant)>>,
    next: usize,
}

impl FidRing {
    /// A ring of `len` slots (at least 1). [CODE rcrtransport.c: 5]
    pub fn new(len: usize) -> FidRing {
        FidRing { slots: alloc::vec![None; len.max(1)], next: 0 }
    }

    /// Record that feedback `fid` was sent at `at`, overwriting the oldest slot.
    pub fn record(&mut self, fid: u8, at: Instant) {
        let len = self.slots.len();
        self.slots[self.next] = Some((fid, at));
        self.next = (self.next + 1) % len;
    }

    /// When feedback `fid` was sent, if it is still recorded.
    pub fn sent_at(&self, fid: u8) -> Option<Instant> {
        if fid == 0 {
            return None;
        }
        self.slots.iter().flatten().find(|(f, _)| *f == fid).map(|(_, at)| *at)
    }

    /// Forget feedback `fid` (after an invalid sample). [CODE update_rtt_estimate]
    pub fn clear(&mut self, fid: u8) {
        for slot in self.slots.iter_mut() {
            if matches!(slot, Some((f, _)) if *f == fid) {
                *slot = None;
            }
        }
    }
}

/// Inputs of one congestion-level computation.
#[derive(Clone, Copy, Debug)]
pub struct LevelInput {
    /// Length of the flow's out-of-order list.
    pub ooo: usize,
    /// Length of the flow's missing list.
    pub missing: usize,
    /// Rate assigned to the flow, pkt/s.
    pub rate_pps: f64,
    /// The flow's smoothed RTT, if sampled.
    pub rtt: Option<Duration>,
    /// RTT to use before the first sample.
    pub default_rtt: Duration,
    /// Cap on the RTT in the normalisation. [CODE: 5 s]
    pub rtt_cap: Duration,
    /// Floor of the normalisation r_i·RTT_i. [CODE: 0.1]
    pub norm_floor: f64,
    /// Consecutive feedback-timer expiries with repair pending.
    pub timeouts: u32,
}

/// Which instantaneous congestion-level formula a sink uses (spec §2.10, D2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum LevelFormula {
    /// [`level_paper`]: |ooo| / (r_i·RTT_i). [PAPER §3.4]
    #[default]
    Paper,
    /// [`level_code`]: ((|ooo| − 1) + (|missing| − 1)) / (r_i·RTT_i) + timeouts.
    /// [CODE update_congestion_level]
    ReferenceCode,
}

/// Instantaneous congestion level, paper form: L_i / (r_i·RTT_i) with L_i = |ooo|.
/// [PAPER §3.4; CODE-FILL the 0.1 floor and the 5 s RTT cap; AMBIG-6 → r_i = assigned rate]
pub fn level_paper(input: &LevelInput) -> f64 {
    let rtt = input.rtt.unwrap_or(input.default_rtt).min(input.rtt_cap);
    let norm = (input.rate_pps * rtt.as_secs_f64()).max(input.norm_floor);
    input.ooo as f64 / norm
}

/// Instantaneous congestion level, reference-code form:
/// ((|ooo| − 1) + (|missing| − 1)) / max(0.1, min(RTT, 5 s)·r_i) + timeouts, with an unknown RTT
/// counted as 0. [CODE rcrtransport.c update_congestion_level: the lengths are signed `int`s, so
/// with |ooo| = 0 and one packet missing (e.g. a lost last packet exposed by the FIN) the
/// numerator is −1 and the level negative]
pub fn level_code(input: &LevelInput) -> f64 {
    let ll = if input.missing > 0 { input.ooo as f64 - 1.0 + input.missing as f64 - 1.0 } else { 0.0 };
    let rtt = input.rtt.unwrap_or(Duration::ZERO).min(input.rtt_cap);
    let norm = (input.rate_pps * rtt.as_secs_f64()).max(input.norm_floor);
    ll / norm + f64::from(input.timeouts)
}

/// M(t) = p / (2 − p). [PAPER §3.5]
pub fn decrease_factor(p: f64) -> f64 {
    let p = p.clamp(0.0, 1.0);
    p / (2.0 - p)
}

/// The reference code's decrease factor with its "skip once" normalisation and clamps; returns
/// (factor, new `p_last`). [CODE rcrtransport.c decrease_all_rate, spec §2.12.3]
pub fn decrease_factor_code(p: f64, p_last: f64) -> (f64, f64) {
    let normalised = if p < p_last && p_last > 0.0 { p / p_last } else { 1.0 };
    let mut factor = decrease_factor(normalised);
    if factor < 0.5 {
        factor = 0.5;
    }
    if factor > 0.98 {
        factor = 1.0;
    }
    (factor, normalised)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        super::super::abs(a - b) < 1e-3
    }

    /// Spec §10 test 1: 1–10 received, 11 lost, 12–25, 26–27 lost, 28.
    fn run(ali: &mut Ali, received: &[u32]) {
        let mut last = 0;
        for &seq in received {
            ali.on_advance(seq, last);
            last = last.max(seq);
        }
    }

    #[test]
    fn ali_paper_worked_example() {
        let mut ali = Ali::new(ALI_WEIGHTS, false);
        let first: std::vec::Vec<u32> = (1..=10).chain([12]).collect();
        run(&mut ali, &first);
        assert_eq!(ali.intervals(), &[11]);
        assert!(close(ali.loss_rate(), 1.0 / 11.0));
        let mut ali2 = ali.clone();
        let mut last = 12;
        for seq in (13..=25).chain([28]) {
            ali2.on_advance(seq, last);
            last = seq;
        }
        assert_eq!(ali2.intervals(), &[15, 11]);
        assert!(close(ali2.mean_interval().unwrap(), 13.0));
        assert!(close(ali2.loss_rate(), 0.0769));
        assert!(close(ali2.delivery_ratio(), 1.0 - 1.0 / 13.0));
        ali = ali2;
        assert_eq!(ali.events(), 2);
    }

    #[test]
    fn ali_code_worked_example() {
        let mut ali = Ali::new(ALI_WEIGHTS, true);
        let seqs: std::vec::Vec<u32> = (1..=10).chain(12..=25).chain([28]).collect();
        let mut last = 0;
        for &seq in &seqs {
            ali.on_advance(seq, last);
            last = seq;
            if seq == 12 {
                assert_eq!(ali.intervals(), &[10]);
                assert!(close(ali.loss_rate(), 0.10));
            }
        }
        assert_eq!(ali.intervals(), &[15, 10]);
        assert!(close(ali.mean_interval().unwrap(), 12.5));
        assert!(close(ali.loss_rate(), 0.08));
    }

    #[test]
    fn ali_clamps_and_first_packet_loss() {
        // The very first packet received shows a loss: code says 2, paper floors 1 to 2.
        for clamps in [true, false] {
            let mut ali = Ali::new(ALI_WEIGHTS, clamps);
            ali.on_advance(2, 0);
            assert_eq!(ali.intervals(), &[2]);
            assert!(close(ali.delivery_ratio(), 0.5));
        }
        // Single lost packets between single received ones: every interval is 2.
        let mut paper = Ali::new(ALI_WEIGHTS, false);
        paper.on_advance(1, 0);
        paper.on_advance(3, 1); // gap {2}: 1 − 0 + 1 = 2
        paper.on_advance(100, 3); // gap {4..99}: 3 − 2 + 1 = 2
        paper.on_advance(200, 100); // gap {101..199}: 100 − 99 + 1 = 2
        assert_eq!(paper.intervals(), &[2, 2, 2]);
        // Later intervals clamp to [2, 20] in the code profile only.
        let mut code = Ali::new(ALI_WEIGHTS, true);
        let mut paper = Ali::new(ALI_WEIGHTS, false);
        for ali in [&mut code, &mut paper] {
            let mut last = 0;
            for seq in (1..=50).chain([52]).chain(53..=90).chain([92]) {
                ali.on_advance(seq, last);
                last = seq;
            }
        }
        assert_eq!(paper.intervals(), &[40, 51]); // 90 − 51 + 1, 50 − 0 + 1
        assert_eq!(code.intervals(), &[20, 10]);
        assert_eq!(Ali::new(ALI_WEIGHTS, false).delivery_ratio(), 1.0);
    }

    /// ŝ = max(ŝ(1,k), ŝ(0,k−1)): a long loss-free run since the last loss (the open interval
    /// s_0) raises ŝ once two events are recorded, never with one. Paper profile, 1 received,
    /// 2 lost, 3 received, 4 lost, 5..=30 received: intervals [2, 2] (1 − 0 + 1, 3 − 2 + 1),
    /// s_0 = 30 − 4 = 26, ŝ(1,2) = 2, ŝ(0,1) = (1·26 + 1·2) / 2 = 14.
    #[test]
    fn ali_open_interval_counts_from_the_second_event() {
        let mut ali = Ali::new(ALI_WEIGHTS, false);
        run(&mut ali, &[1, 3]);
        run_from(&mut ali, 3, 20);
        // One event (interval 2), s_0 = 20 − 2 = 18: the open interval is not used yet.
        assert_eq!(ali.intervals(), &[2]);
        assert_eq!(ali.mean_interval(), Some(2.0));
        let mut ali = Ali::new(ALI_WEIGHTS, false);
        run(&mut ali, &[1, 3, 5]);
        assert_eq!(ali.intervals(), &[2, 2]);
        assert_eq!(ali.mean_interval(), Some(2.0), "s_0 = 1: the history decides");
        run_from(&mut ali, 5, 30);
        assert_eq!(ali.mean_interval(), Some(14.0));
        assert!(close(ali.delivery_ratio(), 1.0 - 1.0 / 14.0));
    }

    /// Feed `last + 1 ..= to` in order after `last`.
    fn run_from(ali: &mut Ali, mut last: u32, to: u32) {
        for seq in last + 1..=to {
            ali.on_advance(seq, last);
            last = seq;
        }
    }

    #[test]
    fn ali_keeps_eight_newest() {
        // Runs of k + 2 packets, each followed by one loss: event j has interval j + 3.
        let mut ali = Ali::new(ALI_WEIGHTS, false);
        let (mut last, mut next) = (0, 1);
        for k in 0..12 {
            for _ in 0..k + 2 {
                ali.on_advance(next, last);
                last = next;
                next += 1;
            }
            next += 1;
        }
        ali.on_advance(next, last);
        assert_eq!(ali.events(), ALI_HISTORY);
        assert_eq!(ali.intervals(), &[14, 13, 12, 11, 10, 9, 8, 7]);
        // Σw = 6. ŝ(1,8) = (14 + 13 + 12 + 11 + 0.8·10 + 0.6·9 + 0.4·8 + 0.2·7) / 6 = 68 / 6;
        // s_0 = 1 here, so ŝ(0,7) = (1 + 14 + 13 + 12 + 0.8·11 + 0.6·10 + 0.4·9 + 0.2·8) / 6
        // = 60 / 6 is smaller. After 30 more packets s_0 = 31: ŝ(0,7) = 90 / 6 = 15 wins.
        assert!(close(ali.mean_interval().unwrap(), 68.0 / 6.0));
        run_from(&mut ali, next, next + 30);
        assert!(close(ali.mean_interval().unwrap(), 15.0));
    }

    #[test]
    fn rtt_orders_and_rto() {
        let ms = Duration::from_millis;
        let mut paper = RttEstimator::new(0.125, 0.25, RttOrder::Rfc6298);
        let mut code = RttEstimator::new(0.125, 0.25, RttOrder::MeanFirst);
        assert_eq!(paper.rto(2, Duration::ZERO, ms(5_000)), ms(5_000));
        for est in [&mut paper, &mut code] {
            est.sample(ms(1_000));
            assert_eq!(est.srtt(), Some(ms(1_000)));
            assert_eq!(est.rttvar(), Duration::ZERO);
            est.sample(ms(1_800));
            assert_eq!(est.srtt(), Some(ms(1_100)));
        }
        // RFC 6298: |1800 − 1000| / 4 = 200 ms; code: |1800 − 1100| / 4 = 175 ms.
        assert_eq!(paper.rttvar(), ms(200));
        assert_eq!(code.rttvar(), ms(175));
        assert_eq!(paper.rto(2, Duration::ZERO, ms(5_000)), ms(1_500));
        assert_eq!(code.rto(4, ms(100), ms(5_000)), ms(1_900));
    }

    #[test]
    fn fid_ring_keeps_newest() {
        let mut ring = FidRing::new(5);
        for fid in 1..=7u8 {
            ring.record(fid, Instant::from_millis(u64::from(fid) * 100));
        }
        assert_eq!(ring.sent_at(1), None);
        assert_eq!(ring.sent_at(2), None);
        assert_eq!(ring.sent_at(3), Some(Instant::from_millis(300)));
        assert_eq!(ring.sent_at(7), Some(Instant::from_millis(700)));
        ring.clear(7);
        assert_eq!(ring.sent_at(7), None);
        assert_eq!(ring.sent_at(0), None);
    }

    /// Spec §10 test 6: r = 0.8, rtt = 2500 ms, |missing| = 2, |ooo| = 5.
    #[test]
    fn congestion_level_worked_example() {
        let input = LevelInput {
            ooo: 5,
            missing: 2,
            rate_pps: 0.8,
            rtt: Some(Duration::from_millis(2_500)),
            default_rtt: Duration::from_secs(5),
            rtt_cap: Duration::from_secs(5),
            norm_floor: 0.1,
            timeouts: 0,
        };
        assert!(close(level_paper(&input), 2.5));
        let cl = level_code(&input);
        assert!(close(cl, 2.5));
        assert!(close(0.5 * cl + 0.5 * 1.0, 1.75));
        // Unknown RTT: the code counts it as 0 (norm floor 0.1), the paper uses 5 s.
        let unknown = LevelInput { rtt: None, ..input };
        assert!(close(level_code(&unknown), 50.0));
        assert!(close(level_paper(&unknown), 5.0 / 4.0));
        let timeouts = LevelInput { timeouts: 2, ..input };
        assert!(close(level_code(&timeouts), 4.5));
        // One packet missing and nothing held behind it (a lost last packet): the code's signed
        // lengths give (0 − 1) + (1 − 1) = −1 packets, i.e. −1/(r·RTT) = −0.5, plus timeouts.
        let lone = LevelInput { ooo: 0, missing: 1, timeouts: 1, ..input };
        assert!(close(level_code(&lone), 0.5));
        assert!(close(level_code(&LevelInput { timeouts: 0, ..lone }), -0.5));
        // An RTT above the 5-s cap counts as 5 s in both forms: 5 / (0.8 · 5).
        let long = LevelInput { rtt: Some(Duration::from_secs(10)), ..input };
        assert!(close(level_paper(&long), 1.25));
        assert!(close(level_code(&long), 1.25));
    }

    /// Spec §10 tests 2 and 3.
    #[test]
    fn decrease_factors() {
        assert!(close(decrease_factor(0.9), 0.818));
        assert!(close(decrease_factor(0.95), 0.905));
        assert!(close(decrease_factor(0.8), 0.667));
        assert!(close(decrease_factor(0.5), 1.0 / 3.0));
        assert_eq!(decrease_factor_code(0.5, 1.0).0, 0.5);
        assert_eq!(decrease_factor_code(0.995, 1.0).0, 1.0);
        assert!(close(decrease_factor(0.995), 0.990));
        // The dead zone starts just above 0.98: M(0.99) = 0.9802 is no cut, M(0.98) = 0.9608 is.
        assert_eq!(decrease_factor_code(0.99, 1.0).0, 1.0);
        assert!(close(decrease_factor_code(0.98, 1.0).0, 0.961));
        // Constant p = 0.9 from R = 40: cut, skip, cut.
        let mut r = 40.0;
        let mut p_last = 1.0;
        let mut trace = std::vec::Vec::new();
        for _ in 0..4 {
            let (m, p) = decrease_factor_code(0.9, p_last);
            p_last = p;
            r *= m;
            trace.push(r);
        }
        assert!(close(trace[0], 32.727));
        assert!(close(trace[1], 32.727));
        assert!(close(trace[2], 26.777));
        assert!(close(trace[3], 26.777));
    }
}
