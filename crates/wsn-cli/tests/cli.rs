//! The `wsn` binary as a user runs it: every shipped scenario file loads, a short run writes its
//! outputs, bad input gets an error (not a panic), and `wsn compare --quick` writes the numbers
//! the IFRC issue asks for.

mod common;

use common::Numbers;
use std::path::{Path, PathBuf};
use std::process::Command;

fn wsn() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wsn"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn scenario_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("scenarios/ readable") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            scenario_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "toml") {
            out.push(p);
        }
    }
}

/// Every scenario file in `scenarios/` loads and runs for a few simulated seconds.
#[test]
fn every_shipped_scenario_runs() {
    let mut files = Vec::new();
    scenario_files(&root().join("scenarios"), &mut files);
    files.sort();
    assert!(files.len() >= 20, "only {} scenario files found", files.len());
    let out = std::env::temp_dir().join(format!("wsn-cli-test-{}", std::process::id()));
    for f in &files {
        let o = wsn()
            .args(["run", f.to_str().unwrap(), "-q", "--set", "duration_s=5", "--set", "output.plots=false", "--out"])
            .arg(&out)
            .output()
            .expect("wsn runs");
        assert!(o.status.success(), "{}: {}", f.display(), String::from_utf8_lossy(&o.stderr));
        assert!(out.join("summary.json").exists());
    }
    std::fs::remove_dir_all(&out).ok();
}

/// `wsn ARGS` fails with a non-zero exit, no panic, and an error that contains `says`.
#[track_caller]
fn fails_saying(args: &[&str], says: &str) {
    let o = wsn().args(args).output().expect("wsn runs");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(says) && !err.contains("panicked"), "{err}");
}

/// A misspelt key is an error that names it, with a non-zero exit and no panic.
#[test]
fn bad_override_is_an_error_not_a_panic() {
    fails_saying(&["run", "office40", "-q", "--set", "mac.max_retriez=3"], "mac.max_retriez");
}

#[test]
fn payload_bytes_is_refused_outside_rcrt() {
    fails_saying(&["reproduce", "ifrc", "--quick", "--payload-bytes", "6"], "--payload-bytes");
}

/// A payload the runs refuse stops the command before any run, and leaves no empty output
/// folder behind, nor the parents it made for it.
#[test]
fn a_refused_payload_leaves_no_folder() {
    let top = std::env::temp_dir().join(format!("wsn-refused-payload-{}", std::process::id()));
    let out = top.join("compare");
    let out_s = out.to_str().unwrap();
    fails_saying(&["compare", "--quick", "--rcrt-payload-bytes", "5", "--out", out_s], "payload");
    assert!(!top.exists(), "{} was left", top.display());
    fails_saying(&["compare", "--quick", "--seeds", "2", "--rcrt-payload-bytes", "5", "--out", out_s], "payload");
    assert!(!top.exists(), "{} was left", top.display());
    // A folder that was there stays, and so does whatever it holds.
    std::fs::create_dir_all(&top).unwrap();
    fails_saying(&["compare", "--quick", "--rcrt-payload-bytes", "5", "--out", out_s], "payload");
    assert!(top.is_dir() && !out.exists(), "the folder that was there went, or the new one stayed");
    std::fs::remove_dir_all(&top).ok();
}

impl Numbers {
    /// The value of `key` with its rounding error ([`sig4_err`]).
    fn approx(&self, key: &str) -> (f64, f64) {
        let v = self.num(key);
        (v, sig4_err(v))
    }
}

/// The largest rounding error of a value printed with four significant digits (the `ours` column,
/// `reproduce::sig4`), judged from the printed value.
fn sig4_err(x: f64) -> f64 {
    if x == 0.0 {
        return 0.0;
    }
    (0.5 * 10f64.powi(x.abs().log10().floor() as i32 - 3)).max(0.5e-12)
}

/// The range of a / b for a in a.0 ± a.1 and b in b.0 ± b.1 (both non-negative quantities).
fn quotient_range(a: (f64, f64), b: (f64, f64)) -> (f64, f64) {
    assert!(a.0 >= 0.0 && b.0 >= 0.0, "{a:?} / {b:?}");
    let lo = (a.0 - a.1).max(0.0) / (b.0 + b.1);
    let hi = if b.0 - b.1 > 0.0 { (a.0 + a.1) / (b.0 - b.1) } else { f64::INFINITY };
    (lo, hi)
}

/// `q` (± its error) can be a / b, each known within its error.
#[track_caller]
fn assert_quotient(what: &str, q: (f64, f64), a: (f64, f64), b: (f64, f64)) {
    let (lo, hi) = quotient_range(a, b);
    assert!(q.0 + q.1 >= lo * (1.0 - 1e-12) && q.0 - q.1 <= hi * (1.0 + 1e-12), "{what} = {q:?}, not {a:?} / {b:?}");
}

/// `key` is a share: n/a or within [0, 1].
#[track_caller]
fn assert_share(n: &Numbers, key: &str) {
    let v = n.get(key);
    assert!(v.is_none_or(|x| (0.0..=1.0).contains(&x)), "{key} = {v:?} is not a share");
}

/// The first number after `after` in `text` (digits, a point, a minus sign).
#[track_caller]
fn number_after(text: &str, after: &str) -> f64 {
    let at = text.find(after).unwrap_or_else(|| panic!("no {after:?} in {text:?}")) + after.len();
    let digits: String =
        text[at..].trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '.' || *c == '-').collect();
    digits.parse().unwrap_or_else(|_| panic!("no number after {after:?} in {text:?}"))
}

/// The rows of the table of runs in `wsn compare`'s report, by (run, MAC): mean goodput,
/// second-half goodput, mean rate (pkt/s, printed with three decimals) and queue drops.
fn compare_table(report: &str) -> Vec<(String, String, [f64; 3], u64)> {
    report
        .lines()
        .filter(|l| l.starts_with("| ") && l.contains(" profile) | "))
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            let x = |i: usize| -> f64 { c[i].parse().unwrap_or_else(|_| panic!("column {i} of {l}")) };
            (c[1].to_string(), c[2].to_string(), [x(3), x(4), x(5)], c[8].parse().unwrap_or_else(|_| panic!("{l}")))
        })
        .collect()
}

/// Check one seed's comparison: every derived key against the report's table of runs (values
/// printed with three decimals, ± 0.0005) or the keys it divides, and the copies under the
/// `wsn reproduce ifrc` names.
fn check_compare_seed(dir: &Path) {
    let n = Numbers::read(&dir.join("numbers.csv"));
    let report = std::fs::read_to_string(dir.join("report.md")).unwrap();
    let table = compare_table(&report);
    assert_eq!(table.len(), 10, "{}: two profiles of five runs each", dir.display());
    // The set-up paragraph describes the runs' own packets and offered load (scenarios/compare/).
    for said in [
        "Data packets: RCRT 86 bytes (14 + 8 + 64; the small-packet variant 32 = 14 + 8 + 10), IFRC 32 (14 + 12 + 6).",
        "RCRT's applications always have data (4 pkt/s offered)",
    ] {
        assert!(report.contains(said), "{}: the report does not say `{said}`", dir.display());
    }
    let run = |name: &str, mac: &str| -> ([f64; 3], u64) {
        let r = table.iter().find(|r| r.0 == name && r.1 == mac);
        let r = r.unwrap_or_else(|| panic!("{}: no row {name} on {mac}", dir.display()));
        (r.2, r.3)
    };
    // Every figure is a count, a rate or a ratio of them.
    for (key, v, _) in &n.rows {
        assert!(v.is_none_or(|x| x >= 0.0), "{}: {key} = {v:?}", dir.display());
    }
    const T: f64 = 0.0005;
    for (p, sfx) in [("paper", ""), ("reference_code", "_reference_code")] {
        let hw = run(&format!("RCRT ({p} profile)"), "tinyos1_tenet").0;
        let sw = run(&format!("RCRT ({p} profile)"), "ifrc2006").0;
        let small = run(&format!("RCRT 32-byte packets ({p} profile)"), "tinyos1_tenet").0;
        let frozen = run(&format!("RCRT frozen tree ({p} profile)"), "tinyos1_tenet").0;
        let ifrc = run(&format!("IFRC ({p} profile)"), "ifrc2006").0;
        // (key, numerator, denominator, column: 0 mean goodput, 1 second half, 2 mean rate)
        let derived = [
            ("rcrt_over_ifrc_same_mac", sw, 0),
            ("rcrt_over_ifrc_paper_mac", hw, 0),
            ("rcrt_over_ifrc_paper_mac_steady", hw, 1),
            ("rcrt_frozen_tree_over_ifrc", frozen, 0),
            ("rcrt_small_packets_over_ifrc", small, 0),
            ("rcrt_over_ifrc_same_mac_rate", sw, 2),
            ("rcrt_over_ifrc_paper_mac_rate", hw, 2),
        ];
        for (key, num, col) in derived {
            let key = format!("{key}{sfx}");
            match n.get(&key) {
                Some(v) => assert_quotient(&key, (v, sig4_err(v)), (num[col], T), (ifrc[col], T)),
                // Not a number: 0/0 or x/0 (a denominator printed as 0.000), or a run without one.
                None => assert!(
                    num[col].is_nan() || ifrc[col].is_nan() || ifrc[col] < T,
                    "{key} is n/a, from {} / {}",
                    num[col],
                    ifrc[col]
                ),
            }
        }
    }
    // The keys behind them, and the ratio of two keys.
    let (ifrc, ifrc_drops) = run("IFRC (paper profile)", "ifrc2006");
    let hw = run("RCRT (paper profile)", "tinyos1_tenet").0;
    for (key, table_value) in [("cmp_ifrc_mean_goodput_pps", ifrc[0]), ("cmp_rcrt_mean_goodput_pps", hw[0])] {
        let (v, e) = n.approx(key);
        assert!((v - table_value).abs() <= e + T, "{key} = {v}, the table {table_value}");
    }
    assert_eq!(n.get("cmp_ifrc_queue_overflows"), Some(ifrc_drops as f64));
    assert_quotient(
        "rcrt_over_ifrc_paper_mac",
        n.approx("rcrt_over_ifrc_paper_mac"),
        n.approx("cmp_rcrt_mean_goodput_pps"),
        n.approx("cmp_ifrc_mean_goodput_pps"),
    );
    // Both IFRC-over-best-fixed ratios divide by the same best fixed goodput, so their quotient
    // is that of IFRC's second-half and whole-run goodputs.
    match (n.get("cmp_ifrc_over_best_fixed_steady"), n.get("cmp_ifrc_over_best_fixed")) {
        (Some(steady), Some(whole)) => {
            let (lo, hi) = quotient_range((steady, sig4_err(steady)), (whole, sig4_err(whole)));
            let (lo2, hi2) = quotient_range((ifrc[1], T), n.approx("cmp_ifrc_mean_goodput_pps"));
            assert!(lo <= hi2 && lo2 <= hi, "over best fixed: steady {steady} / whole {whole} vs {}", ifrc[1]);
        }
        (None, None) => {}
        other => panic!("one of the over-best-fixed ratios is n/a: {other:?}"),
    }
    // IFRC's weakest link: the table's last column ("29.1 % (3 → 0)") is numbers.csv's key to
    // 0.1 %, and the report flags the tree exactly when the printed share is below 25 %.
    for (p, sfx) in [("paper", ""), ("reference_code", "_reference_code")] {
        let row = report
            .lines()
            .find(|l| l.starts_with(&format!("| IFRC ({p} profile) | ifrc2006 |")))
            .unwrap_or_else(|| panic!("{}: no IFRC row", dir.display()));
        let cell = row.trim_end_matches('|').rsplit('|').next().unwrap().trim();
        let key = format!("cmp_ifrc_weakest_link_ack{sfx}");
        let v = n.get(&key).unwrap_or_else(|| panic!("{}: {key} is n/a", dir.display()));
        let pct: f64 = cell.split(" %").next().and_then(|x| x.parse().ok()).unwrap_or_else(|| panic!("{cell}"));
        assert!((100.0 * v - pct).abs() <= 0.05 + 0.01, "{key} = {v}, the table says {cell}");
        let flagged = report.contains(&format!("A weak link in IFRC's frozen tree ({p} profile)"));
        assert_eq!(flagged, pct < 25.0, "{}: {key} = {v} ({cell}), flagged {flagged}", dir.display());
    }
    // The copies under the names `wsn reproduce ifrc` uses.
    for (copy, of) in [
        ("queue_overflows", "cmp_ifrc_queue_overflows"),
        ("ifrc_mean_goodput_pps", "cmp_ifrc_mean_goodput_pps"),
        ("ifrc_over_best_fixed", "cmp_ifrc_over_best_fixed_steady"),
    ] {
        assert_eq!(n.get(copy), n.get(of), "{copy} is a copy of {of}");
    }
}

