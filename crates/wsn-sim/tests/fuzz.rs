//! Whole-simulator property tests on random small networks.
//!
//! Each case draws a network (6–16 nodes placed at random, one or two sinks, a MAC preset with
//! or without link retransmissions) under dynamic MultiHopLQI routing, a protocol configuration
//! and one to three groups of flows with random rates, demands, counts, payloads, start and stop
//! times, and runs it for 10–25 simulated minutes.
//!
//! - RCRT and the reliable baseline (profile, policy, buffer, the mote's one-datagram rule, the
//!   slow-down token floor): no duplicate, phantom or out-of-order delivery, no queue above its
//!   bound, one `send_done` per accepted frame; every flow whose connection closed delivered
//!   everything it originated; every datagram a sink built reached its node's queue. The
//!   property test in `wsn-proto/src/rcrt/tests.rs` checks the endpoints over an abstract lossy
//!   link; this one checks them through the driver, the forwarder, routing changes and the MAC.
//! - IFRC (profile, sharing rule) and fixed-rate best effort: the network's invariants.
//!
//! 12 cases each by default (from the fixed seed of `.cargo/config.toml`); `PROPTEST_CASES=n`
//! and another `PROPTEST_RNG_SEED` for a longer hunt (session 12: more than 30,000 cases of
//! each passed).

mod common;
use common::*;
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct FlowGroup {
    sources: Vec<u16>,
    to_second_sink: bool,
    rate_pps: f64,
    demand_pps: f64,
    count: u32,
    start_s: f64,
    stop_after_s: Option<f64>,
    payload_bytes: usize,
}

#[derive(Clone, Debug)]
struct Case {
    nodes: u16,
    width_m: f64,
    height_m: f64,
    two_sinks: bool,
    preset: &'static str,
    reliable: bool,
    profile: &'static str,
    policy: &'static str,
    buffer_packets: usize,
    one_datagram_in_flight: bool,
    token_floor: i8,
    groups: Vec<FlowGroup>,
    duration_s: f64,
    seed: u64,
}

impl Case {
    fn toml(&self) -> String {
        let sinks = if self.two_sinks { format!("[0, {}]", self.nodes - 1) } else { "[0]".to_string() };
        let kind = if self.reliable { "reliable" } else { "rcrt" };
        let mut text = format!(
            r#"
name = "rcrt-fuzz"
seed = {seed}
duration_s = {duration}
[topology]
sinks = {sinks}
seed = {seed}
layout = {{ kind = "random", nodes = {nodes}, width_m = {w}, height_m = {h} }}
[radio.link]
tx_power_dbm = -8.0
path_loss_exponent = 3.0
shadowing_sigma_db = 4.0
pl_d0_db = 55.0
d0_m = 1.0
noise_floor_dbm = -98.0
[radio.noise]
model = "replay"
trace = "data/noise/casino-lab.txt"
[mac]
preset = "{preset}"
[routing]
kind = "mhlqi"
[protocol]
kind = "{kind}"
profile = "{profile}"
policy = "{policy}"
buffer_packets = {buffer}
one_datagram_in_flight = {one}
slow_down_token_floor = {floor}
[output]
plots = false
"#,
            seed = self.seed,
            duration = self.duration_s,
            nodes = self.nodes,
            w = self.width_m,
            h = self.height_m,
            preset = self.preset,
            profile = self.profile,
            policy = self.policy,
            buffer = self.buffer_packets,
            one = self.one_datagram_in_flight,
            floor = self.token_floor,
        );
        // RCRT allows one connection per (source, sink): a source in two groups to one sink
        // keeps only the first.
        let mut pairs = std::collections::BTreeSet::new();
        for g in &self.groups {
            let sink = if g.to_second_sink && self.two_sinks { self.nodes - 1 } else { 0 };
            let is_sink = |s: u16| s == 0 || (self.two_sinks && s == self.nodes - 1);
            let sources: Vec<u16> =
                g.sources.iter().copied().filter(|&s| !is_sink(s) && pairs.insert((s, sink))).collect();
            if sources.is_empty() {
                continue;
            }
            // The reliable baseline paces every flow at its demand: offer exactly that.
            let (rate, demand) = if self.reliable { (g.demand_pps, g.demand_pps) } else { (g.rate_pps, g.demand_pps) };
            text.push_str(&format!(
                "[[flows]]\nsources = {sources:?}\nsink = {sink}\nrate_pps = {rate}\ndemand_pps = {demand}\ncount = {}\nstart_s = {}\npayload_bytes = {}\n",
                g.count, g.start_s, g.payload_bytes
            ));
            if let Some(after) = g.stop_after_s {
                text.push_str(&format!("stop_s = {}\n", g.start_s + after));
            }
        }
        text
    }
}

