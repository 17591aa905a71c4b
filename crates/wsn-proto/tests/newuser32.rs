//! A rate-allocation policy written outside the crate plugs into the RCRT sink without any
//! change to it: the example of docs/extending.md ("Add an RCRT allocation policy").
//!
//! `CappedFair` is max-min with a per-flow cap: every flow gets the fair share R/N, but never
//! more than a fixed cap. The tests open real `Source`s against a `Sink` built with the policy
//! (a sans-IO exchange: SYN → SYN-ACK) and check the rates the sink assigns and the sources
//! learn.

use wsn_proto::rcrt::{Fair, FlowDemand, Policy, Sink, SinkConfig, SinkEvent, Source, SourceConfig};
use wsn_proto::time::Instant;
use wsn_proto::NodeId;

/// Max-min with a per-flow cap: r_i = min(R/N, cap).
struct CappedFair {
    cap_pps: f64,
}

impl Policy for CappedFair {
    fn name(&self) -> &'static str {
        "capped-fair"
    }

    fn allocate(&self, total_pps: f64, flows: &[FlowDemand]) -> Vec<f64> {
        Fair.allocate(total_pps, flows).into_iter().map(|r| r.min(self.cap_pps)).collect()
    }
}

const SINK: NodeId = NodeId(0);

/// Open one source per demand against `sink` at time 0, pass every SYN to the sink and every
/// SYN-ACK back; returns the sources.
fn open_all(sink: &mut Sink, demands: &[f64]) -> Vec<Source> {
    let now = Instant::from_millis(0);
    let mut sources: Vec<Source> = demands
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            let cfg = SourceConfig { nonce: i as u16 + 1, ..SourceConfig::paper() };
            let mut s = Source::new(NodeId(i as u16 + 1), SINK, cfg);
            s.open(now, d);
            s
        })
        .collect();
    for s in &mut sources {
        let syn = s.poll_transmit(now).expect("a SYN");
        sink.handle_datagram(now, s.node(), &syn);
    }
    while let Some((to, bytes)) = sink.poll_transmit(now) {
        let s = sources.iter_mut().find(|s| s.node() == to).expect("datagram for a known source");
        s.handle_datagram(now, &bytes);
    }
    sources
}

/// The last `Allocated` rate of every source, in source order.
fn allocated(sink: &mut Sink, n: usize) -> Vec<f64> {
    let mut last = vec![f64::NAN; n];
    while let Some(ev) = sink.poll_event() {
        if let SinkEvent::Allocated { source, rate_pps } = ev {
            last[source.0 as usize - 1] = rate_pps;
        }
    }
    last
}

#[track_caller]
fn assert_close(got: f64, want: f64) {
    // The wire's 16-bit rate code is within 2^-13 pkt/s of the rate here.
    assert!((got - want).abs() < 1e-3, "{got} != {want}");
}

/// Three flows with demand 4 pkt/s join in slow start: R = 3 × 0.5 (the join rate). Fair would
/// give 0.5 each; the cap of 0.3 holds every flow at 0.3, at the sink and at the sources.
#[test]
fn user_defined_policy_caps_the_fair_share() {
    let mut sink = Sink::new(SINK, SinkConfig::paper(), Box::new(CappedFair { cap_pps: 0.3 }));
    assert_eq!(sink.policy_name(), "capped-fair");
    let sources = open_all(&mut sink, &[4.0, 4.0, 4.0]);
    assert_close(sink.total_rate(), 1.5);
    for (s, rate) in sources.iter().zip(allocated(&mut sink, 3)) {
        assert_close(sink.flow_rate(s.node()).unwrap(), 0.3);
        assert_close(rate, 0.3);
        assert_close(s.rate(), 0.3);
    }
}

/// Below the cap the policy is the fair share; `set_policy` swaps a user policy in at run time
/// and re-allocates at once.
#[test]
fn user_defined_policy_below_cap_and_at_run_time() {
    let mut sink = Sink::new(SINK, SinkConfig::paper(), Box::new(Fair));
    let sources = open_all(&mut sink, &[4.0, 4.0]);
    let rates = allocated(&mut sink, 2);
    rates.iter().for_each(|&r| assert_close(r, 0.5));
    // A cap above the share changes nothing.
    sink.set_policy(Box::new(CappedFair { cap_pps: 0.8 }));
    for s in &sources {
        assert_close(sink.flow_rate(s.node()).unwrap(), 0.5);
    }
    // A cap below it applies at once.
    sink.set_policy(Box::new(CappedFair { cap_pps: 0.2 }));
    assert_eq!(sink.policy_name(), "capped-fair");
    for (s, rate) in sources.iter().zip(allocated(&mut sink, 2)) {
        assert_close(sink.flow_rate(s.node()).unwrap(), 0.2);
        assert_close(rate, 0.2);
    }
}
