//! A researcher's workflows after the first run: several seeds of one scenario, sweeps over a
//! load and over a protocol parameter, and their edge cases (runs that carry no traffic, long
//! keys, a folder that holds an unfinished sweep). Small networks and short runs: the whole file
//! takes a few seconds.

mod common;

use std::path::Path;

use common::Scratch;

/// The tests' scenario (tests/common: nine nodes, RCRT) written into `dir`, as a path string.
fn scenario_file(dir: &Path) -> String {
    common::nine_node_rcrt_file(dir, "nu34")
}

use common::{csv_rows, wsn_output as wsn};

/// Runs `wsn ARGS...`, which must succeed; returns its standard output.
fn ok(args: &[&str]) -> String {
    common::wsn_ok(args).0
}

/// A run that originated no packet has no feedback per packet originated, and one that delivered
/// none no repaired share: sweep.csv leaves both cells empty (as the run's summary prints "–"),
/// as it does the goodput, instead of writing 0.0, which reads as a measured "no feedback" and
/// "nothing repaired" and pulls a mean over seeds down. A run with traffic keeps its numbers.
#[test]
fn sweep_ratios_of_a_run_without_traffic_are_empty_not_zero() {
    let dir = Scratch::new("newuser34", "ratios");
    let f = scenario_file(&dir);
    let out = dir.join("sw");
    // Traffic from 10 s: at 5 s the run ends before any flow starts.
    ok(&["sweep", &f, "--param", "duration_s=5,90", "--out", out.to_str().unwrap()]);
    let rows = csv_rows(&out.join("sweep.csv"));
    assert_eq!(rows.len(), 2);
    let (none, some) = (&rows[0], &rows[1]);
    assert_eq!((none["x"].as_str(), none["originated"].as_str(), none["delivered"].as_str()), ("5", "0", "0"));
    assert_eq!(none["mean_goodput_pps"], "", "the goodput of a run without traffic is empty");
    assert_eq!(none["congestion_decreases"], "0", "a count stays a count");
    assert_eq!(none["feedback_ratio"], "", "feedback per packet of no packet");
    assert_eq!(none["max_e2e_repaired_share"], "", "repaired share of no delivered packet");
    // The run with traffic has both, as numbers in range.
    assert!(some["delivered"].parse::<u64>().unwrap() > 0, "{some:?}");
    let fb: f64 = some["feedback_ratio"].parse().unwrap_or_else(|_| panic!("{some:?}"));
    let share: f64 = some["max_e2e_repaired_share"].parse().unwrap_or_else(|_| panic!("{some:?}"));
    assert!(fb > 0.0 && (0.0..=1.0).contains(&share), "{some:?}");
}

/// The end (in characters) of each of the first five whitespace-separated fields of `line`.
fn field_ends(line: &str) -> Vec<usize> {
    let chars: Vec<char> = line.chars().collect();
    let mut ends = Vec::new();
    for i in 0..chars.len() {
        if !chars[i].is_whitespace() && chars.get(i + 1).is_none_or(|c| c.is_whitespace()) {
            ends.push(i + 1);
        }
    }
    ends.truncate(5);
    ends
}

/// The sweep's table keeps its columns under their names whatever the key's length
/// (`congestion_gain` is longer than the ten characters the first column had), and names a
/// key that ends in a node id by more than the id (`weights.5`, not `5`).
#[test]
fn sweep_table_columns_line_up_under_their_names() {
    let dir = Scratch::new("newuser34", "table");
    let f = scenario_file(&dir);
    for (param, name) in [
        ("protocol.congestion_gain=0.25,1", "congestion_gain"),
        ("protocol.weights.5=1,2", "weights.5"),
        ("flows.0.rate_pps=0.5,1", "rate_pps"),
    ] {
        let out = dir.join("sw");
        let text =
            ok(&["sweep", &f, "--param", param, "--set", "protocol.policy=weighted", "--out", out.to_str().unwrap()]);
        let lines: Vec<&str> = text.lines().take(3).collect();
        assert_eq!(lines[0].split_whitespace().next(), Some(name), "{param}:\n{text}");
        let header = field_ends(lines[0]);
        for row in &lines[1..] {
            assert_eq!(field_ends(row), header, "{param}: a column is not under its name:\n{text}");
        }
    }
}

