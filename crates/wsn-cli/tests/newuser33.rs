//! Mistakes a researcher made writing a first scenario of their own (a 5 × 5 grid, RCRT with two
//! sinks, IFRC on a chain), made again through the `wsn` binary: each is refused with exit code
//! 1 and a message that names the key at fault and where it was written (its line in the file,
//! or the `--set` or `--param` that gave it). All fail before anything runs.

mod common;

use std::process::Command;

use common::{assert_refused, run_text, Scratch};

/// A small RCRT scenario whose line numbers the cases below rely on.
const BASE: &str = r#"name = "nu33"
duration_s = 60.0

[topology]
sinks = [0]
layout = { kind = "grid", nodes = 9, spacing_m = 8.0 }

[protocol]
kind = "rcrt"
policy = "weighted"

[protocol.weights]
"4" = 3
"5" = 3

[[flows]]
sources = "all"
rate_pps = 1.0
start_s = 10.0
"#;

/// The base scenario runs, so that each refusal below is the mistake's alone.
#[test]
fn the_base_scenario_runs() {
    let dir = Scratch::new("newuser33", "base");
    let (code, err) = run_text(&dir, "base", BASE, &["--set", "duration_s=15"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(dir.join("out/summary.json").is_file());
}

/// A value of the wrong type inside a table that serde reads as a whole: the parser points at
/// the table (the whole inline `layout`, or the `[radio.noise]` header two lines above), and
/// the message now names the key and its line.
#[test]
fn a_wrong_type_inside_a_tagged_table_names_the_key_and_its_line() {
    let dir = Scratch::new("newuser33", "tagged");
    let cases: Vec<(&str, String, Vec<&str>)> = vec![
        (
            "a string spacing in the inline layout",
            BASE.replace("spacing_m = 8.0", "spacing_m = \"8\""),
            vec!["wrong.toml", "invalid type: string \"8\", expected a number", "(`spacing_m` is on line 6)"],
        ),
        (
            "a fractional node count in the inline layout",
            BASE.replace("nodes = 9,", "nodes = 9.0,"),
            vec!["invalid type: floating point `9.0`", "(`nodes` is on line 6)"],
        ),
        (
            "a string noise floor under a [radio.noise] header",
            format!("{BASE}\n[radio.noise]\nmodel = \"constant\"\nfloor_dbm = \"-95\"\n"),
            vec!["invalid type: string \"-95\", expected a number", "(`floor_dbm` is on line 23)"],
        ),
    ];
    for (case, text, wanted) in cases {
        assert_refused(case, run_text(&dir, "wrong", &text, &[]), &wanted, &[]);
    }
}

/// A bad entry of `protocol.weights` (a table keyed by node) is named by its node and found on
/// its own line, not on the table's header line; given with `--set`, the message names that
/// `--set`.
#[test]
fn a_bad_weight_names_its_node_and_its_line() {
    let dir = Scratch::new("newuser33", "weights");
    let text = BASE.replace("\"5\" = 3", "\"5\" = \"three\"");
    assert_refused(
        "a string weight",
        run_text(&dir, "weights", &text, &[]),
        &["protocol.weights.5 = \"three\": invalid type: string \"three\", expected a number (line 14)"],
        &["(line 12)"],
    );
    assert_refused(
        "a string weight given with --set",
        run_text(&dir, "weights", BASE, &["--set", "protocol.weights.4=three"]),
        &["protocol.weights.4 = \"three\"", "(from --set protocol.weights.4=three)"],
        &[],
    );
    // A keyed table the protocol does not have is at fault as a whole, at its header's line,
    // not its first entry (a review: IFRC has no `sink_policies`).
    let ifrc = "name = \"nu33-ifrc\"\nduration_s = 10.0\n[topology]\nlayout = { kind = \"chain\", nodes = 4, \
                spacing_m = 5.0 }\n[protocol]\nkind = \"ifrc\"\n[protocol.sink_policies]\n0 = \"max_min\"\n\
                [[flows]]\nsources = \"all\"\npayload_bytes = 0\n";
    let unknown_node = ifrc.replace("[protocol.sink_policies]\n0 = \"max_min\"", "[protocol.weights]\n77 = 2.0");
    assert_refused(
        "a weight for a node the topology lacks",
        run_text(&dir, "ifrc-weights", &unknown_node, &[]),
        &["protocol.weights.77: `77` is not a node id of this topology (node ids 0 to 3) (line 8)"],
        &[],
    );
    assert_refused(
        "sink_policies under IFRC",
        run_text(&dir, "ifrc-policies", ifrc, &[]),
        &["protocol.sink_policies: unknown field `sink_policies`", "(line 7)"],
        &["sink_policies.0", "(line 8)"],
    );
}

/// A flow source beyond the topology says how many nodes there are, as an out-of-range sink
/// already did.
#[test]
fn a_flow_source_out_of_range_says_how_many_nodes_there_are() {
    let dir = Scratch::new("newuser33", "source");
    let text = BASE.replace("sources = \"all\"", "sources = [1, 12]");
    assert_refused(
        "a source out of range",
        run_text(&dir, "source", &text, &[]),
        &["flows[0].sources: node 12 does not exist (9 nodes) (line 17)"],
        &[],
    );
}

/// A layout length the topology refuses is said once, by its key (not `topology.layout: invalid
/// topology: topology.layout.spacing_m = …`), with its line or its `--set`.
#[test]
fn a_refused_layout_length_is_said_by_its_key() {
    let dir = Scratch::new("newuser33", "layout");
    let text = BASE.replace("spacing_m = 8.0", "spacing_m = 0.0");
    assert_refused(
        "a zero spacing in the file",
        run_text(&dir, "layout", &text, &[]),
        &["layout.toml: topology.layout.spacing_m = 0: must be a positive number of metres (line 6)"],
        &["invalid topology"],
    );
    assert_refused(
        "a negative spacing given with --set",
        run_text(&dir, "layout", BASE, &["--set", "topology.layout.spacing_m=-3"]),
        &["topology.layout.spacing_m = -3: must be a positive number of metres (from --set topology.layout.spacing_m=-3)"],
        &["invalid topology"],
    );
}

/// A swept value that only building the network refuses (`spacing_m = 0` passes the scenario's
/// own checks) is blamed on the `--param`, which the user wrote, not on a `--set` they did not.
#[test]
fn a_swept_value_the_network_refuses_names_the_param() {
    let dir = Scratch::new("newuser33", "sweep");
    let file = dir.join("sweep.toml");
    std::fs::write(&file, BASE).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_wsn"))
        .arg("sweep")
        .arg(&file)
        .args(["--param", "topology.layout.spacing_m=5,0", "--jobs", "1", "--out"])
        .arg(dir.join("out"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_refused(
        "a zero spacing swept",
        (o.status.code(), err),
        &["sweep value topology.layout.spacing_m=0", "(from --param topology.layout.spacing_m=0)"],
        &["--set"],
    );
}

/// A sweep of a scenario that asks for a trace warns that a sweep writes none, with a hint
/// (`wsn run --set KEY=… --trace`) built from the swept key: given only once the swept values
/// have passed their checks, so that a misspelt key is refused without a hint that repeats it,
/// and a good one still gets the warning.
#[test]
fn a_sweep_of_a_misspelt_key_gives_no_trace_hint_that_repeats_it() {
    let dir = Scratch::new("newuser33", "hint");
    let file = dir.join("hint.toml");
    std::fs::write(&file, format!("{BASE}\n[output]\ntrace = true\n")).unwrap();
    let sweep = |param: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_wsn"))
            .arg("sweep")
            .arg(&file)
            .args(["--param", param, "--set", "duration_s=15", "--jobs", "1", "--out"])
            .arg(dir.join("out"))
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    assert_refused(
        "a misspelt swept key",
        sweep("flows.0.rate_ps=1,2"),
        &["unknown field `rate_ps`"],
        &["output.trace and output.pcap are ignored", "--set flows.0.rate_ps"],
    );
    let (code, err) = sweep("flows.0.rate_pps=1,2");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        err.contains("output.trace and output.pcap are ignored (run one point with wsn run --set flows.0.rate_pps=…")
    );
}

/// A flow whose packets do not fit the preset's frames says what would: IFRC on `ifrc2006`
/// (32-byte frames) with `payload_bytes` left at its default of 64 is told that 0 fits, and a
/// frame too small for the headers alone says how large it must be.
#[test]
fn a_payload_too_large_for_the_frame_says_what_fits() {
    let dir = Scratch::new("newuser33", "payload");
    let ifrc = "name = \"nu33-ifrc\"\nduration_s = 60.0\n\n[topology]\nlayout = { kind = \"chain\", nodes = 5, \
                spacing_m = 5.0 }\n\n[mac]\npreset = \"ifrc2006\"\n\n[protocol]\nkind = \"ifrc\"\n\n[[flows]]\n\
                sources = \"all\"\n";
    assert_refused(
        "IFRC with the default 64-byte payload",
        run_text(&dir, "payload", ifrc, &[]),
        &[
            "flows[0].payload_bytes = 64",
            "above mac.max_payload = 32 of preset ifrc2006; the most that fits is payload_bytes = 0",
        ],
        &[],
    );
    let (code, err) = run_text(&dir, "payload", ifrc, &["--set", "flows.0.payload_bytes=0", "--set", "duration_s=5"]);
    assert_eq!(code, Some(0), "{err}");
    let best_effort = BASE
        .replace("kind = \"rcrt\"\npolicy = \"weighted\"", "kind = \"best_effort\"")
        .replace("[protocol.weights]\n\"4\" = 3\n\"5\" = 3\n", "");
    assert_refused(
        "best effort in frames of 18 bytes",
        run_text(&dir, "payload", &best_effort, &["--set", "mac.max_payload=18"]),
        &["the frame payload is 84 bytes", "not even an empty payload fits: the headers need mac.max_payload ≥ 20"],
        &[],
    );
    // RCRT's payload holds at least the 6-byte flow/sequence check: the advice counts it (a
    // review: "the most that fits is payload_bytes = 2" was then refused as below 6).
    assert_refused(
        "RCRT in frames of 24 bytes",
        run_text(&dir, "payload", BASE, &["--set", "mac.max_payload=24"]),
        &["not even the smallest payload fits (6 bytes): the frame needs mac.max_payload ≥ 28"],
        &["the most that fits"],
    );
    assert_refused(
        "RCRT in frames of 29 bytes",
        run_text(&dir, "payload", BASE, &["--set", "mac.max_payload=29"]),
        &["the most that fits is payload_bytes = 7"],
        &[],
    );
}
