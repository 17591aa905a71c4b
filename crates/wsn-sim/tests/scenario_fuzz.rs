//! Mutated scenario files never panic: every shipped scenario under `scenarios/` (read at test
//! time) gets one random mutation — one value anywhere in it (a key's value, an element of a
//! list, a whole table) replaced by an edge or wrong-typed value (0, −1, huge numbers, NaN,
//! infinities, a fraction, an empty string, an empty table or list, a string, a boolean, an
//! integer beyond 64 bits), one line deleted, or one flow entry written twice — and then either
//! fails to load with an error whose message is not empty, or loads and is built and run for at
//! most 3 simulated seconds (its flows, outages and policy changes moved into them) to an error
//! or a result. A panic anywhere in loading, building or running fails the test with the
//! mutation and the whole mutated text.
//!
//! 2000 cases by default (from the fixed seed of `.cargo/config.toml`; about 8 s in release mode,
//! and each of two panics put in by hand, one at load and one at run time, was found);
//! `PROPTEST_CASES=n` and another `PROPTEST_RNG_SEED` for a longer hunt, `WSN_FUZZ_SHOW=1` to
//! print every case and how it ended. A hunt of 60,000 cases (three seeds) found no panic.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

mod common;
use common::{run_counting, Outcome};
use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};
use toml_edit::{DocumentMut, Item, Value};
use wsn_sim::runner::{run, RunOptions};
use wsn_sim::scenario::Scenario;

/// Simulated seconds each accepted case runs for (at most).
const RUN_S: f64 = 3.0;

/// What replaces a value: TOML text, some of it not valid TOML for any value (an integer beyond
/// i64, which TOML refuses), spliced in as written.
const REPLACEMENTS: &[&str] = &[
    "0",
    "-1",
    "0.0",
    "-0.0",
    "1e300",
    "-1e300",
    "1e-300",
    "18446744073709551615",
    "9223372036854775807",
    "-9223372036854775808",
    "4294967296",
    "65536",
    "65535",
    "1e7",
    "nan",
    "-nan",
    "inf",
    "-inf",
    "\"nan\"",
    "0.5",
    "2.5",
    "\"\"",
    "\"x\"",
    "{}",
    "[]",
    "[0]",
    "[1, 1]",
    "true",
    "{ kind = \"grid\" }",
];

/// Edge values for a value of the same type as `was` (written as TOML).
fn edge_values(was: &Orig) -> &'static [&'static str] {
    match was {
        Orig::Int(_) => &[
            "0",
            "-1",
            "1",
            "0.5",
            "2.5",
            "65535",
            "65536",
            "4294967295",
            "4294967296",
            "9223372036854775807",
            "18446744073709551615",
            "1e300",
        ],
        Orig::Float(_) => {
            &["0.0", "-0.0", "-1.0", "1e-300", "1e-9", "1e300", "-1e300", "1e7", "1e9", "nan", "inf", "-inf", "0"]
        }
        Orig::Str => {
            &["\"\"", "\"nan\"", "\"x\"", "\".\"", "\"/dev/null\"", "\"/\"", "\"all\"", "\"fair\"", "\"scenarios\""]
        }
        Orig::Bool => &["false", "true", "0", "\"true\""],
        Orig::Array => &["[]", "[0]", "[1, 1]", "[65535]", "[-1]", "[0.5]", "[\"all\"]", "[[]]"],
        Orig::Table => &["{}", "{ kind = \"grid\" }", "[]", "0"],
    }
}

/// Multiples a number is replaced by (`how` = 1).
const SCALES: &[f64] = &[-1.0, 0.001, 10.0, 1000.0, 1e6, 1e12, 1e20, 1e-6, 0.5];

/// What a replaced value was.
#[derive(Debug)]
enum Orig {
    Int(i64),
    Float(f64),
    Str,
    Bool,
    Array,
    Table,
}

impl Orig {
    fn of(v: &Value) -> Orig {
        match v {
            Value::Integer(i) => Orig::Int(*i.value()),
            Value::Float(f) => Orig::Float(*f.value()),
            Value::String(_) | Value::Datetime(_) => Orig::Str,
            Value::Boolean(_) => Orig::Bool,
            Value::Array(_) => Orig::Array,
            Value::InlineTable(_) => Orig::Table,
        }
    }
    fn of_item(i: &Item) -> Orig {
        match i {
            Item::Value(v) => Orig::of(v),
            Item::ArrayOfTables(_) => Orig::Array,
            _ => Orig::Table,
        }
    }
}

/// The TOML text that replaces `was` (see [`Mutation::Replace`]).
fn replacement(was: &Orig, how: u8, with: usize) -> String {
    let scale = SCALES[with % SCALES.len()];
    match (how, was) {
        (1, Orig::Int(i)) => {
            let x = *i as f64 * scale;
            // An integer stays one where it can (a fraction where an integer goes is refused).
            if x.fract() == 0.0 && x.abs() < 9.2e18 {
                format!("{}", x as i64)
            } else {
                format!("{x:?}")
            }
        }
        (1, Orig::Float(f)) => format!("{:?}", f * scale),
        (0 | 1, _) => {
            let v = edge_values(was);
            v[with % v.len()].to_string()
        }
        _ => REPLACEMENTS[with % REPLACEMENTS.len()].to_string(),
    }
}

