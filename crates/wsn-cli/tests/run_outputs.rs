//! `wsn run`'s output folder when a run with its trace files fails: the folder keeps one run's
//! files (the earlier run's summary.json beside the earlier run's trace.csv and frames.pcap),
//! and the failed run's trace is left under its temporary name, which the error names.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn wsn() -> Command {
    Command::new(env!("CARGO_BIN_EXE_wsn"))
}

/// A fresh folder with a short scenario of four nodes in it.
fn scenario(tag: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("wsn-run-outputs-{tag}-{}", std::process::id()));
    std::fs::remove_dir_all(&dir).ok();
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("tiny.toml");
    std::fs::write(
        &f,
        "name = \"tiny\"\nduration_s = 30.0\n[topology]\nlayout = { kind = \"grid\", nodes = 4, spacing_m = 5.0 }\n\
         [[flows]]\nsources = \"all\"\nrate_pps = 1.0\nstart_s = 5.0\n[output]\nplots = false\n",
    )
    .unwrap();
    (dir, f)
}

/// `wsn run SCENARIO -q --trace --pcap --out OUT ARGS...`.
fn run(f: &Path, out: &Path, args: &[&str]) -> Command {
    let mut c = wsn();
    c.arg("run").arg(f).args(["-q", "--trace", "--pcap", "--out"]).arg(out).args(args);
    c
}

#[track_caller]
fn succeeds(mut c: Command) -> Output {
    let o = c.output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// The error of a command that fails (no panic).
#[track_caller]
fn fails(mut c: Command) -> String {
    let o = c.output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(!o.status.success(), "the run succeeded");
    assert!(!err.contains("panicked"), "{err}");
    err
}

/// Every file of `dir` and its bytes, sorted by name.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect();
    out.sort();
    out
}