fn group(nodes: u16) -> impl Strategy<Value = FlowGroup> {
    (
        proptest::collection::btree_set(1..nodes, 1..=4),
        any::<bool>(),
        0.2..8.0f64,
        0.1..4.0f64,
        1..=80u32,
        30.0..400.0f64,
        proptest::option::weighted(0.3, 30.0..600.0f64),
        6..=64usize,
    )
        .prop_map(
            |(sources, to_second_sink, rate_pps, demand_pps, count, start_s, stop_after_s, payload_bytes)| FlowGroup {
                sources: sources.into_iter().collect(),
                to_second_sink,
                rate_pps,
                demand_pps,
                count,
                start_s,
                stop_after_s,
                payload_bytes,
            },
        )
}

fn case() -> impl Strategy<Value = Case> {
    (6..=16u16).prop_flat_map(|nodes| {
        (
            (Just(nodes), 8.0..40.0f64, 8.0..40.0f64, any::<bool>()),
            (
                prop_oneof![Just("tinyos1_tenet"), Just("tinyos2"), Just("noack")],
                proptest::bool::weighted(0.25),
                prop_oneof![Just("paper"), Just("reference_code")],
                prop_oneof![
                    Just("fair"),
                    Just("demand_limited"),
                    Just("demand_proportional"),
                    Just("weighted"),
                    Just("fair_goodput")
                ],
            ),
            (2..=50usize, any::<bool>(), prop_oneof![Just(i8::MIN), Just(-1i8), Just(0i8)]),
            (proptest::collection::vec(group(nodes), 1..=3), 600.0..1500.0f64, any::<u64>()),
        )
            .prop_map(
                |(
                    (nodes, width_m, height_m, two_sinks),
                    (preset, reliable, profile, policy),
                    (buffer_packets, one_datagram_in_flight, token_floor),
                    (groups, duration_s, seed),
                )| Case {
                    nodes,
                    width_m,
                    height_m,
                    two_sinks,
                    preset,
                    reliable,
                    profile,
                    policy,
                    buffer_packets,
                    one_datagram_in_flight,
                    token_floor,
                    groups,
                    duration_s,
                    seed: seed % 1_000_000,
                },
            )
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12),
        // A failing case is a whole simulation; shrinking it further rarely helps read it.
        max_shrink_iters: 64,
        ..ProptestConfig::default()
    })]

    #[test]
    fn rcrt_through_the_simulator_keeps_every_invariant(c in case()) {
        let text = c.toml();
        let sc = scenario(&text, &[]);
        let r = go(&sc);
        let s = &r.summary;
        prop_assert_eq!(&s.totals.invariant_violations, &Default::default(), "{}", text);
        for (f, nf) in s.flows.iter().zip(r.network.flows()) {
            prop_assert!(f.delivered <= f.originated, "flow {}: {:?}\n{}", f.id, f, text);
            if nf.rcrt.closed_s.is_some() {
                prop_assert_eq!(f.in_order_exactly_once, Some(true), "flow {} closed incomplete: {:?}\n{}", f.id, f, text);
            }
        }
        for &sink in r.network.sinks() {
            if let (Some(k), Some((queued, waiting))) = (r.network.rcrt_sink(sink), r.network.rcrt_sink_datagrams(sink)) {
                let st = k.stats();
                let built = st.feedback_sent + st.syn_acks_sent + st.syn_nacks_sent + st.fin_acks_sent;
                prop_assert_eq!(queued + u64::from(waiting), built, "sink {:?}\n{}", sink, text);
            }
        }
    }
}

/// IFRC or fixed-rate best effort on a random small network: the network's own invariants
/// (no duplicate or phantom delivery, queues within their bound, one `send_done` per accepted
/// frame) hold whatever the protocol, preset, routing changes and flows.
#[derive(Clone, Debug)]
struct HopCase {
    nodes: u16,
    width_m: f64,
    height_m: f64,
    two_sinks: bool,
    preset: &'static str,
    ifrc: bool,
    profile: &'static str,
    sharing: &'static str,
    groups: Vec<FlowGroup>,
    duration_s: f64,
    seed: u64,
}

