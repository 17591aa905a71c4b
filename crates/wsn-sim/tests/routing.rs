//! Tree formation on the default scenario (spec §8.5; RCRT testbed: trees 6–8 hops deep).

mod common;
use common::*;

#[test]
fn office40_trees_are_deep_and_parents_change() {
    let r = go(&load("office40.toml", &["duration_s=1800", "output.plots=false"]));
    let rt = &r.summary.routing;
    eprintln!("{rt:?}");
    // RCRT testbed: MultiHopLQI trees 6–8 hops deep in every experiment.
    assert!((6..=8).contains(&rt.median_max_depth), "{rt:?}");
    assert!(rt.parent_changes_during_traffic > 0, "{rt:?}");
    assert_eq!(rt.unrouted_nodes, 0, "{rt:?}");
}

/// Best-effort fair goodput curve on office40 (RCRT Fig. 7 analogue): fair with ≥ 95 %
/// delivery at 0.6 pkt/s per node, not at 1.6 — so the knee lies in the acceptance band
/// 0.6–1.6 (RCRT testbed: 1.1). `wsn sweep office40 --param flows.0.rate_pps=...` gives the curve.
#[test]
fn office40_best_effort_knee_lies_between_0_6_and_1_6() {
    let at = |rate: &str| {
        let r = go(&load("office40.toml", &["duration_s=2400", "output.plots=false", rate]));
        r.summary.totals.clone()
    };
    let low = at("flows.0.rate_pps=0.6");
    assert!(low.delivery_ratio >= 0.95 && low.min_goodput_pps >= 0.8 * low.mean_goodput_pps, "{low:?}");
    let high = at("flows.0.rate_pps=1.6");
    assert!(high.delivery_ratio < 0.95, "{high:?}");
}

/// With two sinks every node runs two MultiHopLQI trees and beacons for each once per period
/// (spec §6.1): one tree's beacon waiting for the channel must not displace the other's. A short
/// period (100 binary ms) keeps both trees' beacons queued behind each other often. Each tree
/// ticks exactly 1,024 times in 100 s; only a beacon of the last tick may still wait at the end.
#[test]
fn every_tree_beacons_every_period_with_two_sinks() {
    let r = go(&load(
        "office40.toml",
        &[
            "topology.sinks=[0,20]",
            "routing.mhlqi.beacon_period_binary_ms=100",
            "flows=[]",
            "duration_s=100",
            "output.plots=false",
        ],
    ));
    let counts: Vec<u64> = (0..40).map(|i| r.network.node_stats(i).beacon_tx).collect();
    assert!(counts.iter().all(|&c| (2 * 1024 - 2..=2 * 1024).contains(&c)), "{counts:?}");
}

