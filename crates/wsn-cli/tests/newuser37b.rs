//! A new user trying RCRT's allocation policies on a small grid with two sinks, one node sourcing
//! a flow to each. Each test runs in about a second.

mod common;

use common::{wsn_ok, Scratch};
use std::path::Path;

/// A 3 × 3 grid at 5 m, sinks 0 and 8, RCRT from 10 s to 90 s: node 4 has a flow to each sink,
/// nodes 1 and 7 one each. Sink 0 is weighted (node 4 weight 2), sink 8 demand-limited.
const TWO_SINKS: &str = r#"name = "two-sinks9"
duration_s = 90.0

[topology]
sinks = [0, 8]
layout = { kind = "grid", nodes = 9, spacing_m = 5.0 }

[radio.noise]
model = "constant"
floor_dbm = -98.0

[routing]
kind = "shortest"

[protocol]
kind = "rcrt"
weights = { "4" = 2.0 }

[protocol.sink_policies]
"0" = "weighted"
"8" = "demand_limited"

[[flows]]
sources = [1, 4]
sink = 0
rate_pps = 2.0
start_s = 10.0

[[flows]]
sources = [4, 7]
sink = 8
rate_pps = 2.0
start_s = 10.0
"#;

/// The texts of an SVG file that plotters wrote (each on the line after its `<text` tag).
fn svg_texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = svg.lines().collect();
    lines.windows(2).filter(|w| w[0].starts_with("<text")).map(|w| w[1].trim().to_string()).collect()
}

/// `allocations_time` named each line `node <source>` and `repairs_per_flow` each bar by its
/// source alone: node 4's two flows, to sinks 0 and 8, were two legend entries (two bars) reading
/// the same. The allocation legend now names flows `flow S → K` as `reception_time` and
/// `congestion_time` do, and with several sinks the repair bars read `S→K`.
#[test]
fn per_flow_figures_tell_a_sources_two_flows_apart() {
    let dir = Scratch::new("newuser37b", "per_flow_figures_tell_a_sources_two_flows_apart");
    let file = dir.join("two-sinks9.toml");
    std::fs::write(&file, TWO_SINKS).unwrap();
    let out = dir.join("out");
    wsn_ok(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]);
    let texts = svg_texts(&out.join("allocations_time.svg"));
    for want in ["flow 1 → 0", "flow 4 → 0", "flow 4 → 8", "flow 7 → 8"] {
        assert!(texts.iter().any(|t| t == want), "no {want:?} in {texts:?}");
    }
    assert!(!texts.iter().any(|t| t.starts_with("node ")), "{texts:?}");
    let texts = svg_texts(&out.join("repairs_per_flow.svg"));
    for want in ["1→0", "4→0", "4→8", "7→8", "flow (source node → sink)"] {
        assert!(texts.iter().any(|t| t == want), "no {want:?} in {texts:?}");
    }
}

