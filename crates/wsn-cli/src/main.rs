//! `wsn`: run, sweep and benchmark simulated sensor-network scenarios.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use wsn_sim::runner::{run, RunOptions, RunResult};
use wsn_sim::scenario::Scenario;

/// `println!` for a command's results on standard output: a line that cannot be written panics
/// as println! does, with its message, which `main` reports as an error (exit code 1) once the
/// stack has unwound. Printed only once the results are in place; a unit test can make it fail
/// (`stdout_test`).
macro_rules! out {
    ($($arg:tt)*) => { $crate::out_line(&format!($($arg)*)) };
}

/// A line on standard output printed while a command moves or removes files (a leftover staging
/// folder, an earlier run's seed folder) or while its runs go on: a failure to write it must not
/// stop the command half-way, so it is remembered, the command goes on, and `main` reports it
/// once the command is done (exit code 1).
macro_rules! say {
    ($($arg:tt)*) => { $crate::say_line(&format!($($arg)*)) };
}

mod bench;
mod compare;
mod progress;
mod reproduce;
mod reproduce_ifrc;
mod seeds;
mod staging;

#[derive(Parser)]
#[command(
    name = "wsn",
    version,
    about = "Deterministic simulator of low-power multihop wireless sensor networks (radio, CSMA MAC, tree routing) \
             with the RCRT and IFRC transport protocols"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

// These doc comments are clap's help texts, written for a terminal (`out/<scenario>`,
// `flows[0].rate_pps`), not for rustdoc.
#[allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]
#[derive(Subcommand)]
enum Cmd {
    /// Run one scenario (a TOML file or a built-in name; default: rcrt-baseline, the RCRT
    /// paper's baseline on office40), print a summary and write summary.json, CSV files and plots
    /// to out/<name>.
    Run {
        /// Scenario file or built-in name (rcrt-baseline, office40, lrwpan40).
        #[arg(default_value = "rcrt-baseline")]
        scenario: String,
        /// Override the scenario's seed (default: its `seed` field, 1 when it has none): 0 to
        /// 2^64 − 1 (a scenario file's `seed`, a TOML integer, goes to 2^63 − 1). For several
        /// seeds, one row each in sweep.csv: wsn sweep SCENARIO --param seed=1:5:1.
        #[arg(long, allow_negative_numbers = true, value_parser = parse_seed)]
        seed: Option<u64>,
        /// Not an option of `run` (one run, one seed): refused with a pointer to `wsn sweep
        /// --param seed=…`, instead of clap's hint at --seed, which takes a seed, not a count.
        #[arg(long, hide = true, value_name = "K", allow_negative_numbers = true, value_parser = refuse_run_seeds, num_args = 0..=1, default_missing_value = "K")]
        seeds: Option<u64>,
        /// Output directory (default: out/<name>, the scenario's `name` field).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override any scenario field, e.g. --set duration_s=600 --set flows.0.rate_pps=2
        /// (flows[0].rate_pps also works); repeatable. VALUE is read as TOML, else taken as a plain
        /// string (quote a string that reads as a number: --set 'name="123"'); a VALUE that starts
        /// with {, [ or a quote must be valid TOML
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Write the full event trace, trace.csv (large: 66 MB for office40's hour); the same as
        /// --set output.trace=true.
        #[arg(long)]
        trace: bool,
        /// Write every data and beacon frame put on the air, and every ACK sent (ACKs are not
        /// simulated on the air), to frames.pcap (IEEE 802.15.4 with FCS, link type 195, opens in
        /// Wireshark; 83 MB for office40's hour); the same as --set output.pcap=true.
        #[arg(long)]
        pcap: bool,
        /// No progress bar (nor the progress lines printed instead when standard error is not a
        /// terminal).
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run one scenario over a range of one parameter, in parallel, and tabulate and plot
    /// per-flow goodput (mean, min, max) and delivery against it: sweep.csv (one row per run),
    /// sweep_flows.csv (one row per flow of each run) and sweep.png/.svg in out/<name>-sweep; for a
    /// rate key (ending in _pps) it prints the knee.
    Sweep {
        /// Scenario file or built-in name (rcrt-baseline, office40, lrwpan40).
        scenario: String,
        /// KEY=v1,v2,... or KEY=start:stop:step (at most 10,000 values, and 100,000 runs
        /// with --seeds), e.g.
        /// flows.0.rate_pps=0.25:2.0:0.25; KEY=seed sweeps the run seed itself (each value is
        /// a run's first seed; not together with --seed).
        #[arg(long)]
        param: String,
        /// Override the scenario's seed (default: its `seed` field, 1 when it has none): 0 to
        /// 2^64 − 1 (a scenario file's `seed`, a TOML integer, goes to 2^63 − 1).
        #[arg(long, allow_negative_numbers = true, value_parser = parse_seed)]
        seed: Option<u64>,
        /// Output directory (default: out/<name>-sweep, from the scenario's `name` field).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Override any other scenario field (not the swept one), as for `wsn run`; repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Parallel runs (default: available cores; at most one per run).
        #[arg(long, allow_negative_numbers = true, value_parser = parse_count::<usize>)]
        jobs: Option<usize>,
        /// Seeds per value (seed, seed+1, …; 1–100); figures are averaged over them.
        #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = parse_count::<u64>)]
        seeds: u64,
    },
    /// Measure simulator speed and memory on fixed scenarios (events/s, wall seconds per
    /// simulated hour, peak memory, cost per frame from 40 to 10,000 nodes); every case runs
    /// --repeat times, each in its own process, and the medians are reported (peak memory: the
    /// largest of the runs), with each case's share of one core and the load average at the
    /// start, which tell a busy machine; it compares lrwpan40 with its ns-3 reference and prints
    /// the speed goals as met or not.
    Bench {
        /// A smaller scaling curve (to 2,000 nodes instead of 10,000).
        #[arg(long)]
        quick: bool,
        /// Runs per case; the table and the goals use the median wall time (1–50).
        #[arg(
            long,
            default_value_t = 3,
            allow_negative_numbers = true,
            value_parser = clap::value_parser!(u32).range(1..=bench::MAX_REPEAT as i64)
        )]
        repeat: u32,
        /// Output directory for bench.json and the scaling figure (default: out/bench).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Run a single benchmark case by name and print its row as JSON (internal: used to
        /// measure memory per case; one run, nothing written).
        #[arg(long, hide = true, conflicts_with_all = ["quick", "repeat", "out"])]
        case: Option<String>,
    },
    /// Run every experiment of a paper and write a report with its figures and numbers
    /// (report.md, numbers.csv and the figures as PNG and SVG).
    Reproduce {
        /// Which paper: rcrt (RCRT, SenSys 2007) or ifrc (IFRC, SIGCOMM 2006; includes the
        /// RCRT-vs-IFRC comparison of `wsn compare`).
        #[arg(value_parser = ["rcrt", "ifrc"])]
        paper: String,
        /// Shorter runs and fewer sweep points (rcrt: about 16 s of CPU instead of 80 per seed,
        /// shared over the cores; ifrc: shorter sweeps and comparison runs, half the CPU
        /// time but about the same wall time, a minute, as its longest experiments keep their
        /// length), for a look at the report's shape, not for its numbers.
        #[arg(long)]
        quick: bool,
        /// Output directory (default: out/reproduce-<paper>).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        seeds: seeds::SeedArgs,
        /// rcrt only: every flow of every experiment carries this many application bytes per
        /// packet instead of its scenario's 64 (the authors' test harness sent 6; see
        /// docs/rcrt.md, finding H). At least 6 (the sequence stamp) and at most 64 (the
        /// tinyos1_tenet frame holds 86 bytes: 14 collection + 8 RCRT + payload); checked for
        /// every run before the first starts.
        #[arg(long, value_name = "BYTES", allow_negative_numbers = true, value_parser = parse_count::<usize>)]
        payload_bytes: Option<usize>,
    },
    /// Run protocols side by side on the same network and write a report (RCRT vs IFRC on
    /// 30 nodes under the same MAC and under the RCRT paper's setting, RCRT paper §4.2.5):
    /// report.md, numbers.csv and the rate-trace figure.
    Compare {
        /// Shorter runs (2,400 instead of 3,600 simulated seconds) and 5 instead of 18 fixed
        /// rates in the best-effort sweep that finds the best fixed fair rate: for a look at the
        /// report's shape, not for its numbers (the short runs' second half still holds IFRC's
        /// slow start, and the sweep may end below the knee).
        #[arg(long)]
        quick: bool,
        /// Output directory (default: out/compare).
        #[arg(long)]
        out: Option<PathBuf>,
        #[command(flatten)]
        seeds: seeds::SeedArgs,
        /// RCRT's packets carry this many application bytes instead of the scenario's 64 (the
        /// RCRT authors' test harness sent 6; see docs/rcrt.md, finding H). 6 to 64, checked for
        /// every run before the first starts.
        #[arg(long, value_name = "BYTES", allow_negative_numbers = true, value_parser = parse_count::<usize>)]
        rcrt_payload_bytes: Option<usize>,
    },
    /// Export the link gains of a scenario's topology as a TOSSIM gain file: only the links
    /// kept after pruning (received power at least the noise minimum − radio.prune_margin_db,
    /// plus the receiver's noise offset with radio.noise_offsets), which a first `#` line states
    /// with the scenario's name, transmit power and noise floor (against which the noise offsets
    /// are read back exactly).
    Gains {
        /// Scenario file or built-in name (rcrt-baseline, office40, lrwpan40); office40 and
        /// rcrt-baseline share one topology.
        #[arg(default_value = "office40")]
        scenario: String,
        /// Output file (`-`: standard output).
        #[arg(long, default_value = "gains.txt")]
        out: PathBuf,
        /// Add each sender's transmit power to its gains, so that TOSSIM (which sends at 0 dBm)
        /// sees this scenario's received powers. Without it the file holds path gains only, as
        /// this tool reads them back (at the scenario's radio.link.tx_power_dbm). The file's
        /// first line, a `#` comment, records which: a run at a non-zero power on a folded file
        /// warns that the power counts twice.
        #[arg(long)]
        fold_tx_power: bool,
        /// Override any scenario field, as for `wsn run`; repeatable.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
}

/// Most values one `--param` may expand to.
const MAX_SWEEP_POINTS: usize = 10_000;

/// Most runs (values × seeds) one sweep may have.
const MAX_SWEEP_RUNS: u64 = 100_000;

/// The default output folder `out/<name><suffix>`, refusing scenario names that are not a plain
/// folder name: only letters, digits, `-`, `_` and `.` (no `..`, no separators, no spaces or
/// control characters, which would write elsewhere or make awkward folders).
fn default_dir(name: &str, suffix: &str) -> Result<PathBuf> {
    let plain = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.');
    anyhow::ensure!(
        !name.is_empty() && name != "." && !name.contains("..") && name.chars().all(plain),
        "scenario `name` = {name:?} cannot name the output folder out/<name>: use letters, digits, `-`, `_` or `.`, not \
         empty, not `.` alone and no `..` (or pass --out)"
    );
    Ok(PathBuf::from("out").join(format!("{name}{suffix}")))
}

/// A `--seed` value: a whole number from 0 to 2^64 − 1, said so when it is not one (clap's own
/// message for `-1` was "invalid digit found in string").
pub(crate) fn parse_seed(s: &str) -> Result<u64, String> {
    s.trim().parse::<u64>().map_err(|_| format!("a seed is a whole number from 0 to {}", u64::MAX))
}

/// `wsn run --seeds K`: always refused (a usage error), saying how to run K seeds.
fn refuse_run_seeds(s: &str) -> Result<u64, String> {
    let k = s.trim().parse::<u64>().ok().filter(|&k| k >= 1).map_or("K".to_string(), |k| k.to_string());
    Err(format!(
        "`wsn run` runs one seed (--seed N); to run several seeds of a scenario use `wsn sweep SCENARIO \
         --param seed=1:{k}:1` (a run and a row of sweep.csv per seed), or `wsn sweep SCENARIO --param KEY=… \
         --seeds {k}` to average every value of a sweep over {k} seeds"
    ))
}

/// A count option's value (`--jobs`, `--seeds`, `--payload-bytes`): a whole number, said so when it
/// is not one (clap's own messages were "invalid digit found in string" for `1.5`, and for `-1`
/// "unexpected argument '-1' found" with a tip that did not work). Ranges are checked where the
/// value is used.
pub(crate) fn parse_count<T: TryFrom<u128>>(s: &str) -> Result<T, String> {
    match s.trim().parse::<u128>() {
        Ok(n) => T::try_from(n).map_err(|_| format!("{n} is too large")),
        Err(_) => Err("expected a whole number (0, 1, 2, …)".into()),
    }
}

/// The folders [`create_out_dir`] made, deepest first. When it goes out of scope each is removed
/// again if it is empty, deepest first: a command that fails before it writes anything (an
/// error found once the run starts, a run refused by a check of its own) leaves no empty folder
/// it made, its parents included; one that wrote anything leaves what it wrote. Bind it to a
/// named variable (`let _made = …`) declared before the command's lock and staging folders, so
/// that they are gone when it looks.
#[must_use = "the folders made are removed again when this is dropped, if still empty"]
pub(crate) struct NewFolders(Vec<std::path::PathBuf>);

impl Drop for NewFolders {
    fn drop(&mut self) {
        for made in &self.0 {
            // A folder that holds anything stays, and so do its parents; one already gone (by
            // another hand) is no reason to keep them.
            match std::fs::remove_dir(made) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => break,
                _ => {}
            }
        }
    }
}

