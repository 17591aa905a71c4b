//! Mistakes a new user makes on the command line, and the messages they get: each names the
//! option and says what it takes, never clap's internal wording or a tip that does not work.

use std::process::Command;

fn wsn() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wsn"))
}

/// A count option (`--jobs`, `--seeds`, `--payload-bytes`, `--rcrt-payload-bytes`) given a
/// negative or fractional number is refused as "not a whole number", naming the option. Before,
/// `--jobs -1` was read as an unknown option `-1` with the tip "use '-- -1'" (which does not
/// work), and `--seeds 1.5` gave "invalid digit found in string". Every case fails while the
/// command line is read, before any scenario is loaded or run.
#[test]
fn count_options_refuse_negative_and_fractional_numbers_by_name() {
    let sweep = ["sweep", "office40", "--param", "flows.0.rate_pps=1"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        ([&sweep[..], &["--jobs", "-1"]].concat(), "'-1' for '--jobs <JOBS>'"),
        ([&sweep[..], &["--jobs", "two"]].concat(), "'two' for '--jobs <JOBS>'"),
        ([&sweep[..], &["--seeds", "-2"]].concat(), "'-2' for '--seeds <SEEDS>'"),
        ([&sweep[..], &["--seeds", "1.5"]].concat(), "'1.5' for '--seeds <SEEDS>'"),
        (vec!["reproduce", "rcrt", "--seeds", "-3"], "'-3' for '--seeds <SEEDS>'"),
        (vec!["reproduce", "rcrt", "--payload-bytes", "-6"], "'-6' for '--payload-bytes <BYTES>'"),
        (vec!["compare", "--rcrt-payload-bytes", "-6"], "'-6' for '--rcrt-payload-bytes <BYTES>'"),
        (vec!["compare", "--seeds", "1.5"], "'1.5' for '--seeds <SEEDS>'"),
    ];
    for (args, names) in cases {
        let o = wsn().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(names) && err.contains("expected a whole number"), "{args:?}: {err}");
        for wrong in ["unexpected argument", "invalid digit", "panicked"] {
            assert!(!err.contains(wrong), "{args:?}: {err}");
        }
    }
    // A negative --repeat gets the range, not the "unexpected argument" tip.
    let o = wsn().args(["bench", "--repeat", "-1"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("-1 is not in 1..=50"), "{err}");
}

/// A count too large for its type says so instead of "not a whole number".
#[test]
fn count_options_say_when_a_number_is_too_large() {
    let o = wsn()
        .args(["sweep", "office40", "--param", "flows.0.rate_pps=1", "--jobs", "99999999999999999999999"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("99999999999999999999999 is too large"), "{err}");
}