/// With two sinks `nodes.csv` gives each node's parent and hops on both trees: the first
/// sink's in `parent, hops`, the other's in `parent_to_20, hops_to_20`; each root has hops 0 on
/// its own tree.
#[test]
fn nodes_csv_lists_every_tree() {
    let dir = std::env::temp_dir().join(format!("wsn-nodes-csv-{}", std::process::id()));
    let sc = load("office40.toml", &["topology.sinks=[0,20]", "duration_s=300", "output.plots=false"]);
    std::fs::create_dir_all(&dir).unwrap();
    let r = go(&sc);
    wsn_sim::output::write_all(&dir, &r).expect("outputs written");
    let text = std::fs::read_to_string(dir.join("nodes.csv")).unwrap();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| rows[0].iter().position(|c| *c == name).unwrap_or_else(|| panic!("no column {name}"));
    let (hops, hops_20) = (col("hops"), col("hops_to_20"));
    assert_eq!(col("parent_to_20"), rows[0].len() - 2);
    assert!(rows.iter().all(|r| r.len() == rows[0].len()));
    assert_eq!((rows[1][hops], rows[21][hops_20]), ("0", "0"));
    // Most nodes are routed on both trees after 300 s.
    let routed_both = rows[1..].iter().filter(|r| r[hops] != "-1" && r[hops_20] != "-1").count();
    assert!(routed_both >= 30, "{routed_both} nodes routed on both trees");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `routing.freeze_after_s` stops every parent change (spec §6.4): frozen at 600 s, office40
/// has made by 1,800 s exactly the changes it had made by 600 s, while unfrozen it goes on
/// changing. Fixed trees (`static` from a file, `shortest`) record no change at all.
#[test]
fn frozen_and_fixed_trees_do_not_change_parents() {
    let changes = |set: &[&str]| {
        let mut all = vec!["output.plots=false"];
        all.extend_from_slice(set);
        go(&load("office40.toml", &all)).summary.routing.parent_changes
    };
    let by_600 = changes(&["duration_s=600"]);
    let frozen = changes(&["duration_s=1800", "routing.freeze_after_s=600"]);
    let free = changes(&["duration_s=1800"]);
    assert!(by_600 > 0, "the trees form by changing parents");
    assert_eq!(frozen, by_600, "parent changes after the freeze");
    assert!(free > by_600, "without the freeze parents keep changing ({free} vs {by_600})");
    assert_eq!(changes(&["duration_s=600", "routing.kind=\"shortest\""]), 0);
    let e1 = go(&load("ifrc/e1-40node.toml", &["duration_s=300", "output.plots=false"]));
    assert_eq!(e1.summary.routing.parent_changes, 0, "a static tree from a file");
}

/// The freeze keeps no routing loop (spec §6.4; a frozen tree is for experiments that want a
/// fixed, usable tree): a node whose parents do not lead to the sink at the freeze (in a loop or
/// behind one) keeps MultiHopLQI's rules until they do. RCRT's baseline with the 2.x MAC frozen at
/// 600 s (seed 1, an example of docs/simulator.md) froze the loop 11 → 21 → 20 → 11, with 16
/// nodes in or behind it, before session 30; every routed node now has a path to the sink, and
/// the nodes that waited freeze once it has: no parent changes after 700 s.
#[test]
fn a_freeze_never_keeps_a_routing_loop() {
    let run = |duration: &str| {
        let set = ["mac.preset=\"tinyos2\"", "routing.freeze_after_s=600", duration, "output.plots=false"];
        go(&load("rcrt/baseline.toml", &set))
    };
    let r = run("duration_s=700");
    let later = run("duration_s=1500");
    assert_eq!(later.summary.routing.parent_changes, r.summary.routing.parent_changes, "changes after 700 s");
    // The case still has a loop at the freeze that needs resolving: a parent changes after it.
    let at_freeze = run("duration_s=600");
    assert!(at_freeze.summary.routing.cut_off_nodes > 0, "no loop at the freeze: {:?}", at_freeze.summary.routing);
    assert!(r.summary.routing.parent_changes > at_freeze.summary.routing.parent_changes);
    let n = r.network.len();
    let mut cut_off = Vec::new();
    for i in 0..n {
        let mut j = i;
        let mut steps = 0;
        while let Some(p) = r.network.parent(j, 0) {
            j = p.index();
            steps += 1;
            if steps > n {
                cut_off.push(i);
                break;
            }
        }
    }
    assert!(cut_off.is_empty(), "nodes in or behind a frozen loop: {cut_off:?}");
    assert_eq!(r.summary.routing.unrouted_nodes, 0, "{:?}", r.summary.routing);
    assert_eq!(r.summary.routing.cut_off_nodes, 0, "{:?}", r.summary.routing);
    assert!(r.summary.routing.max_depth_seen <= 12, "{:?}", r.summary.routing);
}

/// The same with two trees, one per sink (spec §6.1: a node runs one MultiHopLQI instance per
/// sink; the freeze applies per tree): the IFRC two-sink scenario at seed 4 has the loop
/// 12 → 19 → 20 → 12 in sink 0's tree at its freeze (600 s), which froze 13 nodes off that sink
/// before session 30; by 700 s every node of both trees has a path to its sink.
#[test]
fn a_freeze_resolves_a_loop_in_one_of_two_trees() {
    let run = |duration: &str| {
        go(&load("ifrc/e7-two-sinks.toml", &["seed=4", duration, "output.plots=false"])).summary.routing
    };
    let at_freeze = run("duration_s=600");
    assert!(at_freeze.cut_off_nodes > 0, "no loop at the freeze: {at_freeze:?}");
    let after = run("duration_s=700");
    assert_eq!((after.cut_off_nodes, after.unrouted_nodes), (0, 0), "{after:?}");
}

/// The good-tree freeze (`routing.freeze_min_prr`, [`wsn_sim::routing::good_tree`]): IFRC's
/// 30-node stability network at seed 4 froze node 3 on its link to node 1, which is expected to
/// carry under 1 % of frames (a session-30 review saw no ACK in 13,476 attempts); with the gate
/// at the IFRC paper's weakest link, 66 %, the freeze moves node 3 to node 2 and keeps the tree
/// whole.
#[test]
fn the_good_tree_freeze_replaces_a_weak_link() {
    let set = ["seed=4", "duration_s=650", "routing.freeze_min_prr=0.66", "output.plots=false"];
    let r = go(&load("ifrc/e9-thirty-node.toml", &set));
    let rt = &r.summary.routing;
    assert!(rt.freeze_weak_kept.is_empty(), "{rt:?}");
    let moves: Vec<_> = rt.freeze_moves.iter().map(|m| (m.t_s, m.sink, m.node, m.parent, m.new_parent)).collect();
    assert_eq!(moves, vec![(600.0, 0, 3, 1, Some(2))], "{rt:?}");
    let m = &rt.freeze_moves[0];
    assert!(m.quality < 0.05 && m.new_quality.is_some_and(|q| q >= 0.66), "{m:?}");
    assert_eq!(r.network.parent(3, 0).map(|p| p.index()), Some(2));
    assert_eq!((rt.cut_off_nodes, rt.unrouted_nodes), (0, 0), "{rt:?}");
}

/// A tree whose links are all good is frozen as MultiHopLQI left it, byte-identical to a run
/// without the gate: the comparison's RCRT network frozen at 600 s, seed 1 (no link below 66 %).
#[test]
fn the_good_tree_freeze_leaves_a_good_tree_alone() {
    let run = |extra: &[&str]| {
        let set = [&["duration_s=700", "routing.freeze_after_s=600", "output.plots=false"], extra].concat();
        go(&load("compare/rcrt.toml", &set)).summary
    };
    let gated = run(&["routing.freeze_min_prr=0.66"]);
    let plain = run(&[]);
    assert!(gated.routing.freeze_moves.is_empty() && gated.routing.freeze_weak_kept.is_empty(), "{:?}", gated.routing);
    assert_eq!(gated.trace_sha256, plain.trace_sha256);
}

/// Nodes frozen after the freeze time (once their path first reaches the sink) go through the
/// good-tree freeze too, and its move comes after the route change that completed their path:
/// the trace's last `parent` row of every node is the parent it ends with. (A review found the
/// beacon's change written after the move, naming the parent the node had left.) office40 with
/// the freeze at 2 s, before most nodes have a route, and a demanding 95 %.
#[test]
fn late_good_tree_moves_are_the_last_word_in_the_trace() {
    let set = [
        "seed=2",
        "duration_s=120",
        "routing.freeze_after_s=2",
        "routing.freeze_min_prr=0.95",
        "output.trace=true",
        "output.plots=false",
    ];
    let (r, trace) = go_traced(&load("office40.toml", &set), "late-freeze");
    let late = r.summary.routing.freeze_moves.iter().filter(|m| m.t_s > 2.0).count();
    assert!(late > 0, "no move after the freeze time: {:?}", r.summary.routing.freeze_moves);
    let mut last = std::collections::BTreeMap::new();
    for line in trace.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if f[1] == "parent" {
            last.insert((f[2].parse::<usize>().unwrap(), f[3].parse::<usize>().unwrap()), f[4].parse::<i64>().unwrap());
        }
    }
    for m in &r.summary.routing.freeze_moves {
        let node = m.node as usize;
        let end = r.network.parent(node, 0).map_or(-1, |p| p.index() as i64);
        assert_eq!(last.get(&(node, 0)), Some(&end), "node {node}: {m:?}");
        assert_eq!(Some(end), m.new_parent.map(i64::from), "{m:?}");
    }
}