/// Create the output folder `dir` (and its parents); a path that exists as something other
/// than a folder is refused by name. The folders it made are removed again when the returned
/// [`NewFolders`] is dropped, if they are still empty then.
pub(crate) fn create_out_dir(dir: &std::path::Path) -> Result<NewFolders> {
    if dir.exists() && !dir.is_dir() {
        anyhow::bail!("{} exists and is not a folder: --out names the folder to write into", dir.display());
    }
    // The folders this call creates, outermost first, each made here (`create_dir`, not a check
    // of what exists, which `new/..` would fool, and which another process could race): one
    // that is there already, whoever made it, is not ours. Those made are removed again (if
    // empty) when `made` goes, and each is synced into its parent, so that results synced into
    // a new folder (staging::commit_with) are not lost with the folder itself. Best effort: a
    // parent that may be entered and written but not read (a drop-box folder, mode 0300) cannot
    // be opened to sync, and that must not stop the command.
    let mut made = NewFolders(Vec::new());
    let mut steps: Vec<&std::path::Path> = dir.ancestors().filter(|a| !a.as_os_str().is_empty()).collect();
    steps.reverse();
    for step in steps {
        match std::fs::create_dir(step) {
            Ok(()) => made.0.insert(0, step.to_path_buf()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(anyhow::Error::new(e).context(format!("creating {}", dir.display()))),
        }
        let parent = step.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if let Err(e) = wsn_sim::output::sync_dir(parent) {
            if e.kind() != std::io::ErrorKind::PermissionDenied {
                eprintln!(
                    "warning: syncing {} to disk after creating {} failed ({e})",
                    parent.display(),
                    step.display()
                );
            }
        }
    }
    anyhow::ensure!(dir.is_dir(), "{} is not a folder: --out names the folder to write into", dir.display());
    // A folder that exists but cannot be written would otherwise be found only after minutes of
    // runs (sweep, reproduce, compare, bench): try a file now.
    let probe = dir.join(format!(".wsn-write-check-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| format!("{} is not writable", dir.display()))?;
    std::fs::remove_file(&probe).with_context(|| format!("removing {}", probe.display()))?;
    Ok(made)
}

/// Printed after a single-seed `reproduce rcrt` or `compare`.
const ONE_SEED_NOTE: &str =
    "note      one run seed: RCRT's figures vary strongly from seed to seed here; --seeds 5 gives medians";

fn main() -> std::process::ExitCode {
    // SIGPIPE stays ignored (Rust's default), so that a closed pipe (`wsn … | head`) is a write
    // error like any other: the command finishes moving its results into place, and then ends
    // as a Unix tool does at a closed pipe ([`closed_pipe_exit`]), without a message.
    // Standard output that cannot be written (a full disk, `> /dev/full`, an I/O error) makes
    // println! panic: the hook leaves out the panic report for that panic, which unwinds
    // normally (destructors run: a run's lock file `.wsn-run.lock` is removed; every command
    // moves its results into place before it prints them, and lines printed before that go
    // through `say!`, which does not stop the command), and `main` turns it into an error and
    // exit code 1, naming where the results are (`results_in_place`), or at a closed pipe into a
    // quiet end ([`stdout_failure_exit`]). Standard error that cannot be written (`2> /dev/full`)
    // cannot report anything, not even a panic: eprintln!'s panic is left unreported in the same
    // way and ends with exit code 1 (at a closed pipe, the quiet end), and the error reports here
    // ignore a failed write (exit code 1, or clap's 2 for a usage error). Other panics keep the
    // default report and exit code.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if output_failure(info.payload()).is_none() {
            default_hook(info);
        }
    }));
    // clap's own exit ignores a failure to write its help or error text.
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(&e),
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_cli(cli))) {
        Ok(Ok(())) => {
            // print! without a newline leaves text in the buffer, whose failure the exit ignores.
            let flushed = std::io::Write::flush(&mut std::io::stdout()).map_err(|e| e.to_string());
            let said = SAY_FAILED.lock().unwrap_or_else(|p| p.into_inner()).take();
            match said.map_or(flushed, Err) {
                Ok(()) => std::process::ExitCode::SUCCESS,
                Err(why) => stdout_failure_exit(&why),
            }
        }
        Ok(Err(e)) => {
            report_error(&error_report(&e));
            std::process::ExitCode::FAILURE
        }
        Err(payload) => match output_failure(&*payload) {
            Some(OutputFailure::Stdout(why)) => stdout_failure_exit(why),
            // Nothing can be said; a closed pipe (`wsn … 2>&1 | head`) ends as at standard output.
            Some(OutputFailure::Stderr(why)) if is_closed_pipe(why) => closed_pipe_exit(),
            Some(OutputFailure::Stderr(_)) => std::process::ExitCode::FAILURE,
            None => std::panic::resume_unwind(payload),
        },
    }
}

/// Writes `line` and a newline to standard output (in a unit test, to the test's captured
/// output, or fails when `stdout_test::FULL` is set).
fn write_stdout(line: &str) -> std::io::Result<()> {
    #[cfg(test)]
    {
        if stdout_test::FULL.get() {
            return Err(std::io::Error::other("standard output is full (a test)"));
        }
        println!("{line}");
        Ok(())
    }
    #[cfg(not(test))]
    {
        use std::io::Write;
        let mut w = std::io::stdout().lock();
        w.write_all(format!("{line}\n").as_bytes()).and_then(|()| w.flush())
    }
}

/// [`out!`]: panics as println! does when the line cannot be written.
pub(crate) fn out_line(line: &str) {
    if let Err(e) = write_stdout(line) {
        panic!("failed printing to stdout: {e}");
    }
}

/// The first failure of [`say!`] to write standard output, reported once the command is done.
static SAY_FAILED: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// [`say!`]: a line that cannot be written is remembered, not fatal.
pub(crate) fn say_line(line: &str) {
    if let Err(e) = write_stdout(line) {
        SAY_FAILED.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e.to_string());
    }
}

/// Where the command's results are, once they are in place ([`results_in_place`]): told with a
/// failure to write standard output, which would otherwise hide the line that names them.
static RESULTS_AT: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// Records that the command's results are in place at `path` (a file or folder).
pub(crate) fn results_in_place(path: &std::path::Path) {
    *RESULTS_AT.lock().unwrap_or_else(|p| p.into_inner()) = Some(path.to_path_buf());
}

/// The error report for standard output that could not be written (`why`), naming where the
/// results are when they are in place.
fn stdout_failure_report(why: &str) -> String {
    let mut text = format!("Error: cannot write to standard output: {why}");
    if let Some(p) = RESULTS_AT.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
        text.push_str(&format!("\n  the results are in place: {}", p.display()));
    }
    text
}

/// The end of a command whose standard output could not be written (`why`, the I/O error's
/// text): at a closed pipe, quietly ([`closed_pipe_exit`]); otherwise an error (exit code 1).
fn stdout_failure_exit(why: &str) -> std::process::ExitCode {
    if is_closed_pipe(why) {
        return closed_pipe_exit();
    }
    report_error(&stdout_failure_report(why));
    std::process::ExitCode::FAILURE
}

/// Whether an I/O error's text is that of a write to a pipe without a reader (EPIPE).
fn is_closed_pipe(why: &str) -> bool {
    #[cfg(unix)]
    {
        why == std::io::Error::from_raw_os_error(libc::EPIPE).to_string()
    }
    #[cfg(not(unix))]
    {
        why == std::io::Error::from(std::io::ErrorKind::BrokenPipe).to_string()
    }
}

/// Ends the process as SIGPIPE's default action would have at the first write to the closed
/// pipe (the status a shell shows as 141), now that the stack has unwound and the results are
/// in place.
fn closed_pipe_exit() -> std::process::ExitCode {
    #[cfg(unix)]
    // SAFETY: resets one signal's action and raises it; no Rust state depends on either.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::raise(libc::SIGPIPE);
    }
    // Reached only where SIGPIPE is blocked (the signal stays pending) or off Unix.
    std::process::ExitCode::from(141)
}

/// A unit test's standard output for [`out!`] and [`say!`]: set `FULL` to make them fail as
/// `> /dev/full` does (on this thread only).
#[cfg(test)]
pub(crate) mod stdout_test {
    thread_local! {
        pub(crate) static FULL: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }

    /// Runs `f` with standard output full, and returns the message of the stdout panic it
    /// ended with, if it ended with one (any other panic goes on).
    pub(crate) fn full<T>(f: impl FnOnce() -> T) -> Result<T, String> {
        FULL.set(true);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        FULL.set(false);
        r.map_err(|p| match super::output_failure(&*p) {
            Some(super::OutputFailure::Stdout(why)) => why.to_string(),
            _ => std::panic::resume_unwind(p),
        })
    }
}

/// A panic of print!/println! (or eprint!/eprintln!) that could not write standard output
/// (or standard error), told by its message.
enum OutputFailure<'a> {
    /// Standard output, with the cause (e.g. `No space left on device (os error 28)`).
    Stdout(&'a str),
    /// Standard error, with the cause.
    Stderr(&'a str),
}

fn output_failure(payload: &(dyn std::any::Any + Send)) -> Option<OutputFailure<'_>> {
    // `PanicHookInfo::payload_as_str` would do, but needs Rust 1.91 (the MSRV is 1.89).
    let msg = payload.downcast_ref::<String>().map(String::as_str).or(payload.downcast_ref::<&str>().copied())?;
    let cause = |prefix: &str| msg.strip_prefix(prefix).map(|why| why.trim_start_matches(": "));
    cause("failed printing to stdout")
        .map(OutputFailure::Stdout)
        .or_else(|| cause("failed printing to stderr").map(OutputFailure::Stderr))
}

