//! The twelve most likely mistakes with a scenario file, made through the `wsn` binary as a new
//! user makes them: each is refused with exit code 1 and a message naming the field (and the
//! line, for a key written in a file, or the data file's line), never a panic. All fail while
//! the scenario loads, before anything runs, so the whole file takes well under a second.

mod common;

use common::{assert_refused, run_text, Scratch};

/// A small RCRT scenario whose line numbers the cases below rely on.
const BASE: &str = r#"name = "nu30"
duration_s = 60.0

[topology]
sinks = [0]
layout = { kind = "grid", nodes = 9, spacing_m = 5.0 }

[protocol]
kind = "rcrt"
policy = "fair"

[[flows]]
sources = "all"
rate_pps = 1.0
start_s = 10.0
"#;

/// A fresh folder for one test's files.
fn scratch(test: &str) -> Scratch {
    Scratch::new("newuser30", test)
}

/// The base scenario runs, so that each refusal below is the mistake's alone.
#[test]
fn the_base_scenario_runs() {
    let dir = scratch("base");
    let (code, err) = run_text(&dir, "base", BASE, &["--set", "duration_s=20"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(dir.join("out/summary.json").is_file());
}

/// Mistakes written in the scenario file: the message names the field and the file's line.
#[test]
fn mistakes_in_a_scenario_file_name_the_field_and_the_line() {
    let dir = scratch("file");
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "a key in the wrong table",
            BASE.replace("sinks = [0]\n", "sinks = [0]\nrate_pps = 2.0\n"),
            vec!["unknown field `rate_pps`", "line 6", "expected one of `layout`"],
        ),
        (
            "a flow that starts after it stops",
            format!("{BASE}stop_s = 5.0\n"),
            vec!["flows[0].stop_s = 5: must be after start_s = 10", "(line 16)"],
        ),
        ("a rate of 0", BASE.replace("rate_pps = 1.0", "rate_pps = 0.0"), vec!["flows[0].rate_pps = 0", "(line 14)"]),
        (
            "a sink id out of range",
            BASE.replace("sinks = [0]", "sinks = [12]"),
            vec!["topology.sinks: node 12 does not exist (9 nodes)", "(line 5)"],
        ),
        (
            "a flow's sink that is no sink",
            format!("{BASE}sink = 4\n"),
            vec!["flows[0].sink: node 4 is not in topology.sinks (the sinks: 0)", "(line 16)"],
        ),
        (
            "a policy name misspelt",
            BASE.replace("policy = \"fair\"", "policy = \"fiar\""),
            vec!["protocol.policy: unknown policy `fiar`", "demand_limited", "(line 10)"],
        ),
        (
            "a parameter of the other protocol",
            BASE.replace("policy = \"fair\"", "epsilon = 0.1"),
            vec!["protocol.epsilon = 0.1: unknown field `epsilon`", "(line 10)"],
        ),
        (
            "a profile name misspelt",
            BASE.replace("policy = \"fair\"", "profile = \"refrence_code\""),
            vec!["protocol.profile = \"refrence_code\"", "`paper` or `reference_code`", "(line 10)"],
        ),
        ("a TOML syntax error", BASE.replace("[topology]", "[topology"), vec!["TOML parse error at line 4"]),
    ];
    for (i, (case, text, wanted)) in cases.into_iter().enumerate() {
        assert_refused(case, run_text(&dir, &format!("case{i}"), &text, &[]), &wanted, &[]);
    }
}

