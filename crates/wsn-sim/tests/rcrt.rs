//! RCRT on the simulated network: end-to-end reliability checked by the simulator.

mod common;
use common::*;

/// Every packet of every flow reaches the sink application exactly once and in order, through
/// route changes (MultiHopLQI changes parents hundreds of times per hour on office40), queue
/// overflows and link losses. Quick variant of the paper's baseline (100 packets per source).
#[test]
fn rcrt_delivers_every_packet_exactly_once_in_order_on_office40() {
    let r = go(&load("rcrt/baseline.toml", &["duration_s=2400", "flows.0.count=100", "output.plots=false"]));
    let s = &r.summary;
    assert!(s.routing.parent_changes_during_traffic > 0, "route changes must happen during the test");
    assert_eq!(s.totals.invariant_violations, Default::default());
    for f in &s.flows {
        assert_eq!(f.originated, 100, "flow {} did not hand all its packets to RCRT: {f:?}", f.id);
        assert_eq!(f.in_order_exactly_once, Some(true), "flow {}: {f:?}", f.id);
    }
    assert!(s.totals.feedback_packets.unwrap() > 0);
}

/// Flows that join late and leave early (different start and stop times) are served and
/// complete reliably; the others are unaffected.
#[test]
fn rcrt_joins_and_leaves() {
    let text = std::fs::read_to_string(scenarios().join("rcrt/baseline.toml")).unwrap();
    let text = text.replace(
        "[[flows]]\nsources = \"all\"",
        "[[flows]]\nsources = [5, 12, 20]\nrate_pps = 1.0\ncount = 200\nstart_s = 300.0\n\n[[flows]]\nsources = [30, 35]\nrate_pps = 1.0\ncount = 100\nstart_s = 900.0\n\n[[flows]]\nsources = [7]",
    );
    let r = go(&scenario(&text, &["duration_s=2400", "flows.2.count=100", "output.plots=false"]));
    assert_eq!(r.summary.flows.len(), 6);
    for f in &r.summary.flows {
        assert_eq!(f.in_order_exactly_once, Some(true), "flow {}: {f:?}", f.id);
    }
}

/// The reliable baseline (RCRT's recovery at a fixed rate) is reliable too at a light load.
#[test]
fn reliable_baseline_is_reliable_at_light_load() {
    let r = go(&load(
        "rcrt/baseline.toml",
        &["protocol.kind=\"reliable\"", "flows.0.rate_pps=0.2", "flows.0.demand_pps=0.2", "flows.0.count=60", "duration_s=1500", "output.plots=false"],
    ));
    assert_eq!(r.summary.protocol, "reliable_no_cc");
    for f in &r.summary.flows {
        assert_eq!(f.in_order_exactly_once, Some(true), "flow {}: {f:?}", f.id);
        // Paced at the offered load, never adapted: the last allocation equals the demand.
        assert!((f.last_rate_pps.unwrap_or(0.0) - 0.2).abs() < 0.01, "{f:?}");
    }
}