/// Writes an error report to standard error; where standard error cannot be written, there is
/// nowhere left to report to, and the exit code alone tells of the failure.
fn report_error(text: &str) {
    progress::stderr_line(text);
}

/// Prints clap's help, version or usage error and gives its exit code (0 for help and version,
/// 2 for a usage error); help or version text that cannot be written to standard output is an
/// error (exit code 1).
fn clap_exit(e: &clap::Error) -> std::process::ExitCode {
    let printed = e.print().and_then(|()| std::io::Write::flush(&mut std::io::stdout()));
    match printed {
        Err(why) if !e.use_stderr() => stdout_failure_exit(&why.to_string()),
        // A usage error that standard error cannot take keeps its exit code.
        _ => std::process::ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(1)),
    }
}

/// The text printed for an error: `Error: ` and the message, then each cause on a line of its
/// own, leaving out a cause whose text the lines before it already contain (several error types
/// put their cause into their own message). No backtrace: a user needs the causes, not our
/// stack (set RUST_BACKTRACE and use a debugger for that).
fn error_report(e: &anyhow::Error) -> String {
    let mut out = format!("Error: {e}");
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !text.is_empty() && !out.contains(&text) {
            out.push_str(&format!("\n  caused by: {text}"));
        }
    }
    out
}

fn run_cli(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Run { scenario, seed, seeds: _, out, mut set, trace, pcap, quiet } => {
            if trace {
                set.push("output.trace=true".into());
            }
            if pcap {
                set.push("output.pcap=true".into());
            }
            let sc = Scenario::load(&scenario, &set)?;
            for w in &sc.warnings {
                eprintln!("warning: {w}");
            }
            // A run without traffic is legitimate (to watch the trees form), but often a slip.
            // (A flow that starts after the end is one of the scenario's own warnings above.)
            if sc.flows.is_empty() {
                eprintln!("warning: the scenario has no flows: this run carries no traffic");
            }
            let dir = match out {
                Some(d) => d,
                None => default_dir(&sc.name, "")?,
            };
            refuse_inputs_among_outputs(&sc, &scenario, &dir)?;
            // The folders this run makes go again if it fails before writing anything (an
            // error found once the run starts, a payload too long for the MAC, say).
            let _made = crate::create_out_dir(&dir)?;
            // One run at a time into a folder (two would write the same temporary trace files);
            // held until the results are in place. Then no other run writes the temporary
            // trace files there: any that are there are a killed or failed run's.
            let lock = crate::staging::lock_run(&dir)?;
            crate::staging::remove_stale_partials(&dir, &lock)?;
            if sc.output.trace || sc.output.pcap {
                let node_s = sc.layout_nodes() as f64 * sc.duration_s;
                let gb = trace_files_gb(node_s, sc.output.trace, sc.output.pcap);
                if gb > 2.0 {
                    eprintln!(
                        "warning: --trace/--pcap on {} node-seconds: at office40's 1 pkt/s per node these files \
                         grow by about 0.5 kB (trace.csv) and 0.6 kB (frames.pcap) per node and second, so this \
                         run may write about {gb:.0} GB",
                        short_s(node_s)
                    );
                }
            }
            let r = run_with_bar(&sc, seed, &dir, quiet)?;
            // An earlier run's files would otherwise stay beside this one's; removed only now, so
            // that an interrupted or failed run leaves them, and its trace files under their
            // temporary names (`trace.csv.partial`), which the error names.
            let written = write_results(&dir, &r, sc.output.plots);
            // The scenario's warnings once the results are written, or have failed to be: a
            // warning standard error cannot take stops the command, not before its results.
            for w in &r.warnings {
                eprintln!("warning: {w}");
            }
            let removed = written.map_err(|e| {
                let left: Vec<String> = r
                    .trace_files
                    .iter()
                    .filter(|f| f.is_partial() && f.written.exists())
                    .map(|f| f.written.display().to_string())
                    .collect();
                if left.is_empty() {
                    e
                } else {
                    e.context(format!(
                        "this run's trace was not moved into place: it is left as {}",
                        left.join(" and ")
                    ))
                }
            })?;
            results_in_place(&dir);
            print_summary(&r, &dir);
            if !removed.is_empty() {
                let why = if removed.len() == 1 { "this run did not write it" } else { "this run wrote none of them" };
                say!("removed   the earlier run's {} ({why})", removed.join(", "));
            }
            // Settings that run but leave nothing to look at.
            let routing = &r.summary.routing;
            if !sc.flows.is_empty() && r.summary.flows.is_empty() {
                eprintln!(
                    "warning: the scenario's flows name no source that is not a sink: this run carried no traffic"
                );
            }
            if r.summary.nodes > sc.topology.sinks.len()
                && routing.unrouted_nodes + sc.topology.sinks.len() >= r.summary.nodes
                && routing.max_depth_seen == 0
            {
                let beacon_s = sc.routing.mhlqi.beacon_period_binary_ms as f64 / 1024.0;
                let kind = &sc.routing.kind;
                if *kind == wsn_sim::scenario::RoutingKind::Shortest {
                    // A fixed tree from t = 0: its links were too weak, however long the run.
                    eprintln!(
                        "warning: no node ever had a route to a sink: the minimum-hop tree found no link with an SNR of \
                         routing.shortest_snr_db = {} dB in both directions (check the radio: transmit power, \
                         spacing, radio.link.noise_floor_dbm)",
                        short_s(sc.routing.shortest_snr_db)
                    );
                } else if *kind == wsn_sim::scenario::RoutingKind::Mhlqi && r.summary.sim_seconds < 2.0 * beacon_s {
                    // Too short for any tree, whatever the radio.
                    eprintln!(
                        "warning: no node ever had a route to a sink: the run ended at {} s, before MultiHopLQI's \
                         beacons (every {} s) could build a tree; set a longer duration_s",
                        short_s(r.summary.sim_seconds),
                        short_s(beacon_s)
                    );
                } else {
                    let outages = if sc.outages.is_empty() { "" } else { ", and the outages" };
                    eprintln!(
                        "warning: no node ever had a route to a sink (check the radio: transmit power, noise, spacing{outages})"
                    );
                }
            }
        }
        Cmd::Sweep { scenario, param, seed, out, set, jobs, seeds } => {
            sweep(&scenario, &param, seed, seeds, out, &set, jobs)?
        }
        Cmd::Bench { quick, repeat, out, case } => match case {
            Some(c) => bench::one(&c)?,
            None => bench::all(quick, repeat, out)?,
        },
        Cmd::Reproduce { paper, quick, out, seeds, payload_bytes } => {
            if payload_bytes.is_some() && paper != "rcrt" {
                anyhow::bail!("--payload-bytes applies to `wsn reproduce rcrt` only");
            }
            let dir = out.unwrap_or_else(|| PathBuf::from(format!("out/reproduce-{paper}")));
            let cmd = seeds::Command {
                title: if paper == "rcrt" { "# RCRT reproduction" } else { "# IFRC reproduction" },
                line: format!(
                    "wsn reproduce {paper}{}{}",
                    if quick { " --quick" } else { "" },
                    payload_bytes.map_or(String::new(), |p| format!(" --payload-bytes {p}"))
                ),
            };
            seeds.run(&dir, paper == "rcrt", &cmd, |dir, seed| match paper.as_str() {
                "rcrt" => reproduce::rcrt(quick, dir, seed, payload_bytes).with_context(|| match payload_bytes {
                    Some(p) => format!("wsn reproduce rcrt --payload-bytes {p}"),
                    None => "wsn reproduce rcrt".into(),
                }),
                "ifrc" => reproduce_ifrc::ifrc(quick, dir, seed),
                other => anyhow::bail!("unknown paper {other}"),
            })?;
        }
        Cmd::Compare { quick, out, seeds, rcrt_payload_bytes: b } => {
            let dir = out.unwrap_or_else(|| PathBuf::from("out/compare"));
            let cmd = seeds::Command {
                title: "# RCRT vs IFRC",
                line: format!(
                    "wsn compare{}{}",
                    if quick { " --quick" } else { "" },
                    b.map_or(String::new(), |b| format!(" --rcrt-payload-bytes {b}"))
                ),
            };
            seeds.run(&dir, true, &cmd, |dir, seed| {
                compare::compare(quick, dir, seed, b).with_context(|| match b {
                    Some(b) => format!("wsn compare --rcrt-payload-bytes {b}"),
                    None => "wsn compare".into(),
                })
            })?;
        }
        Cmd::Gains { scenario, out, fold_tx_power, set } => {
            let sc = Scenario::load(&scenario, &set)?;
            // Never write over a file this scenario is read from.
            if let Ok(target) = out.canonicalize() {
                let mut inputs = vec![("the scenario", PathBuf::from(&scenario))];
                for (field, p) in sc.file_fields() {
                    if let Ok(path) = sc.resolve(field, p) {
                        inputs.push((field, path));
                    }
                }
                for (what, path) in inputs {
                    anyhow::ensure!(
                        path.canonicalize().ok().as_ref() != Some(&target),
                        "--out {}: that is {what}'s file, which this command reads; choose another file",
                        out.display()
                    );
                }
            }
            let (_, links, noise) = wsn_sim::runner::build_topology(&sc)?;
            let floor = sc.radio.link.noise_floor_dbm;
            // A first `#` line says how the file was written (TOSSIM and our reader skip it; our
            // reader warns when a file marked folded is run at a non-zero power). The threshold
            // is the runner's (runner.rs `topology_of`): noise minimum − radio.prune_margin_db.
            let header = wsn_sim::topology::GainFileHeader {
                scenario: sc.name.clone(),
                tx_power_dbm: sc.radio.link.tx_power_dbm,
                tx_power_folded: fold_tx_power,
                pruned_below_dbm: sc.topology.gains_file.is_none().then(|| noise.min_dbm() - sc.radio.prune_margin_db),
                per_receiver: sc.topology.gains_file.is_none() && sc.radio.noise_offsets,
                noise_floor_dbm: floor,
            }
            .line();
            let pairs: usize = links.out.iter().map(Vec::len).sum();
            if out.as_os_str() == "-" {
                // Built in memory first, so that a refused value is its own error, not a failure
                // of standard output, and nothing is half-written.
                let mut text = format!("{header}\n").into_bytes();
                wsn_sim::topology::write_tossim_gains_to(&links, floor, 0.0, fold_tx_power, &mut text)
                    .context("writing the gains")?;
                let mut w = std::io::stdout().lock();
                let written = std::io::Write::write_all(&mut w, &text).and_then(|()| std::io::Write::flush(&mut w));
                if let Err(e) = written {
                    // Ended as println! ends at a failure, which `main` reports (or, at a
                    // closed pipe, ends quietly) like any other.
                    panic!("failed printing to stdout: {e}");
                }
                eprintln!("{} nodes, {} directed links", links.n(), pairs);
            } else {
                // Built in memory first, so that a refused value leaves an existing file as it was.
                let mut text = format!("{header}\n").into_bytes();
                wsn_sim::topology::write_tossim_gains_to(&links, floor, 0.0, fold_tx_power, &mut text)
                    .with_context(|| format!("writing {}", out.display()))?;
                std::fs::write(&out, text).with_context(|| format!("writing {}", out.display()))?;
                results_in_place(&out);
                println!("{} nodes, {} directed links → {}", links.n(), pairs, out.display());
            }
            if pairs == 0 {
                // TOSSIM reads such a file, but `topology.gains_file` refuses it (a network without
                // links), so the round trip the file is usually written for would fail only then.
                let why = if links.n() < 2 {
                    "a network of one node has no links"
                } else {
                    "none reaches the pruning threshold; check the radio: transmit power, spacing, \
                     radio.prune_margin_db"
                };
                eprintln!(
                    "warning: no link of this scenario is kept ({why}): the file has no gain line, and \
                     topology.gains_file refuses a file without one"
                );
            }
            if !fold_tx_power && sc.radio.link.tx_power_dbm != 0.0 {
                eprintln!(
                    "note: the gains exclude this scenario's transmit power ({} dBm); TOSSIM sends at 0 dBm, so \
                     --fold-tx-power writes a file that gives TOSSIM the same received powers",
                    short_s(sc.radio.link.tx_power_dbm)
                );
            }
        }
    }
    Ok(())
}

