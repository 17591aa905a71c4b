//! A new user's cross-checks of the files a run and a sweep write, against each other and against
//! what the README says about them: the pcap's header and record count, the per-flow and per-bin
//! counts against `summary.json`'s totals, `sweep.csv`'s header as the README prints it and its
//! rows against the same runs made alone, and `--pcap`'s help. Small networks and short runs:
//! the whole file takes about a second.

mod common;

use std::path::Path;
use std::process::Command;

use common::Scratch;

/// Runs `wsn ARGS...`, which must succeed; returns its standard output.
fn wsn(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_wsn")).args(args).output().unwrap();
    let (out, err) = (String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "wsn {args:?}: {:?}\n{out}\n{err}", o.status.code());
    out.into_owned()
}

/// The tests' scenario (tests/common: nine nodes, RCRT) written into `dir`, as a path string.
fn scenario_file(dir: &Path) -> String {
    common::nine_node_rcrt_file(dir, "nu31")
}

/// A CSV file as its header and rows of named cells.
fn csv_rows(path: &Path) -> (Vec<String>, Vec<std::collections::HashMap<String, String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    let rows =
        r.records().map(|rec| header.iter().cloned().zip(rec.unwrap().iter().map(String::from)).collect()).collect();
    (header, rows)
}

fn int(cell: &str) -> u64 {
    cell.parse().unwrap_or_else(|_| panic!("not a count: {cell:?}"))
}

/// `frames.pcap` holds what the README and `--pcap` say: a classic libpcap header with link
/// type 195 and one record per data and beacon attempt and per ACK sent, in time order; the
/// per-flow rows of `flows.csv`, the bins of `timeseries.csv` and the per-node rows of
/// `nodes.csv` add up to `summary.json`'s totals.
#[test]
fn a_runs_files_add_up_to_its_summary() {
    let dir = Scratch::new("newuser31", "run");
    let file = scenario_file(&dir);
    let out = dir.join("out");
    wsn(&["run", &file, "-q", "--pcap", "--out", out.to_str().unwrap()]);
    let s: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    let t = &s["totals"];
    let total = |k: &str| t[k].as_u64().unwrap_or_else(|| panic!("totals.{k}: {}", t[k]));

    let pcap = std::fs::read(out.join("frames.pcap")).unwrap();
    let u32_at = |i: usize| u32::from_le_bytes(pcap[i..i + 4].try_into().unwrap());
    assert_eq!(u32_at(0), 0xa1b2_c3d4, "classic libpcap magic, microseconds, little endian");
    assert_eq!(u32_at(20), 195, "LINKTYPE_IEEE802_15_4_WITHFCS");
    let (mut off, mut records, mut acks, mut last_us) = (24, 0u64, 0u64, 0u64);
    while off < pcap.len() {
        let (sec, usec, incl, orig) = (u32_at(off), u32_at(off + 4), u32_at(off + 8) as usize, u32_at(off + 12));
        assert_eq!(incl as u32, orig, "record {records} truncated");
        assert!(usec < 1_000_000);
        let us = sec as u64 * 1_000_000 + usec as u64;
        assert!(us >= last_us, "record {records} goes back in time");
        last_us = us;
        // Frame type in the low three bits of the frame control field: 2 = ACK.
        acks += u64::from(pcap[off + 16] & 7 == 2);
        off += 16 + incl;
        records += 1;
    }
    assert_eq!(off, pcap.len(), "a record runs past the end of the file");
    assert!(total("ack_frames") > 0 && total("data_frames") > 0 && total("beacon_frames") > 0);
    assert_eq!(acks, total("ack_frames"));
    assert_eq!(records, total("data_frames") + total("beacon_frames") + total("ack_frames"));

    let (_, flows) = csv_rows(&out.join("flows.csv"));
    assert_eq!(flows.len(), 8);
    for k in ["originated", "delivered", "feedback_packets"] {
        assert_eq!(flows.iter().map(|f| int(&f[k])).sum::<u64>(), total(k), "flows.csv {k}");
    }
    let (header, bins) = csv_rows(&out.join("timeseries.csv"));
    assert_eq!(header, ["t_s", "flow", "delivered", "goodput_pps"]);
    for f in &flows {
        let got: u64 = bins.iter().filter(|b| b["flow"] == f["id"]).map(|b| int(&b["delivered"])).sum();
        assert_eq!(got, int(&f["delivered"]), "timeseries.csv, flow {}", f["id"]);
    }
    let (_, nodes) = csv_rows(&out.join("nodes.csv"));
    let sum = |k: &str| nodes.iter().map(|n| int(&n[k])).sum::<u64>();
    assert_eq!(sum("data_tx"), total("data_frames"));
    assert_eq!(sum("beacon_tx"), total("beacon_frames"));
    assert_eq!(sum("parent_changes"), s["routing"]["parent_changes"].as_u64().unwrap());
}

