//! Rate-allocation policies: how the sink splits the total rate R among its flows
//! [PAPER §3.6; spec §2.15].
//!
//! A policy is a pure function of R and the flows' demands, weights, goodputs and current rates.
//! Policies live only at the sink, so changing one needs no change at the sources
//! [PAPER §3.6]; adding one is adding a type that implements [`Policy`], in this module or in
//! any other crate: the trait and [`FlowDemand`] are public, and the sink takes any
//! `Box<dyn Policy>` ([`Sink::new`](super::Sink::new), [`Sink::set_policy`](super::Sink::set_policy)).
//!
//! ```
//! use wsn_proto::rcrt::{Fair, FlowDemand, Policy, Sink, SinkConfig};
//! use wsn_proto::NodeId;
//!
//! /// Max-min with a per-flow cap: r_i = min(R/N, cap).
//! struct CappedFair {
//!     cap_pps: f64,
//! }
//!
//! impl Policy for CappedFair {
//!     fn name(&self) -> &'static str {
//!         "capped-fair"
//!     }
//!     fn allocate(&self, total_pps: f64, flows: &[FlowDemand]) -> Vec<f64> {
//!         Fair.allocate(total_pps, flows).into_iter().map(|r| r.min(self.cap_pps)).collect()
//!     }
//! }
//!
//! let sink = Sink::new(NodeId(0), SinkConfig::paper(), Box::new(CappedFair { cap_pps: 0.3 }));
//! assert_eq!(sink.policy_name(), "capped-fair");
//! ```
//!
//! `crates/wsn-proto/tests/newuser32.rs` drives this policy through a sans-IO exchange (SYNs
//! in, SYN-ACKs out) and checks the rates. A scenario file names its policy by a string, and
//! the simulator's name table (`POLICY_NAMES` and `policy_by_name` in
//! `crates/wsn-sim/src/endpoints.rs`) is closed: to select a new type for a `wsn run`, add it
//! there, one line in each (see docs/extending.md).

use alloc::vec;
use alloc::vec::Vec;

use crate::NodeId;

/// What a policy knows about one flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowDemand {
    /// The flow's source.
    pub source: NodeId,
    /// Desired rate d_i from the SYN (the sink's default when unstated), pkt/s.
    pub demand_pps: f64,
    /// Weight w_i configured at the sink (default 1). [PAPER §3.6 weighted policy]
    pub weight: f64,
    /// Cumulative goodput Rcumm = (packets − 1) / (time since the first packet), 0 while ≤ 5
    /// packets have arrived, pkt/s. [CODE connectionlist.c]
    pub goodput_pps: f64,
    /// The rate currently assigned, pkt/s (a new flow starts at min(d_i, 0.5)). Needed by
    /// [`FairGoodput`], which distributes only the increment of R.
    pub current_pps: f64,
}

/// A rate-allocation policy.
///
/// The sink calls [`Policy::allocate`] when a flow joins, when R increases or decreases, when a
/// weight changes and at [`Sink::set_policy`](super::Sink::set_policy); not when a flow leaves
/// (R loses the leaving flow's r_i and the others keep theirs until the next call, AMBIG-13).
/// What the sink does with the result:
/// - a result whose length differs from `flows` is replaced by the [`Fair`] split;
/// - a rate that is not finite and > 0 becomes the floor
///   [`SinkConfig::min_rate_per_flow_pps`](super::SinkConfig::min_rate_per_flow_pps);
/// - in the reference-code profile rates are quantised to whole-millisecond intervals, and
///   every rate goes to the source in the wire's 16-bit rate code ([`wsn_wire::rcrt::Rate`]);
/// - the rates need not add up to R. AIMD acts on R, not on Σ r_i, so a policy that hands out
///   less than R (a cap, say) lets R keep growing (up to D = Σ d_i when
///   [`Policy::caps_at_demand`]), and after a congestion cut the flows' rates fall only once the
///   policy's result falls.
pub trait Policy: Send {
    /// Short name, shown by [`Sink::policy_name`](super::Sink::policy_name) and in debug
    /// output (e.g. `"demand-limited"`). It is not the name a scenario file uses
    /// (`demand_limited`; the simulator maps those). The sink itself compares it with
    /// `"demand-limited"` (AMBIG-26: under the reference-code profile a leave keeps D), so a new
    /// policy needs a name of its own.
    fn name(&self) -> &'static str;

    /// Split `total_pps` (R, pkt/s) among `flows` (in the sink's order, by source id); returns
    /// one rate per flow, in order, pkt/s.
    fn allocate(&self, total_pps: f64, flows: &[FlowDemand]) -> Vec<f64>;

