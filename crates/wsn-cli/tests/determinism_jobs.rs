//! The multi-run commands are deterministic whatever the number of threads and whatever order
//! their runs finish in: the same command with one, two or three workers writes the same files,
//! byte for byte, and prints the same table; and a run inside a parallel sweep has the trace of
//! the same point run alone with `wsn run`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn wsn() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wsn"))
}

/// A fresh temporary folder for one test.
fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wsn-determinism-jobs-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// RCRT on office40 (feedback, repairs, rate control: more state than best effort), traffic from
/// the start so that 30 simulated seconds carry some.
fn scenario() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/rcrt/baseline.toml").to_str().unwrap().to_string()
}
const SETS: [&str; 4] = ["--set", "duration_s=30", "--set", "flows.0.start_s=0"];

/// Every file in `dir` (hidden ones too), by name.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            assert!(e.file_type().unwrap().is_file(), "unexpected folder {}", e.path().display());
            (e.file_name().into_string().unwrap(), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

/// `wsn sweep` with `--jobs jobs` into `dir`: its files and its standard output (with `dir`
/// replaced, the one thing that differs on purpose).
fn sweep(dir: &Path, jobs: &str) -> (BTreeMap<String, Vec<u8>>, String) {
    // The values out of order, the most loaded first: with several workers the runs finish in
    // another order than they were listed in.
    let o = wsn()
        .args(["sweep", &scenario(), "--param", "flows.0.rate_pps=2,0.5,1", "--seeds", "2"])
        .args(SETS)
        .args(["--jobs", jobs, "--out"])
        .arg(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "--jobs {jobs}: {}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap().replace(dir.to_str().unwrap(), "DIR");
    (files(dir), out)
}

#[test]
fn sweep_outputs_are_the_same_with_one_two_or_three_jobs() {
    let root = tmp("sweep");
    let (one_files, one_out) = sweep(&root.join("1"), "1");
    assert_eq!(
        one_files.keys().map(String::as_str).collect::<Vec<_>>(),
        ["sweep.csv", "sweep.png", "sweep.svg", "sweep_flows.csv"],
        "the files a finished sweep leaves"
    );
    let csv = String::from_utf8(one_files["sweep.csv"].clone()).unwrap();
    assert_eq!(csv.lines().count(), 7, "a header and 3 values × 2 seeds: {csv}");
    // The rows in the order of the values as given, each value's seeds in turn.
    let xs: Vec<(&str, &str)> =
        csv.lines().skip(1).map(|l| (l.split(',').next().unwrap(), l.split(',').nth(1).unwrap())).collect();
    assert_eq!(xs, [("2", "1"), ("2", "2"), ("0.5", "1"), ("0.5", "2"), ("1", "1"), ("1", "2")], "{csv}");
    assert!(
        one_out.contains("(2 seed(s) per value)")
            && one_out.contains("outputs   DIR/sweep.csv (per flow: DIR/sweep_flows.csv)"),
        "{one_out}"
    );
    for jobs in ["2", "3"] {
        let (files, out) = sweep(&root.join(jobs), jobs);
        assert_eq!(files.keys().collect::<Vec<_>>(), one_files.keys().collect::<Vec<_>>(), "--jobs {jobs}");
        for (name, bytes) in &files {
            assert!(
                *bytes == one_files[name],
                "--jobs {jobs}: {name} differs from --jobs 1's{}",
                if name.ends_with(".png") { String::new() } else { format!(":\n{}", String::from_utf8_lossy(bytes)) }
            );
        }
        assert_eq!(out, one_out, "--jobs {jobs}: the printed table differs from --jobs 1's");
    }
    std::fs::remove_dir_all(&root).ok();
}

/// Every run of a parallel sweep has the trace of its point run alone: the runs that share the
/// process, and the threads they run on, change nothing in a run.
#[test]
fn a_sweep_runs_trace_is_that_of_the_point_run_alone() {
    let root = tmp("alone");
    let o = wsn()
        .args(["sweep", &scenario(), "--param", "flows.0.rate_pps=2,0.5", "--seeds", "2"])
        .args(SETS)
        .args(["--jobs", "2", "--out"])
        .arg(root.join("sweep"))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(root.join("sweep/sweep.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).unwrap_or_else(|| panic!("no column {name}"));
    let (x, seed, sha) = (col("x"), col("seed"), col("trace_sha256"));
    let rows: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    // The points and seeds asked for, in the order of the rows; each run alone as asked for.
    let asked = [("2", "1"), ("2", "2"), ("0.5", "1"), ("0.5", "2")];
    assert_eq!(rows.iter().map(|r| (r[x], r[seed])).collect::<Vec<_>>(), asked, "{csv}");
    let mut hashes = std::collections::BTreeSet::new();
    for (r, (rate, sd)) in rows.iter().zip(asked) {
        let dir = root.join(format!("run-{rate}-{sd}"));
        let o = wsn()
            .args(["run", &scenario(), "-q", "--seed", sd])
            .args(SETS)
            .args(["--set", &format!("flows.0.rate_pps={rate}"), "--set", "output.plots=false", "--out"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
        assert_eq!(
            s["trace_sha256"].as_str(),
            Some(r[sha]),
            "rate {} seed {}: the sweep's trace differs",
            r[x],
            r[seed]
        );
        hashes.insert(r[sha]);
    }
    assert_eq!(hashes.len(), rows.len(), "every point and seed runs a trace of its own: {csv}");
    std::fs::remove_dir_all(&root).ok();
}
