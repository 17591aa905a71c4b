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
        "a12c0e00403b193cf7fa14a6233ade0a813b99e872092e7e7153b85a5fd993e2",
        "the summary in README.md (Quick start)",
    );
}

#[test]
fn office40_best_effort_hour_matches_the_simulator_document() {
    check(
        "office40",
        &[],
        "214b1032b077b6394d1517a08211d6e144b7ab867cfab7302d399152cbcc4243",
        "docs/simulator.md (section office40)",
    );
}

#[test]
fn lrwpan40_matches_the_simulator_document() {
    check(
        "lrwpan40",
        &[],
        "528ad998bca79c1ba7d3ed38c7f09d428496e2931f8a07d81652d2b25cf0c3bd",
        "docs/simulator.md (lrwpan40 against ns-3)",
    );
}

#[test]
fn ifrc_forty_nodes_matches_the_ifrc_document() {
    check(
        "ifrc/e1-40node.toml",
        &[],
        "de769a53e7c3df30622ef8ada559c0b3ff927aefbf98527bc84b6b0995adfd98",
        "docs/ifrc.md (E1)",
    );
}
