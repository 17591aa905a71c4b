//! A researcher studying failures and fixed topologies: a relay's radio switched off for a while,
//! a topology read back from `wsn gains`, static trees from a file, and the trace and pcap of
//! such runs, against what the README says about them. Five nodes on a chain, runs of a few
//! simulated minutes: the whole file takes a few seconds.

mod common;

use std::path::Path;

use common::{csv_rows, wsn_ok as ok, Scratch};

/// Five nodes 10 m apart on a line, sink 0, a minimum-hop tree (a chain: each node's parent is
/// its neighbour towards the sink), a quiet constant noise, `[radio.link]` at that noise's floor
/// without shadowing, best effort at 1 pkt/s per node from 10 s; node 1, the relay of every
/// other node, is off from 60 to 120 s. Written into `dir` as `chain.toml`.
fn chain_file(dir: &Path) -> String {
    let text = r#"name = "chain"
duration_s = 200.0

[topology]
sinks = [0]
layout = { kind = "chain", nodes = 5, spacing_m = 10.0 }

[radio.link]
noise_floor_dbm = -98.0
s11 = 0.0
s12 = 0.0
s22 = 0.0
shadowing_sigma_db = 0.0

[radio.noise]
model = "constant"
floor_dbm = -98.0

[routing]
kind = "shortest"

[[flows]]
sources = "all"
rate_pps = 1.0
start_s = 10.0

[[outages]]
nodes = 1
from_s = 60.0
to_s = 120.0
"#;
    let f = dir.join("chain.toml");
    std::fs::write(&f, text).unwrap();
    f.display().to_string()
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// `wsn sweep` with its standard error going to a pipe prints "one line per finished run"
/// (`sweep KEY: 3/8 runs done, 12 s`): with two workers, runs that finished at the same moment
/// printed their lines in either order, so a log could say "3/3 runs done" and then "2/3". The
/// lines count up, one by one, to the number of runs. (This end-to-end check catches the old
/// race only sometimes, about half the runs on an idle machine; progress.rs's unit test checks
/// deterministically that each line is written while its count is held.)
#[test]
fn sweep_progress_lines_count_up_in_order() {
    let dir = Scratch::new("newuser35", "progress");
    let f = chain_file(&dir);
    let out = dir.join("sw");
    // 80 runs of one to 80 simulated seconds, a few ms each: many finish at the same moment.
    let (_, err) = ok(&["sweep", &f, "--param", "duration_s=1:80:1", "--jobs", "2", "--out", out.to_str().unwrap()]);
    let counts: Vec<usize> = err
        .lines()
        .filter_map(|l| l.strip_prefix("sweep duration_s: "))
        .map(|l| l.split('/').next().unwrap().parse().unwrap_or_else(|_| panic!("{l}")))
        .collect();
    assert_eq!(counts, (1..=80).collect::<Vec<_>>(), "{err}");
}

/// A gain file read back: the reading scenario's own `radio.link.noise_floor_dbm` does not enter
/// its noise, but `routing.kind = "shortest"` still takes its SNR threshold from it (README,
/// docs/simulator.md): read back at the file's floor, the run is the exporting scenario's, bit for
/// bit; read back with a floor of −80 dBm, another tree.
#[test]
fn gains_file_round_trip_and_the_shortest_trees_noise_floor() {
    let dir = Scratch::new("newuser35", "gains");
    let f = chain_file(&dir);
    let gains = dir.join("g.txt");
    ok(&["gains", &f, "--out", gains.to_str().unwrap()]);
    let header = std::fs::read_to_string(&gains).unwrap();
    assert!(header.lines().next().unwrap().contains("noise_floor_dbm=-98"), "{header}");
    let run = |name: &str, sets: &[&str]| {
        let out = dir.join(name);
        let mut args = vec!["run", f.as_str(), "-q", "--out", out.to_str().unwrap()];
        for s in sets {
            args.extend(["--set", s]);
        }
        ok(&args);
        summary(&out)
    };
    let g = format!("topology.gains_file={}", gains.display());
    let own = run("own", &[]);
    let same_floor = run("same", &[&g]);
    // The same links, noise and tree: the same run.
    assert_eq!(own["trace_sha256"], same_floor["trace_sha256"]);
    assert_eq!(own["totals"], same_floor["totals"]);
    assert_eq!(own["routing"]["max_depth"], 4, "{}", own["routing"]);
    // Another floor in the reading scenario: the noise is the same, the tree is not.
    let other_floor = run("other", &[&g, "radio.link.noise_floor_dbm=-80"]);
    assert_ne!(own["routing"]["max_depth"], other_floor["routing"]["max_depth"], "{}", other_floor["routing"]);
}

/// A static tree from a file, with a relay off for a minute: the run summary lists the outage,
/// the tree is the file's, and its parents, in place from the start, are no parent changes
/// (`routing.parent_changes` 0, `nodes.csv`'s column 0, no `parent` event in the trace), as the
/// README's `parent_changes` says of such trees. The trace and the pcap agree with `summary.json`
/// as the README says: one `tx` per data or
/// beacon frame, one `deliver` per delivered packet, and a pcap record per frame and ACK.
#[test]
fn static_tree_with_an_outage_trace_and_pcap() {
    let dir = Scratch::new("newuser35", "static");
    let f = chain_file(&dir);
    let tree = dir.join("tree.csv");
    std::fs::write(&tree, "node,parent\n0,-1\n1,0\n2,1\n3,2\n4,3\n").unwrap();
    let out = dir.join("out");
    let t = format!("routing.tree_file={}", tree.display());
    let (printed, _) = ok(&[
        "run",
        &f,
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--set",
        "routing.kind=static",
        "--set",
        &t,
        "--trace",
        "--pcap",
    ]);
    assert!(printed.contains("outages   radio off: node 1 60–120 s"), "{printed}");
    let s = summary(&out);
    assert_eq!(s["routing"]["max_depth"], 4);
    assert_eq!(s["routing"]["unrouted_nodes"], 0);
    assert_eq!(s["routing"]["parent_changes"], 0, "{}", s["routing"]);
    let nodes = csv_rows(&out.join("nodes.csv"));
    for (i, n) in nodes.iter().enumerate() {
        assert_eq!(n["parent"], if i == 0 { "-1".to_string() } else { (i - 1).to_string() }, "{n:?}");
        assert_eq!(n["parent_changes"], "0", "{n:?}");
    }
    let trace = std::fs::read_to_string(out.join("trace.csv")).unwrap();
    let count = |ev: &str| trace.lines().filter(|l| l.split(',').nth(1) == Some(ev)).count() as u64;
    assert_eq!(count("parent"), 0);
    let tot = &s["totals"];
    let (data, beacons, acks) = (
        tot["data_frames"].as_u64().unwrap(),
        tot["beacon_frames"].as_u64().unwrap(),
        tot["ack_frames"].as_u64().unwrap(),
    );
    assert_eq!(count("tx"), data + beacons);
    assert_eq!(count("deliver"), tot["delivered"].as_u64().unwrap());
    // The relay's queue filled while it was off.
    assert!(tot["queue_drops"].as_u64().unwrap() > 0, "{tot}");
    let pcap = std::fs::read(out.join("frames.pcap")).unwrap();
    let (mut at, mut records) = (24, 0u64);
    while at < pcap.len() {
        at += 16 + u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        records += 1;
    }
    assert_eq!(records, data + beacons + acks);
}

/// `totals.ack_frames` counts the ACKs receivers sent plus the false ACKs (README). With
/// `radio.false_ack_prob = 0` that is one per unicast data frame decoded at its destination
/// (`data_rx` in `nodes.csv`); TOSSIM's false ACKs (drawn for frames the destination heard but
/// lost) come on top, so with them `ack_frames` can exceed the frames decoded.
#[test]
fn ack_frames_are_decoded_unicast_frames_plus_false_acks() {
    let dir = Scratch::new("newuser35", "acks");
    let f = chain_file(&dir);
    let run = |name: &str, sets: &[&str]| {
        let out = dir.join(name);
        let mut args = vec!["run", f.as_str(), "-q", "--out", out.to_str().unwrap(), "--set", "flows.0.rate_pps=5"];
        for s in sets {
            args.extend(["--set", s]);
        }
        ok(&args);
        let rx: u64 = csv_rows(&out.join("nodes.csv")).iter().map(|n| n["data_rx"].parse::<u64>().unwrap()).sum();
        (summary(&out)["totals"]["ack_frames"].as_u64().unwrap(), rx)
    };
    let (acks, rx) = run("none", &["radio.false_ack_prob=0"]);
    assert_eq!(acks, rx);
    let (acks, rx) = run("all", &["radio.false_ack_prob=1"]);
    assert!(acks > rx, "every lost unicast frame draws a false ACK: {acks} ACKs, {rx} frames decoded");
}