impl HopCase {
    fn toml(&self) -> String {
        let sinks = if self.two_sinks { format!("[0, {}]", self.nodes - 1) } else { "[0]".to_string() };
        let protocol = if self.ifrc {
            format!("kind = \"ifrc\"\nprofile = \"{}\"\nsharing = \"{}\"", self.profile, self.sharing)
        } else {
            "kind = \"best_effort\"".to_string()
        };
        let mut text = format!(
            r#"
name = "hop-fuzz"
seed = {seed}
duration_s = {duration}
[topology]
sinks = {sinks}
seed = {seed}
layout = {{ kind = "random", nodes = {nodes}, width_m = {w}, height_m = {h} }}
[radio.link]
tx_power_dbm = -8.0
path_loss_exponent = 3.0
shadowing_sigma_db = 4.0
[radio.noise]
model = "replay"
trace = "data/noise/casino-lab.txt"
[mac]
preset = "{preset}"
[routing]
kind = "mhlqi"
[protocol]
{protocol}
[output]
plots = false
"#,
            seed = self.seed,
            duration = self.duration_s,
            nodes = self.nodes,
            w = self.width_m,
            h = self.height_m,
            preset = self.preset,
        );
        let mut used = std::collections::BTreeSet::new();
        for g in &self.groups {
            let sink = if g.to_second_sink && self.two_sinks { self.nodes - 1 } else { 0 };
            let is_sink = |s: u16| s == 0 || (self.two_sinks && s == self.nodes - 1);
            // IFRC: a node belongs to one base station's tree and sends one flow.
            let sources: Vec<u16> =
                g.sources.iter().copied().filter(|&s| !is_sink(s) && (!self.ifrc || used.insert(s))).collect();
            if sources.is_empty() {
                continue;
            }
            // ifrc2006 carries 32-byte frames: the headers alone fill them; elsewhere the IFRC
            // header takes 12 bytes of the frame.
            let payload = match (self.preset, self.ifrc) {
                ("ifrc2006", _) => 0,
                (_, true) => g.payload_bytes.min(40),
                _ => g.payload_bytes,
            };
            text.push_str(&format!(
                "[[flows]]\nsources = {sources:?}\nsink = {sink}\nstart_s = {}\npayload_bytes = {payload}\n",
                g.start_s
            ));
            if !self.ifrc {
                text.push_str(&format!("rate_pps = {}\ncount = {}\n", g.rate_pps, g.count));
            }
            if let Some(after) = g.stop_after_s {
                text.push_str(&format!("stop_s = {}\n", g.start_s + after));
            }
        }
        text
    }
}

fn hop_case() -> impl Strategy<Value = HopCase> {
    (6..=16u16).prop_flat_map(|nodes| {
        (
            (Just(nodes), 8.0..40.0f64, 8.0..40.0f64, any::<bool>()),
            (
                prop_oneof![Just("ifrc2006"), Just("tinyos1_tenet"), Just("tinyos2"), Just("noack")],
                any::<bool>(),
                prop_oneof![Just("paper"), Just("reference_code")],
                prop_oneof![Just("crossing"), Just("pinned")],
            ),
            (proptest::collection::vec(group(nodes), 1..=3), 600.0..1500.0f64, any::<u64>()),
        )
            .prop_map(
                |(
                    (nodes, width_m, height_m, two_sinks),
                    (preset, ifrc, profile, sharing),
                    (groups, duration_s, seed),
                )| HopCase {
                    nodes,
                    width_m,
                    height_m,
                    two_sinks,
                    preset,
                    ifrc,
                    profile,
                    sharing,
                    groups,
                    duration_s,
                    seed: seed % 1_000_000,
                },
            )
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12),
        max_shrink_iters: 64,
        ..ProptestConfig::default()
    })]

    #[test]
    fn ifrc_and_best_effort_through_the_simulator_keep_every_invariant(c in hop_case()) {
        let text = c.toml();
        let r = go(&scenario(&text, &[]));
        let s = &r.summary;
        prop_assert_eq!(&s.totals.invariant_violations, &Default::default(), "{}", text);
        for f in &s.flows {
            prop_assert!(f.delivered <= f.originated, "flow {}: {:?}\n{}", f.id, f, text);
        }
    }
}
