//! A researcher following docs/extending.md: the `rand25` scenario it shows, run and swept, and a
//! few wrong inputs along the way. Each test runs in a second or two.

mod common;

use common::{assert_refused, run_text, wsn_output, Scratch};

/// The example scenario of docs/extending.md ("Add a scenario"), shortened to 200 s.
const RAND25: &str = r#"name = "rand25"
duration_s = 200.0

[topology]
layout = { kind = "random", nodes = 25, width_m = 40.0, height_m = 40.0 }

[[flows]]
sources = 7
rate_pps = 1.0
start_s = 120.0

[[flows]]
sources = 19
rate_pps = 0.25
start_s = 120.0
"#;

/// A typo in the head of a `--set` path (`flow.0.rate_pps` for `flows.0.rate_pps`) is an
/// unknown key, named as such with the keys the format has; it used to be read as a list the
/// scenario lacks, with the advice to set `flow=[{…}]` whole, a key refused in turn.
#[test]
fn set_typo_before_an_index_is_an_unknown_key() {
    let dir = Scratch::new("newuser36", "set_typo");
    let unwanted: &[&str] = &["give the list whole", "so no element"];
    for key in ["flow.0.rate_pps=1", "flowz.0.rate_pps=1"] {
        let head = key.split('.').next().unwrap();
        assert_refused(
            key,
            run_text(&dir, "rand25", RAND25, &["--set", key]),
            &[&format!("unknown field `{head}`"), "`flows`"],
            unwanted,
        );
    }
    // The same through `wsn sweep --param`.
    let file = dir.join("rand25.toml");
    let o = wsn_output(&[
        "sweep",
        file.to_str().unwrap(),
        "--param",
        "flow.0.rate_pps=1,2",
        "--out",
        dir.join("sweep").to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_refused("--param flow.0.rate_pps", (o.status.code(), err), &["unknown field `flow`"], unwanted);
    // A list of the format that the scenario lacks keeps its advice; `topology.sinks` holds ids,
    // not tables.
    assert_refused(
        "outages.0.from_s",
        run_text(&dir, "rand25", RAND25, &["--set", "outages.0.from_s=3"]),
        &["the scenario has no `outages`, so no element 0; give the list whole (--set 'outages=[{…}]')"],
        &[],
    );
}

/// docs/extending.md, "A cap without code": `demand_limited` with every flow's demand at the cap
/// (0.3 pkt/s) on the RCRT baseline, reference-code profile, 1,500 s. No allocation above the cap
/// and R at most 39 × 0.3, but congestion cuts take R below N·cap, so most allocations are below
/// it; the guide said "every allocation 0.300 pkt/s".
#[test]
fn a_cap_without_code_keeps_rates_at_most_the_cap() {
    let dir = Scratch::new("newuser36", "cap_without_code");
    let out = dir.join("out");
    common::wsn_ok(&[
        "run",
        "rcrt-baseline",
        "-q",
        "--out",
        out.to_str().unwrap(),
        "--set",
        "duration_s=1500",
        "--set",
        "protocol.profile=\"reference_code\"",
        "--set",
        "protocol.policy=\"demand_limited\"",
        "--set",
        "flows.0.demand_pps=0.3",
    ]);
    let num = |row: &std::collections::HashMap<String, String>, k: &str| row[k].parse::<f64>().unwrap();
    let rates: Vec<f64> = common::csv_rows(&out.join("rates.csv")).iter().map(|r| num(r, "rate_pps")).collect();
    let totals: Vec<f64> = common::csv_rows(&out.join("total_rate.csv")).iter().map(|r| num(r, "total_pps")).collect();
    // The wire's 16-bit rate code gives 0.30005 for 0.3.
    let max = rates.iter().copied().fold(0.0, f64::max);
    assert!((0.299..=0.3001).contains(&max), "largest allocation {max}");
    let below = rates.iter().filter(|&&r| r < 0.299).count();
    assert!(below * 2 > rates.len(), "{below} of {} allocations below the cap", rates.len());
    let r_max = totals.iter().copied().fold(0.0, f64::max);
    assert!(r_max <= 39.0 * 0.3001, "R at most {r_max}");
}

/// docs/extending.md sweeps one of rand25's two flows (`flows.1.rate_pps`); the sweep figure's
/// dashed "offered load (y = x)" line was that one flow's offered load, drawn against the mean
/// goodput of both, which sat above it (0.41 pkt/s at x = 0.25, the other flow offering 1). With
/// several `[[flows]]` tables the line is left out; with one it stays.
#[test]
fn the_sweep_draws_y_equals_x_only_for_the_only_flows_table() {
    let dir = Scratch::new("newuser36", "sweep_offered");
    let two = dir.join("rand25.toml");
    std::fs::write(&two, RAND25).unwrap();
    let one = dir.join("one.toml");
    std::fs::write(&one, RAND25.split("\n[[flows]]\nsources = 19").next().unwrap()).unwrap();
    for (file, param, drawn) in [(&two, "flows.1.rate_pps=0.25,0.5", false), (&one, "flows.0.rate_pps=0.25,0.5", true)]
    {
        let out = dir.join(format!("sweep-{drawn}"));
        common::wsn_ok(&["sweep", file.to_str().unwrap(), "--param", param, "--out", out.to_str().unwrap()]);
        let svg = std::fs::read_to_string(out.join("sweep.svg")).unwrap();
        assert_eq!(svg.contains("offered load (y = x)"), drawn, "{param} on {}", file.display());
    }
}