    /// Whether the sink keeps R ≤ D = Σ d_i under this policy (applied at increases, leaves
    /// and [`Sink::set_policy`](super::Sink::set_policy)). [CODE-FILL for every policy but
    /// the weighted one, AMBIG-11/12]
    fn caps_at_demand(&self) -> bool {
        true
    }
}

/// Fair: r_i = R/N, demands ignored. [PAPER §3.6; CODE `allocate_R_over_N`, policy id 3]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fair;

/// Demand-limited: max-min water-filling, no flow above its demand.
/// [PAPER §3.6 "simple greedy algorithm"; CODE `distribute_R`, policy id 2]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DemandLimited;

/// Demand-proportional: r_i = ρ·d_i with ρ = R/D. [PAPER §3.6; CODE `allocate_rate_by_rho`,
/// policy id 1, the code's default]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DemandProportional;

/// Weighted: r_i = R·w_i / Σ w_j, no demand ceiling. [PAPER §3.6, described, not
/// experimented with; AMBIG-12 → no R ≤ D cap]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Weighted;

/// Fair-goodput: an increase of R goes to the flows whose goodput lags their demand, in
/// proportion to the lag; a decrease is demand-proportional. [CODE `append_dR_by_goodput`,
/// policy id 4; not in the paper]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FairGoodput;

impl Policy for Fair {
    fn name(&self) -> &'static str {
        "fair"
    }

    fn allocate(&self, total_pps: f64, flows: &[FlowDemand]) -> Vec<f64> {
        if flows.is_empty() {
            return Vec::new();
        }
        vec![total_pps / flows.len() as f64; flows.len()]
    }
}

impl Policy for DemandLimited {
    fn name(&self) -> &'static str {
        "demand-limited"
    }

    fn allocate(&self, total_pps: f64, flows: &[FlowDemand]) -> Vec<f64> {
        let mut rates: Vec<Option<f64>> = vec![None; flows.len()];
        let mut left = total_pps;
        let mut unallocated = flows.len();
        // Passes: fix every flow whose demand fits under the current average share; the
        // average is not recomputed inside a pass (each removal only raises it). [CODE]
        while unallocated > 0 {
            let share = left / unallocated as f64;
            let mut fixed = false;
            for (rate, flow) in rates.iter_mut().zip(flows) {
                if rate.is_none() && flow.demand_pps <= share {
                    *rate = Some(flow.demand_pps);
                    left -= flow.demand_pps;
                    unallocated -= 1;
                    fixed = true;
                }
            }
            if !fixed {
                break;
            }
        }
        let share = if unallocated > 0 { left / unallocated as f64 } else { 0.0 };
        rates.into_iter().map(|r| r.unwrap_or(share)).collect()
    }
}

impl Policy for DemandProportional {
    fn name(&self) -> &'static str {
        "demand-proportional"
    }

    fn allocate(&self, total_pps: f64, flows: &[FlowDemand]) -> Vec<f64> {
        let rho = rho(total_pps, flows);
        flows.iter().map(|f| rho * f.demand_pps).collect()
    }
}

impl Policy for Weighted {
    fn name(&self) -> &'static str {
        "weighted"
    }

    fn allocate(&self, total_pps: f64, flows: &[FlowDemand]) -> Vec<f64> {
        // A weight that is not a finite number ≥ 0 counts as 0; the weights are scaled by the
        // largest before summing, so that large ones cannot overflow the sum.
        let w = |f: &FlowDemand| if f.weight.is_finite() && f.weight > 0.0 { f.weight } else { 0.0 };
        let top = flows.iter().map(w).fold(0.0, f64::max);
        if top <= 0.0 {
            return Fair.allocate(total_pps, flows);
        }
        let sum: f64 = flows.iter().map(|f| w(f) / top).sum();
        flows.iter().map(|f| total_pps * (w(f) / top) / sum).collect()
    }

    fn caps_at_demand(&self) -> bool {
        false
    }
}

impl Policy for FairGoodput {
    fn name(&self) -> &'static str {
        "fair-goodput"
    }

    fn allocate(&self, total_pps: f64, flows: &[FlowDemand]) -> Vec<f64> {
        let current: f64 = flows.iter().map(|f| f.current_pps).sum();
        if total_pps <= current {
            // A decrease (or no change): demand-proportional. [CODE]
            return DemandProportional.allocate(total_pps, flows);
        }
        let increment = total_pps - current;
        let deficit = |f: &FlowDemand| (f.demand_pps - f.goodput_pps).max(0.0);
        let total_deficit: f64 = flows.iter().map(deficit).sum();
        if total_deficit.is_nan() || total_deficit <= 0.0 {
            // Nobody lags: nothing changes. [CODE]
            return flows.iter().map(|f| f.current_pps).collect();
        }
        flows.iter().map(|f| f.current_pps + increment * deficit(f) / total_deficit).collect()
    }
}

