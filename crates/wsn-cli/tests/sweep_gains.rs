//! `wsn gains` and `wsn sweep` as a user runs them: a gain file gives back the scenario's links
//! exactly, says how it was written, and a sweep's errors, console table and CSV say what they
//! are about.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn wsn() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wsn"))
}

/// A fresh temporary folder for one test.
fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wsn-sweep-gains-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[track_caller]
fn ok(args: &[&str]) -> Output {
    let o = wsn().args(args).output().expect("wsn runs");
    assert!(o.status.success(), "wsn {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

/// `wsn ARGS` fails with a non-zero exit, no panic; returns its standard error.
#[track_caller]
fn fails(args: &[&str]) -> String {
    let o = wsn().args(args).output().expect("wsn runs");
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "wsn {args:?} succeeded");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// The texts of an SVG file that plotters wrote (each on the line after its `<text` tag).
fn svg_texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = svg.lines().collect();
    lines.windows(2).filter(|w| w[0].starts_with("<text")).map(|w| w[1].trim().to_string()).collect()
}

/// A run's trace hash, after checking that it carried traffic (office40's flows start at 300 s).
fn trace_sha(dir: &Path) -> String {
    let s = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    let v: serde_json::Value = serde_json::from_str(&s).unwrap();
    assert!(v["totals"]["delivered"].as_u64().expect("totals.delivered") > 100, "{s}");
    v["trace_sha256"].as_str().expect("trace_sha256").to_string()
}

/// `wsn gains` then `topology.gains_file` gives back the same network: the same trace, bit for
/// bit, with and without per-node noise offsets (the header's `noise_floor_dbm` and the
/// `# wsn noise_offset` lines give each δ back exactly; office40 and lrwpan40 ship with S = 0, so
/// the USC model's hardware variance is set to make the offsets non-zero). A file whose header
/// lacks the floor, as earlier versions wrote, is read as before: offsets centred on their mean.
#[test]
fn gain_file_round_trip_gives_the_same_trace() {
    let d = tmp("roundtrip");
    let usc = ["radio.link.s11=3.7", "radio.link.s12=-3.3", "radio.link.s22=6.0", "radio.noise_offsets=true"];
    let cases: [(&str, &[&str]); 4] = [
        ("office40", &["radio.noise_offsets=false"]),
        ("office40", &usc),
        ("office40", &[&usc[..], &["topology.seed=7"]].concat()),
        ("lrwpan40", &usc),
    ];
    for (k, (scenario, sets)) in cases.iter().enumerate() {
        let common: Vec<&str> = sets.iter().flat_map(|s| ["--set", s]).collect();
        let file = |name: &str| d.join(format!("{k}-{name}"));
        let g = file("g.txt");
        ok(&[&["gains", scenario, "--out", g.to_str().unwrap()][..], &common].concat());
        let run = |out: &Path, extra: &[&str]| {
            let a = [
                &["run", scenario, "-q", "--set", "duration_s=420", "--set", "output.plots=false", "--out"][..],
                &[out.to_str().unwrap()],
                &common,
                extra,
            ]
            .concat();
            ok(&a);
            trace_sha(out)
        };
        let from = |g: &Path| format!("topology.gains_file={:?}", g.to_str().unwrap());
        let direct = run(&file("direct"), &[]);
        let from_file = run(&file("file"), &["--set", &from(&g)]);
        assert_eq!(
            direct, from_file,
            "{scenario} {sets:?}: a run on the exported gains differs from the scenario's own"
        );
        // The offsets themselves come back bit for bit: exported again, the file's noise lines
        // and offsets are the same text.
        let g2 = file("g2.txt");
        ok(&[&["gains", scenario, "--out", g2.to_str().unwrap(), "--set", &from(&g)][..], &common].concat());
        let body = |p: &Path| std::fs::read_to_string(p).unwrap().lines().skip(1).collect::<Vec<_>>().join("\n");
        assert!(body(&g) == body(&g2), "{scenario} {sets:?}: exported again, the gains or noise lines differ");
        if sets.contains(&"radio.link.s11=3.7") {
            let text = std::fs::read_to_string(&g).unwrap();
            assert!(text.contains("\n# wsn noise_offset 1 "), "{text}");
            // Without the header's floor (earlier versions), the offsets are centred: a
            // different trace, as documented.
            let old = file("old.txt");
            let (head, rest) = text.split_once('\n').unwrap();
            let stripped = head.split(' ').filter(|w| !w.starts_with("noise_floor_dbm=")).collect::<Vec<_>>().join(" ");
            assert_ne!(stripped, head);
            std::fs::write(&old, format!("{stripped}\n{rest}")).unwrap();
            assert_ne!(direct, run(&file("old"), &["--set", &from(&old)]), "{scenario} {sets:?}");
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

/// Every `wsn gains` file starts with a `#` line saying how it was written, which the reader
/// skips; a file marked folded, run at a non-zero transmit power, gets a warning.
#[test]
fn gain_file_header_and_folded_power_warning() {
    let d = tmp("header");
    let (plain, folded) = (d.join("plain.txt"), d.join("folded.txt"));
    ok(&["gains", "office40", "--out", plain.to_str().unwrap()]);
    ok(&["gains", "office40", "--fold-tx-power", "--out", folded.to_str().unwrap()]);
    let first = |p: &Path| std::fs::read_to_string(p).unwrap().lines().next().unwrap().to_string();
    let (hp, hf) = (first(&plain), first(&folded));
    for h in [&hp, &hf] {
        assert!(h.starts_with("# wsn gains:"), "{h}");
        assert!(h.contains("scenario=\"office40\"") && h.contains("tx_power_dbm=-8"), "{h}");
        assert!(h.contains("pruned_below_dbm=-") && h.contains("per_receiver_offset=yes"), "{h}");
    }
    assert!(hp.contains("tx_power_folded=no") && hf.contains("tx_power_folded=yes"), "{hp}\n{hf}");
    // Standard output gets the header too.
    let o = ok(&["gains", "office40", "--out", "-"]);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("# wsn gains: tx_power_folded=no"));
    let run = |file: &Path, extra: &[&str]| {
        let g = format!("topology.gains_file={:?}", file.to_str().unwrap());
        let out = d.join("run");
        let a =
            [
                &[
                    "run",
                    "office40",
                    "-q",
                    "--set",
                    "duration_s=5",
                    "--set",
                    "output.plots=false",
                    "--set",
                    &g,
                    "--out",
                ][..],
                &[out.to_str().unwrap()],
                extra,
            ]
            .concat();
        String::from_utf8_lossy(&ok(&a).stderr).into_owned()
    };
    let twice = "counts twice";
    let e = run(&folded, &[]);
    assert!(e.contains(twice) && e.contains("--fold-tx-power"), "{e}");
    assert!(!run(&plain, &[]).contains(twice));
    assert!(!run(&folded, &["--set", "radio.link.tx_power_dbm=0"]).contains(twice));
    std::fs::remove_dir_all(&d).ok();
}

/// A sweep's value goes to the loader as a `--set`, but its errors name the `--param` the user
/// wrote, whatever their form.
#[test]
fn sweep_errors_name_the_param_not_a_set() {
    let out = tmp("param-errors");
    let o = out.to_str().unwrap();
    for (param, says) in [
        ("flows.5.rate_pps=1", "--param flows.5.rate_pps: index 5 out of range"),
        ("flows[5].rate_pps=1", "--param flows[5].rate_pps: index 5 out of range"),
        ("flows.0=1", "--param flows.0: a whole element"),
        // The loader names where these keys and values came from after its message: the
        // `--param`, not the `--set` the sweep passed it.
        ("mac.max_retriez=1", "built-in scenario office40: mac.max_retriez: unknown MAC"),
        ("mac.max_retriez=1", "(from --param mac.max_retriez=1)"),
        (
            "protocol.congestion_gainn=1",
            "built-in scenario rcrt-baseline: protocol.congestion_gainn = 1: unknown field",
        ),
        ("protocol.congestion_gainn=1", "(from --param protocol.congestion_gainn=1)"),
        (
            "flows.0.rate_pps=-1",
            "built-in scenario office40: flows[0].rate_pps = -1: must be > 0 (from --param flows.0.rate_pps=-1)",
        ),
    ] {
        let scenario = if param.starts_with("protocol.") { "rcrt-baseline" } else { "office40" };
        let e = fails(&["sweep", scenario, "--param", param, "--out", o]);
        assert!(e.contains(says), "{param}: {e}");
        assert!(!e.contains("--set"), "{param}: {e}");
    }
    std::fs::remove_dir_all(&out).ok();
}

/// A sweep value whose runs carry no traffic prints "–", never NaN; a value where some seeds
/// carry traffic and others do not averages the seeds that have a value.
#[test]
fn sweep_table_prints_no_nan() {
    let out = tmp("nan");
    let o = out.to_str().unwrap();
    // One second: office40's flows start at 300 s, so nothing is sent.
    let r = ok(&["sweep", "office40", "--param", "flows.0.rate_pps=1:1:1", "--set", "duration_s=1", "--out", o]);
    let table = String::from_utf8_lossy(&r.stdout).into_owned();
    assert!(!table.contains("NaN"), "{table}");
    let row = table.lines().find(|l| l.trim_start().starts_with("1 ")).expect("the value's line");
    assert_eq!(row.split_whitespace().collect::<Vec<_>>(), ["1", "–", "–", "–", "–"], "{table}");
    std::fs::remove_dir_all(&out).ok();
}

/// Values and seeds each have a cap, and so does their product: the error names both counts.
#[test]
fn sweep_refuses_more_than_100000_runs() {
    let out = tmp("cap");
    let o = out.to_str().unwrap();
    let e = fails(&["sweep", "office40", "--param", "flows.0.rate_pps=1:10000:1", "--seeds", "11", "--out", o]);
    assert!(e.contains("10000 values × --seeds 11 = 110000 runs, more than the 100000"), "{e}");
    assert!(!out.join("sweep.csv").exists());
    std::fs::remove_dir_all(&out).ok();
}

/// sweep.csv names the swept key and carries the packet counts behind its delivery ratio; the
/// knee is printed for a rate only.
#[test]
fn sweep_csv_describes_itself_and_the_knee_is_for_rates() {
    let out = tmp("csv");
    let o = out.to_str().unwrap();
    let sweep = |param: &str| {
        let r = ok(&["sweep", "lrwpan40", "--param", param, "--set", "duration_s=60", "--seeds", "2", "--out", o]);
        let csv = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
        (String::from_utf8_lossy(&r.stdout).into_owned(), csv)
    };
    let (table, csv) = sweep("flows.0.rate_pps=0.5,1");
    assert!(table.contains("knee:"), "{table}");
    // The plot's x axis names the key and its unit.
    assert!(svg_texts(&out.join("sweep.svg")).iter().any(|t| t == "flows.0.rate_pps (pkt/s)"));
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|c| *c == name).unwrap_or_else(|| panic!("{name} in {head:?}"));
    // The earlier columns keep their places.
    assert_eq!(&head[..3], ["x", "seed", "mean_goodput_pps"]);
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 4);
    for r in &rows {
        assert_eq!(r[col("param")], "flows.0.rate_pps");
        let orig: u64 = r[col("originated")].parse().unwrap();
        let del: u64 = r[col("delivered")].parse().unwrap();
        let ratio: f64 = r[col("delivery_ratio")].parse().unwrap();
        assert!(orig > 0 && del <= orig, "{r:?}");
        assert!((del as f64 / orig as f64 - ratio).abs() < 1e-12, "{r:?}");
    }
    // sweep_flows.csv: each run's flows, whose packets add up to the run's and whose goodputs
    // span its min and max (one flow's goodput against the swept value).
    let flows = std::fs::read_to_string(out.join("sweep_flows.csv")).unwrap();
    assert_eq!(
        flows.lines().next().unwrap(),
        "x,seed,flow,source,sink,originated,delivered,goodput_pps,delivery_ratio,param"
    );
    let frows: Vec<Vec<&str>> = flows.lines().skip(1).map(|l| l.split(',').collect()).collect();
    let mut counted = 0;
    for r in &rows {
        let mine: Vec<&Vec<&str>> = frows.iter().filter(|f| f[0] == r[col("x")] && f[1] == r[col("seed")]).collect();
        counted += mine.len();
        assert!(mine.len() > 1, "{r:?}: {mine:?}");
        let sum = |i: usize| mine.iter().map(|f| f[i].parse::<u64>().unwrap()).sum::<u64>();
        assert_eq!(sum(5).to_string(), r[col("originated")], "{r:?}");
        assert_eq!(sum(6).to_string(), r[col("delivered")], "{r:?}");
        let gp: Vec<f64> = mine.iter().map(|f| f[7].parse().unwrap()).collect();
        let (lo, hi) = (gp.iter().copied().fold(f64::INFINITY, f64::min), gp.iter().copied().fold(0.0, f64::max));
        assert_eq!(lo, r[col("min_goodput_pps")].parse::<f64>().unwrap(), "{r:?}");
        assert_eq!(hi, r[col("max_goodput_pps")].parse::<f64>().unwrap(), "{r:?}");
        // Written the same way in both files (`1.0` in both, not `1` in one), so they join as text.
        let top = mine.iter().find(|f| f[7].parse::<f64>().unwrap() == hi).unwrap();
        assert_eq!(top[7], r[col("max_goodput_pps")], "{r:?}");
        assert!(r[col("mean_goodput_pps")].contains('.'), "{r:?}");
        assert!(mine.iter().all(|f| f[9] == "flows.0.rate_pps"));
    }
    assert_eq!(counted, frows.len(), "a flow row of no run");
    // A key that is not a rate: no knee.
    let (table, csv) = sweep("mac.max_retries=1,2");
    assert!(!table.contains("knee"), "{table}");
    assert!(svg_texts(&out.join("sweep.svg")).iter().any(|t| t == "mac.max_retries"));
    assert!(csv.lines().nth(1).unwrap().ends_with(",mac.max_retries"), "{csv}");
    std::fs::remove_dir_all(&out).ok();
}

/// A sweep is deterministic whatever the number of threads: `--jobs 1` and `--jobs 2` write the
/// same sweep.csv, byte for byte.
#[test]
fn sweep_csv_is_the_same_with_one_or_two_jobs() {
    let out = tmp("jobs");
    let csv = |jobs: &str| {
        let d = out.join(jobs);
        let args = ["sweep", "lrwpan40", "--param", "flows.0.rate_pps=0.5,1,2", "--seeds", "2"];
        ok(&[&args[..], &["--set", "duration_s=60", "--jobs", jobs, "--out", d.to_str().unwrap()]].concat());
        std::fs::read(d.join("sweep.csv")).unwrap()
    };
    let (one, two) = (csv("1"), csv("2"));
    assert_eq!(String::from_utf8_lossy(&one).lines().count(), 7);
    assert!(one == two, "{}\n---\n{}", String::from_utf8_lossy(&one), String::from_utf8_lossy(&two));
    std::fs::remove_dir_all(&out).ok();
}

/// A sweep writes each finished run's row to sweep.csv.partial as it goes, so an interrupted
/// sweep keeps them; a sweep that completes leaves sweep.csv only, with the same rows.
#[test]
fn an_interrupted_sweep_keeps_its_finished_rows() {
    let out = tmp("partial");
    let o = out.to_str().unwrap();
    // One run at a time, ten of them, each long enough (office40, 15 minutes) to stop the
    // sweep in the middle.
    let args = [
        "sweep",
        "office40",
        "--param",
        "flows.0.rate_pps=0.1:1:0.1",
        "--set",
        "duration_s=900",
        "--jobs",
        "1",
        "--out",
        o,
    ];
    let mut child =
        wsn().args(args).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
    let partial = out.join("sweep.csv.partial");
    let start = std::time::Instant::now();
    let text = loop {
        let t = std::fs::read_to_string(&partial).unwrap_or_default();
        if t.lines().count() >= 3 || start.elapsed().as_secs() > 120 {
            break t;
        }
        assert!(child.try_wait().unwrap().is_none(), "the sweep ended before two runs were seen: {t}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(text.lines().count() >= 3, "no rows after two minutes: {text}");
    assert!(!out.join("sweep.csv").exists());
    // The same rows as a finished sweep's, in order, and only whole lines.
    let text = std::fs::read_to_string(&partial).unwrap();
    assert!(text.ends_with('\n'));
    ok(&[&args[..]].concat());
    assert!(!partial.exists(), "a finished sweep removes the partial file");
    let full = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    assert!(full.starts_with(&text), "{text}\n---\n{full}");
    assert_eq!(full.lines().count(), 11);
    std::fs::remove_dir_all(&out).ok();
}

/// When a sweep's results cannot be moved into place at the end (here a folder stands where
/// sweep.png goes), the error names sweep.csv.partial, which holds every finished run's row.
#[test]
fn a_sweep_whose_results_cannot_be_moved_into_place_names_its_partial_rows() {
    let out = tmp("commit");
    let o = out.to_str().unwrap();
    std::fs::create_dir(out.join("sweep.png")).unwrap();
    // One simulated second: office40's flows start at 300 s, so each run is quick.
    let args = ["sweep", "office40", "--param", "flows.0.rate_pps=1,2", "--set", "duration_s=1", "--out", o];
    let e = fails(&args);
    let partial = out.join("sweep.csv.partial");
    assert!(e.contains("sweep.png is a folder"), "{e}");
    assert!(e.contains(&format!("the 2 runs that finished are in {}", partial.display())), "{e}");
    assert_eq!(std::fs::read_to_string(&partial).unwrap().lines().count(), 3);
    assert!(!out.join("sweep.csv").exists());
    std::fs::remove_dir_all(&out).ok();
}