/// Mistakes in the data files a scenario names: the message names the field, the file and its
/// line, or the sizes that disagree.
#[test]
fn mistakes_in_data_files_name_the_file_and_the_line() {
    let dir = scratch("data");
    // A positions file with a bad coordinate on line 3.
    std::fs::write(dir.join("pos.csv"), "node,x_m,y_m\n0,0,0\n1,abc,2\n2,4,0\n").unwrap();
    let text = BASE.replace(
        "layout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }",
        "layout = { kind = \"file\", path = \"pos.csv\" }",
    );
    assert_refused(
        "positions, bad line",
        run_text(&dir, "pos", &text, &[]),
        &["topology.layout.path", "pos.csv:3: x_m \"abc\""],
        &[],
    );

    // A gain file of a smaller network than the layout's 9 nodes…
    std::fs::write(dir.join("g3.txt"), "gain 0 1 -60\ngain 1 0 -60\ngain 2 1 -70\n").unwrap();
    assert_refused(
        "gains, too few nodes",
        run_text(&dir, "g3", &BASE.replace("sinks = [0]", "sinks = [0]\ngains_file = \"g3.txt\""), &[]),
        &["topology.gains_file", "the file names 3 nodes (its largest id + 1) but the layout has 9"],
        &[],
    );
    // …and of a larger one: the message says that the layout is smaller, not only that an id
    // is out of range.
    std::fs::write(dir.join("g12.txt"), "gain 0 1 -60\ngain 1 0 -60\ngain 11 0 -70\n").unwrap();
    assert_refused(
        "gains, too many nodes",
        run_text(&dir, "g12", &BASE.replace("sinks = [0]", "sinks = [0]\ngains_file = \"g12.txt\""), &[]),
        &["topology.gains_file", "g12.txt:3: node id 11 outside 0 to 8: the layout has 9 nodes"],
        &[],
    );
}

/// Mistakes with `--set`: the message names the key as given.
#[test]
fn mistakes_with_set_name_the_key() {
    let dir = scratch("set");
    let cases: [(&str, &str, &[&str]); 3] = [
        (
            "a list index out of range",
            "flows.1.rate_pps=2",
            &["--set flows.1.rate_pps: index 1 out of range (`flows` has 1)"],
        ),
        ("a whole table set to a number", "topology=5", &["--set topology=5", "expected a table"]),
        (
            "a layout set to a number",
            "topology.layout=5",
            &["--set topology.layout=5", "expected a layout table with a `kind`"],
        ),
    ];
    for (case, set, wanted) in cases {
        let (code, err) = run_text(&dir, "s", BASE, &["--set", set]);
        // serde's name for a tagged enum is no help to a user.
        assert!(!err.contains("internally tagged"), "{case}: {err}");
        assert_refused(case, (code, err), wanted, &[]);
    }
    let (code, err) = run_text(&dir, "s", BASE, &["--set", "radio.noise=5"]);
    assert!(!err.contains("internally tagged"), "{err}");
    assert_refused("noise set to a number", (code, err), &["--set radio.noise=5", "a noise table with a `model`"], &[]);
}

/// A `--set` value meant as an inline table, an array or a quoted string but not valid TOML (a
/// missing closing brace or quote) is refused with the TOML mistake. Before, it was taken as a
/// plain string and failed as "invalid type: string "{kind=\"grid\"", expected internally tagged
/// enum Placement", or, for a quoted name, ran with the quote in the name.
#[test]
fn set_value_that_is_broken_toml_is_refused_with_the_toml_mistake() {
    let dir = scratch("toml");
    let cases: [(&str, &str); 4] = [
        ("topology.layout={ kind = \"grid\", nodes = 4, spacing_m = 5.0", "expected `}`"),
        ("topology.sinks=[0, 1", "expected `]`"),
        ("name=\"abc", "invalid basic string"),
        ("name='abc", "invalid literal string"),
    ];
    for (set, why) in cases {
        let (code, err) = run_text(&dir, "t", BASE, &["--set", set]);
        assert!(!err.contains("invalid type: string"), "{set}: {err}");
        assert_refused(set, (code, err), &[&format!("--set {set}: the value is not valid TOML"), why], &[]);
    }
    // A plain word is still a string, and a complete inline table still works.
    let (code, err) = run_text(&dir, "t", BASE, &["--set", "name=plain-word", "--set", "duration_s=20"]);
    assert_eq!(code, Some(0), "{err}");
    let layout = "topology.layout={ kind = \"grid\", nodes = 4, spacing_m = 5.0 }";
    let (code, err) = run_text(&dir, "t", BASE, &["--set", layout, "--set", "duration_s=20"]);
    assert_eq!(code, Some(0), "{err}");
}