/// The names of the files that differ between `earlier` and `now` (changed, gone or new),
/// leaving out the trace files' temporary names.
fn changed(earlier: &[(String, Vec<u8>)], now: &[(String, Vec<u8>)]) -> Vec<String> {
    let now: Vec<&(String, Vec<u8>)> = now.iter().filter(|(n, _)| !n.ends_with(".partial")).collect();
    let mut out: Vec<String> = earlier
        .iter()
        .filter(|e| !now.contains(e))
        .chain(now.iter().copied().filter(|n| !earlier.contains(n)))
        .map(|(n, _)| n.clone())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// `summary.json`'s seed.
fn seed(dir: &Path) -> u64 {
    let text = std::fs::read_to_string(dir.join("summary.json")).unwrap();
    serde_json::from_str::<serde_json::Value>(&text).unwrap()["seed"].as_u64().unwrap()
}

/// A run that fails once it has run (here: a folder stands where one of its results goes,
/// found when its results move into place) leaves the earlier run's files, its trace and pcap
/// among them, as they were, and its own trace and pcap under their temporary names, which the
/// error names; the next run that writes them replaces those, and its trace is its summary's.
#[test]
fn a_run_that_fails_after_writing_its_trace_leaves_the_earlier_run_whole() {
    let (dir, f) = scenario("commit");
    let out = dir.join("o");
    succeeds(run(&f, &out, &["--seed", "1"]));
    let earlier = files(&out);
    assert!(earlier.iter().any(|(n, _)| n == "trace.csv") && earlier.iter().any(|(n, _)| n == "frames.pcap"));
    // An RCRT run writes rates.csv, which the earlier best-effort run did not: a folder there.
    std::fs::create_dir(out.join("rates.csv")).unwrap();
    let err = fails(run(&f, &out, &["--seed", "2", "--set", "protocol.kind=\"rcrt\""]));
    assert!(err.contains("rates.csv is a folder") && err.contains("were left as they were"), "{err}");
    // The earlier run's files, every one as it was; this run's trace and pcap beside them,
    // under the names the error gives.
    let now = files(&out);
    assert_eq!(changed(&earlier, &now), Vec::<String>::new(), "the earlier run's files changed");
    assert_eq!(seed(&out), 1);
    let (trace, pcap) = (out.join("trace.csv.partial"), out.join("frames.pcap.partial"));
    assert!(err.contains(&trace.display().to_string()) && err.contains(&pcap.display().to_string()), "{err}");
    let partial = std::fs::read_to_string(&trace).unwrap();
    assert!(partial.starts_with("t_ns,event,") && partial.lines().count() > 100, "{partial:.200}");
    assert!(std::fs::metadata(&pcap).unwrap().len() > 1000);
    // Once the folder is out of the way, the run succeeds: its temporary files are gone, and
    // its trace and pcap are those of the same run into an empty folder.
    std::fs::remove_dir(out.join("rates.csv")).unwrap();
    succeeds(run(&f, &out, &["--seed", "2", "--set", "protocol.kind=\"rcrt\""]));
    assert!(!trace.exists() && !pcap.exists(), "a temporary file left behind");
    assert_eq!(seed(&out), 2);
    let clean = dir.join("clean");
    succeeds(run(&f, &clean, &["--seed", "2", "--set", "protocol.kind=\"rcrt\""]));
    for name in ["trace.csv", "frames.pcap"] {
        let (a, b) = (std::fs::read(out.join(name)).unwrap(), std::fs::read(clean.join(name)).unwrap());
        assert!(a == b, "{name} is not the run's own");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// The same failure in a folder without an earlier run says that nothing was written, not that
/// earlier results were kept.
#[test]
fn a_failed_first_run_says_nothing_was_written() {
    let (dir, f) = scenario("first");
    let out = dir.join("o");
    std::fs::create_dir_all(out.join("rates.csv")).unwrap();
    let err = fails(run(&f, &out, &["--set", "protocol.kind=\"rcrt\""]));
    assert!(err.contains("rates.csv is a folder") && err.contains("no result was written into"), "{err}");
    assert!(!err.contains("left as they were"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A write to the trace that fails while the run runs (here: the file grows past the size
/// limit the command runs under) stops the run; the earlier run's files stay as they were, the
/// unfinished trace and pcap are left under their temporary names, which the error names, and
/// a later run without a trace leaves them (the next run with one replaces them).
#[cfg(target_os = "linux")]
#[test]
fn a_trace_write_that_fails_mid_run_leaves_the_earlier_run_whole() {
    use std::os::unix::process::CommandExt;
    let (dir, f) = scenario("write");
    let out = dir.join("o");
    succeeds(run(&f, &out, &["--seed", "1"]));
    let earlier = files(&out);
    let mut c = run(&f, &out, &["--seed", "2"]);
    // SAFETY: the closure runs in the child between fork and exec and makes only two system
    // calls (no allocation, no lock).
    unsafe {
        c.pre_exec(|| {
            // Writes past 12 kB (of a trace of about 23 kB, a pcap of 38 kB) fail with EFBIG instead of killing the process with SIGXFSZ.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit { rlim_cur: 12 << 10, rlim_max: libc::RLIM_INFINITY };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let err = fails(c);
    assert!(err.contains("File too large"), "{err}");
    let now = files(&out);
    assert_eq!(changed(&earlier, &now), Vec::<String>::new(), "the earlier run's files changed");
    assert_eq!(seed(&out), 1);
    let (trace, pcap) = (out.join("trace.csv.partial"), out.join("frames.pcap.partial"));
    assert!(err.contains(&trace.display().to_string()) && err.contains(&pcap.display().to_string()), "{err}");
    assert!(std::fs::metadata(&trace).unwrap().len() > 0 && pcap.exists());
    // The next run into the folder, here one without a trace or pcap, removes the earlier
    // run's and the failed run's temporary files (no other run can be writing them: it holds
    // the folder's lock), saying so; one with both writes them anew.
    let mut c = wsn();
    c.arg("run").arg(&f).args(["-q", "--out"]).arg(&out);
    let said = String::from_utf8_lossy(&succeeds(c).stdout).into_owned();
    assert!(!out.join("trace.csv").exists() && !trace.exists() && !pcap.exists());
    assert!(said.contains(&format!("removed {} (left by an interrupted or failed run)", trace.display())), "{said}");
    succeeds(run(&f, &out, &["--seed", "3"]));
    assert!(out.join("trace.csv").exists() && !trace.exists() && !pcap.exists());
    std::fs::remove_dir_all(&dir).ok();
}

/// A trace file whose name is a link to a device (here /dev/null) is written through the link
/// as a stream, not under a temporary name, and the link stays.
#[cfg(unix)]
#[test]
fn a_trace_sent_to_a_device_is_written_as_a_stream() {
    let (dir, f) = scenario("device");
    let out = dir.join("o");
    std::fs::create_dir_all(&out).unwrap();
    std::os::unix::fs::symlink("/dev/null", out.join("trace.csv")).unwrap();
    succeeds(run(&f, &out, &[]));
    assert!(std::fs::symlink_metadata(out.join("trace.csv")).unwrap().file_type().is_symlink());
    assert!(!out.join("trace.csv.partial").exists());
    // frames.pcap, a regular file, is in place.
    assert!(std::fs::metadata(out.join("frames.pcap")).unwrap().len() > 1000);
    std::fs::remove_dir_all(&dir).ok();
}

/// Kills the process when dropped (a test that fails leaves no run behind).
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Two runs into one folder would write the same temporary trace files: while a run is
/// running, a second one into its folder is refused, naming the first's process, and leaves
/// the first's files alone. Once the first is killed, the next run removes what it left
/// (its temporary trace files, its lock file), saying so.
#[cfg(unix)]
#[test]
fn a_second_run_into_a_folder_in_use_is_refused_and_a_killed_runs_leftovers_go() {
    use std::os::unix::fs::MetadataExt;
    let (dir, f) = scenario("concurrent");
    let out = dir.join("o");
    // Long enough (a million simulated seconds) to be running throughout; killed below.
    let mut c = run(&f, &out, &["--set", "duration_s=1e6"]);
    c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    let mut first = Killed(c.spawn().unwrap());
    let (trace, pcap) = (out.join("trace.csv.partial"), out.join("frames.pcap.partial"));
    let start = std::time::Instant::now();
    while !(trace.exists() && pcap.exists()) {
        assert!(first.0.try_wait().unwrap().is_none(), "the first run ended early");
        assert!(start.elapsed().as_secs() < 60, "the first run wrote no trace in a minute");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let inode = std::fs::metadata(&trace).unwrap().ino();
    let err = fails(run(&f, &out, &[]));
    assert!(err.contains(&format!("another `wsn run` (process {})", first.0.id())), "{err}");
    assert!(err.contains(".wsn-run.lock") && err.contains(&out.display().to_string()), "{err}");
    assert_eq!(std::fs::metadata(&trace).unwrap().ino(), inode, "the second run replaced the first's trace");
    assert!(!out.join("summary.json").exists());
    // Killed (SIGKILL: no clean-up of its own), the first run leaves its temporary files.
    drop(first);
    assert!(trace.exists() && pcap.exists() && out.join(".wsn-run.lock").exists());
    let mut c = wsn();
    c.arg("run").arg(&f).args(["-q", "--out"]).arg(&out);
    let said = String::from_utf8_lossy(&succeeds(c).stdout).into_owned();
    for p in [&trace, &pcap] {
        assert!(!p.exists(), "{} stayed", p.display());
        assert!(said.contains(&format!("removed {} (left by an interrupted or failed run)", p.display())), "{said}");
    }
    assert!(!out.join(".wsn-run.lock").exists() && out.join("summary.json").exists());
    std::fs::remove_dir_all(&dir).ok();
}