/// RCRT took a weight for a sink, or for a node that sources no flow, without a word (IFRC
/// refuses a base station's weight): the run now warns that such a weight has no effect. A weight
/// for a source does not warn.
#[test]
fn rcrt_weight_of_a_node_without_a_flow_warns() {
    let dir = Scratch::new("newuser37b", "rcrt_weight_of_a_node_without_a_flow_warns");
    let file = dir.join("two-sinks9.toml");
    std::fs::write(&file, TWO_SINKS).unwrap();
    let out = dir.join("out");
    let run = |weights: &str| {
        wsn_ok(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q", "--set", weights]).1
    };
    let err = run(r#"protocol.weights={"4"=2.0, "8"=3.0, "2"=0.5}"#);
    assert!(
        err.contains("protocol.weights.8: node 8 is a sink and the source of no flow; its weight has no effect"),
        "{err}"
    );
    assert!(
        err.contains("protocol.weights.2: node 2 is not the source of any flow; its weight has no effect"),
        "{err}"
    );
    assert!(!err.contains("protocol.weights.4"), "{err}");
    let err = run(r#"protocol.weights={"4"=2.0}"#);
    assert!(!err.contains("warning"), "{err}");
    // A key that names no node is refused, with no warning in front of the refusal.
    let o = common::wsn_output(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
        "--set",
        r#"protocol.weights={"99"=2.0}"#,
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("`99` is not a node id of this topology"), "{err}");
    assert!(!err.contains("warning"), "{err}");
}

/// A source that `routing.kind = "shortest"` leaves without a route ran silently: its flow
/// delivered nothing and only the summary's `unrouted 1` hinted at it. The run now names the
/// node. A 4-node chain at 10 m: with a 15 dB margin node 3 has no link good enough.
#[test]
fn shortest_tree_source_without_a_route_warns() {
    let dir = Scratch::new("newuser37b", "shortest_tree_source_without_a_route_warns");
    let text = r#"name = "chain4"
duration_s = 20.0

[topology]
layout = { kind = "chain", nodes = 4, spacing_m = 10.0 }

[radio.noise]
model = "constant"
floor_dbm = -98.0

[routing]
kind = "shortest"

[[flows]]
sources = "all"
rate_pps = 1.0
"#;
    let file = dir.join("chain4.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.join("out");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"];
        args.extend_from_slice(extra);
        wsn_ok(&args)
    };
    let (stdout, err) = run(&[]);
    assert!(stdout.contains("unrouted 0"), "{stdout}");
    assert!(!err.contains("no path to sink"), "{err}");
    let (stdout, err) = run(&["--set", "routing.shortest_snr_db=15"]);
    assert!(stdout.contains("unrouted 1"), "{stdout}");
    assert!(
        err.contains(
            "warning: flows[0]: node 3 has no path to sink 0 in the routing.kind = \"shortest\" tree (links at least \
             routing.shortest_snr_db = 15 dB above the noise floor both ways): its flow will deliver nothing"
        ),
        "{err}"
    );
    // Ten nodes 500 m away, linked among themselves but not to the sink's pair: the warning names
    // the first eight and the count.
    let rows: Vec<String> = (2..12).map(|i| format!("{i},{},0", 500 + 10 * (i - 2))).collect();
    std::fs::write(dir.join("p.csv"), format!("node,x_m,y_m\n0,0,0\n1,10,0\n{}\n", rows.join("\n"))).unwrap();
    let (stdout, err) = run(&["--set", "topology.layout={kind=\"file\", path=\"p.csv\"}"]);
    assert!(stdout.contains("unrouted 10"), "{stdout}");
    assert!(err.contains("nodes 2, 3, 4, 5, 6, 7, 8, 9, … (10 in all) have no path to sink 0"), "{err}");
    // No link at all: the run's own warning says so, and this one does not repeat it per node.
    let (stdout, err) = run(&["--set", "routing.shortest_snr_db=40"]);
    assert!(stdout.contains("unrouted 3"), "{stdout}");
    assert!(err.contains("no node ever had a route to a sink") && !err.contains("no path to sink"), "{err}");
}

/// `protocol.slow_down_token_floor = -200` was refused as "expected a whole number from −128 to
/// 127", and then 5 as "must be between -128 and 0": the first message now gives the key's own
/// range too.
#[test]
fn token_floor_out_of_range_names_its_range() {
    let dir = Scratch::new("newuser37b", "token_floor_out_of_range_names_its_range");
    let file = dir.join("two-sinks9.toml");
    std::fs::write(&file, TWO_SINKS).unwrap();
    for v in ["-200", "200"] {
        let set = format!("protocol.slow_down_token_floor={v}");
        let o = common::wsn_output(&["run", file.to_str().unwrap(), "-q", "--set", &set]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && !err.contains("panicked"), "{err}");
        assert!(err.contains("a whole number from −128 to 0"), "{v}: {err}");
        assert!(!err.contains("127"), "{v}: {err}");
    }
}

/// Two `protocol.policy_changes` entries for one sink at the same time both ran, in list order,
/// so the first one's policy never allocated on its own, without a word: the run now warns. Switches at
/// different times, or of different sinks at the same time, do not.
#[test]
fn two_policy_changes_of_a_sink_at_once_warn() {
    let dir = Scratch::new("newuser37b", "two_policy_changes_of_a_sink_at_once_warn");
    let file = dir.join("two-sinks9.toml");
    std::fs::write(&file, TWO_SINKS).unwrap();
    let out = dir.join("out");
    let run = |changes: &str| {
        let set = format!("protocol.policy_changes={changes}");
        wsn_ok(&["run", file.to_str().unwrap(), "--out", out.to_str().unwrap(), "-q", "--set", &set]).1
    };
    let err = run(
        r#"[{at_s=50.0, sink=8, policy="fair"}, {at_s=40.0, sink=0, policy="fair"}, {at_s=50.0, sink=8, policy="demand_proportional"}]"#,
    );
    assert!(
        err.contains(
            "protocol.policy_changes[0] and [2] both switch sink 8 at 50 s: they run in list order, so \
             \"demand_proportional\" follows \"fair\" at once"
        ),
        "{err}"
    );
    let err = run(
        r#"[{at_s=50.0, sink=8, policy="fair"}, {at_s=50.0, sink=0, policy="fair"}, {at_s=60.0, sink=8, policy="demand_proportional"}]"#,
    );
    assert!(!err.contains("both switch"), "{err}");
}
