//! The `wsn` binary as a user runs it: every shipped scenario file loads, a short run writes its
//! outputs, bad input gets an error (not a panic), and `wsn compare --quick` writes the numbers
//! the IFRC issue asks for.

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

/// A misspelt key is an error that names it, with a non-zero exit and no panic.
#[test]
fn bad_override_is_an_error_not_a_panic() {
    let o = wsn().args(["run", "office40", "-q", "--set", "mac.max_retriez=3"]).output().expect("wsn runs");
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("mac.max_retriez") && !err.contains("panicked"), "{err}");
}

/// `wsn compare --quick` runs RCRT and IFRC side by side and writes numbers.csv with the keys
/// the IFRC issue names.
#[test]
fn compare_quick_writes_the_required_numbers() {
    let out = std::env::temp_dir().join(format!("wsn-compare-test-{}", std::process::id()));
    let o = wsn().args(["compare", "--quick", "--out"]).arg(&out).output().expect("wsn runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("numbers.csv")).expect("numbers.csv");
    assert!(csv.starts_with("key,paper,ours,unit,note"));
    for key in ["queue_overflows", "ifrc_mean_goodput_pps", "ifrc_over_best_fixed", "rcrt_over_ifrc_same_mac", "rcrt_over_ifrc_paper_mac"] {
        let line = csv.lines().find(|l| l.starts_with(&format!("{key},"))).unwrap_or_else(|| panic!("{key} missing"));
        let ours: f64 = line.split(',').nth(2).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{line}"));
        assert!(ours.is_finite() && ours >= 0.0, "{line}");
    }
    assert!(out.join("report.md").exists() && out.join("fig15-compare.png").exists());
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
/// counted in `summary.json`, and the C_i samples in `congestion.csv`.
#[test]
fn rcrt_run_writes_congestion_traces() {
    let out = std::env::temp_dir().join(format!("wsn-congestion-test-{}", std::process::id()));
    let o = wsn()
        .args(["run", "rcrt-baseline", "-q", "--set", "duration_s=900", "--out"])
        .arg(&out)
        .output()
        .expect("wsn runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
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
    for f in ["congestion_time.png", "congestion_time.svg"] {
        assert!(std::fs::metadata(out.join(f)).map(|m| m.len() > 1000).unwrap_or(false), "{f} missing or empty");
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
    assert_eq!(std::fs::read_to_string(out.join("decreases.csv")).unwrap().lines().count(), 1, "the reliable baseline never cuts");
    std::fs::remove_dir_all(&out).ok();
}
