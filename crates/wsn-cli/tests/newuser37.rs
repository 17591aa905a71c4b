//! A new user exporting gains with `wsn gains` and running a scenario on them, and a two-node
//! chain. Each test runs in well under a second.

mod common;

use common::{wsn_ok, Scratch};

/// Two nodes on a chain, best effort from 10 s; `spacing_m` apart.
fn chain2(dir: &std::path::Path, spacing_m: f64) -> String {
    let text = format!(
        r#"name = "chain2"
duration_s = 30.0

[topology]
layout = {{ kind = "chain", nodes = 2, spacing_m = {spacing_m:?} }}

[[flows]]
sources = [1]
rate_pps = 1.0
start_s = 10.0
"#
    );
    let f = dir.join("chain2.toml");
    std::fs::write(&f, text).unwrap();
    f.display().to_string()
}

/// `wsn gains` on a network whose nodes cannot hear each other wrote a file without any gain
/// line, silently and with success, which `topology.gains_file` then refuses ("no gain lines: the
/// network would have no links"): the export now warns. A network with links does not.
#[test]
fn gains_without_any_link_warns_at_export() {
    let dir = Scratch::new("newuser37", "gains_without_any_link_warns_at_export");
    let out = dir.join("g.txt");
    let far = chain2(&dir, 2000.0);
    let (stdout, err) = wsn_ok(&["gains", &far, "--out", out.to_str().unwrap()]);
    assert!(stdout.contains("2 nodes, 0 directed links"), "{stdout}");
    assert!(err.contains("warning: no link of this scenario is kept"), "{err}");
    assert!(err.contains("topology.gains_file refuses"), "{err}");
    assert!(err.contains("none reaches the pruning threshold; check the radio"), "{err}");
    assert!(!std::fs::read_to_string(&out).unwrap().lines().any(|l| l.starts_with("gain ")));

    // One node: no pair to link, and nothing about the radio to check.
    let one = dir.join("one.toml");
    std::fs::write(
        &one,
        "name = \"one\"\nduration_s = 1.0\n[topology]\nlayout = { kind = \"chain\", nodes = 1, spacing_m = 5.0 }\n",
    )
    .unwrap();
    let (_, err) = wsn_ok(&["gains", one.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(err.contains("no link of this scenario is kept (a network of one node has no links)"), "{err}");
    assert!(!err.contains("check the radio"), "{err}");

    let near = chain2(&dir, 5.0);
    let (stdout, err) = wsn_ok(&["gains", &near, "--out", out.to_str().unwrap()]);
    assert!(stdout.contains("2 nodes, 2 directed links"), "{stdout}");
    assert!(!err.contains("warning"), "{err}");
    // And the file gives the run back: same trace as the generated links.
    let run = |extra: &[&str]| {
        let o = dir.join("out");
        let mut args = vec!["run", &near, "-q", "--out", o.to_str().unwrap()];
        args.extend_from_slice(extra);
        let (stdout, _) = wsn_ok(&args);
        stdout.lines().find(|l| l.starts_with("trace")).unwrap().to_string()
    };
    let set = format!("topology.gains_file={}", out.display());
    assert_eq!(run(&[]), run(&["--set", &set]));
}

/// A run without `--pcap` after one with it removes the earlier `frames.pcap` and says so; for
/// one file the line said "(this run wrote none of them)". A two-node chain runs through.
#[test]
fn removal_line_fits_one_file() {
    let dir = Scratch::new("newuser37", "removal_line_fits_one_file");
    let file = chain2(&dir, 5.0);
    let o = dir.join("out");
    let o = o.to_str().unwrap();
    wsn_ok(&["run", &file, "-q", "--pcap", "--out", o]);
    let (stdout, _) = wsn_ok(&["run", &file, "-q", "--out", o]);
    assert!(stdout.contains("traffic   1 flows: originated 20"), "{stdout}");
    assert!(stdout.contains("removed   the earlier run's frames.pcap (this run did not write it)"), "{stdout}");
    wsn_ok(&["run", &file, "-q", "--pcap", "--trace", "--out", o]);
    let (stdout, _) = wsn_ok(&["run", &file, "-q", "--out", o]);
    assert!(stdout.contains("(this run wrote none of them)"), "{stdout}");
}