/// `wsn run` has no `--seeds`: instead of clap's hint at `--seed` (which takes a seed, not a
/// count), the refusal says how to run several seeds, with the count given.
#[test]
fn run_with_seeds_says_how_to_run_several_seeds() {
    let o = wsn(&["run", "nu34.toml", "--seeds", "3"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "a usage error: {err}");
    assert!(err.contains("wsn sweep SCENARIO --param seed=1:3:1"), "{err}");
    assert!(err.contains("--seeds 3"), "{err}");
    assert!(!err.contains("similar argument"), "{err}");
    // Without a count, the same advice (clap said only that a value is required).
    let o = wsn(&["run", "nu34.toml", "--seeds"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "a usage error: {err}");
    assert!(err.contains("wsn sweep SCENARIO --param seed=1:K:1"), "{err}");
    // Not offered in the help either, whose --seed points at the sweep.
    let help = String::from_utf8_lossy(&wsn(&["run", "--help"]).stdout).into_owned();
    assert!(!help.contains("--seeds"), "{help}");
    assert!(help.contains("--param seed=1:5:1"), "{help}");
}

/// Horizontal segments of the polylines of colour `stroke` in an SVG, as (x0, x1, y), longer
/// than nothing.
fn horizontal_segments(svg: &str, stroke: &str) -> Vec<(f64, f64, f64)> {
    let mut out = Vec::new();
    for line in svg.lines().filter(|l| l.starts_with("<polyline") && l.contains(&format!("stroke=\"{stroke}\""))) {
        let pts = line.split("points=\"").nth(1).unwrap().split('"').next().unwrap();
        let pts: Vec<(f64, f64)> = pts
            .split_whitespace()
            .map(|p| {
                let (x, y) = p.split_once(',').unwrap();
                (x.parse().unwrap(), y.parse().unwrap())
            })
            .collect();
        for w in pts.windows(2) {
            if w[0].1 == w[1].1 && w[0].0 != w[1].0 {
                out.push((w[0].0.min(w[1].0), w[0].0.max(w[1].0), w[0].1));
            }
        }
    }
    out
}

/// The sweep figure's offered-load line (y = x) is dashed, and so is its legend sample: a solid
/// sample read as a fourth series. The diagonal line has no horizontal segment, so the
/// horizontal grey segments are the legend's: two short dashes, not one 20-pixel line.
#[test]
fn the_sweep_legend_draws_the_offered_load_dashed() {
    let dir = Scratch::new("newuser34", "legend");
    let f = scenario_file(&dir);
    let out = dir.join("sw");
    ok(&["sweep", &f, "--param", "flows.0.rate_pps=0.5,1", "--out", out.to_str().unwrap()]);
    let svg = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
    assert!(svg.contains("offered load (y = x)"), "no offered-load line");
    let grey = horizontal_segments(&svg, "#5A5A5A");
    assert!(grey.len() >= 2, "{grey:?}");
    assert!(grey.iter().all(|s| s.2 == grey[0].2), "one legend row: {grey:?}");
    assert!(grey.iter().all(|s| s.1 - s.0 <= 10.0), "a solid legend sample: {grey:?}");
}

/// A sweep into a folder where an earlier sweep stopped keeps that sweep's finished rows
/// (`sweep.csv.partial`) as `sweep.csv.partial.earlier` and says so, instead of emptying the file
/// for its own rows; its own results are as usual. A second such file goes to `.earlier.2`
/// (the first is not replaced); one without rows is removed without a word.
#[test]
fn an_earlier_unfinished_sweeps_rows_are_kept() {
    let dir = Scratch::new("newuser34", "earlier");
    let f = scenario_file(&dir);
    let out = dir.join("sw");
    std::fs::create_dir(&out).unwrap();
    let earlier = "x,seed\n0.25,1\n0.5,1\n";
    std::fs::write(out.join("sweep.csv.partial"), earlier).unwrap();
    let text = ok(&["sweep", &f, "--param", "flows.0.rate_pps=1", "--out", out.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(out.join("sweep.csv.partial.earlier")).unwrap(), earlier);
    assert!(text.contains("2 row(s)") && text.contains("sweep.csv.partial.earlier"), "{text}");
    assert!(!out.join("sweep.csv.partial").exists(), "the finished sweep's own partial file stays");
    assert_eq!(csv_rows(&out.join("sweep.csv")).len(), 1);
    // Another interrupted sweep's rows do not replace the kept ones: they go to `.earlier.2`.
    let second = "x,seed\n0.75,1\n";
    std::fs::write(out.join("sweep.csv.partial"), second).unwrap();
    let text = ok(&["sweep", &f, "--param", "flows.0.rate_pps=1", "--out", out.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(out.join("sweep.csv.partial.earlier")).unwrap(), earlier);
    assert_eq!(std::fs::read_to_string(out.join("sweep.csv.partial.earlier.2")).unwrap(), second);
    assert!(text.contains("1 row(s)") && text.contains("sweep.csv.partial.earlier.2"), "{text}");
    // One stopped before its first run finished left only the header: removed, nothing kept.
    std::fs::write(out.join("sweep.csv.partial"), "x,seed\n").unwrap();
    let text = ok(&["sweep", &f, "--param", "flows.0.rate_pps=1", "--out", out.to_str().unwrap()]);
    assert!(!text.contains("kept "), "{text}");
    assert!(!out.join("sweep.csv.partial.earlier.3").exists());
    assert_eq!(std::fs::read_to_string(out.join("sweep.csv.partial.earlier")).unwrap(), earlier);
    assert_eq!(std::fs::read_to_string(out.join("sweep.csv.partial.earlier.2")).unwrap(), second);
}