/// Placeholder put where a value is replaced, then swapped for the replacement's text.
const MARK: &str = "__wsn_fuzz_mark__";

/// One mutation of a scenario's text.
#[derive(Clone, Debug)]
enum Mutation {
    /// Replace the `node`-th value of the document (depth first): `how` 0 by an edge value of
    /// its own type ([`edge_values`]), 1 by a multiple of itself when it is a number
    /// ([`SCALES`]), 2 by any of [`REPLACEMENTS`]; `with` picks the value.
    Replace { node: usize, how: u8, with: usize },
    /// Delete the `line`-th line that is not blank and not only a comment.
    DeleteLine { line: usize },
    /// Write the `entry`-th flow entry twice.
    DuplicateFlow { entry: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        6 => (any::<usize>(), 0..3u8, any::<usize>()).prop_map(|(node, how, with)| Mutation::Replace { node, how, with }),
        2 => any::<usize>().prop_map(|line| Mutation::DeleteLine { line }),
        1 => any::<usize>().prop_map(|entry| Mutation::DuplicateFlow { entry }),
    ]
}

/// Every shipped scenario file, as (path, text), in a fixed order.
fn shipped() -> Vec<(PathBuf, String)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "toml") {
                out.push(p);
            }
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut paths = Vec::new();
    walk(&root, &mut paths);
    paths.sort();
    assert!(paths.len() >= 10, "expected the shipped scenarios in {}, found {paths:?}", root.display());
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).unwrap();
            (p, text)
        })
        .collect()
}

/// Count the values below `item` (every key's value, every element of a list, tables included),
/// replacing the `target`-th (counted from `*seen`) by the string [`MARK`]. Returns what was
/// replaced: its type and its text.
fn visit_item(item: &mut Item, target: usize, seen: &mut usize) -> Option<(Orig, String)> {
    match item {
        Item::Table(t) => t.iter_mut().find_map(|(_, v)| visit_slot(v, target, seen)),
        // The elements of [[…]] are not counted themselves (a value cannot stand in their place), their
        // keys' values are.
        Item::ArrayOfTables(a) => {
            a.iter_mut().find_map(|t| t.iter_mut().find_map(|(_, v)| visit_slot(v, target, seen)))
        }
        Item::Value(v) => visit_value(v, target, seen),
        Item::None => None,
    }
}

/// [`visit_item`] for a slot that is itself counted.
fn visit_slot(item: &mut Item, target: usize, seen: &mut usize) -> Option<(Orig, String)> {
    if *seen == target {
        *seen += 1;
        let was = (Orig::of_item(item), item.to_string().trim().to_string());
        *item = toml_edit::value(MARK);
        return Some(was);
    }
    *seen += 1;
    visit_item(item, target, seen)
}

fn visit_value(v: &mut Value, target: usize, seen: &mut usize) -> Option<(Orig, String)> {
    let hit = |v: &mut Value, seen: &mut usize| -> Option<(Orig, String)> {
        if *seen == target {
            *seen += 1;
            let was = (Orig::of(v), v.clone().decorated("", "").to_string());
            let decor = v.decor().clone();
            *v = Value::from(MARK);
            *v.decor_mut() = decor;
            return Some(was);
        }
        *seen += 1;
        visit_value(v, target, seen)
    };
    match v {
        Value::Array(a) => a.iter_mut().find_map(|e| hit(e, seen)),
        Value::InlineTable(t) => t.iter_mut().find_map(|(_, e)| hit(e, seen)),
        _ => None,
    }
}