/// ρ = R/D, or 1 when D = 0. [PAPER §3.6]
fn rho(total_pps: f64, flows: &[FlowDemand]) -> f64 {
    let demand: f64 = flows.iter().map(|f| f.demand_pps).sum();
    if demand > 0.0 {
        total_pps / demand
    } else {
        1.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flows(demands: &[f64]) -> Vec<FlowDemand> {
        demands
            .iter()
            .enumerate()
            .map(|(i, &d)| FlowDemand {
                source: NodeId(i as u16 + 1),
                demand_pps: d,
                weight: 1.0,
                goodput_pps: 0.0,
                current_pps: 0.0,
            })
            .collect()
    }

    #[track_caller]
    fn assert_rates(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(want) {
            assert!(super::super::abs(g - w) < 1e-3, "{got:?} != {want:?}");
        }
    }

    const DEMANDS: [f64; 4] = [0.5, 1.0, 2.0, 4.0];

    #[test]
    fn fair_splits_equally() {
        assert_rates(&Fair.allocate(3.0, &flows(&DEMANDS)), &[0.75; 4]);
        assert!(Fair.allocate(3.0, &[]).is_empty());
    }

    /// Spec §10 test 4: demands {0.5, 1, 2, 4}, R = 3 → {0.5, 0.833, 0.833, 0.833}.
    #[test]
    fn demand_limited_water_fills() {
        let f = flows(&DEMANDS);
        assert_rates(&DemandLimited.allocate(3.0, &f), &[0.5, 2.5 / 3.0, 2.5 / 3.0, 2.5 / 3.0]);
        // R = 6: 0.5 and 1 fit under 1.5; then (4.5) / 2 = 2.25 fits 2; 4 gets 2.5.
        assert_rates(&DemandLimited.allocate(6.0, &f), &[0.5, 1.0, 2.0, 2.5]);
        // R above D: everyone gets the demand.
        assert_rates(&DemandLimited.allocate(10.0, &f), &DEMANDS);
    }

    /// Spec §10 test 5: same demands, R = 3 → ρ = 0.4 → {0.2, 0.4, 0.8, 1.6}.
    #[test]
    fn demand_proportional_scales_demands() {
        assert_rates(&DemandProportional.allocate(3.0, &flows(&DEMANDS)), &[0.2, 0.4, 0.8, 1.6]);
    }

    #[test]
    fn weighted_ignores_demands() {
        let mut f = flows(&DEMANDS);
        for (flow, w) in f.iter_mut().zip([1.0, 1.0, 2.0, 4.0]) {
            flow.weight = w;
        }
        assert_rates(&Weighted.allocate(4.0, &f), &[0.5, 0.5, 1.0, 2.0]);
        assert!(!Weighted.caps_at_demand());
        for flow in f.iter_mut() {
            flow.weight = 0.0;
        }
        assert_rates(&Weighted.allocate(4.0, &f), &[1.0; 4]);
    }

    /// Current {0.2, 0.4, 0.8, 1.6} (Σ 3), goodput {0.2, 0.1, 0.8, 1.0}: deficits
    /// {0.3, 0.9, 1.2, 3.0} (Σ 5.4). R = 3.6 → +0.6 split 1:3:4:10.
    #[test]
    fn fair_goodput_gives_increase_to_lagging_flows() {
        let mut f = flows(&DEMANDS);
        for (flow, (cur, good)) in f.iter_mut().zip([(0.2, 0.2), (0.4, 0.1), (0.8, 0.8), (1.6, 1.0)]) {
            flow.current_pps = cur;
            flow.goodput_pps = good;
        }
        assert_rates(
            &FairGoodput.allocate(3.6, &f),
            &[0.2 + 0.6 / 18.0, 0.4 + 0.1, 0.8 + 0.6 * 4.0 / 18.0, 1.6 + 0.6 * 10.0 / 18.0],
        );
        // A decrease is demand-proportional: ρ = 1.5 / 7.5.
        assert_rates(&FairGoodput.allocate(1.5, &f), &[0.1, 0.2, 0.4, 0.8]);
        // Nobody lags: unchanged.
        for flow in f.iter_mut() {
            flow.goodput_pps = flow.demand_pps;
        }
        assert_rates(&FairGoodput.allocate(3.6, &f), &[0.2, 0.4, 0.8, 1.6]);
    }

    #[test]
    fn names_are_distinct() {
        let policies: [&dyn Policy; 5] = [&Fair, &DemandLimited, &DemandProportional, &Weighted, &FairGoodput];
        let mut names: Vec<&str> = policies.iter().map(|p| p.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), 5);
    }
}
