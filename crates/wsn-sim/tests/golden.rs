//! Golden traces: the trace fingerprints (SHA-256) that the documentation quotes, recomputed.
//!
//! Same scenario and seed give a byte-identical trace within one build (tested in
//! `invariants.rs`); these tests also hold it across builds, so that a change to the model (the
//! order of random draws, a timing, a rule) cannot slip in unnoticed under the figures the
//! documents report. When a change is meant to alter the traces, rerun the scenarios, update the
//! hashes here and everywhere the documents quote them (listed per case), and say so in the
//! commit.

mod common;
use common::*;

#[track_caller]
fn check(name: &str, set: &[&str], expected: &str, quoted_in: &str) {
    let r = go(&load(name, set));
    assert_eq!(
        r.summary.trace_sha256, expected,
        "the trace of `{name}` {set:?} changed; if the model change is intended, update this hash and {quoted_in}"
    );
}

#[test]
fn default_scenario_matches_the_readme() {
    // `wsn run` with no argument: the RCRT baseline, one simulated hour.
    check(
        "rcrt-baseline",
        &[],
        "2c1e39ad38f353232f0adb60b4707f0b6e5c65c4337083c128b8c20965e92ea7",
        "the summary in README.md (Quick start)",
    );
}

#[test]
fn office40_best_effort_hour_matches_the_simulator_document() {
    check(
        "office40",
        &[],
        "7bee9de36de2144aa2ffa6c9d8a1a9eb4c0d2d10551e56ab050e9978680ac30f",
        "docs/simulator.md (section office40)",
    );
}

#[test]
fn lrwpan40_matches_the_simulator_document() {
    check(
        "lrwpan40",
        &[],
        "fb946915a93a714a5ade94ddb816a6cae3ec11f1fa339ec9629e95fb976a4296",
        "docs/simulator.md (lrwpan40 against ns-3)",
    );
}

#[test]
fn ifrc_forty_nodes_matches_the_ifrc_document() {
    check(
        "ifrc/e1-40node.toml",
        &[],
        "859ff549f6ecf11a599c873019a16e4ea45319ed050809da51bf212736ec77ce",
        "docs/ifrc.md (E1)",
    );
}
