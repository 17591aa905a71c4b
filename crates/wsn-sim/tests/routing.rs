//! Tree formation on the default scenario (spec §8.5; RCRT testbed: trees 6–8 hops deep).

mod common;
use common::*;

#[test]
fn office40_trees_are_deep_and_parents_change() {
    let r = go(&load("office40.toml", &["duration_s=1800", "output.plots=false"]));
    let rt = &r.summary.routing;
    eprintln!("{rt:?}");
    assert!((6..=10).contains(&rt.max_depth_seen), "{rt:?}");
    assert!(rt.parent_changes_during_traffic > 0, "{rt:?}");
    assert_eq!(rt.unrouted_nodes, 0, "{rt:?}");
}
