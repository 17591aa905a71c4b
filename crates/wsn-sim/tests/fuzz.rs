//! Whole-simulator property tests on random small networks.
//!
//! Each case draws a network (6–16 nodes placed at random, one or two sinks, a MAC preset with
//! or without link retransmissions, in 40 % of the cases one node's radio off for 1–15 minutes,
//! in 30 % TinyOS 1.x's ACK-protection backoff rule on)
//! under dynamic MultiHopLQI routing, a protocol configuration and one to three groups of flows
//! with random rates, demands, counts, payloads, start and stop times, and runs it for 10–25
//! simulated minutes.
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
use proptest::test_runner::TestCaseError;

/// 12 cases by default; `PROPTEST_CASES` for more. A failing case is a whole simulation:
/// shrinking it further rarely helps read it.
fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(12),
        max_shrink_iters: 64,
        ..ProptestConfig::default()
    }
}

/// Run a scenario; the network's invariants must hold and no flow delivers more than it
/// originated.
fn run_checked(text: &str) -> Result<wsn_sim::runner::RunResult, TestCaseError> {
    let r = go(&scenario(text, &[]));
    let s = &r.summary;
    // Phantom, duplicate and out-of-order deliveries, queue overflows and send_done mismatches
    // are all counted there (a delivery is counted once per originated, unrefused number, so
    // `delivered <= originated` holds by construction and is not asserted).
    prop_assert_eq!(&s.totals.invariant_violations, &Default::default(), "{}", text);
    Ok(r)
}

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

/// The network of a case: nodes placed at random, one or two sinks (node 0 and the last).
#[derive(Clone, Debug)]
struct Net {
    nodes: u16,
    width_m: f64,
    height_m: f64,
    two_sinks: bool,
    preset: &'static str,
    duration_s: f64,
    seed: u64,
    /// A radio outage: (node, from, length), in seconds.
    outage: Option<(u16, f64, f64)>,
    /// TinyOS 1.x's ACK-protection rule on (`mac.ack_protection_ns`, 75 jiffies).
    ack_protection: bool,
    /// Forwarders drop copies they already accepted (`routing.hop_dedup`; off: only the
    /// destination does, as in Tenet).
    hop_dedup: bool,
}

impl Net {
    /// The scenario up to its `[protocol]` table, which `protocol` (TOML lines) fills.
    fn toml(&self, name: &str, protocol: &str) -> String {
        let sinks = if self.two_sinks { format!("[0, {}]", self.nodes - 1) } else { "[0]".to_string() };
        format!(
            r#"
name = "{name}"
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
ack_protection_ns = {ack_protection_ns}
[routing]
kind = "mhlqi"
hop_dedup = {hop_dedup}
[protocol]
{protocol}
[output]
plots = false
{outage}"#,
            seed = self.seed,
            duration = self.duration_s,
            nodes = self.nodes,
            w = self.width_m,
            h = self.height_m,
            preset = self.preset,
            ack_protection_ns = if self.ack_protection { 2_288_818 } else { 0 },
            hop_dedup = self.hop_dedup,
            outage = match self.outage {
                Some((node, from, len)) => {
                    format!("[[outages]]\nnodes = {node}\nfrom_s = {from}\nto_s = {}\n", from + len)
                }
                None => String::new(),
            },
        )
    }

    /// The sink of group `g` and its sources that are not sinks and that `keep` accepts.
    fn group(&self, g: &FlowGroup, mut keep: impl FnMut(u16, u16) -> bool) -> (u16, Vec<u16>) {
        let sink = if g.to_second_sink && self.two_sinks { self.nodes - 1 } else { 0 };
        let is_sink = |s: u16| s == 0 || (self.two_sinks && s == self.nodes - 1);
        (sink, g.sources.iter().copied().filter(|&s| !is_sink(s) && keep(s, sink)).collect())
    }
}

/// `[[flows]]` table of one group.
fn flows_toml(g: &FlowGroup, sources: &[u16], sink: u16, payload: usize, rate_count: Option<(f64, f64)>) -> String {
    let mut text = format!(
        "[[flows]]\nsources = {sources:?}\nsink = {sink}\nstart_s = {}\npayload_bytes = {payload}\n",
        g.start_s
    );
    if let Some((rate, demand)) = rate_count {
        text.push_str(&format!("rate_pps = {rate}\ndemand_pps = {demand}\ncount = {}\n", g.count));
    }
    if let Some(after) = g.stop_after_s {
        text.push_str(&format!("stop_s = {}\n", g.start_s + after));
    }
    text
}

