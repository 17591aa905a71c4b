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