/// The mutated text and what was done, or `None` when the mutation does not apply (a scenario
/// without flow entries).
fn mutate(text: &str, m: &Mutation) -> Option<(String, String)> {
    match *m {
        Mutation::Replace { node, how, with } => {
            let mut doc: DocumentMut = text.parse().unwrap();
            let mut total = 0;
            let _ = visit_item(doc.as_item_mut(), usize::MAX, &mut total);
            let target = node % total.max(1);
            let mut seen = 0;
            let (orig, was) = visit_item(doc.as_item_mut(), target, &mut seen)?;
            let new = replacement(&orig, how, with);
            let out = doc.to_string().replacen(&format!("\"{MARK}\""), &new, 1);
            Some((out, format!("value #{target} `{was}` replaced by `{new}`")))
        }
        Mutation::DeleteLine { line } => {
            let lines: Vec<&str> = text.lines().collect();
            let content: Vec<usize> = (0..lines.len())
                .filter(|&i| !lines[i].trim().is_empty() && !lines[i].trim_start().starts_with('#'))
                .collect();
            let del = content[line % content.len()];
            let out: Vec<&str> = lines.iter().enumerate().filter(|(i, _)| *i != del).map(|(_, l)| *l).collect();
            Some((out.join("\n") + "\n", format!("line {} `{}` deleted", del + 1, lines[del])))
        }
        Mutation::DuplicateFlow { entry } => {
            let mut doc: DocumentMut = text.parse().unwrap();
            match doc.get_mut("flows")? {
                Item::ArrayOfTables(a) if !a.is_empty() => {
                    let k = entry % a.len();
                    let t = a.get(k).unwrap().clone();
                    a.push(t);
                    Some((doc.to_string(), format!("flows[{k}] written twice")))
                }
                Item::Value(Value::Array(a)) if !a.is_empty() => {
                    let k = entry % a.len();
                    let v = a.get(k).unwrap().clone();
                    a.push_formatted(v);
                    Some((doc.to_string(), format!("flows[{k}] written twice")))
                }
                _ => None,
            }
        }
    }
}

/// Load `text` as the file at `path`; when it loads, shorten it to [`RUN_S`] seconds and run
/// it. Errors must say something.
fn load_and_run(path: &Path, text: &str) -> Result<Outcome, String> {
    let base = path.parent().unwrap().to_path_buf();
    let origin = path.to_string_lossy();
    // A message says something beyond the file's name it starts with.
    let empty = |e: &dyn std::fmt::Display| {
        let said = e.to_string();
        said.strip_prefix(&format!("{origin}: ")).unwrap_or(&said).trim().is_empty()
    };
    let mut sc = match Scenario::from_toml(text, &origin, base, &[]) {
        Err(e) if empty(&e) => return Err(format!("refused with an empty message: {e:?}")),
        Err(e) => {
            if std::env::var_os("WSN_FUZZ_SHOW").is_some() {
                eprintln!("REFUSED {e}");
            }
            return Ok(Outcome::Refused);
        }
        Ok(sc) => sc,
    };
    // Short, and with its traffic and events inside the short run (the validation's order of
    // start and stop times is kept: times only move earlier, and a stop stays after its start).
    sc.duration_s = sc.duration_s.min(RUN_S);
    sc.output.plots = false;
    sc.output.trace = false;
    sc.output.pcap = false;
    for f in &mut sc.flows {
        f.start_s = f.start_s.min(1.0);
        f.stop_s = f.stop_s.map(|s| s.min(2.0).max(f.start_s + 0.5));
    }
    for o in &mut sc.outages {
        o.from_s = o.from_s.min(1.5);
        o.to_s = o.to_s.map(|t| t.min(2.5).max(o.from_s + 0.1));
    }
    if let wsn_sim::scenario::ProtocolConfig::Rcrt(c) = &mut sc.protocol {
        for pc in &mut c.policy_changes {
            pc.at_s = pc.at_s.min(2.0);
        }
    }
    if let Some(t) = &mut sc.routing.freeze_after_s {
        *t = t.min(2.0);
    }
    match run(&sc, RunOptions { seed: None, out_dir: None, progress: None }) {
        Err(e) if empty(&e) => Err(format!("the run failed with an empty message: {e:?}")),
        Err(e) => {
            if std::env::var_os("WSN_FUZZ_SHOW").is_some() {
                eprintln!("RUNERR {e}");
            }
            Ok(Outcome::RunError)
        }
        Ok(_) => Ok(Outcome::Ran),
    }
}

/// One case: a panic or an empty error fails it, with the mutation and the mutated text.
fn one_case(files: &[(PathBuf, String)], file: usize, m: &Mutation) -> Result<Option<Outcome>, TestCaseError> {
    let (path, text) = &files[file % files.len()];
    let Some((mutated, what)) = mutate(text, m) else { return Ok(None) };
    if std::env::var_os("WSN_FUZZ_SHOW").is_some() {
        eprintln!("CASE {}: {what}", path.display());
    }
    let res = catch_unwind(AssertUnwindSafe(|| load_and_run(path, &mutated)));
    let fail = |why: String| {
        TestCaseError::fail(format!("{}: {what}: {why}\n--- mutated scenario ---\n{mutated}", path.display()))
    };
    match res {
        Ok(Ok(outcome)) => Ok(Some(outcome)),
        Ok(Err(why)) => Err(fail(why)),
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(fail(format!("panicked: {msg}")))
        }
    }
}

/// Every mutated scenario is refused with a message or runs, never panics; and the test is not
/// vacuous: some of the cases run (about a quarter do).
#[test]
fn mutated_scenarios_are_refused_or_run_never_panic() {
    let files = shipped();
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(2000);
    let mut runner = TestRunner::new(ProptestConfig {
        cases,
        max_shrink_iters: 32,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    run_counting(&mut runner, &(0..files.len(), mutation()), 4, |(file, m)| one_case(&files, file, &m));
}