fn net(presets: &'static [&'static str]) -> impl Strategy<Value = Net> {
    (
        6..=16u16,
        8.0..40.0f64,
        8.0..40.0f64,
        any::<bool>(),
        0..presets.len(),
        600.0..1500.0f64,
        any::<u64>(),
        // Long enough, often, for RCRT's paper-profile sink to release a silent flow (300 s).
        proptest::option::weighted(0.4, (0..16u16, 30.0..900.0f64, 60.0..900.0f64)),
        proptest::bool::weighted(0.3),
        proptest::bool::weighted(0.7),
    )
        .prop_map(
            move |(
                nodes,
                width_m,
                height_m,
                two_sinks,
                preset,
                duration_s,
                seed,
                outage,
                ack_protection,
                hop_dedup,
            )| Net {
                nodes,
                width_m,
                height_m,
                two_sinks,
                preset: presets[preset],
                duration_s,
                seed: seed % 1_000_000,
                outage: outage.map(|(node, from, len)| (node % nodes, from, len)),
                ack_protection,
                hop_dedup,
            },
        )
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

/// RCRT or the reliable baseline on a random network.
#[derive(Clone, Debug)]
struct Case {
    net: Net,
    reliable: bool,
    profile: &'static str,
    policy: &'static str,
    buffer_packets: usize,
    one_datagram_in_flight: bool,
    token_floor: i8,
    groups: Vec<FlowGroup>,
}

impl Case {
    fn toml(&self) -> String {
        let protocol = format!(
            "kind = \"{}\"\nprofile = \"{}\"\npolicy = \"{}\"\nbuffer_packets = {}\none_datagram_in_flight = {}\nslow_down_token_floor = {}",
            if self.reliable { "reliable" } else { "rcrt" },
            self.profile,
            self.policy,
            self.buffer_packets,
            self.one_datagram_in_flight,
            self.token_floor,
        );
        let mut text = self.net.toml("rcrt-fuzz", &protocol);
        // RCRT allows one connection per (source, sink): a source in two groups to one sink
        // keeps only the first.
        let mut pairs = std::collections::BTreeSet::new();
        for g in &self.groups {
            let (sink, sources) = self.net.group(g, |s, sink| pairs.insert((s, sink)));
            if sources.is_empty() {
                continue;
            }
            // The reliable baseline paces every flow at its demand: offer exactly that.
            let rate = if self.reliable { g.demand_pps } else { g.rate_pps };
            text.push_str(&flows_toml(g, &sources, sink, g.payload_bytes, Some((rate, g.demand_pps))));
        }
        text
    }
}

fn case() -> impl Strategy<Value = Case> {
    net(&["tinyos1_tenet", "tinyos2", "noack"]).prop_flat_map(|net| {
        let nodes = net.nodes;
        (
            Just(net),
            proptest::bool::weighted(0.25),
            prop_oneof![Just("paper"), Just("reference_code")],
            prop_oneof![
                Just("fair"),
                Just("demand_limited"),
                Just("demand_proportional"),
                Just("weighted"),
                Just("fair_goodput")
            ],
            (2..=50usize, any::<bool>(), prop_oneof![Just(i8::MIN), Just(-1i8), Just(0i8)]),
            proptest::collection::vec(group(nodes), 1..=3),
        )
            .prop_map(
                |(net, reliable, profile, policy, (buffer_packets, one_datagram_in_flight, token_floor), groups)| {
                    Case { net, reliable, profile, policy, buffer_packets, one_datagram_in_flight, token_floor, groups }
                },
            )
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn rcrt_through_the_simulator_keeps_every_invariant(c in case()) {
        let text = c.toml();
        let r = run_checked(&text)?;
        let s = &r.summary;
        for (f, nf) in s.flows.iter().zip(r.network.flows()) {
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

/// IFRC or fixed-rate best effort on a random network: the network's own invariants (no
/// duplicate or phantom delivery, queues within their bound, one `send_done` per accepted
/// frame) hold whatever the protocol, preset, routing changes and flows.
#[derive(Clone, Debug)]
struct HopCase {
    net: Net,
    ifrc: bool,
    profile: &'static str,
    sharing: &'static str,
    groups: Vec<FlowGroup>,
}

impl HopCase {
    fn toml(&self) -> String {
        let protocol = if self.ifrc {
            format!("kind = \"ifrc\"\nprofile = \"{}\"\nsharing = \"{}\"", self.profile, self.sharing)
        } else {
            "kind = \"best_effort\"".to_string()
        };
        let mut text = self.net.toml("hop-fuzz", &protocol);
        // IFRC: a node belongs to one base station's tree and sends one flow.
        let mut used = std::collections::BTreeSet::new();
        for g in &self.groups {
            let (sink, sources) = self.net.group(g, |s, _| !self.ifrc || used.insert(s));
            if sources.is_empty() {
                continue;
            }
            // ifrc2006 carries 32-byte frames: the headers alone fill them; elsewhere the IFRC
            // header takes 12 bytes of the frame.
            let payload = match (self.net.preset, self.ifrc) {
                ("ifrc2006", _) => 0,
                (_, true) => g.payload_bytes.min(40),
                _ => g.payload_bytes,
            };
            // IFRC sets the rates itself; best effort sends at a fixed rate.
            let rate = (!self.ifrc).then_some((g.rate_pps, g.rate_pps));
            text.push_str(&flows_toml(g, &sources, sink, payload, rate));
        }
        text
    }
}

fn hop_case() -> impl Strategy<Value = HopCase> {
    net(&["ifrc2006", "tinyos1_tenet", "tinyos2", "noack"]).prop_flat_map(|net| {
        let nodes = net.nodes;
        (
            Just(net),
            any::<bool>(),
            prop_oneof![Just("paper"), Just("reference_code")],
            prop_oneof![Just("crossing"), Just("pinned")],
            proptest::collection::vec(group(nodes), 1..=3),
        )
            .prop_map(|(net, ifrc, profile, sharing, groups)| HopCase { net, ifrc, profile, sharing, groups })
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn ifrc_and_best_effort_through_the_simulator_keep_every_invariant(c in hop_case()) {
        run_checked(&c.toml())?;
    }
}
