//! Helpers shared by the CLI integration tests (`mod common;` in each test file that uses them).
#![allow(dead_code)] // each test file uses its own subset

use std::path::{Path, PathBuf};

/// A report's numbers.csv (`key,paper,ours,unit,note`): each key's `ours` (`None` for `n/a`) and
/// note.
pub struct Numbers {
    pub path: PathBuf,
    pub rows: Vec<(String, Option<f64>, String)>,
}

impl Numbers {
    /// Reads `path`, checking its header; a value that is neither a number nor `n/a` panics.
    pub fn read(path: &Path) -> Numbers {
        let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let header = r.headers().unwrap_or_else(|e| panic!("{}: {e}", path.display())).clone();
        assert_eq!(header.iter().collect::<Vec<_>>(), ["key", "paper", "ours", "unit", "note"], "{}", path.display());
        let rows = r
            .records()
            .map(|rec| {
                let rec = rec.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                let ours = match &rec[2] {
                    "n/a" => None,
                    v => Some(v.parse::<f64>().unwrap_or_else(|_| panic!("{}: {} = {v}", path.display(), &rec[0]))),
                };
                (rec[0].to_string(), ours, rec[4].to_string())
            })
            .collect();
        Numbers { path: path.to_path_buf(), rows }
    }

    pub fn row(&self, key: &str) -> &(String, Option<f64>, String) {
        self.rows.iter().find(|r| r.0 == key).unwrap_or_else(|| panic!("{}: no key {key}", self.path.display()))
    }

    /// The value of `key`, `None` for `n/a`.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.row(key).1
    }

    /// The value of `key`, which must be a number.
    pub fn num(&self, key: &str) -> f64 {
        self.get(key).unwrap_or_else(|| panic!("{}: {key} is n/a", self.path.display()))
    }

    /// The value of `key`, NaN for `n/a` (every comparison with it fails).
    pub fn num_or_nan(&self, key: &str) -> f64 {
        self.get(key).unwrap_or(f64::NAN)
    }

    pub fn note(&self, key: &str) -> &str {
        &self.row(key).2
    }
}

/// A test's scratch folder under the system's temporary folder, named after the test file, the
/// process and the test, emptied when made and removed when the test ends (passed or failed).
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(file: &str, test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("wsn-{file}-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `wsn run FILE --out DIR/out -q ARGS...` on `text` written to `DIR/name.toml`; returns
/// the exit code and standard error.
pub fn run_text(dir: &Path, name: &str, text: &str, args: &[&str]) -> (Option<i32>, String) {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(&file, text).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_wsn"))
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(dir.join("out"))
        .arg("-q")
        .args(args)
        .output()
        .unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Asserts a refusal: exit code 1, every `wanted` piece in the message, none of `unwanted`, no
/// panic.
pub fn assert_refused(case: &str, (code, err): (Option<i32>, String), wanted: &[&str], unwanted: &[&str]) {
    assert_eq!(code, Some(1), "{case}: {err}");
    assert!(!err.contains("panicked"), "{case}: {err}");
    for w in wanted {
        assert!(err.contains(w), "{case}: expected {w:?} in: {err}");
    }
    for u in unwanted {
        assert!(!err.contains(u), "{case}: did not expect {u:?} in: {err}");
    }
}

/// Nine nodes on a 5-m grid, RCRT from 10 s to the end (90 s), named `name`: every kind of
/// frame, feedback, decreases and a few repairs, in a second or so. Written into `dir` as
/// `NAME.toml`; returns the path as a string.
pub fn nine_node_rcrt_file(dir: &Path, name: &str) -> String {
    let text = format!(
        r#"name = "{name}"
duration_s = 90.0

[topology]
sinks = [0]
layout = {{ kind = "grid", nodes = 9, spacing_m = 5.0 }}

[radio.noise]
model = "constant"
floor_dbm = -98.0

[protocol]
kind = "rcrt"

[[flows]]
sources = "all"
rate_pps = 2.0
start_s = 10.0
"#
    );
    let f = dir.join(format!("{name}.toml"));
    std::fs::write(&f, text).unwrap();
    f.display().to_string()
}

/// Runs `wsn ARGS...` and returns what it did.
pub fn wsn_output(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_wsn")).args(args).output().unwrap()
}

/// Runs `wsn ARGS...`, which must succeed without a panic; returns its standard output and
/// standard error.
pub fn wsn_ok(args: &[&str]) -> (String, String) {
    let o = wsn_output(args);
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "wsn {args:?}: {:?}\n{out}\n{err}", o.status.code());
    assert!(!err.contains("panicked"), "{err}");
    (out, err)
}

/// A CSV file as its rows of named cells.
pub fn csv_rows(path: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records().map(|rec| header.iter().cloned().zip(rec.unwrap().iter().map(String::from)).collect()).collect()
}
