//! A researcher studying failures and fixed topologies: a relay's radio switched off for a while,
//! a topology read back from `wsn gains`, static trees from a file, and the trace and pcap of
//! such runs, against what the README says about them. Five nodes on a chain, runs of a few
//! simulated minutes: the whole file takes a few seconds.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::Scratch;

fn wsn(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wsn")).args(args).output().unwrap()
}

/// Runs `wsn ARGS...`, which must succeed; returns its standard output and standard error.
fn ok(args: &[&str]) -> (String, String) {
    let o = wsn(args);
    let (out, err) = (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned());
    assert!(o.status.success(), "wsn {args:?}: {:?}\n{out}\n{err}", o.status.code());
    assert!(!err.contains("panicked"), "{err}");
    (out, err)
}

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

/// `wsn sweep` with its standard error going to a pipe prints "one line per finished run"
/// (`sweep KEY: 3/8 runs done, 12 s`): with two workers, runs that finished at the same moment
/// printed their lines in either order, so a log could say "3/3 runs done" and then "2/3". The
/// lines count up, one by one, to the number of runs.
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