/// The size in GB that `trace.csv` and `frames.pcap`, as asked for, may reach over `node_s` node-
/// seconds: office40's hour (40 nodes at 1 pkt/s) writes 66.1 MB of trace.csv and 83.8 MB of
/// frames.pcap, 0.46 and 0.58 kB per node and simulated second (both were taken as 0.5 kB,
/// which left a pcap-only run of 2.0–2.3 GB without the warning).
fn trace_files_gb(node_s: f64, trace: bool, pcap: bool) -> f64 {
    let per_node_s = if trace { 500.0 } else { 0.0 } + if pcap { 600.0 } else { 0.0 };
    node_s * per_node_s / 1e9
}

/// A sweep value as a TOML number: an integer when it is one (so that integer keys take it),
/// else a float; a value of 10^15 or more in exponent form, which TOML reads as a float
/// (Rust writes 1e25 as a 26-digit integer, beyond TOML's 64-bit integers).
fn toml_number(v: f64) -> String {
    // Whole numbers up to 2^53 exactly as integers (a seed of 10^15 is an integer key).
    if v.fract() == 0.0 && v.abs() <= 9_007_199_254_740_992.0 {
        format!("{}", v as i64)
    } else if v.abs() >= 1e15 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

fn parse_values(spec: &str) -> Result<(String, Vec<f64>)> {
    let (key, list) = spec.split_once('=').context("--param must be KEY=v1,v2,... or KEY=start:stop:step")?;
    let vals: Vec<f64> = if list.contains(':') {
        let p: Vec<f64> = list
            .split(':')
            .map(|v| v.trim().parse::<f64>().with_context(|| format!("`{}` is not a number", v.trim())))
            .collect::<Result<_, _>>()
            .with_context(|| format!("--param {spec}: bad range"))?;
        anyhow::ensure!(p.len() == 3, "--param {spec}: expected start:stop:step");
        for (name, v) in ["start", "stop", "step"].iter().zip(&p) {
            anyhow::ensure!(v.is_finite(), "--param {spec}: {name} {v} is not a finite number");
        }
        anyhow::ensure!(p[2] > 0.0, "--param {spec}: step must be > 0");
        anyhow::ensure!(p[1] >= p[0], "--param {spec}: stop must not be below start");
        let n = ((p[1] - p[0]) / p[2] + 1e-9).floor();
        anyhow::ensure!(
            n < MAX_SWEEP_POINTS as f64,
            "--param {spec}: {} values, more than the {MAX_SWEEP_POINTS} a sweep may have",
            toml_number(n + 1.0)
        );
        // Each value from start, rounded so that 0.1:0.3:0.1 gives 0.3, not 0.30000000000000004.
        // Decimals written in start and step (at most 12): each value is rounded to them, so
        // integer ranges (seeds) stay exact and -0.3:0.3:0.1 gives 0, not 5.6e-17.
        let decimals = |x: f64| {
            (0..=12)
                .find(|&d| {
                    let s = x * 10f64.powi(d);
                    (s - s.round()).abs() < 1e-6
                })
                .unwrap_or(12) as usize
        };
        let d = decimals(p[0]).max(decimals(p[2]));
        let round = |x: f64| format!("{x:.d$}").parse::<f64>().unwrap_or(x);
        (0..=n as usize).map(|i| round(p[0] + i as f64 * p[2])).collect()
    } else {
        list.split(',')
            .map(|v| v.trim().parse::<f64>().with_context(|| format!("`{}` is not a number", v.trim())))
            .collect::<Result<_, _>>()
            .with_context(|| format!("--param {spec}: values must be numbers"))?
    };
    anyhow::ensure!(!vals.is_empty(), "--param {spec}: no values");
    anyhow::ensure!(vals.len() <= MAX_SWEEP_POINTS, "--param {spec}: more than {MAX_SWEEP_POINTS} values");
    if let Some(v) = vals.iter().find(|v| !v.is_finite()) {
        anyhow::bail!("--param {spec}: {v} is not a finite number");
    }
    anyhow::ensure!(!key.trim().is_empty(), "--param {spec}: empty key");
    Ok((key.trim().to_string(), vals))
}

/// The mean of the values that are defined (finite), NaN when none is.
fn mean_of_defined(xs: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = xs.filter(|x| x.is_finite()).fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        f64::NAN
    } else {
        sum / n as f64
    }
}

/// `x` formatted by `f`, or "–" when it has no value (NaN: a run that carried no traffic).
fn no_value(x: f64, f: impl Fn(f64) -> String) -> String {
    if x.is_finite() {
        f(x)
    } else {
        "–".into()
    }
}

/// `msg` with every `--set KEY` about the swept key (as given, `key`, or in its dotted form,
/// `dotted`) turned into `--param KEY`: the sweep passes its value to the loader as the last
/// `--set`, which the user never wrote. `--set KEY=…`, `--set KEY: …` and hints such as
/// `--set KEY.FIELD=…` all change; a `--set` of another key (`flows.0.rate_pps` is not
/// `flows.0.rate`) does not.
fn set_to_param(msg: &str, key: &str, dotted: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(at) = rest.find("--set ") {
        let after = &rest[at + "--set ".len()..];
        let ours = [key, dotted].iter().any(|k| {
            !k.is_empty()
                && after
                    .strip_prefix(*k)
                    .is_some_and(|tail| !tail.starts_with(|c: char| c.is_alphanumeric() || c == '_' || c == '-'))
        });
        out.push_str(&rest[..at]);
        out.push_str(if ours { "--param " } else { "--set " });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The columns of sweep.csv, one row per run.
const SWEEP_COLUMNS: [&str; 17] = [
    "x",
    "seed",
    "mean_goodput_pps",
    "min_goodput_pps",
    "max_goodput_pps",
    "delivery_ratio",
    "queue_drops",
    "mac_drops",
    "parent_changes",
    "median_max_depth",
    // RCRT and the reliable baseline only (empty otherwise).
    "congestion_decreases",
    "feedback_ratio",
    "max_e2e_repaired_share",
    "trace_sha256",
    // Appended after the earlier columns, which keep their places for existing readers: the
    // packets behind delivery_ratio (to pool over seeds, as the table and the knee do) and
    // the swept key, whose values are in `x`.
    "originated",
    "delivered",
    "param",
];

/// A run's row of sweep.csv ([`SWEEP_COLUMNS`]): the swept `key` at value `v`.
fn sweep_row(key: &str, v: f64, s: &wsn_sim::runner::Summary) -> Vec<String> {
    // An undefined value (a run that carried no traffic has no goodput) is an empty cell, as in
    // flows.csv, not `NaN`; a measured figure is written as flows.csv and sweep_flows.csv write
    // it (`1.0`, not `1`), the swept value `x` as the `--param` would be.
    let cell = |x: f64| if x.is_finite() { format!("{x:?}") } else { String::new() };
    let t = &s.totals;
    vec![
        v.to_string(),
        s.seed.to_string(),
        cell(t.mean_goodput_pps),
        cell(t.min_goodput_pps),
        cell(t.max_goodput_pps),
        cell(t.delivery_ratio),
        t.queue_drops.to_string(),
        t.mac_drops.to_string(),
        s.routing.parent_changes.to_string(),
        s.routing.median_max_depth.to_string(),
        t.congestion_decreases.map_or(String::new(), |c| c.to_string()),
        // Per data packet originated: no packet originated, no ratio (an empty cell, as the
        // run's summary prints "–"), not 0 feedback per packet.
        t.feedback_packets.map_or(String::new(), |f| cell(f as f64 / t.originated as f64)),
        max_repaired_share(s).map_or(String::new(), cell),
        s.trace_sha256.clone(),
        t.originated.to_string(),
        t.delivered.to_string(),
        key.to_string(),
    ]
}

/// The columns of sweep_flows.csv, one row per flow of each run: the flow's own figures, as in
/// the run's flows.csv, so that one flow's goodput can be read against the swept value.
const SWEEP_FLOW_COLUMNS: [&str; 10] =
    ["x", "seed", "flow", "source", "sink", "originated", "delivered", "goodput_pps", "delivery_ratio", "param"];

/// A row of sweep_flows.csv ([`SWEEP_FLOW_COLUMNS`]); its numbers are written as flows.csv writes
/// them (`1.0`, an undefined ratio as an empty cell), `x` as sweep.csv does, to join on.
#[derive(serde::Serialize)]
struct SweepFlowRow<'a> {
    x: String,
    seed: u64,
    flow: u32,
    source: u16,
    sink: u16,
    originated: u64,
    delivered: u64,
    goodput_pps: f64,
    delivery_ratio: Option<f64>,
    param: &'a str,
}

/// A run's rows of sweep_flows.csv: every flow of the run, one that never started before the run
/// ended included (goodput 0; sweep.csv's goodput statistics leave it out, as summary.json's do).
fn sweep_flow_rows<'a>(key: &'a str, v: f64, s: &wsn_sim::runner::Summary) -> Vec<SweepFlowRow<'a>> {
    s.flows
        .iter()
        .map(|f| SweepFlowRow {
            x: v.to_string(),
            seed: s.seed,
            flow: f.id,
            source: f.source,
            sink: f.sink,
            originated: f.originated,
            delivered: f.delivered,
            goodput_pps: f.goodput_pps,
            delivery_ratio: f.delivery_ratio,
            param: key,
        })
        .collect()
}

/// sweep.csv's rows as the runs finish, in the order of the runs (a row waits for the rows
/// before it), flushed after each: an interrupted or failed sweep keeps its finished runs'.
struct PartialCsv {
    path: PathBuf,
    w: csv::Writer<std::fs::File>,
    next: usize,
    waiting: std::collections::BTreeMap<usize, Vec<String>>,
    written: usize,
    failed: Option<String>,
    /// When the file was last synced to the disk (wall time; the runs' results do not depend on it).
    synced: std::time::Instant,
}

impl PartialCsv {
    fn create(path: PathBuf) -> Result<Self> {
        let mut w = csv::Writer::from_path(&path).with_context(|| format!("writing {}", path.display()))?;
        w.write_record(SWEEP_COLUMNS)
            .and_then(|()| w.flush().map_err(csv::Error::from))
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(PartialCsv {
            path,
            w,
            next: 0,
            waiting: Default::default(),
            written: 0,
            failed: None,
            synced: std::time::Instant::now(),
        })
    }

    /// Run `i`'s row; writes it and the waiting rows after it once the runs before it have theirs.
    fn add(&mut self, i: usize, row: Vec<String>) {
        self.waiting.insert(i, row);
        while let Some(r) = self.waiting.remove(&self.next) {
            self.write(r);
            self.next += 1;
        }
    }

    /// After a failure: the rows still waiting (runs that finished after an earlier one that
    /// did not), in the order of the runs.
    fn write_waiting(&mut self) {
        for r in std::mem::take(&mut self.waiting).into_values() {
            self.write(r);
        }
    }

