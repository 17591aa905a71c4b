//! Helpers shared by the scenario tests.
#![allow(dead_code)]

use std::path::PathBuf;

use wsn_sim::runner::{run, RunOptions, RunResult};
use wsn_sim::scenario::Scenario;

/// The project's `scenarios/` folder.
pub fn scenarios() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// Parse scenario text (paths relative to `scenarios/`).
#[track_caller]
pub fn scenario(text: &str, set: &[&str]) -> Scenario {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    Scenario::from_toml(text, "test", scenarios(), &set).expect("valid scenario")
}

/// Load a scenario file under `scenarios/` or a built-in name.
#[track_caller]
pub fn load(name: &str, set: &[&str]) -> Scenario {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let path = scenarios().join(name);
    let spec = if path.exists() { path.to_string_lossy().into_owned() } else { name.to_string() };
    Scenario::load(&spec, &set).expect("scenario loads")
}

/// Run to the end.
#[track_caller]
pub fn go(sc: &Scenario) -> RunResult {
    run(sc, RunOptions { seed: None, out_dir: None, progress: None }).expect("run succeeds")
}

/// Run a scenario that sets `output.trace = true` into a scratch folder named after `tag` (removed
/// afterwards); the result and the text of its trace.csv.
#[track_caller]
pub fn go_traced(sc: &Scenario, tag: &str) -> (RunResult, String) {
    let dir = std::env::temp_dir().join(format!("wsn-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let r = run(sc, RunOptions { seed: None, out_dir: Some(dir.clone()), progress: None }).expect("run succeeds");
    wsn_sim::output::publish_trace_files(&r.trace_files).expect("trace.csv moved into place");
    let trace = std::fs::read_to_string(dir.join("trace.csv")).expect("trace.csv");
    std::fs::remove_dir_all(&dir).ok();
    (r, trace)
}

/// Single link, one saturated sender (node 1) one hop from the sink (node 0).
pub fn one_hop(preset: &str, payload: usize, extra: &[&str]) -> RunResult {
    let text = format!(
        r#"
name = "one-hop"
duration_s = 60.0
[topology]
layout = {{ kind = "chain", nodes = 2, spacing_m = 2.0 }}
[radio]
noise_offsets = false
[radio.link]
shadowing_sigma_db = 0.0
s11 = 0.0
s12 = 0.0
s22 = 0.0
[radio.noise]
model = "constant"
floor_dbm = -98.0
[mac]
preset = "{preset}"
[routing]
kind = "static"
tree_file = "tossim/tree2.csv"
mhlqi = {{ beacon_period_binary_ms = 100000000 }}
[[flows]]
sources = [1]
rate_pps = 1000.0
start_s = 10.0
payload_bytes = {payload}
[output]
plots = false
"#
    );
    go(&scenario(&text, extra))
}

/// What became of one generated case of a "never panics" property test.
#[derive(Clone, Copy, Debug)]
pub enum Outcome {
    /// Refused when loaded (with a message).
    Refused,
    /// Loaded, refused when built or run.
    RunError,
    /// Ran to its end.
    Ran,
}

/// Run `case` on `runner`'s cases of `strategy` (a case that returns `None` is not counted),
/// panic with proptest's report on a failure, print the outcomes and, from 40 counted cases on,
/// check that at least one in `floor` of them ran: the generator is not vacuous.
pub fn run_counting<S: proptest::strategy::Strategy>(
    runner: &mut proptest::test_runner::TestRunner,
    strategy: &S,
    floor: usize,
    case: impl Fn(S::Value) -> Result<Option<Outcome>, proptest::test_runner::TestCaseError>,
) {
    let counts = std::cell::RefCell::new([0usize; 3]);
    let result = runner.run(strategy, |v| {
        if let Some(outcome) = case(v)? {
            counts.borrow_mut()[outcome as usize] += 1;
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let [refused, run_error, ran] = *counts.borrow();
    let total = refused + run_error + ran;
    eprintln!("{ran} of {total} cases ran ({refused} refused at load, {run_error} refused at run time)");
    if total >= 40 {
        assert!(ran * floor >= total, "only {ran} of {total} cases ran ({refused} refused, {run_error} run errors)");
    }
}