/// `sweep.csv`'s header is the one the README prints, and each row holds the figures of the
/// same run made alone with `wsn run`.
#[test]
fn sweep_csv_is_as_the_readme_says_and_matches_single_runs() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../README.md")).unwrap();
    let documented = readme
        .split('`')
        .find(|s| s.starts_with("x,seed,"))
        .expect("the README prints sweep.csv's header in backquotes")
        .to_string();

    let dir = Scratch::new("newuser31", "sweep");
    let file = scenario_file(&dir);
    let out = dir.join("sweep");
    wsn(&["sweep", &file, "--param", "flows.0.rate_pps=0.5,2", "--jobs", "1", "--out", out.to_str().unwrap()]);
    let (header, rows) = csv_rows(&out.join("sweep.csv"));
    assert_eq!(header.join(","), documented, "sweep.csv's header differs from the README's");
    assert_eq!(rows.len(), 2);
    for row in &rows {
        let one = dir.join(format!("run-{}", row["x"]));
        let rate = format!("flows.0.rate_pps={}", row["x"]);
        wsn(&["run", &file, "-q", "--set", &rate, "--out", one.to_str().unwrap()]);
        let s: serde_json::Value = serde_json::from_slice(&std::fs::read(one.join("summary.json")).unwrap()).unwrap();
        let t = &s["totals"];
        assert_eq!(row["trace_sha256"], s["trace_sha256"].as_str().unwrap());
        assert_eq!(int(&row["originated"]), t["originated"].as_u64().unwrap());
        assert_eq!(int(&row["delivered"]), t["delivered"].as_u64().unwrap());
        // Both files print the same shortest form, but serde_json (without `float_roundtrip`)
        // may read it back one unit in the last place off: compare within that.
        let (a, b) = (row["mean_goodput_pps"].parse::<f64>().unwrap(), t["mean_goodput_pps"].as_f64().unwrap());
        assert!((a - b).abs() <= 4.0 * f64::EPSILON * b.abs(), "mean_goodput_pps {a} against {b}");
        let fb = t["feedback_packets"].as_f64().unwrap() / t["originated"].as_f64().unwrap();
        assert_eq!(row["feedback_ratio"].parse::<f64>().unwrap(), fb, "feedback per data packet originated");
        // The largest repaired share, of delivered packets: a fraction, not a percentage.
        let share = s["flows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["e2e_repaired"].as_f64().unwrap() / f["delivered"].as_f64().unwrap().max(1.0))
            .fold(0.0, f64::max);
        assert_eq!(row["max_e2e_repaired_share"].parse::<f64>().unwrap(), share);
    }
}

/// `wsn run --help` says that frames.pcap holds the ACKs too (they are not on the air), and its
/// link type.
#[test]
fn pcap_help_names_the_acks_and_the_link_type() {
    let help = wsn(&["run", "--help"]);
    let pcap = help.lines().find(|l| l.trim_start().starts_with("--pcap")).expect("a --pcap line");
    assert!(pcap.contains("every ACK sent"), "{pcap}");
    assert!(pcap.contains("link type 195"), "{pcap}");
}