    fn write(&mut self, r: Vec<String>) {
        // A failed write is reported once, at the end; the runs go on (sweep.csv is written
        // from memory, not from this file). Each row is flushed, and the file synced to the disk
        // at most once a second, so that the rows of the finished runs survive a crash of the
        // machine too (all but the last second's), without an fsync per row of a sweep of many
        // short runs.
        if self.failed.is_none() {
            let mut done = self.w.write_record(&r).and_then(|()| self.w.flush().map_err(csv::Error::from));
            if done.is_ok() && self.synced.elapsed() >= std::time::Duration::from_secs(1) {
                done = self.w.get_ref().sync_data().map_err(csv::Error::from);
                self.synced = std::time::Instant::now();
            }
            match done {
                Ok(()) => self.written += 1,
                Err(e) => self.failed = Some(e.to_string()),
            }
        }
    }
}

/// The name of the sweep table's first column for the swept `key`: its last dotted part, with
/// the part before it when the last is a number (`protocol.weights.5` → `weights.5`).
fn sweep_column_name(key: &str) -> String {
    let parts: Vec<&str> = key.split('.').collect();
    match parts.as_slice() {
        [.., before, last] if last.chars().all(|c| c.is_ascii_digit()) => format!("{before}.{last}"),
        [.., last] => last.to_string(),
        [] => key.to_string(),
    }
}

/// The largest share of a flow's delivered packets repaired end to end (RCRT and the reliable
/// baseline; `None` for protocols without end-to-end repair). A flow that delivered nothing has
/// no share; when no flow delivered anything the value is undefined (NaN, an empty cell), not 0.
pub(crate) fn max_repaired_share(s: &wsn_sim::runner::Summary) -> Option<f64> {
    let mut repairing = s.flows.iter().filter_map(|f| f.e2e_repaired.map(|r| (r, f.delivered))).peekable();
    repairing.peek()?;
    // f64::max keeps the number against NaN, so the fold is NaN only when no flow delivered.
    Some(repairing.filter(|&(_, d)| d > 0).map(|(r, d)| r as f64 / d as f64).fold(f64::NAN, f64::max))
}

/// The sweep table's line and plot point for value `v` from its runs (one per seed): goodput
/// averaged over the seeds that have a value (a run that carried no traffic has no goodput, NaN:
/// one such seed would make the whole average NaN; NaN when no seed has one), delivery pooled
/// (all delivered over all originated; undefined, NaN and not plotted, when no run of the value
/// sent anything).
fn sweep_point(v: f64, runs: &[&wsn_sim::runner::Summary]) -> wsn_sim::plots::SweepPoint {
    let avg = |f: fn(&wsn_sim::runner::Summary) -> f64| mean_of_defined(runs.iter().map(|s| f(s)));
    wsn_sim::plots::SweepPoint {
        x: v,
        mean: avg(|s| s.totals.mean_goodput_pps),
        min: avg(|s| s.totals.min_goodput_pps),
        max: avg(|s| s.totals.max_goodput_pps),
        delivery: {
            let originated = runs.iter().map(|s| s.totals.originated).sum::<u64>();
            if originated == 0 {
                f64::NAN
            } else {
                runs.iter().map(|s| s.totals.delivered).sum::<u64>() as f64 / originated as f64
            }
        },
    }
}

/// The sweep's knee: the largest value up to which every value, walked in ascending order
/// whatever order `--param` gave them in, is fair with at least 95 % delivery
/// ([`reproduce::fair_and_delivered`]); `None` when the first value already is not.
fn sweep_knee(points: &[wsn_sim::plots::SweepPoint]) -> Option<f64> {
    let mut ascending: Vec<&wsn_sim::plots::SweepPoint> = points.iter().collect();
    ascending.sort_by(|a, b| a.x.total_cmp(&b.x));
    let mut knee = None;
    for p in ascending {
        if reproduce::fair_and_delivered(p.delivery, p.min, p.mean) {
            knee = Some(p.x);
        } else {
            break;
        }
    }
    knee
}

fn sweep(
    scenario: &str,
    param: &str,
    seed: Option<u64>,
    seeds: u64,
    out: Option<PathBuf>,
    set: &[String],
    jobs: Option<usize>,
) -> Result<()> {
    use rayon::prelude::*;
    let (key, vals) = parse_values(param)?;
    anyhow::ensure!(seeds >= 1, "--seeds must be at least 1");
    anyhow::ensure!(
        seeds <= seeds::MAX_SEEDS,
        "--seeds must be at most {} (a sweep runs every value that many times)",
        seeds::MAX_SEEDS
    );
    anyhow::ensure!(jobs != Some(0), "--jobs must be at least 1");
    // Each factor has its cap, and the product one too: every run's summary is held until the
    // end, and 10,000 values × 100 seeds would be a million runs.
    let total = vals.len() as u64 * seeds;
    anyhow::ensure!(
        total <= MAX_SWEEP_RUNS,
        "--param {key}: {} values × --seeds {seeds} = {total} runs, more than the {MAX_SWEEP_RUNS} a sweep may \
         have in all; use fewer values or fewer seeds",
        vals.len()
    );
    // The same field from --set and --param: the sweep's value would silently win.
    // `flows[0].x` and `flows[0]x` as the loader reads them: `flows.0.x`.
    let dotted = |k: &str| {
        let mut d = k.trim().replace(['[', ']'], ".");
        while d.contains("..") {
            d = d.replace("..", ".");
        }
        d.trim_end_matches('.').to_string()
    };
    let swept = dotted(&key);
    for o in set {
        let k = dotted(o.split_once('=').map_or(o.as_str(), |(k, _)| k));
        let nested = |a: &str, b: &str| a.strip_prefix(b).is_some_and(|rest| rest.starts_with('.'));
        // A --set of a table holding the swept key (`topology.layout={…}` with
        // `--param topology.layout.spacing_m`) is fine: the sweep's value goes in after it.
        if k == swept || nested(&k, &swept) {
            anyhow::bail!("--set {o} and --param {key}=… both set {k}: the sweep would overwrite it; use one");
        }
    }
    let mut sorted = vals.clone();
    sorted.sort_by(f64::total_cmp);
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        anyhow::bail!("--param {key}: the value {} is given twice", w[0]);
    }
    // Sweeping the seed itself: each value is a run's (first) seed.
    let seed_sweep = key == "seed";
    if seed_sweep {
        anyhow::ensure!(seed.is_none(), "--param seed=… and --seed both set the seed: use one");
        // Sweep values are carried as f64: seeds above 2^53 would silently become others.
        const EXACT: u64 = 1 << 53;
        let above = |t: &str| {
            format!(
                "--param seed: {t} is above 2^53 = {EXACT}, the largest seed a sweep carries exactly \
             (wsn run --seed takes any 64-bit seed)"
            )
        };
        let list = param.split_once('=').map_or("", |(_, l)| l);
        for t in list.split([',', ':']).map(str::trim) {
            if t.parse::<u64>().is_ok_and(|u| u > EXACT) {
                anyhow::bail!(above(t));
            }
        }
        if let Some(v) = vals.iter().find(|v| v.fract() != 0.0 || **v < 0.0) {
            anyhow::bail!("--param seed: {v} is not a non-negative integer seed");
        }
        if let Some(v) = vals.iter().find(|v| **v > EXACT as f64) {
            anyhow::bail!(above(&toml_number(*v)));
        }
        // Value v runs seeds v … v+K−1: two values closer than K would repeat runs.
        if let Some(w) = sorted.windows(2).find(|w| w[1] - w[0] < seeds as f64) {
            anyhow::bail!(
                "--param seed with --seeds {seeds}: value {} runs seeds {} … {}, which overlap those of {}; \
                 space the values at least {seeds} apart or use --seeds 1",
                w[0],
                w[0],
                w[0] + seeds as f64 - 1.0,
                w[1]
            );
        }
    }
    // Validate every point up front so that a typo or a bad value fails before any run starts.
    let base = Scenario::load(scenario, set)?;
    for w in &base.warnings {
        eprintln!("warning: {w}");
    }
    let label = |v: f64| format!("sweep value {key}={}", toml_number(v));
    // No more threads than runs (each thread holds a whole network).
    let runs = vals.len().saturating_mul(seeds as usize);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs.unwrap_or(0).min(runs)).build()?;
    // Loading checks the fields; building each network (not run) checks what only the built
    // network can, e.g. node ids against the layout. In parallel, in order of the values.
    // The first bad value in the order given, whichever thread finds it first (`find_first`
    // stops checking the values after a bad one).
    // The runs use these scenarios, as checked: the file is not read again (an edit during a long
    // sweep would otherwise change its later runs).
    let checked: Vec<Result<(Scenario, Vec<String>)>> = pool.install(|| {
        vals.par_iter()
            .map(|&v| {
                let mut s = set.to_vec();
                s.push(format!("{key}={}", toml_number(v)));
                s.push("output.plots=false".into());
                // The value goes in as the last --set; an error about it names the --param. The
                // base scenario loaded with the same --set, so an error here is the value's: one
                // whose message names no option (an unknown MAC or protocol parameter, a value
                // out of range) is put after the --param.
                let sc = Scenario::load(scenario, &s)
                    .map_err(|e| {
                        let msg = set_to_param(&e.to_string(), &key, &swept);
                        if msg.contains("--param ") {
                            anyhow::anyhow!(msg)
                        } else {
                            anyhow::anyhow!("--param {key}={}: {msg}", toml_number(v))
                        }
                    })
                    .with_context(|| label(v))?;
                // Building the network can refuse the value too (`spacing_m = 0`): that error
                // names the --param as well.
                let built = wsn_sim::runner::check(&sc, seed)
                    .map_err(|e| {
                        let msg = e.to_string();
                        let param = set_to_param(&msg, &key, &swept);
                        if param == msg {
                            anyhow::Error::from(e)
                        } else {
                            anyhow::anyhow!(param)
                        }
                    })
                    .with_context(|| label(v))?;
                Ok((sc, built))
            })
            .collect()
    });
    let mut scenarios = Vec::with_capacity(vals.len());
    // What building the networks found (a static tree's edges without a link), once each.
    let mut built_warnings = std::collections::BTreeSet::new();
    for (&v, checked) in vals.iter().zip(checked) {
        let (sc, built) = checked?;
        built_warnings.extend(built);
        // A value's own warnings (the base scenario's were printed above).
        for w in sc.warnings.iter().filter(|w| !base.warnings.contains(w)) {
            eprintln!("warning: {}: {w}", label(v));
        }
        scenarios.push(sc);
    }
    for w in &built_warnings {
        eprintln!("warning: {w}");
    }
    // Once every value has passed its checks: its hint names a `wsn run --set` of the swept key,
    // which would be no help with a key or value that is refused.
    if base.output.trace || base.output.pcap {
        eprintln!(
            "warning: a sweep writes sweep.csv, sweep_flows.csv, sweep.png and sweep.svg only: output.trace and \
             output.pcap are \
             ignored (run one point with wsn run --set {key}=… --trace/--pcap for its trace)"
        );
    }
    let dir = match out {
        Some(d) => d,
        None => default_dir(&base.name, "-sweep")?,
    };
    let _made = crate::create_out_dir(&dir)?;
    let first_seed = seed.unwrap_or(base.seed);
    let mut jobs_list: Vec<(usize, u64)> = Vec::new();
    for (i, &v) in vals.iter().enumerate() {
        let from = if seed_sweep { v as u64 } else { first_seed };
        for k in 0..seeds {
            let sd = from.checked_add(k).context("--seed + --seeds overflows the seed range")?;
            jobs_list.push((i, sd));
        }
    }
    // The finished runs' rows, written as they come (see PartialCsv); removed once sweep.csv is
    // in place.
    let partial_path = dir.join("sweep.csv.partial");
    keep_earlier_partial(&partial_path)?;
    let partial = std::sync::Mutex::new(PartialCsv::create(partial_path.clone())?);
    let bar = progress::Batch::new(&format!("sweep {key}"), jobs_list.len());
    // Collected into one Result: after a failed run no new run starts (the ones under way
    // finish), and the rows keep the order of the runs.
    let results: Result<Vec<(f64, wsn_sim::runner::Summary)>> = pool.install(|| {
        jobs_list
            .par_iter()
            .enumerate()
            .map(|(j, &(i, sd))| {
                let v = vals[i];
                let r = run(&scenarios[i], RunOptions { seed: Some(sd), out_dir: None, progress: None })
                    .with_context(|| format!("{}, seed {sd}", label(v)))?;
                partial.lock().unwrap_or_else(|p| p.into_inner()).add(j, sweep_row(&key, v, &r.summary));
                bar.done_one();
                Ok((v, r.summary))
            })
            .collect()
    });
    bar.finish();
    let mut partial = partial.into_inner().unwrap_or_else(|p| p.into_inner());
    // Where the finished runs' rows are, for an error that leaves sweep.csv unwritten.
    let kept = |partial: &PartialCsv| match &partial.failed {
        Some(f) => format!("writing {} failed ({f})", partial.path.display()),
        None => format!("the {} runs that finished are in {}", partial.written, partial.path.display()),
    };
    let rows = match results {
        Ok(rows) => rows,
        Err(e) => {
            partial.write_waiting();
            return Err(e.context(format!("the sweep stopped; {}", kept(&partial))));
        }
    };
    // One CSV row per run, one table line and plot point per value (averaged over seeds). The
    // files go to a staging folder first and replace the earlier sweep's together.
    // An error that leaves sweep.csv unwritten or not in place names sweep.csv.partial, which
    // is removed only once sweep.csv is in place: still there, it holds every finished run's row.
    let unfinished = |e: anyhow::Error, partial: &PartialCsv| {
        if partial.path.exists() {
            e.context(format!("sweep.csv was not written into place; {}", kept(partial)))
        } else {
            e
        }
    };
    let staging = crate::staging::create(&dir, "sweep").map_err(|e| unfinished(e, &partial))?;
    let csv_path = staging.join("sweep.csv");
    let flows_path = staging.join("sweep_flows.csv");
    let written_csv = (|| -> Result<()> {
        let mut w = csv::Writer::from_path(&csv_path)?;
        w.write_record(SWEEP_COLUMNS)?;
        for (v, s) in &rows {
            w.write_record(sweep_row(&key, *v, s))?;
        }
        Ok(w.flush()?)
    })()
    .with_context(|| format!("writing {}", csv_path.display()))
    .and_then(|()| {
        (|| -> Result<()> {
            // The header by hand (a sweep whose runs have no flow still gets it); the rows as
            // flows.csv's are serialized.
            let mut w = csv::WriterBuilder::new().has_headers(false).from_path(&flows_path)?;
            w.write_record(SWEEP_FLOW_COLUMNS)?;
            for (v, s) in &rows {
                for r in sweep_flow_rows(&key, *v, s) {
                    w.serialize(r)?;
                }
            }
            Ok(w.flush()?)
        })()
        .with_context(|| format!("writing {}", flows_path.display()))
    });
    // The table is printed only once the files are in place (standard output that cannot be
    // written stops the command where it fails): built here, printed at the end.
    let mut points = Vec::new();
    let mut table = Vec::new();
    // The first column is named by the key's last part (`rate_pps`), with the part before it when
    // that is a node id or an index (`weights.5`, not `5`), and is as wide as its name and its
    // widest value, so that a long key (`congestion_gain`) or value (a large seed) keeps the
    // other columns under their names.
    let x_name = sweep_column_name(&key);
    let x_width =
        vals.iter().map(|v| format!("{v}").chars().count()).chain([x_name.chars().count(), 10]).max().unwrap_or(10);
    table.push(format!(
        "{:>x_width$} {:>10} {:>10} {:>10} {:>9}   ({} seed(s) per value)",
        x_name, "mean", "min", "max", "delivery", seeds
    ));
    for &v in &vals {
        let runs: Vec<&wsn_sim::runner::Summary> = rows.iter().filter(|(x, _)| *x == v).map(|(_, s)| s).collect();
        let p = sweep_point(v, &runs);
        table.push(format!(
            "{:>x_width$} {:>10} {:>10} {:>10} {:>9}",
            format!("{v}"),
            no_value(p.mean, |x| format!("{x:.3}")),
            no_value(p.min, |x| format!("{x:.3}")),
            no_value(p.max, |x| format!("{x:.3}")),
            no_value(p.delivery, |x| format!("{:.1}%", 100.0 * x))
        ));
        points.push(p);
    }
    // The knee: the largest offered value up to which delivery stays ≥ 95 % and the flows stay
    // fair (every flow gets at least 80 % of the mean), walking the values in ascending order
    // whatever order `--param` gave them in. Only for a rate (`*_pps`): over another key (a
    // gain, a seed, a spacing) "up to" has no load meaning.
    if key.ends_with("_pps") {
        table.push(match sweep_knee(&points) {
            Some(k) => format!("knee: every value up to {key} = {k} is fair with ≥ 95 % delivery"),
            None => "knee: delivery below 95 % (or unfair, or nothing sent) already at the first value".to_string(),
        });
    }
    // The dashed y = x line is every flow's offered load only when the swept rate is that of the
    // only `[[flows]]` table: with several, the other tables keep their own rates, and the mean
    // per-flow goodput could sit above a line that is one table's offered load (newuser36).
    let offered = key.ends_with("rate_pps") && base.flows.len() == 1;
    let title = if seeds > 1 {
        format!("{}, sweep of {key}, means over {seeds} seeds (band: mean of each seed's min and max)", base.name)
    } else {
        format!("{}, sweep of {key}", base.name)
    };
    let written = written_csv.and_then(|()| {
        let x_label = wsn_sim::plots::sweep_x_label(&key);
        wsn_sim::plots::write_sweep(&staging, "sweep", &title, &x_label, &points, offered).map_err(anyhow::Error::msg)
    });
    crate::staging::commit(
        &staging,
        &dir,
        written,
        &format!("the earlier sweep in {} was left as it was", dir.display()),
    )
    .map_err(|e| unfinished(e, &partial))?;
    drop(partial);
    // sweep.csv holds every row now (whether the partial file could be written no longer
    // matters).
    let _ = std::fs::remove_file(&partial_path);
    results_in_place(&dir.join("sweep.csv"));
    for line in &table {
        out!("{line}");
    }
    out!("outputs   {} (per flow: {})", dir.join("sweep.csv").display(), dir.join("sweep_flows.csv").display());
    Ok(())
}