/// `wsn compare --quick` runs RCRT and IFRC side by side and writes numbers.csv with the keys
/// the IFRC issue names; `--seed 5 --seeds 2` runs it on seeds 5 and 6, each report naming its
/// seed, and the top-level numbers.csv holds the medians. Each seed's ratios are the quotients
/// of the goodputs and rates its report lists ([`check_compare_seed`]).
#[test]
fn compare_quick_writes_the_required_numbers() {
    let out = std::env::temp_dir().join(format!("wsn-compare-test-{}", std::process::id()));
    let o = wsn()
        .args(["compare", "--quick", "--seed", "5", "--seeds", "2", "--out"])
        .arg(&out)
        .output()
        .expect("wsn runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let seeds = std::fs::read_to_string(out.join("seeds.csv")).expect("seeds.csv");
    assert!(seeds.starts_with("key,paper,seed_5,seed_6,median,min,max,unit"), "{seeds}");
    let report3 = std::fs::read_to_string(out.join("seed-6/report.md")).expect("seed 6's report");
    assert!(
        report3.contains("Run seed: 6 (seed 2 of `--seeds 2`, starting at 5)"),
        "{}",
        &report3[..report3.len().min(300)]
    );
    // The report says what every run shares: the traffic window (a quick run's 2,400 s).
    assert!(report3.contains("traffic from 600 s to 2400 s (1800 s)"), "{report3}");
    let csv = std::fs::read_to_string(out.join("numbers.csv")).expect("numbers.csv");
    assert!(csv.starts_with("key,paper,ours,unit,note"));
    for key in [
        "queue_overflows",
        "ifrc_mean_goodput_pps",
        "ifrc_over_best_fixed",
        "rcrt_over_ifrc_same_mac",
        "rcrt_over_ifrc_paper_mac",
        "rcrt_over_ifrc_same_mac_reference_code",
        "rcrt_over_ifrc_paper_mac_reference_code",
        "rcrt_over_ifrc_same_mac_rate",
        "rcrt_over_ifrc_paper_mac_rate",
    ] {
        let line = csv.lines().find(|l| l.starts_with(&format!("{key},"))).unwrap_or_else(|| panic!("{key} missing"));
        let ours: f64 = line.split(',').nth(2).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{line}"));
        assert!(ours.is_finite() && ours >= 0.0, "{line}");
    }
    // Each seed's derived numbers against what they derive from.
    check_compare_seed(&out.join("seed-5"));
    check_compare_seed(&out.join("seed-6"));
    // The good-tree freeze (docs/ifrc.md, "Known problems"): seed 6's MultiHopLQI tree has two
    // links expected to carry about half their frames, which the freeze replaces in IFRC's tree
    // (and one of them in the frozen RCRT run's), and the report lists them; seed 5's IFRC tree
    // has none (its frozen RCRT run's tree, on another MAC, has). Until session 32 seed 6's IFRC tree kept them and was flagged (about a fifth of the
    // attempts acknowledged); now neither seed is. (If the simulation changes, pick a seed whose
    // freeze still replaces a link.)
    let report5 = std::fs::read_to_string(out.join("seed-5/report.md")).expect("seed 5's report");
    // Fig. 15's legend names the node whose rate each line is (the first flow's source).
    let fig = std::fs::read_to_string(out.join("seed-5/fig15-compare.svg")).expect("Fig. 15");
    for want in ["RCRT (hardware ACKs), node ", "RCRT (software ACKs), node ", "IFRC, node "] {
        let at = fig.find(want).unwrap_or_else(|| panic!("no {want:?} in Fig. 15"));
        assert!(fig[at + want.len()..].starts_with(|c: char| c.is_ascii_digit()), "{want:?} without a node id");
    }
    assert!(
        report3.contains(
            "**The good-tree freeze** changed IFRC's tree (both profiles; each link's expected share of frames on a \
             quiet channel): 4 → 0 (53 %) replaced by 4 → 2 (99.8 %); 7 → 5 (58 %) replaced by 7 → 6 (99.7 %)."
        ),
        "{report3}"
    );
    assert!(report3.contains("**The good-tree freeze** changed the frozen RCRT run's tree"), "{report3}");
    assert!(!report5.contains("The good-tree freeze** changed IFRC's tree"), "{report5}");
    for r in [&report3, &report5] {
        assert!(!r.contains("A weak link in IFRC's frozen tree"), "a seed is flagged");
    }
    // Every top-level value is the median of the two seeds' own numbers (their mean), and
    // seeds.csv lists both with that median, their minimum and maximum. A seed without a number
    // is left out of the median, or makes it n/a (a ratio over a best fixed rate beyond the
    // sweep).
    let (top, s2, s3) = (
        Numbers::read(&out.join("numbers.csv")),
        Numbers::read(&out.join("seed-5/numbers.csv")),
        Numbers::read(&out.join("seed-6/numbers.csv")),
    );
    let keys: Vec<&str> = s2.rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(keys, top.rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>());
    assert_eq!(keys, s3.rows.iter().map(|r| r.0.as_str()).collect::<Vec<_>>());
    let mut table = csv::Reader::from_path(out.join("seeds.csv")).unwrap();
    let seeds_rows: Vec<csv::StringRecord> = table.records().map(Result::unwrap).collect();
    assert_eq!(seeds_rows.len(), keys.len());
    for (key, rec) in keys.iter().zip(&seeds_rows) {
        let (a, b, m) = (s2.get(key), s3.get(key), top.get(key));
        match (a, b) {
            (Some(a), Some(b)) => {
                let m = m.unwrap_or_else(|| panic!("{key}: median of {a} and {b} is n/a"));
                assert!((m - (a + b) / 2.0).abs() <= sig4_err(m) * 1.000_001, "{key}: median {m} of {a} and {b}");
                let num = |i: usize| rec[i].parse::<f64>().unwrap_or_else(|_| panic!("{key}: {rec:?}"));
                assert_eq!((num(2), num(3), num(4)), (a, b, m), "{key}: seeds.csv {rec:?}");
                assert_eq!((num(5), num(6)), (a.min(b), a.max(b)), "{key}: seeds.csv {rec:?}");
            }
            (None, None) => assert_eq!(m, None, "{key}"),
            (Some(x), None) | (None, Some(x)) => assert!(m.is_none_or(|m| m == x), "{key}: {m:?} from {a:?}, {b:?}"),
        }
        assert_eq!(&rec[0], *key);
    }
    let report = std::fs::read_to_string(out.join("seed-5/report.md")).expect("seed 5's report.md");
    assert!(
        report.contains("Run seed: 5 (seed 1 of `--seeds 2`, starting at 5)"),
        "{}",
        &report[..report.len().min(300)]
    );
    assert!(out.join("seed-5/fig15-compare.png").exists());
    // Each paper figure stands beside the quantity it is: 2.8 and 0.824 / 0.293 are rates, 1.7 a
    // goodput ratio; a quick run's second-half window is not said to be past IFRC's slow start.
    let paper = |key: &str| {
        let line = csv.lines().find(|l| l.starts_with(&format!("{key},"))).unwrap_or_else(|| panic!("{key} missing"));
        line.split(',').nth(1).unwrap_or_default().to_string()
    };
    for (key, want) in [
        ("rcrt_over_ifrc_same_mac", "1.7"),
        ("rcrt_over_ifrc_paper_mac", "—"),
        ("rcrt_over_ifrc_paper_mac_steady", "—"),
        ("rcrt_over_ifrc_same_mac_rate", "—"),
        ("rcrt_over_ifrc_paper_mac_rate", "2.8"),
        ("cmp_ifrc_mean_goodput_pps", "—"),
        ("cmp_rcrt_mean_goodput_pps", "—"),
        ("cmp_ifrc_mean_rate_pps", "0.293"),
        ("cmp_rcrt_mean_rate_pps", "0.824"),
    ] {
        assert_eq!(paper(key), want, "paper column of {key}");
    }
    for key in [
        "cmp_ifrc_over_best_fixed_steady",
        "ifrc_over_best_fixed",
        "rcrt_over_ifrc_paper_mac_steady",
        "rcrt_over_ifrc_paper_mac_steady_reference_code",
    ] {
        let note = s2.note(key);
        assert!(
            note.contains("still holds IFRC's slow start") && !note.contains("past its slow start"),
            "{key}: {note}"
        );
    }
    std::fs::remove_dir_all(&out).ok();
}

/// `wsn reproduce rcrt --quick` writes the report, the figures and numbers.csv with every key the
/// RCRT issue names (paper profile), and the same figures for the other profiles under suffixed
/// keys; the numbers hold together ([`check_rcrt_numbers`]).
#[test]
fn reproduce_rcrt_quick_writes_the_required_numbers() {
    let out = std::env::temp_dir().join(format!("wsn-reproduce-rcrt-test-{}", std::process::id()));
    let o = wsn().args(["reproduce", "rcrt", "--quick", "--out"]).arg(&out).output().expect("wsn runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("numbers.csv")).expect("numbers.csv");
    assert!(csv.starts_with("key,paper,ours,unit,note\n"));
    let value = |key: &str| -> String {
        let line = csv.lines().find(|l| l.starts_with(&format!("{key},"))).unwrap_or_else(|| panic!("{key} missing"));
        line.split(',').nth(2).unwrap().to_string()
    };
    for key in [
        "delivery_ratio_min",
        "goodput_spread",
        "max_e2e_repair_share",
        "feedback_ratio",
        "best_effort_knee_pps",
        "reliable_knee_pps",
        "rcrt_plateau_pps",
        "rcrt_over_reliable_knee",
        "single_source_rcrt_over_be",
    ] {
        let v = value(key);
        // The knees may be undefined (n/a) on a short run; everything else is a number.
        assert!(v == "n/a" && key.ends_with("knee_pps") || v.parse::<f64>().is_ok(), "{key} = {v}");
    }
    for key in [
        "feedback_ratio_reference_code",
        "rcrt_plateau_pps_paper_code_level",
        "two_sinks_a1_over_b1_reference_code",
        "baseline_settled_rate_pps",
        "delivery_violations",
        "parent_changes_per_node_per_38min",
    ] {
        assert!(value(key).parse::<f64>().is_ok(), "{key}");
    }
    assert_eq!(value("delivery_violations"), "0", "the simulator's check of every delivery");
    // Fig. 1's claims need swept loads above the knee; a quick run may have none.
    for key in ["fig1_p_at_knee", "fig1_cut_below_knee_share", "fig1_m_nonincreasing_share"] {
        let v = value(key);
        assert!(v == "n/a" || v.parse::<f64>().is_ok_and(|x| (0.0..=1.0).contains(&x)), "{key} = {v}");
    }
    check_rcrt_numbers(&Numbers::read(&out.join("numbers.csv")));
    let report = std::fs::read_to_string(out.join("report.md")).expect("report.md");
    for fig in [
        "fig1-p-vs-load.png",
        "fig3-rate-profile.png",
        "fig7-9-optimality.png",
        "fig10-robustness-rates.png",
        "fig13-two-sinks-rates.png",
    ] {
        assert!(report.contains(fig) && out.join(fig).exists(), "{fig}");
    }
    std::fs::remove_dir_all(&out).ok();
}

/// The quick RCRT reproduction's swept loads per node (`reproduce::rcrt`).
const RCRT_QUICK_LOADS: [f64; 4] = [0.3, 0.6, 0.9, 1.2];

/// Relations that hold between the numbers of `wsn reproduce rcrt --quick` whatever the network
/// does: shares within [0, 1], derived keys equal to the quotients they are defined as, knees on
/// the swept grid, goodputs within what was offered, and the ratios the allocation policies
/// guarantee; then the baseline's numbers against the `summary.json` of the same run made with
/// `wsn run`.
fn check_rcrt_numbers(n: &Numbers) {
    let profiles = [("paper", ""), ("reference_code", "_reference_code"), ("paper+code_level", "_paper_code_level")];
    for key in ["best_effort_knee_pps", "reliable_knee_pps"] {
        let v = n.get(key);
        assert!(v.is_none_or(|x| RCRT_QUICK_LOADS.contains(&x)), "{key} = {v:?} is not a swept load");
    }
    for key in ["fig1_p_at_knee", "fig1_cut_below_knee_share", "fig1_m_nonincreasing_share"] {
        assert_share(n, key);
    }
    // The best-effort source one hop from the sink offers 200 pkt/s in the saturated run and the
    // harness's 102.4 in the other; each ratio is the report's RCRT goodput over the latter (both
    // printed with one decimal).
    // (A goodput exceeds the offered rate by at most one packet over the flow's active time,
    // hundreds of seconds here: less than the rounding of the printed values.)
    let sat = n.num("single_source_be_saturated_pps");
    assert!((0.0..=200.0).contains(&sat), "{sat}");
    for (_, sfx) in profiles {
        let key = format!("single_source_rcrt_over_be{sfx}");
        let note = n.note(&key);
        let (src, be) = (number_after(note, "RCRT"), number_after(note, "vs best effort"));
        assert!(src <= 102.45 && be <= 102.45, "{key}: goodputs above the 102.4 pkt/s offered: {note}");
        assert!((number_after(note, "best effort offered 200:") - sat).abs() <= 0.05 + sig4_err(sat), "{note}");
        assert_quotient(&key, n.approx(&key), (src, 0.05), (be, 0.05));
    }
    for (p, sfx) in profiles {
        let k = |base: &str| format!("{base}{sfx}");
        assert_eq!(n.get(&k("delivery_violations")), Some(0.0), "{p}: the simulator's check of every delivery");
        for key in [
            "delivery_ratio_min",
            "max_e2e_repair_share",
            "rate_within_25pct_share",
            "robustness_ratios_within_10pct_share",
            "two_sinks_a1_over_b1_within_10pct_share",
        ] {
            assert_share(n, &k(key));
        }
        for key in ["goodput_spread", "feedback_ratio", "baseline_mean_goodput_pps", "rcrt_plateau_pps"] {
            assert!(n.num(&k(key)) >= 0.0, "{}", k(key));
        }
        assert_quotient(
            &k("goodput_spread_relative"),
            n.approx(&k("goodput_spread_relative")),
            n.approx(&k("goodput_spread")),
            n.approx(&k("baseline_mean_goodput_pps")),
        );
        // The plateau over the larger of the reliable knee (exact, a swept load; n/a when no
        // swept load passed) and the reliable baseline's highest goodput.
        let rel_max = n.approx("reliable_max_goodput_pps");
        let denom = (n.get("reliable_knee_pps").map_or(rel_max.0, |knee| knee.max(rel_max.0)), rel_max.1);
        let key = k("rcrt_over_reliable_knee");
        assert_quotient(&key, n.approx(&key), n.approx(&k("rcrt_plateau_pps")), denom);
        // Parent changes per node scaled from the span the note gives (whole seconds) to 38 min.
        let span = number_after(n.note(&k("parent_changes_per_node")), "end of the run (");
        let scaled = n.approx(&k("parent_changes_per_node_per_38min"));
        let per_node = n.approx(&k("parent_changes_per_node"));
        assert_quotient(
            &k("parent_changes_per_node_per_38min"),
            scaled,
            (per_node.0 * 2280.0, per_node.1 * 2280.0),
            (span, 0.5),
        );
        // Demand-limited allocation (application 2 of the two-sink experiment) never gives B2
        // (demand 0.5) more than A2 (demand 1.0), and gives them the same rate while it is below
        // 0.5: the same UF16 code, a ratio of exactly 1.
        if let Some(r) = n.get(&k("two_sinks_a2_over_b2")) {
            assert!(r >= 1.0, "{}: {r}", k("two_sinks_a2_over_b2"));
            if n.note(&k("two_sinks_a2_over_b2")).contains("equal while below 0.5") {
                assert_eq!(r, 1.0, "{}", k("two_sinks_a2_over_b2"));
            }
        }
        // Demand-proportional allocation gives r_i = ρ·d_i, sent as UF16 codes (wsn_wire::rcrt::Rate):
        // within 2⁻¹³ of the rate from 1/16 pkt/s, within 2⁻¹⁷ pkt/s below. The floor R ≥ N/30
        // [CODE-FILL D9] bounds ρ = R/D below: ρ ≥ 1/120 in the robustness run (demands up to
        // 4, D ≤ 4N), so the slowest rate told is ≥ 0.5/120 pkt/s = 273 units of 2⁻¹⁶ and every
        // rate is within 0.2 % of ρ·d_i: the ratios stay within 2 ± 1 % and 8 ± 1 % whatever the
        // network, inside the report's ±10 % acceptance (until session 24 the wire's 1/256 pkt/s
        // steps allowed 1.5–3 and 6–12 here). Only the paper profiles: the code's millisecond
        // intervals (capped at 65.5 s) move rates below 0.015 pkt/s by more.
        if p != "reference_code" {
            for (key, lo, hi) in [
                ("two_sinks_a1_over_b1", 1.98, 2.02),
                ("robustness_ratio_d10_over_d05", 1.98, 2.02),
                ("robustness_ratio_d40_over_d05", 7.92, 8.08),
            ] {
                let v = n.get(&k(key));
                assert!(
                    v.is_none_or(|x| x + sig4_err(x) >= lo && x - sig4_err(x) <= hi),
                    "{}: {v:?} outside [{lo}, {hi}]",
                    k(key)
                );
            }
        }
    }
    check_rcrt_baseline_against_its_summary(n);
}

/// The baseline's numbers of each profile against the `summary.json` of the same run (the
/// reproduction's scenario, overrides and seed) made with `wsn run`: the reproduction keeps no
/// run's summary. The run is deterministic, so the two runs are the same run.
fn check_rcrt_baseline_against_its_summary(n: &Numbers) {
    let out = std::env::temp_dir().join(format!("wsn-rcrt-baseline-summary-{}", std::process::id()));
    for (profile, sfx) in [
        (&["protocol.profile=\"paper\""][..], ""),
        (&["protocol.profile=\"reference_code\""][..], "_reference_code"),
        (&["protocol.profile=\"paper\"", "protocol.level_formula=\"reference_code\""][..], "_paper_code_level"),
    ] {
        let mut cmd = wsn();
        cmd.current_dir(root()).args(["run", "scenarios/rcrt/baseline.toml", "-q"]);
        // As `reproduce::rcrt --quick` sets them.
        for set in profile.iter().copied().chain(["flows.0.count=200", "duration_s=3000", "output.plots=false"]) {
            cmd.args(["--set", set]);
        }
        let o = cmd.arg("--out").arg(&out).output().expect("wsn runs");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        let flows = s["flows"].as_array().unwrap();
        let field = |f: &serde_json::Value, k: &str| f[k].as_f64().unwrap_or(0.0);
        let originated: f64 = flows.iter().map(|f| field(f, "originated")).sum();
        let gp: Vec<f64> = flows.iter().map(|f| field(f, "goodput_pps")).collect();
        let min_of = |v: &mut dyn Iterator<Item = f64>| v.fold(f64::INFINITY, f64::min);
        let max_of = |v: &mut dyn Iterator<Item = f64>| v.fold(f64::NEG_INFINITY, f64::max);
        let ratio = |f: &serde_json::Value, num: &str, den: &str| field(f, num) / field(f, den).max(1.0);
        let from_summary = [
            ("feedback_ratio", s["totals"]["feedback_packets"].as_f64().unwrap() / originated),
            ("delivery_ratio_min", min_of(&mut flows.iter().map(|f| ratio(f, "delivered", "originated")))),
            ("max_e2e_repair_share", max_of(&mut flows.iter().map(|f| ratio(f, "e2e_repaired", "delivered")))),
            ("baseline_mean_goodput_pps", gp.iter().sum::<f64>() / gp.len() as f64),
            ("goodput_spread", max_of(&mut gp.iter().copied()) - min_of(&mut gp.iter().copied())),
        ];
        for (base, want) in from_summary {
            let key = format!("{base}{sfx}");
            let (v, e) = n.approx(&key);
            assert!((v - want).abs() <= e * 1.000_001, "{key} = {v}, the run's summary.json gives {want}");
        }
    }
    std::fs::remove_dir_all(&out).ok();
}

/// One bench case reports its channel work: frames, arrivals (at least one receiver per frame
/// here) and a delivery ratio, as one JSON line; a malformed case name is an error, not a panic.
#[test]
fn bench_case_reports_frames_and_arrivals() {
    let out = wsn().args(["bench", "--case", "lrwpan40"]).current_dir(root()).output().expect("wsn runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON line");
    let frames = v["frames"].as_u64().unwrap();
    let arrivals = v["receptions"].as_u64().unwrap();
    assert!(frames > 90_000 && arrivals > 20 * frames, "{v}");
    assert!(v["delivery"].as_f64().unwrap() > 0.98, "{v}");
    let bad = wsn().args(["bench", "--case", "tiled-x"]).current_dir(root()).output().expect("wsn runs");
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("tiled-x") && !err.contains("panicked"), "{err}");
}

/// An RCRT run writes the congestion traces and their plot: one `decreases.csv` row per cut
/// counted in `summary.json`, and the C_i samples in `congestion.csv`; and it plots the
/// allocation profile and the packet reception.
#[test]
fn rcrt_run_writes_congestion_traces() {
    let out = std::env::temp_dir().join(format!("wsn-congestion-test-{}", std::process::id()));
    let o = wsn()
        .args([
            "run",
            "rcrt-baseline",
            "-q",
            "--set",
            "duration_s=900",
            "--set",
            "protocol.sink_policies.0=demand_limited",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("wsn runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    // The summary says which run this is: the scenario's origin and the overrides.
    assert_eq!(summary["scenario_origin"], "built-in scenario rcrt-baseline");
    assert_eq!(summary["overrides"], serde_json::json!(["duration_s=900", "protocol.sink_policies.0=demand_limited"]));
    // ... and which protocol parameters and allocation policies it ran with.
    let p = &summary["protocol_config"];
    assert_eq!(
        (p["kind"].as_str(), p["profile"].as_str(), p["policy"].as_str()),
        (Some("rcrt"), Some("paper"), Some("fair"))
    );
    assert_eq!(p["sink_policies"], serde_json::json!({"0": "demand_limited"}));
    let cuts = summary["totals"]["congestion_decreases"].as_u64().expect("an RCRT run counts its cuts");
    assert!(cuts > 0, "the baseline cuts R in its first 600 s of traffic");
    let decreases = std::fs::read_to_string(out.join("decreases.csv")).unwrap();
    let mut lines = decreases.lines();
    assert_eq!(lines.next(), Some("t_s,sink,flow,level"));
    assert_eq!(lines.count() as u64, cuts);
    let congestion = std::fs::read_to_string(out.join("congestion.csv")).unwrap();
    let mut lines = congestion.lines();
    assert_eq!(lines.next(), Some("t_s,flow,level"));
    assert!(lines.count() > 1000, "one C_i sample per unique packet");
    // The congestion levels, the allocation profile r_i(t) (Fig. 3), the packet reception plot
    // (Fig. 5) and the end-to-end repairs per flow (Fig. 6) of this run.
    for stem in ["congestion_time", "allocations_time", "reception_time", "repairs_per_flow"] {
        for f in [format!("{stem}.png"), format!("{stem}.svg")] {
            assert!(std::fs::metadata(out.join(&f)).map(|m| m.len() > 1000).unwrap_or(false), "{f} missing or empty");
        }
    }
    std::fs::remove_dir_all(&out).ok();
}

/// A reliable-baseline run (no congestion control: U = ∞) draws its plots and finishes.
#[test]
fn reliable_run_with_plots_finishes() {
    let out = std::env::temp_dir().join(format!("wsn-reliable-plots-test-{}", std::process::id()));
    let o = wsn()
        .args(["run", "scenarios/rcrt/optimality-reliable.toml", "-q", "--set", "duration_s=600", "--out"])
        .arg(&out)
        .current_dir(root())
        .output()
        .expect("wsn runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::metadata(out.join("congestion_time.png")).map(|m| m.len() > 1000).unwrap_or(false));
    assert_eq!(
        std::fs::read_to_string(out.join("decreases.csv")).unwrap().lines().count(),
        1,
        "the reliable baseline never cuts"
    );
    std::fs::remove_dir_all(&out).ok();
}

/// A small scenario file for the sweep tests, written to a fresh folder.
fn tiny_scenario(tag: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("wsn-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("tiny.toml");
    std::fs::write(
        &f,
        "name = \"tiny\"\nduration_s = 30.0\n[topology]\nlayout = { kind = \"grid\", nodes = 4, spacing_m = 5.0 }\n[[flows]]\nsources = \"all\"\nrate_pps = 1.0\nstart_s = 5.0\n",
    )
    .unwrap();
    (dir, f)
}

/// A run whose output folder holds one of its own input files under a results name (here a
/// positions file called `nodes.csv`, with `--out .`) is refused, and the input is unchanged.
#[test]
fn a_run_never_writes_over_its_inputs() {
    let (dir, _) = tiny_scenario("inputs-as-outputs");
    let positions = "node,x_m,y_m\n0,0.0,0.0\n1,5.0,0.0\n2,0.0,5.0\n3,5.0,5.0\n";
    std::fs::write(dir.join("nodes.csv"), positions).unwrap();
    std::fs::write(
        dir.join("s.toml"),
        "name = \"s\"\nduration_s = 10.0\n[topology]\nlayout = { kind = \"file\", path = \"nodes.csv\" }\n\
         [output]\nplots = false\n",
    )
    .unwrap();
    let o = wsn().current_dir(&dir).args(["run", "s.toml", "-q", "--out", "."]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("topology.layout.path") && err.contains("nodes.csv"), "{err}");
    assert_eq!(std::fs::read_to_string(dir.join("nodes.csv")).unwrap(), positions);
    // Into another folder it runs.
    let o = wsn().current_dir(&dir).args(["run", "s.toml", "-q", "--out", "out"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A link of a results name to a file elsewhere would be replaced: refused too.
    #[cfg(unix)]
    {
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::rename(dir.join("nodes.csv"), dir.join("sub/pos.csv")).unwrap();
        std::os::unix::fs::symlink(dir.join("sub/pos.csv"), dir.join("nodes.csv")).unwrap();
        let o = wsn().current_dir(&dir).args(["run", "s.toml", "-q", "--out", "."]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("topology.layout.path"), "{err}");
        assert!(std::fs::symlink_metadata(dir.join("nodes.csv")).unwrap().file_type().is_symlink());
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Sweep ranges that are not finite or too long are errors that say so (they used to panic or
/// abort on a huge allocation), and a bad value fails before any run.
#[test]
fn sweep_rejects_bad_ranges() {
    let (dir, f) = tiny_scenario("sweep-bad");
    for (param, says) in [
        ("flows.0.rate_pps=1:inf:1", "stop inf is not a finite number"),
        ("flows.0.rate_pps=nan:2:1", "start NaN is not a finite number"),
        ("flows.0.rate_pps=0:1e9:1", "more than the 10000"),
        ("flows.0.rate_pps=1,0", "sweep value flows.0.rate_pps=0"),
    ] {
        let o =
            wsn().args(["sweep", f.to_str().unwrap(), "--param", param, "--out"]).arg(dir.join("o")).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says) && !err.contains("panicked"), "{param}: {err}");
    }
    assert!(!dir.join("o/sweep.csv").exists(), "no run may start");
    std::fs::remove_dir_all(&dir).ok();
}

/// `--param seed=…` sweeps the seed itself: each value is its run's seed.
#[test]
fn sweep_over_seeds_uses_each_seed() {
    let (dir, f) = tiny_scenario("sweep-seed");
    let o = wsn()
        .args(["sweep", f.to_str().unwrap(), "--param", "seed=3,4", "--jobs", "64", "--out"])
        .arg(dir.join("o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(dir.join("o/sweep.csv")).unwrap();
    let sha = csv.lines().next().unwrap().split(',').position(|c| c == "trace_sha256").expect("trace_sha256 column");
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.iter().map(|r| (r[0], r[1])).collect::<Vec<_>>(), vec![("3", "3"), ("4", "4")]);
    assert_ne!(rows[0][sha], rows[1][sha], "two seeds, two traces");
    // Best effort has no RCRT figures: those columns stay empty.
    let fb = csv.lines().next().unwrap().split(',').position(|c| c == "feedback_ratio").expect("feedback_ratio column");
    assert!(rows.iter().all(|r| r[fb].is_empty()), "{csv}");
    // Standard error is a pipe here, not a terminal: instead of a bar, one line per finished run.
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("sweep seed: 1/2 runs done") && err.contains("sweep seed: 2/2 runs done"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The knee is found in ascending order of the swept values, whatever order `--param` lists
/// them in (lrwpan40 carries 0.5 and 1 pkt/s per node with 99 % delivery).
#[test]
fn sweep_knee_ignores_the_order_of_the_values() {
    let dir = std::env::temp_dir().join(format!("wsn-cli-sweep-order-{}", std::process::id()));
    let o = wsn()
        .args(["sweep", "lrwpan40", "--param", "flows.0.rate_pps=1,0.5", "--set", "duration_s=120", "--out"])
        .arg(dir.join("o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("knee: every value up to flows.0.rate_pps = 1 is fair with ≥ 95 % delivery\n"), "{out}");
    std::fs::remove_dir_all(&dir).ok();
}

/// An RCRT sweep (here over the C_i gain) fills the RCRT columns of sweep.csv.
#[test]
fn rcrt_sweep_reports_feedback_and_repairs() {
    let (dir, f) = tiny_scenario("sweep-rcrt");
    let o = wsn()
        .args([
            "sweep",
            f.to_str().unwrap(),
            "--param",
            "protocol.congestion_gain=0.25,0.5",
            "--set",
            "protocol.kind=\"rcrt\"",
            "--out",
        ])
        .arg(dir.join("o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(dir.join("o/sweep.csv")).unwrap();
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    for row in csv.lines().skip(1) {
        let r: Vec<&str> = row.split(',').collect();
        for col in ["congestion_decreases", "feedback_ratio", "max_e2e_repaired_share"] {
            let v: f64 =
                r[head.iter().position(|c| *c == col).unwrap()].parse().unwrap_or_else(|_| panic!("{col} in {row}"));
            assert!(v.is_finite() && v >= 0.0, "{col} = {v}");
        }
        let fb: f64 = r[head.iter().position(|c| *c == "feedback_ratio").unwrap()].parse().unwrap();
        assert!(fb > 0.0, "an RCRT run sends feedback: {row}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A scenario name that is not one plain folder name cannot send the default output elsewhere.
#[test]
fn scenario_name_cannot_escape_out() {
    let (dir, f) = tiny_scenario("name");
    // A run with that name: whether it failed, and its error output.
    let run = |name: &str| {
        let o = wsn()
            .current_dir(&dir)
            .args(["run", f.to_str().unwrap(), "-q", "--set"])
            .arg(format!("name={name}"))
            .output()
            .unwrap();
        (!o.status.success(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    for name in ["\"../escaped\"", "\"\"", "\"/tmp/abs\"", "\"nl\\nx\"", "\"a b\""] {
        let (failed, err) = run(name);
        assert!(failed && err.contains("cannot name the output folder"), "{name}: {err}");
    }
    assert!(!dir.join("escaped").exists());
    // Names made only of the allowed characters that are still refused say why.
    for name in ["\".\"", "\"a..b\""] {
        let (failed, err) = run(name);
        assert!(failed && err.contains("not `.` alone and no `..`"), "{name}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Re-using an output folder: the files of an earlier run (here RCRT's) do not stay beside the
/// new run's, other files are kept, and an RCRT run writes its CSV files even when empty.
#[test]
fn output_folder_holds_only_the_last_run() {
    let (dir, f) = tiny_scenario("stale");
    let out = dir.join("o");
    let run = |extra: &[&str]| {
        let o = wsn()
            .args(["run", f.to_str().unwrap(), "-q", "--set", "output.plots=false", "--out"])
            .arg(&out)
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    // An RCRT run whose flows never start still writes its (header-only) RCRT files.
    run(&["--set", "protocol.kind=\"rcrt\"", "--set", "flows.0.start_s=40"]);
    for name in ["rates.csv", "total_rate.csv", "congestion.csv", "decreases.csv", "deliveries.csv"] {
        assert!(out.join(name).exists(), "{name} missing after an RCRT run");
    }
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    // A run refused once it started (payload too long for the preset) removes nothing.
    let o = wsn()
        .args(["run", f.to_str().unwrap(), "-q", "--set", "flows.0.payload_bytes=200", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(out.join("rates.csv").exists(), "a refused run removed the earlier run's files");
    // A run with a trace keeps it; the next run without one removes it.
    run(&["--trace"]);
    assert!(out.join("trace.csv").exists() && out.join("summary.json").exists());
    assert!(!out.join("rates.csv").exists(), "RCRT's rates.csv left beside a best-effort run");
    assert!(out.join("notes.txt").exists(), "a file the tool did not write was removed");
    run(&[]);
    assert!(!out.join("trace.csv").exists(), "an earlier run's trace left beside a run without one");
    std::fs::remove_dir_all(&dir).ok();
}

/// A folder that held no run keeps the user's files, even under the names a run writes, and so
/// does one that held a run that did not write them; the files an earlier run wrote and the new
/// one does not are removed, and the console names them.
#[test]
fn only_an_earlier_runs_files_are_removed() {
    let (dir, f) = tiny_scenario("user-files");
    let out = dir.join("o");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("rates.csv"), "my data").unwrap();
    std::fs::write(out.join("trace.csv"), "mine too").unwrap();
    let run = || {
        let o = wsn()
            .args(["run", f.to_str().unwrap(), "-q", "--set", "output.plots=false", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let console = run();
    assert_eq!(std::fs::read_to_string(out.join("rates.csv")).unwrap(), "my data");
    assert_eq!(std::fs::read_to_string(out.join("trace.csv")).unwrap(), "mine too");
    assert!(!console.contains("removed"), "{console}");
    // Now the folder holds a run, which listed its files: the user's files stay, as they were
    // not among them.
    let console = run();
    assert_eq!(std::fs::read_to_string(out.join("rates.csv")).unwrap(), "my data");
    assert!(!console.contains("removed"), "{console}");
    // An RCRT run writes rates.csv (replacing the user's); the next best-effort run removes it
    // and says so.
    let o = wsn()
        .args(["run", f.to_str().unwrap(), "-q", "--set", "output.plots=false", "--trace"])
        .args(["--set", "protocol.kind=\"rcrt\"", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let console = run();
    assert!(!out.join("rates.csv").exists() && !out.join("trace.csv").exists());
    assert!(console.contains("removed   the earlier run's "), "{console}");
    assert!(console.contains("rates.csv") && console.contains("trace.csv"), "{console}");
    // A folder a run of an older version wrote (a summary.json, no list of files): every file
    // of a run's names that this run did not write goes.
    std::fs::remove_file(out.join(wsn_sim::output::MANIFEST)).unwrap();
    std::fs::write(out.join("rates.csv"), "stale").unwrap();
    let console = run();
    assert!(!out.join("rates.csv").exists() && console.contains("rates.csv"), "{console}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A run refused once it started leaves no empty output folder of its own making; a date-like
/// `--set` value is the text (no field is a date); a negative seed is refused in words.
#[test]
fn a_refused_run_leaves_no_empty_folder() {
    let (dir, f) = tiny_scenario("refused-fresh");
    let out = dir.join("fresh");
    // Its parents too, when the run made them.
    let o = wsn()
        .args(["run", f.to_str().unwrap(), "-q", "--set", "flows.0.payload_bytes=200", "--out"])
        .arg(out.join("a/b"))
        .output()
        .unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("payload_bytes = 200"));
    assert!(!out.exists(), "an empty output folder was left behind");
    // Through `..`: the empty folder that was there stays, the one the run made goes.
    std::fs::create_dir_all(dir.join("old")).unwrap();
    let o = wsn()
        .current_dir(&dir)
        .args(["run", f.to_str().unwrap(), "-q", "--set", "flows.0.payload_bytes=200", "--out", "new/../old/sub"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(dir.join("old").is_dir() && !dir.join("old/sub").exists() && !dir.join("new").exists());
    // A folder that cannot be made (a name too long): the parents made for it go too.
    let long = "x".repeat(300);
    let o = wsn().args(["run", f.to_str().unwrap(), "-q", "--out"]).arg(out.join(&long)).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("creating"));
    assert!(!out.exists(), "the parent made for a folder that could not be made was left");
    let o = wsn()
        .args(["run", f.to_str().unwrap(), "-q", "--set", "name=2024-01-01", "--set", "output.plots=false", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(out.join("summary.json")).unwrap().contains("\"scenario\": \"2024-01-01\""));
    let o = wsn().args(["run", f.to_str().unwrap(), "--seed", "-1"]).output().unwrap();
    assert!(String::from_utf8_lossy(&o.stderr).contains("a seed is a whole number from 0 to 18446744073709551615"));
    std::fs::remove_dir_all(&dir).ok();
}

/// Every file a run writes is one `clear_previous` knows (so that a later run into the same
/// folder removes it): runs of every protocol with every optional output turned on.
#[test]
fn every_output_file_is_known_to_clear_previous() {
    let (dir, f) = tiny_scenario("known-outputs");
    for (k, protocol) in ["best_effort", "rcrt", "reliable", "ifrc"].iter().enumerate() {
        let out = dir.join(format!("o{k}"));
        let o = wsn()
            .args(["run", f.to_str().unwrap(), "-q", "--trace", "--pcap", "--set"])
            .arg(format!("protocol.kind=\"{protocol}\""))
            // IFRC's header makes 64-byte payloads too long for this preset.
            .args(["--set", "flows.0.payload_bytes=32", "--out"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{protocol}: {}", String::from_utf8_lossy(&o.stderr));
        let written: Vec<String> =
            std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        assert!(written.len() > 5, "{protocol}: only {written:?}");
        for name in &written {
            assert!(
                wsn_sim::output::is_output_file(name),
                "{protocol} wrote {name}, which clear_previous does not know"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// With two sinks a run draws both trees (`tree` for the first, `tree_sink<id>` for the second,
/// whose root is that sink); a later one-sink run into the same folder removes the second, and
/// a file of a similar name the tool did not write stays.
#[test]
fn a_second_sink_gets_its_own_tree_figure() {
    let (dir, f) = tiny_scenario("two-trees");
    let out = dir.join("o");
    let run = |extra: &[&str]| {
        let o = wsn().args(["run", f.to_str().unwrap(), "-q", "--out"]).arg(&out).args(extra).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    run(&["--set", "topology.sinks=[0, 3]", "--set", "flows.0.sink=3"]);
    for name in ["tree.png", "tree.svg", "tree_sink3.png", "tree_sink3.svg"] {
        assert!(out.join(name).exists(), "{name} missing after a two-sink run");
    }
    let svg = std::fs::read_to_string(out.join("tree_sink3.svg")).unwrap();
    assert!(svg.contains("Tree of sink 3 (2 of 2 sinks"), "the second figure is not sink 3's tree");
    assert!(std::fs::read_to_string(out.join("tree.svg")).unwrap().contains("Tree of sink 0 (1 of 2 sinks"));
    // The title's counts are the run's, over both trees, and say so.
    assert!(svg.contains("all trees: max depth"), "the counts do not say they cover every tree");
    std::fs::write(out.join("tree_sink03.png"), "mine").unwrap();
    run(&[]);
    assert!(out.join("tree.png").exists());
    assert!(!std::fs::read_to_string(out.join("tree.svg")).unwrap().contains("all trees"), "one tree, one count");
    assert!(!out.join("tree_sink3.png").exists(), "the second sink's tree left beside a one-sink run");
    assert!(!out.join("tree_sink3.svg").exists());
    assert!(out.join("tree_sink03.png").exists(), "a file the tool did not write was removed");
    std::fs::remove_dir_all(&dir).ok();
}

/// A folder where a result file goes is refused before anything changes (the earlier run's
/// files stay); the new results stay in the staging folder the error names, which the next run
/// removes.
#[test]
fn a_folder_in_the_way_changes_nothing() {
    let (dir, f) = tiny_scenario("in-the-way");
    let out = dir.join("o");
    let run = || {
        wsn()
            .args(["run", f.to_str().unwrap(), "-q", "--set", "output.plots=false", "--out"])
            .arg(&out)
            .output()
            .unwrap()
    };
    assert!(run().status.success());
    let before = std::fs::read_to_string(out.join("summary.json")).unwrap();
    std::fs::remove_file(out.join("flows.csv")).unwrap();
    std::fs::create_dir_all(out.join("flows.csv/x")).unwrap();
    let o = run();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("flows.csv is a folder"), "{err}");
    assert_eq!(std::fs::read_to_string(out.join("summary.json")).unwrap(), before);
    let hidden = || -> Vec<PathBuf> {
        std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(".wsn-staging-"))
            .collect()
    };
    let kept = hidden();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(err.contains(&kept[0].display().to_string()) && kept[0].join("summary.json").is_file(), "{err}");
    std::fs::remove_dir_all(out.join("flows.csv")).unwrap();
    assert!(run().status.success());
    assert!(hidden().is_empty(), "the next run removes the kept results: {:?}", hidden());
    std::fs::remove_dir_all(&dir).ok();
}

/// `--jobs 0` and `--seeds 0` are refused (0 seeds used to become 1 silently); a fractional
/// swept seed is named as such; `--jobs` far above the runs does not hang.
#[test]
fn sweep_rejects_zero_jobs_and_seeds() {
    let (dir, f) = tiny_scenario("sweep-zero");
    for (args, says) in [
        (&["--param", "flows.0.rate_pps=1,2", "--jobs", "0"][..], "--jobs must be at least 1"),
        (&["--param", "flows.0.rate_pps=1,2", "--seeds", "0"][..], "--seeds must be at least 1"),
        (&["--param", "seed=1.5,2"][..], "1.5 is not a non-negative integer seed"),
        // Beyond 2^53 an f64 sweep value is another seed: refused, naming the seed typed.
        (&["--param", "seed=9007199254740993,5"][..], "9007199254740993 is above 2^53"),
        (&["--param", "seed=18446744073709551615"][..], "18446744073709551615 is above 2^53"),
        (&["--param", "flows.0.rate_pps=1,2", "--seeds", "101"][..], "--seeds must be at most 100"),
        (&["--param", "flows.0.rate_pps=1,2,1"][..], "the value 1 is given twice"),
        (&["--param", "seed=1,2", "--seeds", "2"][..], "overlap those of 2"),
        (
            &["--param", "flows.0.rate_pps=1,2", "--set", "flows[0].rate_pps=3"][..],
            "both set flows.0.rate_pps: the sweep would overwrite it",
        ),
        // The loader also reads `flows[0]rate_pps` as flows.0.rate_pps.
        (&["--param", "flows.0.rate_pps=1,2", "--set", "flows[0]rate_pps=3"][..], "both set flows.0.rate_pps"),
        // The first bad value in the order given (the check runs in parallel).
        (&["--param", "flows.0.sources=1,98,99"][..], "sweep value flows.0.sources=98\n"),
        (&["--param", "flows.0.rate_pps=1", "--seed", "-1"][..], "invalid value '-1' for '--seed <SEED>'"),
    ] {
        let o = wsn().args(["sweep", f.to_str().unwrap()]).args(args).arg("--out").arg(dir.join("o")).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says) && !err.contains("panicked"), "{args:?}: {err}");
    }
    let o = wsn()
        .args(["sweep", f.to_str().unwrap(), "--param", "flows.0.rate_pps=1,2", "--jobs", "100000", "--out"])
        .arg(dir.join("o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

/// A sweep of a key inside a table set whole by --set runs (the sweep's value goes in after
/// it); a value refused names the --param, not a --set; trace and pcap are said to be ignored;
/// runs that carried nothing have empty goodput cells, not NaN.
#[test]
fn sweep_refines_a_table_set_whole_and_names_its_param() {
    let (dir, f) = tiny_scenario("sweep-table");
    let sweep = |args: &[&str]| {
        wsn().args(["sweep", f.to_str().unwrap()]).args(args).arg("--out").arg(dir.join("o")).output().unwrap()
    };
    let o = sweep(&[
        "--set",
        "topology.layout={kind=\"grid\", nodes=9, spacing_m=5.0}",
        "--param",
        "topology.layout.spacing_m=4,6",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(dir.join("o/sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    let o = sweep(&["--param", "topology.layout.nodez=4,9"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("--param topology.layout.nodez=4: unknown field"), "{err}");
    assert!(!err.contains("--set"), "{err}");
    let o = sweep(&["--param", "flows.0.start_s=40,50", "--set", "output.trace=true"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && err.contains("output.trace and output.pcap are ignored"), "{err}");
    let csv = std::fs::read_to_string(dir.join("o/sweep.csv")).unwrap();
    assert!(!csv.contains("NaN") && csv.lines().nth(1).unwrap().starts_with("40,1,,,,,"), "{csv}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A folder named like a built-in scenario (left by `wsn run office40 --out office40`) does not
/// hide the built-in; any other folder given as the scenario is refused as a folder.
#[test]
fn a_folder_does_not_hide_a_built_in_scenario() {
    let (dir, _) = tiny_scenario("builtin-folder");
    std::fs::create_dir_all(dir.join("office40")).unwrap();
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    let o = wsn()
        .current_dir(&dir)
        .args(["run", "office40", "--set", "duration_s=5", "--set", "output.plots=false", "-q", "--out", "office40"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(dir.join("office40/summary.json").is_file());
    let o = wsn().current_dir(&dir).args(["run", "mine", "-q"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("is a folder, not a scenario file"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A scenario path that is an endless device is refused after a bounded read, by name.
#[cfg(unix)]
#[test]
fn an_endless_scenario_file_is_refused() {
    let o = wsn().args(["run", "/dev/zero", "-q"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("/dev/zero") && err.contains("not a scenario file"), "{err}");
}

/// `--out` naming a file is refused by name, by every command that writes a folder, before
/// anything runs.
#[test]
fn out_must_be_a_folder() {
    let (dir, f) = tiny_scenario("out-file");
    let file = dir.join("a-file");
    std::fs::write(&file, "x").unwrap();
    let file = file.to_str().unwrap();
    for args in [
        vec!["run", f.to_str().unwrap(), "-q", "--out", file],
        vec!["sweep", f.to_str().unwrap(), "--param", "flows.0.rate_pps=1", "--out", file],
        vec!["compare", "--quick", "--out", file],
        vec!["reproduce", "ifrc", "--quick", "--out", file],
        vec!["bench", "--quick", "--repeat", "1", "--out", file],
    ] {
        let o = wsn().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains("exists and is not a folder"), "{args:?}: {err}");
        // Refused before any work: nothing timed or run was printed.
        assert!(o.stdout.is_empty(), "{args:?}: {}", String::from_utf8_lossy(&o.stdout));
    }
    assert_eq!(std::fs::read_to_string(dir.join("a-file")).unwrap(), "x");
    std::fs::remove_dir_all(&dir).ok();
}

/// A data path given with `--set` is found in the current folder (not only beside the scenario
/// file), and `summary.json` names the file read; a missing one names the field.
#[test]
fn set_paths_are_found_from_the_current_folder() {
    // The scenario in dir/sub, the trace in dir/cwd (not above the scenario), run from dir/cwd.
    let (dir, f) = tiny_scenario("set-path");
    let (sub, cwd) = (dir.join("sub"), dir.join("cwd"));
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    let scenario = sub.join("tiny.toml");
    std::fs::rename(&f, &scenario).unwrap();
    std::fs::write(cwd.join("mytrace.txt"), "-98\n-97\n-99\n".repeat(100)).unwrap();
    let run = |trace: &str| {
        wsn()
            .current_dir(&cwd)
            .args(["run", scenario.to_str().unwrap(), "-q", "--out", "o", "--set"])
            .arg(format!("radio.noise={{model=\"replay\", trace=\"{trace}\"}}"))
            .output()
            .unwrap()
    };
    let o = run("mytrace.txt");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cwd.join("o/summary.json")).unwrap()).unwrap();
    let read = summary["data_files"]["radio.noise.trace"].as_str().unwrap().to_string();
    assert_eq!(std::fs::canonicalize(&read).unwrap(), std::fs::canonicalize(cwd.join("mytrace.txt")).unwrap());
    let missing = format!("wsn-no-such-trace-{}.txt", std::process::id());
    let o = run(&missing);
    let err = String::from_utf8_lossy(&o.stderr);
    let says = format!("radio.noise.trace = \"{missing}\": no such file (looked for {}", cwd.join(&missing).display());
    assert!(!o.status.success() && err.contains(&says), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// The run's summary names its radio outages (those within the run).
#[test]
fn run_names_its_outages() {
    let (dir, f) = tiny_scenario("outages");
    let o = wsn()
        .args(["run", f.to_str().unwrap(), "-q", "--out"])
        .arg(dir.join("o"))
        .args(["--set", "outages=[{nodes=[1, 2], from_s=5, to_s=10.5}, {nodes=3, from_s=60}]"])
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("outages   radio off: node 1 5–10.5 s, node 2 5–10.5 s\n"), "{out}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("outages[1] starts at 60 s"));
    std::fs::remove_dir_all(&dir).ok();
}

/// `wsn gains` refuses to write over the scenario it reads (or one of its data files); another
/// file is written.
#[test]
fn gains_does_not_overwrite_its_input() {
    let (dir, f) = tiny_scenario("gains-input");
    let before = std::fs::read_to_string(&f).unwrap();
    let o = wsn().args(["gains", f.to_str().unwrap(), "--out"]).arg(&f).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("that is the scenario's file"));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), before, "the scenario was overwritten");
    let o = wsn().args(["gains", f.to_str().unwrap(), "--out"]).arg(dir.join("g.txt")).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

/// `--out -` writes the gains to standard output; `--fold-tx-power` adds the transmit power
/// (here −10 dBm) to every gain, and without it the note says the file leaves it out.
#[test]
fn gains_to_stdout_and_with_the_transmit_power() {
    let (dir, f) = tiny_scenario("gains-stdout");
    let gains = |extra: &[&str]| {
        let o = wsn()
            .args(["gains", f.to_str().unwrap(), "--out", "-", "--set", "radio.link.tx_power_dbm=-10"])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let first: f64 =
            text.lines().find(|l| !l.starts_with('#')).unwrap().split_whitespace().nth(3).unwrap().parse().unwrap();
        (first, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (plain, note) = gains(&[]);
    let (folded, quiet) = gains(&["--fold-tx-power"]);
    assert!((plain - 10.0 - folded).abs() < 0.011, "{plain} vs {folded}");
    assert!(note.contains("exclude this scenario's transmit power (-10 dBm)"), "{note}");
    assert!(!quiet.contains("note:"), "{quiet}");
    assert!(!std::path::Path::new("-").exists(), "a file named - was written");
    std::fs::remove_dir_all(&dir).ok();
}

/// A closed stdout (`wsn gains | true`) ends the program without a panic.
#[test]
fn closed_stdout_is_not_a_panic() {
    let (dir, f) = tiny_scenario("pipe");
    let mut child = wsn()
        .args(["gains", f.to_str().unwrap(), "--out"])
        .arg(dir.join("g.txt"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A run whose flows start after its end warns, and its summary says there was no traffic
/// instead of depth figures "while traffic flows" and counts no parent change during traffic.
#[test]
fn run_without_traffic_says_so() {
    let (dir, f) = tiny_scenario("no-traffic");
    let o = wsn()
        .args(["run", f.to_str().unwrap(), "-q", "--set", "flows.0.start_s=40", "--set", "output.plots=false", "--out"])
        .arg(dir.join("o"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: flows[0] starts at 40 s, not before the run ends") && err.contains("sends nothing"),
        "{err}"
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let routing = out.lines().find(|l| l.starts_with("routing")).unwrap();
    assert!(routing.contains("no traffic") && routing.contains("(0 during traffic)"), "{routing}");
    // No goodput, delivery ratio or fairness is claimed for flows that never ran.
    assert!(out.contains("goodput   no flow started before the end of the run"), "{out}");
    assert!(out.contains("no packet originated"), "{out}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("o/summary.json")).unwrap()).unwrap();
    for key in ["delivery_ratio", "mean_goodput_pps", "min_goodput_pps", "max_goodput_pps", "goodput_jain_index"] {
        assert!(summary["totals"][key].is_null(), "{key}: {}", summary["totals"][key]);
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// Errors name what is wrong where the user wrote it: an unknown key given with `--set` is
/// reported as that `--set` (not as a line of a rewritten copy of the file), a bad `[mac]` or
/// `[protocol]` value by its key, a bad node count by its key.
#[test]
fn errors_name_the_key_and_where_it_came_from() {
    let (dir, f) = tiny_scenario("errors");
    for (set, says) in [
        ("bogus=1", "--set bogus=1: unknown field `bogus`"),
        ("mac.max_retries=-1", "mac.max_retries = -1"),
        ("protocol.profile=foo", "protocol.kind must be given"),
        ("topology.layout.nodes=0", "topology.layout.nodes = 0"),
        ("flows.0.rate_pps=inf", "must be a finite number"),
        ("name=\"a..b\"", "scenario `name` = \"a..b\""),
    ] {
        let o = wsn().current_dir(&dir).args(["run", f.to_str().unwrap(), "-q", "--set", set]).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success() && err.contains(says) && !err.contains("panicked"), "{set}: {err}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(target_os = "linux")]
fn dev_full() -> std::fs::File {
    std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap()
}

/// Standard output that cannot be written (here /dev/full) is an error that says so, not a
/// panic from println! with its backtrace; the run unwinds, so its lock file is removed, and
/// its results (written before the summary is printed) are there.
#[cfg(target_os = "linux")]
#[test]
fn unwritable_stdout_is_an_error_not_a_panic() {
    let (dir, f) = tiny_scenario("stdout-full");
    let o = wsn()
        .current_dir(&dir)
        .env("RUST_BACKTRACE", "1")
        .args(["run", f.to_str().unwrap(), "-q", "--set", "output.plots=false"])
        .stdout(dev_full())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("Error: cannot write to standard output"), "{err}");
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    let out = dir.join("out/tiny");
    assert!(out.join("summary.json").is_file(), "the results were not written");
    assert!(!out.join(".wsn-run.lock").exists(), "the run's lock file stayed");
    std::fs::remove_dir_all(&dir).ok();
}

/// The message a command ends with when standard output cannot be written: one error, no
/// panic, exit code 1.
#[cfg(target_os = "linux")]
fn assert_stdout_error(o: &std::process::Output) -> String {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.matches("Error: cannot write to standard output").count(), 1, "{err}");
    assert!(!err.contains("panicked") && !err.contains("backtrace"), "{err}");
    err
}

/// A sweep whose standard output cannot be written moves its files into place before it
/// prints its table (it printed first, and left sweep.csv.partial and a staging folder
/// instead of its results), and the error names them.
#[cfg(target_os = "linux")]
#[test]
fn unwritable_stdout_leaves_a_sweeps_results_in_place() {
    let (dir, f) = tiny_scenario("sweep-stdout-full");
    let args = ["sweep", f.to_str().unwrap(), "--param", "flows.0.rate_pps=0.5,1", "--out", "sw"];
    let o = wsn().current_dir(&dir).args(args).stdout(dev_full()).output().unwrap();
    let err = assert_stdout_error(&o);
    assert!(err.contains("the results are in place: sw/sweep.csv"), "{err}");
    let out = dir.join("sw");
    let csv = std::fs::read_to_string(out.join("sweep.csv")).expect("sweep.csv");
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(out.join("sweep.png").is_file() && out.join("sweep.svg").is_file());
    let names: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains(".partial") && !n.starts_with(".wsn-")), "{names:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A failed run's staging folder left in `dir/o`, which the next run there removes (and says
/// so while it moves its results into place).
#[cfg(target_os = "linux")]
fn stale_staging_folder(dir: &Path) -> PathBuf {
    let stale = dir.join("o/.wsn-staging-run-1-2");
    std::fs::create_dir_all(&stale).unwrap();
    std::fs::write(stale.join("summary.json"), "{}").unwrap();
    stale
}

/// A run of the tiny scenario `f` into `dir/w` whose positions put two nodes at one spot: it
/// warns about them (on standard error) with its results.
#[cfg(target_os = "linux")]
fn warning_run(dir: &Path, f: &Path) -> std::process::Command {
    std::fs::write(dir.join("p.csv"), "node,x_m,y_m\n0,0.0,0.0\n1,5.0,0.0\n2,5.0,0.0\n").unwrap();
    let mut cmd = wsn();
    cmd.current_dir(dir).args(["run", f.to_str().unwrap(), "-q", "--out", "w", "--set", "output.plots=false"]);
    cmd.args(["--set", "topology.layout={ kind = \"file\", path = \"p.csv\" }"]);
    cmd
}

/// A run into a folder that holds a failed run's staging folder says that it removes it while
/// it moves its results into place: standard output that cannot be written must not stop it
/// there (the run's results were lost).
#[cfg(target_os = "linux")]
#[test]
fn unwritable_stdout_does_not_stop_a_run_while_it_moves_its_results() {
    let (dir, f) = tiny_scenario("stale-stdout-full");
    let stale = stale_staging_folder(&dir);
    let args = ["run", f.to_str().unwrap(), "-q", "--out", "o", "--set", "output.plots=false"];
    let o = wsn().current_dir(&dir).args(args).stdout(dev_full()).output().unwrap();
    let err = assert_stdout_error(&o);
    assert!(err.contains("the results are in place: o\n"), "{err}");
    let summary = std::fs::read_to_string(dir.join("o/summary.json")).expect("the results were not written");
    assert!(summary.contains("\"scenario\": \"tiny\""), "{summary}");
    assert!(!stale.exists() && !dir.join("o/.wsn-run.lock").exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// A closed pipe (`wsn … | head`) ends a command as SIGPIPE's default action does, without a
/// message, but only once its results are in place: a run into a folder holding a failed
/// run's staging folder says that it removes it while it moves its results, and with SIGPIPE's
/// default action that line killed the run half-way (the results were lost); `gains --out -`
/// ends the same way. The pipe's reader is closed before the command starts, so every write
/// meets the closed pipe.
#[cfg(target_os = "linux")]
#[test]
fn a_closed_pipe_ends_quietly_once_the_results_are_in_place() {
    use std::os::unix::process::ExitStatusExt;
    let (dir, f) = tiny_scenario("stale-closed-pipe");
    let stale = stale_staging_folder(&dir);
    let closed_pipe = || {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        writer
    };
    let args = ["run", f.to_str().unwrap(), "-q", "--out", "o", "--set", "output.plots=false"];
    let o = wsn().current_dir(&dir).args(args).stdout(closed_pipe()).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}: {err}", o.status);
    assert!(err.is_empty(), "{err}");
    let summary = std::fs::read_to_string(dir.join("o/summary.json")).expect("the results were not written");
    assert!(summary.contains("\"scenario\": \"tiny\""), "{summary}");
    assert!(!stale.exists() && !dir.join("o/.wsn-run.lock").exists());
    let o = wsn().current_dir(&dir).args(["gains", f.to_str().unwrap(), "--out", "-"]).stdout(closed_pipe()).output();
    let o = o.unwrap();
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}", o.status);
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
    // Standard error a closed pipe (`wsn … 2>&1 | head`): a warning said with the results (two
    // nodes at one spot) ends the run the same way, after they are written.
    let o = warning_run(&dir, &f).stderr(closed_pipe()).output().unwrap();
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}", o.status);
    assert!(dir.join("w/summary.json").is_file(), "the results were not written");
    // A warning said after the summary (a run too short for a tree) still reaches standard
    // error when standard output is a closed pipe.
    let args = ["run", f.to_str().unwrap(), "-q", "--out", "n", "--set", "output.plots=false"];
    let o = wsn().current_dir(&dir).args(args).args(["--set", "duration_s=1"]).stdout(closed_pipe()).output();
    let o = o.unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.signal(), Some(libc::SIGPIPE), "{:?}: {err}", o.status);
    assert!(err.contains("no node ever had a route to a sink"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `wsn gains --out -` into standard output that cannot be written says so as every command
/// does; with a file it writes the file first.
#[cfg(target_os = "linux")]
#[test]
fn unwritable_stdout_in_gains() {
    let (dir, f) = tiny_scenario("gains-stdout-full");
    let o = wsn().current_dir(&dir).args(["gains", f.to_str().unwrap(), "--out", "-"]).stdout(dev_full()).output();
    let err = assert_stdout_error(&o.unwrap());
    assert!(err.contains("No space left on device"), "{err}");
    let o = wsn().current_dir(&dir).args(["gains", f.to_str().unwrap(), "--out", "g.txt"]).stdout(dev_full()).output();
    let err = assert_stdout_error(&o.unwrap());
    assert!(err.contains("the results are in place: g.txt"), "{err}");
    assert!(std::fs::read_to_string(dir.join("g.txt")).unwrap().starts_with("# "));
    std::fs::remove_dir_all(&dir).ok();
}

/// A progress line that cannot be written to standard error does not stop the runs (a sweep
/// stopped at its first finished run, leaving only sweep.csv.partial): progress is best effort;
/// a warning that cannot be written still stops the command.
#[cfg(target_os = "linux")]
#[test]
fn unwritable_stderr_does_not_stop_on_progress() {
    let (dir, f) = tiny_scenario("progress-stderr-full");
    let args = ["sweep", f.to_str().unwrap(), "--param", "flows.0.rate_pps=0.5,1", "--out", "sw"];
    let o = wsn().current_dir(&dir).args(args).stderr(dev_full()).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stdout));
    assert_eq!(std::fs::read_to_string(dir.join("sw/sweep.csv")).unwrap().lines().count(), 3);
    assert!(!dir.join("sw/sweep.csv.partial").exists());
    let o = wsn().current_dir(&dir).args(args).args(["--set", "flows.0.start_s=100"]).stderr(dev_full()).output();
    assert_eq!(o.unwrap().status.code(), Some(1), "a warning that cannot be written went unnoticed");
    std::fs::remove_dir_all(&dir).ok();
}

/// Help and version text that cannot be written to standard output is an error (exit code 1),
/// not a silent success; help that can be written still exits 0, a usage error 2.
#[cfg(target_os = "linux")]
#[test]
fn unwritable_help_and_version_are_errors() {
    for args in [&["--help"][..], &["run", "--help"], &["--version"]] {
        let o = wsn().args(args).stdout(dev_full()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("Error: cannot write to standard output") && !err.contains("panicked"), "{args:?}: {err}");
    }
    let o = wsn().args(["run", "--help"]).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Usage: wsn run"));
    let o = wsn().arg("--no-such-option").output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unexpected argument"));
}

/// Standard error that cannot be written cannot report anything: the command ends with the
/// exit code of the failure it tried to report (1 for an error, 2 for a usage error), without
/// a panic (101) or an abort; a warning that cannot be printed stops the command (exit code 1).
#[cfg(target_os = "linux")]
#[test]
fn unwritable_stderr_keeps_the_exit_code() {
    let (dir, f) = tiny_scenario("stderr-full");
    let o = wsn().current_dir(&dir).args(["run", "no-such-file.toml"]).stderr(dev_full()).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{:?}", o.status);
    let o = wsn().arg("--no-such-option").stderr(dev_full()).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{:?}", o.status);
    // A flow that starts after the end: a warning on standard error before the run.
    let args = ["run", f.to_str().unwrap(), "-q", "--out", "o", "--set", "output.plots=false"];
    let o =
        wsn().current_dir(&dir).args(args).args(["--set", "flows.0.start_s=100"]).stderr(dev_full()).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{:?}", o.status);
    // A scenario warning said with the run's results (two nodes at one spot of a positions
    // file): written once the results are in place, so a standard error that cannot take it
    // still stops the command (exit code 1), but not before them (they were lost).
    let o = warning_run(&dir, &f).stderr(dev_full()).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{:?}", o.status);
    assert!(dir.join("w/summary.json").is_file(), "the results were not written");
    assert!(!dir.join("w/.wsn-run.lock").exists());
    let o = warning_run(&dir, &f).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success() && err.contains("closer than D0"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Mutation audit (session 36) of the numbers the run's summary prints.
mod audit36 {
    use super::*;

    /// README quick start: "traffic … originated N, delivered M (P %)" and "transport feedback F
    /// (… % of data packets originated, the paper's measure; … % of data frames on the air)",
    /// each a share of its own total in summary.json, and "–" for a share of nothing.
    #[test]
    fn the_summary_prints_each_share_of_its_own_total() {
        let (dir, f) = tiny_scenario("audit36-summary");
        let run = |out: &str, extra: &[&str]| {
            let o = wsn()
                .args(["run", f.to_str().unwrap(), "-q", "--set", "protocol.kind=\"rcrt\"", "--set"])
                .args(["output.plots=false", "--out"])
                .arg(dir.join(out))
                .args(extra)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let s: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join(out).join("summary.json")).unwrap()).unwrap();
            (String::from_utf8_lossy(&o.stdout).into_owned(), s["totals"].clone())
        };
        let (out, t) = run("o", &[]);
        let n = |k: &str| t[k].as_u64().unwrap();
        let (originated, delivered, data, fb) =
            (n("originated"), n("delivered"), n("data_frames"), n("feedback_packets"));
        assert!(fb > 0 && delivered < originated, "{t}");
        let pct = |a: u64, b: u64| format!("{:.1}", 100.0 * a as f64 / b as f64);
        let traffic = format!("originated {originated}, delivered {delivered} ({} %)", pct(delivered, originated));
        assert!(out.contains(&traffic), "{traffic}\n{out}");
        let feedback = format!(
            "feedback {fb} ({} % of data packets originated, the paper's measure; {} % of data frames on the air)",
            pct(fb, originated),
            pct(fb, data)
        );
        assert!(out.contains(&feedback), "{feedback}\n{out}");
        // No packet originated and no data frame sent: no share, not 0.0 % or NaN.
        let (out, _) = run("none", &["--set", "flows.0.start_s=40"]);
        assert!(out.contains("feedback 0 (– % of data packets originated"), "{out}");
        assert!(out.contains("; – % of data frames on the air)"), "{out}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