fn run_with_bar(sc: &Scenario, seed: Option<u64>, dir: &std::path::Path, quiet: bool) -> Result<RunResult> {
    let bar = if quiet { ProgressBar::hidden() } else { ProgressBar::new(1000) };
    bar.set_style(
        ProgressStyle::with_template("{spinner} {msg} [{bar:40}] {percent:>3}% sim  eta {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.set_message(format!("{} ({} s simulated)", sc.name, sc.duration_s));
    // Without a terminal the bar is hidden: a log gets a line per tenth of the run instead, once
    // the run has taken more than a second (a short run prints nothing).
    let log = !quiet && bar.is_hidden();
    let (mut tenths, started) = (0u32, std::time::Instant::now());
    let mut progress = |f: f64| {
        bar.set_position((f * 1000.0) as u64);
        let now = (f * 10.0).floor() as u32;
        let wall = started.elapsed().as_secs_f64();
        if log && now > tenths && now < 10 && wall > 1.0 {
            tenths = now;
            progress::stderr_line(&format!("{}: {} % simulated, {wall:.0} s", sc.name, now * 10));
        }
    };
    let r = run(sc, RunOptions { seed, out_dir: Some(dir.to_path_buf()), progress: Some(&mut progress) })?;
    bar.finish_and_clear();
    Ok(r)
}

/// An earlier sweep into this folder that did not finish left its finished runs' rows in
/// `partial` (`sweep.csv.partial`): they are moved to `sweep.csv.partial.earlier` (or
/// `.earlier.2`, `.earlier.3`, … when that name is taken, so that no earlier rows are lost)
/// before this sweep writes its own, and the move is said. A file with no row (a sweep stopped
/// before its first run finished) is removed.
fn keep_earlier_partial(partial: &std::path::Path) -> Result<()> {
    if !partial.is_file() {
        return Ok(());
    }
    let rows = std::fs::read_to_string(partial)
        .with_context(|| format!("reading {}", partial.display()))?
        .lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .count();
    if rows == 0 {
        return std::fs::remove_file(partial).with_context(|| format!("removing {}", partial.display()));
    }
    let name = |k: u32| {
        let mut n = partial.as_os_str().to_owned();
        n.push(if k == 1 { ".earlier".to_string() } else { format!(".earlier.{k}") });
        std::path::PathBuf::from(n)
    };
    let earlier = (1..=u32::MAX)
        .map(name)
        .find(|p| !p.exists())
        .with_context(|| format!("no free name to keep {} under", partial.display()))?;
    std::fs::rename(partial, &earlier)
        .with_context(|| format!("moving {} to {}", partial.display(), earlier.display()))?;
    say!(
        "kept      an earlier unfinished sweep's {rows} row(s) as {} (this sweep writes its own {})",
        earlier.display(),
        partial.display()
    );
    Ok(())
}

/// The good-tree freeze's links the run summary lists before "and N more".
const FREEZE_LINKS_SHOWN: usize = 6;

/// The first `n` of `items` joined with "; ", then "… and K more (see WHERE)" when there are
/// more.
fn first_of(items: &[String], n: usize, r#where: &str) -> String {
    let shown = items[..items.len().min(n)].join("; ");
    match items.len().checked_sub(n) {
        Some(more) if more > 0 => format!("{shown}; … and {more} more (see {where})"),
        _ => shown,
    }
}

/// The one-screen summary of a run whose results are in place. Its lines go through [`say!`]: a
/// standard output that cannot take them (`> /dev/full`, a closed pipe) does not stop the
/// warnings that follow on standard error; the failure ends the command once they are said.
fn print_summary(r: &RunResult, dir: &std::path::Path) {
    let s = &r.summary;
    let t = &s.totals;
    // The reception rules are named only when they are not the default (TOSSIM's).
    let rules = if s.reception == wsn_sim::scenario::Reception::Ns3 { ", ns3 reception" } else { "" };
    say!("scenario  {}  (seed {}, preset {}{rules}, protocol {})", s.scenario, s.seed, s.preset, s.protocol);
    say!(
        "run       {} s simulated in {:.2} s wall, {} events ({:.1} M/s), {} nodes",
        short_s(s.sim_seconds),
        s.wall_seconds,
        s.events,
        s.events as f64 / s.wall_seconds.max(1e-9) / 1e6,
        s.nodes
    );
    // Traffic flows once the first flow starts (as in `runner::run`); a run that ends before
    // has no depth figures while traffic flows.
    let traffic = r.network.flows().iter().any(|f| f.start.as_secs_f64() < s.sim_seconds);
    let depth = if traffic {
        format!(
            "median {} (p10 {}, p90 {}, max {})",
            s.routing.median_max_depth,
            s.routing.max_depth_p10_p90[0],
            s.routing.max_depth_p10_p90[1],
            s.routing.max_depth_seen
        )
    } else {
        format!("no traffic (max {})", s.routing.max_depth_seen)
    };
    // Nodes whose parents led nowhere at the end (a routing loop of that moment), said only when
    // there are any.
    let cut_off = match s.routing.cut_off_nodes {
        0 => String::new(),
        n => format!(", cut off (in or behind a loop, or behind an unrouted node) {n}"),
    };
    say!(
        "routing   tree depth while traffic flows: {depth}; mean node depth {:.2}; parent changes {} ({} during traffic); unrouted {}{cut_off}",
        s.routing.mean_depth,
        s.routing.parent_changes,
        s.routing.parent_changes_during_traffic,
        s.routing.unrouted_nodes
    );
    // The good-tree freeze, when it acted: each replaced or kept link with its expected share,
    // the first few of them (a chain of weak links filled the screen); summary.json has all.
    let links = crate::compare::freeze_links(&s.routing, r.network.sinks().len() > 1);
    if !links.is_empty() {
        say!(
            "          good-tree freeze (expected share of frames on a quiet channel): {}",
            first_of(&links, FREEZE_LINKS_SHOWN, "routing.freeze_moves and freeze_weak_kept in summary.json")
        );
    }
    if t.originated > 0 {
        say!(
            "traffic   {} flows: originated {}, delivered {} ({:.1} %)",
            s.flows.len(),
            t.originated,
            t.delivered,
            100.0 * t.delivery_ratio
        );
    } else {
        say!("traffic   {} flows: no packet originated", s.flows.len());
    }
    if t.mean_goodput_pps.is_finite() {
        say!(
            "goodput   per flow mean {} pkt/s, min {}, max {}",
            rate(t.mean_goodput_pps),
            rate(t.min_goodput_pps),
            rate(t.max_goodput_pps)
        );
    } else {
        say!("goodput   no flow started before the end of the run");
    }
    say!(
        "frames    data {}, beacons {}, acks {}; drops: queue {}, mac {}, no route {}, loop/TTL {}; dups suppressed {}",
        t.data_frames,
        t.beacon_frames,
        t.ack_frames,
        t.queue_drops,
        t.mac_drops,
        t.no_route_drops,
        t.loop_ttl_drops,
        t.duplicates_suppressed
    );
    if let Some(fb) = t.feedback_packets {
        let unreliable = s.flows.iter().filter(|f| f.in_order_exactly_once == Some(false)).count();
        // A share of nothing is said as such, not as 0.0 % (a run whose flows never sent).
        let share = |of: u64| if of == 0 { "–".to_string() } else { format!("{:.1}", 100.0 * fb as f64 / of as f64) };
        say!(
            "transport feedback {} ({} % of data packets originated, the paper's measure; {} % of data frames on the air), congestion decreases {}; flows not (yet) complete in order: {}",
            fb,
            share(t.originated),
            share(t.data_frames),
            t.congestion_decreases.unwrap_or(0),
            unreliable
        );
        // The paper profile's idle timeout: flows released and brought back (rare; shown when
        // it happened).
        let (expired, revived, replaced) =
            (t.flows_expired.unwrap_or(0), t.flows_revived.unwrap_or(0), t.flows_replaced.unwrap_or(0));
        if expired + replaced > 0 {
            say!(
                "          flows released by the idle timeout {expired} (revived by their data {revived}); replaced by a new incarnation {replaced}"
            );
        }
    }
    if let Some(&n) = t.protocol_counters.get("foreign_tree_forwards").filter(|&&n| n > 0) {
        eprintln!(
            "warning: IFRC: {n} data packets were forwarded by nodes on another base station's tree (flows to \
             several sinks cross); IFRC gives each node one tree, and Rule 1 held these nodes to their own \
             tree's parent (docs/ifrc.md: send each node to its best-path sink)"
        );
    }
    let outages = r.network.outages();
    if !outages.is_empty() {
        let shown: Vec<String> = outages
            .iter()
            .take(4)
            .map(|&(n, from, to)| format!("node {n} {}–{} s", short_s(from), short_s(to)))
            .collect();
        let more = if outages.len() > 4 { format!(", and {} more", outages.len() - 4) } else { String::new() };
        say!("outages   radio off: {}{more}", shown.join(", "));
    }
    let inv = &t.invariant_violations;
    let ok = inv.duplicate_deliveries
        + inv.phantom_deliveries
        + inv.queue_overflows
        + inv.send_done_mismatch
        + inv.out_of_order_deliveries
        + inv.datagrams_refused
        + inv.skipped_deliveries
        == 0;
    say!("checks    invariants {}", if ok { "ok".to_string() } else { format!("VIOLATED: {inv:?}") });
    say!("trace     sha256 {}", s.trace_sha256);
    say!("outputs   {}", dir.display());
}

/// Write a run's result files and plots into `dir`, with the list of them
/// ([`wsn_sim::output::MANIFEST`]): first into a staging folder inside it ([`crate::staging`]);
/// only when all of them are written do they, and the run's trace files (written under their
/// temporary names while it ran, [`wsn_sim::runner::RunResult::trace_files`]), replace the
/// files of the same names, and then the files an earlier run wrote and this one did not are
/// removed ([`wsn_sim::output::earlier_run`]); returns their names. A failure while writing (a
/// full disk, say) leaves the earlier results, and the earlier trace files, as they were, and
/// this run's trace files under their temporary names.
fn write_results(dir: &std::path::Path, r: &wsn_sim::runner::RunResult, plots: bool) -> Result<Vec<String>> {
    // Asked before the new files replace the old ones.
    let earlier = wsn_sim::output::earlier_run(dir);
    let staging = crate::staging::create(dir, "run")?;
    let written = wsn_sim::output::write_all(&staging, r).map_err(anyhow::Error::from).and_then(|()| {
        if plots {
            wsn_sim::plots::write_all(&staging, r).map_err(anyhow::Error::msg).context("writing plots")?;
        }
        // The list of this run's files, for the next run into the folder.
        let mut files = crate::staging::names(&staging)?;
        files.extend(r.trace_files.iter().map(|f| f.name.to_string()));
        files.push(wsn_sim::output::MANIFEST.to_string());
        files.sort();
        let files: Vec<&str> = files.iter().map(String::as_str).collect();
        Ok(wsn_sim::output::write_manifest(&staging, &files)?)
    });
    // The new files, the trace files among them, replace the old ones of the same names, then
    // the earlier run's other files go (all but this run's). A trace file written as a stream
    // (to a device or a pipe) is in place already.
    let partial: Vec<(&std::path::Path, &str)> =
        r.trace_files.iter().filter(|f| f.is_partial()).map(|f| (f.written.as_path(), f.name)).collect();
    let names = crate::staging::commit_with(
        &staging,
        dir,
        written,
        &match earlier {
            // Nothing of an earlier run to keep: say what is true.
            wsn_sim::output::EarlierRun::None => format!("no result was written into {}", dir.display()),
            _ => format!("the results in {} were left as they were", dir.display()),
        },
        &partial,
    )?;
    let streamed = r.trace_files.iter().filter(|f| !f.is_partial()).map(|f| f.name);
    let keep: Vec<&str> = names.iter().map(String::as_str).chain(streamed).collect();
    Ok(wsn_sim::output::clear_previous(dir, &earlier, &keep)?)
}

/// A rate for the console: 3 decimals, or 3 significant digits below 0.01 (0.000 hid the
/// goodput of slow flows: 0.0001 pkt/s printed as 0.000).
fn rate(x: f64) -> String {
    if x == 0.0 || !x.is_finite() || x.abs() >= 0.01 {
        format!("{x:.3}")
    } else {
        let decimals = (2 - x.abs().log10().floor() as i32).clamp(3, 12) as usize;
        format!("{x:.decimals$}")
    }
}

/// Refuse an output folder that holds a file this run reads under a name it writes or clears
/// (`--out .` beside a positions file called `nodes.csv`, a tree file called `queues.csv`): the
/// results would replace the input.
fn refuse_inputs_among_outputs(sc: &Scenario, scenario: &str, dir: &std::path::Path) -> Result<()> {
    let Ok(dir) = dir.canonicalize() else { return Ok(()) };
    let mut inputs = vec![("the scenario", PathBuf::from(scenario))];
    for (field, p) in sc.file_fields() {
        if let Ok(path) = sc.resolve(field, p) {
            inputs.push((field, path));
        }
    }
    for (what, path) in inputs {
        // The name as it sits in its folder (a symbolic link is replaced, not its target).
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let parent = path.parent().map(|p| if p.as_os_str().is_empty() { std::path::Path::new(".") } else { p });
        let Some(Ok(parent)) = parent.map(std::path::Path::canonicalize) else { continue };
        anyhow::ensure!(
            parent != dir || !wsn_sim::output::is_output_file(name),
            "--out {}: {} is {what}'s file, which this run reads, and a run writes or removes a file of that name \
             there; choose another --out, or rename the input",
            dir.display(),
            path.display()
        );
    }
    Ok(())
}

/// Seconds for the console: whole seconds without a fraction, else up to 3 decimals.
fn short_s(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::{first_of, mean_of_defined, no_value, parse_values, rate, set_to_param, toml_number, trace_files_gb};

    /// office40 with `--pcap` over 100,000 s writes about 2.3 GB (83.8 MB per hour); the
    /// estimate, 0.5 kB per node-second for each file before, gave 2.0 GB and no
    /// warning.
    #[test]
    fn trace_files_estimate_covers_a_pcap_only_run() {
        let node_s = 40.0 * 100_000.0;
        assert!(trace_files_gb(node_s, false, true) > 2.0);
        assert!(trace_files_gb(node_s, true, false) <= 2.0);
        assert!(trace_files_gb(node_s, true, true) > 4.0);
        assert_eq!(trace_files_gb(node_s, false, false), 0.0);
    }

    /// A long list is cut after its first items with a count of the rest and where they are;
    /// one of at most that length is shown whole.
    #[test]
    fn long_lists_show_their_first_items_and_count_the_rest() {
        let items: Vec<String> = (1..=8).map(|i| format!("l{i}")).collect();
        assert_eq!(first_of(&items, 3, "x.json"), "l1; l2; l3; … and 5 more (see x.json)");
        assert_eq!(first_of(&items[..3], 3, "x.json"), "l1; l2; l3");
        assert_eq!(first_of(&items[..1], 3, "x.json"), "l1");
        assert_eq!(first_of(&items[..4], 3, "x.json"), "l1; l2; l3; … and 1 more (see x.json)");
    }

    #[test]
    fn small_rates_keep_three_significant_digits() {
        assert_eq!(rate(0.0), "0.000");
        assert_eq!(rate(0.459), "0.459");
        assert_eq!(rate(12.3456), "12.346");
        assert_eq!(rate(0.046), "0.046");
        assert_eq!(rate(0.00456), "0.00456");
        assert_eq!(rate(0.0001), "0.000100");
        assert_eq!(rate(0.00012345), "0.000123");
    }

    #[test]
    fn seeds_without_a_value_are_left_out_of_the_mean() {
        assert_eq!(mean_of_defined([f64::NAN, 2.0, 4.0].into_iter()), 3.0);
        assert_eq!(mean_of_defined([1.0, 2.0].into_iter()), 1.5);
        assert!(mean_of_defined([f64::NAN].into_iter()).is_nan());
        assert!(mean_of_defined(std::iter::empty()).is_nan());
        assert_eq!(no_value(f64::NAN, |x| x.to_string()), "–");
        assert_eq!(no_value(0.5, |x| format!("{:.1}%", 100.0 * x)), "50.0%");
    }

    #[test]
    fn sweep_errors_name_the_param() {
        let k = "flows.5.rate_pps";
        for (m, want) in [
            ("--set flows.5.rate_pps: index 5 out of range", "--param flows.5.rate_pps: index 5 out of range"),
            ("--set flows.5.rate_pps=1: bad", "--param flows.5.rate_pps=1: bad"),
            ("--set flows.5.rate_pps", "--param flows.5.rate_pps"),
            ("x --set flows.5.rate_ppsx=1 y", "x --set flows.5.rate_ppsx=1 y"),
            ("--set flows.5.rate: no", "--set flows.5.rate: no"),
        ] {
            assert_eq!(set_to_param(m, k, k), want);
        }
        assert_eq!(
            set_to_param("--set flows[0]: a whole element (--set flows.0.FIELD=VALUE)", "flows[0]", "flows.0"),
            "--param flows[0]: a whole element (--param flows.0.FIELD=VALUE)"
        );
    }

    #[test]
    fn sweep_values_are_toml_numbers() {
        assert_eq!(toml_number(3.0), "3");
        assert_eq!(toml_number(0.0001), "0.0001");
        assert_eq!(toml_number(-2.5), "-2.5");
        assert_eq!(toml_number(1e25), "1e25");
        // Whole numbers up to 2^53 stay integers (a seed of 10^15 was written 1e15, a float).
        assert_eq!(toml_number(1e15), "1000000000000000");
        assert_eq!(toml_number(9_007_199_254_740_992.0), "9007199254740992");
        for v in [3.0, 0.0001, 1e25, 1.5e-12, 123456789012345.0, -1e300] {
            assert_eq!(toml_number(v).parse::<f64>().unwrap(), v, "{v}");
        }
        // Through a scenario override (a float key): 1e25 used to be read as an integer.
        let o = vec![format!("radio.false_ack_prob={}", toml_number(1e-7))];
        assert_eq!(wsn_sim::scenario::Scenario::load("office40", &o).unwrap().radio.false_ack_prob, 1e-7);
        let o = vec![format!("duration_s={}", toml_number(1e25))];
        let e = wsn_sim::scenario::Scenario::load("office40", &o).expect_err("accepted").to_string();
        assert!(!e.contains("integer"), "{e}");
    }

    #[test]
    fn error_report_prints_each_cause_once() {
        /// An error that puts its cause into its own message and also returns it as its source.
        #[derive(Debug)]
        struct Repeats {
            source: std::io::Error,
        }
        impl std::fmt::Display for Repeats {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "cannot read x.toml: {}", self.source)
            }
        }
        impl std::error::Error for Repeats {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                Some(&self.source)
            }
        }
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        // The cause is already in the message: printed once.
        let e = anyhow::Error::new(Repeats { source: io() });
        assert_eq!(super::error_report(&e), "Error: cannot read x.toml: no such file");
        // A context over a plain cause: both lines.
        let e = anyhow::Error::new(io()).context("creating out/x");
        assert_eq!(super::error_report(&e), "Error: creating out/x\n  caused by: no such file");
    }

    /// Range values are rounded to the decimals of start and step: exact for integers (seeds
    /// beyond 10^13 included), no residue near zero.
    #[test]
    fn ranges_round_to_their_decimals() {
        assert_eq!(parse_values("x=0.1:0.3:0.1").unwrap().1, vec![0.1, 0.2, 0.3]);
        assert_eq!(parse_values("x=-0.3:0.3:0.3").unwrap().1, vec![-0.3, 0.0, 0.3]);
        assert_eq!(
            parse_values("seed=123456789012345:123456789012347:1").unwrap().1,
            vec![123456789012345.0, 123456789012346.0, 123456789012347.0]
        );
        assert_eq!(parse_values("x=0.25:1:0.25").unwrap().1, vec![0.25, 0.5, 0.75, 1.0]);
    }

    /// A range with too many values says how many in a few characters (1e300 values were
    /// written as a 301-digit number).
    #[test]
    fn too_many_sweep_values_are_counted_short() {
        let e = parse_values("x=1:1e300:1").unwrap_err().to_string();
        assert!(e.contains(": 1e300 values, more than the"), "{e}");
        let e = parse_values("x=0:20000:1").unwrap_err().to_string();
        assert!(e.contains(": 20001 values"), "{e}");
    }

    /// A value that is not a number is named in the error (a review: "invalid float literal"
    /// did not say which of the values it was).
    #[test]
    fn a_bad_sweep_value_is_named() {
        for (spec, bad) in [("x=1,abc,3", "`abc` is not a number"), ("x=0:1:zz", "`zz` is not a number")] {
            let e = super::error_report(&parse_values(spec).unwrap_err());
            assert!(e.contains(bad) && e.contains(spec), "{e}");
        }
    }
}

/// Mutation audit of the sweep's and the console's helpers (session 36).
#[cfg(test)]
mod audit36 {
    use super::{
        max_repaired_share, parse_values, rate, set_to_param, sweep_flow_rows, sweep_knee, sweep_point, sweep_row,
        toml_number,
    };
    use wsn_sim::plots::SweepPoint;
    use wsn_sim::runner::{run, RunOptions, Summary};

    /// A short run of a small network with two flows' worth of figures to edit.
    fn summary() -> Summary {
        let text =
            "name = \"t\"\nduration_s = 30.0\n[topology]\nlayout = { kind = \"grid\", nodes = 4, spacing_m = 5.0 }\n\
                    [[flows]]\nsources = \"all\"\nrate_pps = 1.0\nstart_s = 5.0\n[output]\nplots = false\n";
        let sc = wsn_sim::scenario::Scenario::from_toml(text, "t.toml", wsn_sim::scenario::builtin_base(), &[])
            .expect("scenario");
        let s = run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).expect("run").summary;
        assert!(s.flows.len() >= 2, "{} flows", s.flows.len());
        s
    }

    /// README: `KEY=start:stop:step` runs from start to stop inclusive (a range of one value when
    /// they are equal), the step must be positive, and a sweep has at most 10,000 values.
    #[test]
    fn ranges_include_stop_and_hold_at_most_ten_thousand_values() {
        assert_eq!(parse_values("x=2:2:1").unwrap().1, vec![2.0]);
        let e = parse_values("x=1:2:0").unwrap_err().to_string();
        assert!(e.contains("step must be > 0"), "{e}");
        assert_eq!(parse_values("x=1:10000:1").unwrap().1.len(), 10_000);
        let e = parse_values("x=0:10000:1").unwrap_err().to_string();
        assert!(e.contains(": 10001 values, more than the 10000"), "{e}");
        let list = (1..=10_000).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        assert_eq!(parse_values(&format!("x={list}")).unwrap().1.len(), 10_000);
        assert!(parse_values(&format!("x={list},10001")).is_err());
    }

    /// The values of a range are rounded to the decimals of start *and* step (a step of 0.1 from
    /// a whole start keeps its tenths).
    #[test]
    fn a_decimal_step_from_a_whole_start_keeps_its_decimals() {
        assert_eq!(parse_values("x=0:0.3:0.1").unwrap().1, vec![0.0, 0.1, 0.2, 0.3]);
    }

    /// A list value that is not finite, or an empty key, is refused.
    #[test]
    fn lists_refuse_non_finite_values_and_an_empty_key() {
        for spec in ["x=1,inf", "x=nan"] {
            let e = parse_values(spec).unwrap_err().to_string();
            assert!(e.contains("is not a finite number"), "{spec}: {e}");
        }
        let e = parse_values("=1,2").unwrap_err().to_string();
        assert!(e.contains("empty key"), "{e}");
    }

    /// toml_number: "a value of 10^15 or more in exponent form" (one that is not a whole number up
    /// to 2^53), so that TOML reads it as a float.
    #[test]
    fn large_values_beyond_exact_integers_are_in_exponent_form() {
        assert_eq!(toml_number(1e16), "1e16");
        assert_eq!(toml_number(2e16), "2e16");
        assert_eq!(toml_number(1_000_000_000_000_000.5), "1.0000000000000005e15");
    }

    /// set_to_param: "a `--set` of another key (`flows.0.rate_pps` is not `flows.0.rate`) does
    /// not" change; a key that goes on with `_` or `-` is another key.
    #[test]
    fn a_longer_key_is_not_the_swept_one() {
        let k = "flows.0.rate";
        assert_eq!(set_to_param("--set flows.0.rate_pps=1: bad", k, k), "--set flows.0.rate_pps=1: bad");
        assert_eq!(set_to_param("--set a.b-c=1: bad", "a.b", "a.b"), "--set a.b-c=1: bad");
        assert_eq!(set_to_param("--set a.b=1: bad", "a.b", "a.b"), "--param a.b=1: bad");
    }

    /// rate: "3 decimals, or 3 significant digits below 0.01": 0.01 itself has 3 decimals.
    #[test]
    fn a_rate_of_one_hundredth_has_three_decimals() {
        assert_eq!(rate(0.01), "0.010");
        assert_eq!(rate(0.00999), "0.00999");
    }

    /// max_e2e_repaired_share: "the largest share of a flow's delivered packets repaired end to
    /// end"; in sweep.csv as such.
    #[test]
    fn the_repaired_share_is_the_largest_flows() {
        let mut s = summary();
        for (f, (r, d)) in s.flows.iter_mut().zip([(1, 10), (3, 10)].into_iter().chain(std::iter::repeat((0, 10)))) {
            (f.e2e_repaired, f.delivered) = (Some(r), d);
        }
        assert_eq!(max_repaired_share(&s), Some(0.3));
        assert_eq!(sweep_row("k", 1.0, &s)[12], "0.3");
    }

    /// README: sweep_flows.csv's `x` is written as sweep.csv's, to join on, also for a value that
    /// TOML would need in exponent form.
    #[test]
    fn sweep_flows_x_joins_sweep_csv_x() {
        let s = summary();
        for v in [1.0, 0.25, 1e16, 1e25] {
            let x = &sweep_row("k", v, &s)[0];
            assert!(sweep_flow_rows("k", v, &s).iter().all(|r| &r.x == x), "{v}: {x}");
        }
    }

    /// README: the table averages each value over the seeds that have a value; delivery is
    /// pooled: all delivered over all originated (not the mean of the seeds' ratios).
    #[test]
    fn the_table_averages_defined_goodputs_and_pools_delivery() {
        let base = summary();
        let with = |mean: f64, originated: u64, delivered: u64| {
            let mut s = base.clone();
            s.totals.mean_goodput_pps = mean;
            (s.totals.originated, s.totals.delivered) = (originated, delivered);
            s.totals.delivery_ratio = if originated == 0 { f64::NAN } else { delivered as f64 / originated as f64 };
            s
        };
        let (a, b, none) = (with(1.0, 100, 100), with(3.0, 300, 0), with(f64::NAN, 0, 0));
        let p = sweep_point(7.0, &[&a, &b, &none]);
        assert_eq!((p.x, p.mean), (7.0, 2.0));
        assert_eq!(p.delivery, 0.25, "100 of 400, not the mean 0.5 of 1.0 and 0.0");
        assert!(sweep_point(7.0, &[&none]).delivery.is_nan());
    }

    /// README: the knee is "the largest offered value up to which delivery stays ≥ 95 % and the
    /// flows stay fair": a good value above a bad one does not count.
    #[test]
    fn the_knee_stops_at_the_first_bad_value() {
        let pt = |x: f64, delivery: f64| SweepPoint { x, mean: 1.0, min: 1.0, max: 1.0, delivery };
        assert_eq!(sweep_knee(&[pt(3.0, 1.0), pt(1.0, 1.0), pt(2.0, 0.5)]), Some(1.0));
        assert_eq!(sweep_knee(&[pt(2.0, 1.0), pt(1.0, 0.5)]), None);
    }
}
