//! Result files of a run: `summary.json`, `flows.csv`, `timeseries.csv`, `network.csv`,
//! `nodes.csv` (and, through [`crate::plots`], the figures).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::runner::{RunError, RunResult};

fn create(dir: &Path, name: &str) -> Result<BufWriter<File>, RunError> {
    let p = dir.join(name);
    File::create(&p).map(BufWriter::new).map_err(|source| RunError::Output { path: p.display().to_string(), source })
}

fn io(dir: &Path, name: &str) -> impl Fn(std::io::Error) -> RunError {
    let path = dir.join(name).display().to_string();
    move |source| RunError::Output { path: path.clone(), source }
}

/// Every file name a run may write into its output folder (results, traces, figures).
pub const OUTPUT_FILES: &[&str] = &[
    "summary.json",
    "flows.csv",
    "timeseries.csv",
    "network.csv",
    "nodes.csv",
    "queues.csv",
    "rates.csv",
    "total_rate.csv",
    "congestion.csv",
    "decreases.csv",
    "deliveries.csv",
    "node_rates.csv",
    "trace.csv",
    "frames.pcap",
];

/// Stems of the figures a run may write, each as `.png` and `.svg` ([`crate::plots`]).
pub const FIGURE_STEMS: &[&str] = &[
    "goodput_per_flow",
    "goodput_time",
    "tree",
    "network_time",
    "rates_time",
    "congestion_time",
    "allocations_time",
    "reception_time",
    "repairs_per_flow",
    "queues_time",
];

/// Stem of the tree figure of a sink other than the first: `tree_sink<id>`.
pub fn tree_figure_stem(sink: wsn_wire::NodeId) -> String {
    format!("tree_sink{}", sink.0)
}

/// The trace files a run may write while it runs (with `output.trace`, `output.pcap`).
pub const TRACE_FILES: &[&str] = &["trace.csv", "frames.pcap"];

/// Suffix of the temporary name under which a run writes a trace file ([`TRACE_FILES`]) until
/// its caller moves it into place ([`publish_trace_files`]): `trace.csv.partial`.
pub const PARTIAL_SUFFIX: &str = ".partial";

/// The temporary name of the trace file `name`: `trace.csv.partial`.
pub fn partial_name(name: &str) -> String {
    format!("{name}{PARTIAL_SUFFIX}")
}

/// Whether `name` is the temporary name of a trace file ([`partial_name`]).
pub fn is_partial_file(name: &str) -> bool {
    name.strip_suffix(PARTIAL_SUFFIX).is_some_and(|n| TRACE_FILES.contains(&n))
}

/// A trace file of a run ([`TRACE_FILES`]) and where the run wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceFile {
    /// Its name in the output folder (`trace.csv`, `frames.pcap`).
    pub name: &'static str,
    /// Its place, `<out_dir>/<name>`, as an absolute path.
    pub path: PathBuf,
    /// Where the run wrote it: its temporary name beside its place ([`partial_name`]), or the
    /// place itself when what stands there is not a regular file (a device such as `/dev/null`,
    /// a named pipe; reached directly or through a symbolic link), which is written as a stream.
    pub written: PathBuf,
}

impl TraceFile {
    /// Whether the run wrote it under its temporary name, to be moved into place.
    pub fn is_partial(&self) -> bool {
        self.written != self.path
    }
}

/// Move the trace files a run wrote under their temporary names into place, replacing the files
/// of their names (a symbolic link is replaced, not its target). A caller that writes other
/// files for the run calls it once those are written, so that the folder never holds this run's
/// trace beside an earlier run's results. Each file is synced to the disk before it is renamed
/// ([`sync_file`]), and its folder after ([`sync_dir`]), so that a crash soon after leaves
/// either the earlier file or the whole new one. Stops at the first failure, naming the file.
pub fn publish_trace_files(files: &[TraceFile]) -> Result<(), RunError> {
    let output = |path: &Path, source| RunError::Output { path: path.display().to_string(), source };
    let partial: Vec<&TraceFile> = files.iter().filter(|f| f.is_partial()).collect();
    for f in &partial {
        sync_file(&f.written).map_err(|e| output(&f.written, e))?;
    }
    for f in &partial {
        std::fs::rename(&f.written, &f.path).map_err(|e| output(&f.path, e))?;
    }
    let mut dirs: Vec<&Path> = partial.iter().filter_map(|f| f.path.parent()).collect();
    dirs.dedup();
    for d in dirs {
        sync_dir(d).map_err(|e| output(d, e))?;
    }
    Ok(())
}

/// Flush a written file's data and metadata to the disk (`File::sync_all`): called once per
/// file, after its last write and before it is renamed into place, so that a crash (a power
/// loss) soon after the rename cannot leave the new name on an empty or short file.
pub fn sync_file(path: &Path) -> std::io::Result<()> {
    // Unix syncs a file opened for reading; Windows needs write access to flush it.
    std::fs::OpenOptions::new().read(true).write(cfg!(windows)).open(path)?.sync_all()?;
    #[cfg(test)]
    SYNCED.with(|s| s.borrow_mut().push(path.to_path_buf()));
    Ok(())
}

#[cfg(test)]
thread_local! {
    /// The files and folders this thread synced, in order (for the tests).
    static SYNCED: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Flush the entries of the folder `dir` to the disk, after files were renamed into it, so that
/// the renames survive a crash (Unix; elsewhere nothing to do). A file system that cannot sync
/// a folder (EINVAL, ENOTSUP/EOPNOTSUPP, ENOSYS: `InvalidInput`, `Unsupported`) is not an
/// error; any other failure is.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    match std::fs::File::open(dir).and_then(|d| d.sync_all()) {
        Err(e) if dir_sync_unsupported(&e) => Ok(()),
        r => {
            #[cfg(test)]
            if r.is_ok() {
                SYNCED.with(|s| s.borrow_mut().push(dir.to_path_buf()));
            }
            r
        }
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Whether a failed folder sync only says that the file system cannot sync folders.
fn dir_sync_unsupported(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported)
}

/// Whether `name` is a file a run may write: one of [`OUTPUT_FILES`], a figure of
/// [`FIGURE_STEMS`], or a further sink's tree figure ([`tree_figure_stem`]), as PNG or SVG, or
/// the temporary name of a trace file ([`is_partial_file`]).
pub fn is_output_file(name: &str) -> bool {
    if OUTPUT_FILES.contains(&name) || name == MANIFEST || is_partial_file(name) {
        return true;
    }
    let Some(stem) = name.strip_suffix(".png").or_else(|| name.strip_suffix(".svg")) else { return false };
    FIGURE_STEMS.contains(&stem)
        || stem
            .strip_prefix("tree_sink")
            .is_some_and(|id| id.parse::<u16>().is_ok_and(|id| tree_figure_stem(wsn_wire::NodeId(id)) == stem))
}

/// A hidden file in which a run lists the files it wrote into its folder (one name per line),
/// so that the next run into the folder removes exactly those it does not write itself.
pub const MANIFEST: &str = ".wsn-run-files";

/// What an output folder held before a run: which of its files an earlier run wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EarlierRun {
    /// No earlier run: nothing is removed.
    None,
    /// A run that listed its files in [`MANIFEST`]: those (of a run's names) are removed.
    Listed(Vec<String>),
    /// A run without a manifest (written before session 21): a `summary.json` of `wsn run` is
    /// there, so every file of a run's names ([`is_output_file`]) counts as that run's.
    Unlisted,
}

/// What `dir` holds of an earlier `wsn run` ([`EarlierRun`]). A `summary.json` counts as a
/// run's when it is a JSON object with the `scenario` and `trace_sha256` fields every run
/// writes: a folder of the user's own that happens to hold a `rates.csv` is not an earlier run's.
pub fn earlier_run(dir: &Path) -> EarlierRun {
    if let Ok(text) = std::fs::read_to_string(dir.join(MANIFEST)) {
        return EarlierRun::Listed(
            text.lines().map(str::trim).filter(|n| is_output_file(n)).map(String::from).collect(),
        );
    }
    // A summary is a few kB to a few MB (one row per flow); anything far larger is not one.
    const MAX_SUMMARY_BYTES: u64 = 256 << 20;
    let path = dir.join("summary.json");
    if std::fs::metadata(&path).map_or(true, |m| !m.is_file() || m.len() > MAX_SUMMARY_BYTES) {
        return EarlierRun::None;
    }
    let Ok(text) = std::fs::read(&path) else { return EarlierRun::None };
    let is_run = serde_json::from_slice::<serde_json::Value>(&text)
        .ok()
        .and_then(|v| v.as_object().map(|o| o.contains_key("scenario") && o.contains_key("trace_sha256")))
        .unwrap_or(false);
    if is_run {
        EarlierRun::Unlisted
    } else {
        EarlierRun::None
    }
}

/// Write the [`MANIFEST`] of a run that wrote `names` into `dir`.
pub fn write_manifest(dir: &Path, names: &[&str]) -> Result<(), RunError> {
    let mut w = create(dir, MANIFEST)?;
    for n in names {
        writeln!(w, "{n}").map_err(io(dir, MANIFEST))?;
    }
    w.flush().map_err(io(dir, MANIFEST))
}

/// Remove the files `earlier` (what [`earlier_run`] found before the new run's files went in)
/// says an earlier run wrote into `dir`, so that none of them is left beside the new run's
/// (e.g. RCRT's rates.csv after a best-effort run, or a second sink's tree after a one-sink
/// run), except those named in `keep` (the new run's files). Called once the new run has
/// finished, so an interrupted or failed run leaves the earlier results in place. Other files,
/// and the temporary names of trace files ([`is_partial_file`]), are left alone. Returns the
/// names removed, sorted. A missing folder is not an error.
pub fn clear_previous(dir: &Path, earlier: &EarlierRun, keep: &[&str]) -> Result<Vec<String>, RunError> {
    let mut names: Vec<String> = match earlier {
        EarlierRun::None => return Ok(Vec::new()),
        EarlierRun::Listed(names) => names.clone(),
        EarlierRun::Unlisted => {
            let entries = match std::fs::read_dir(dir) {
                Ok(entries) => entries,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(io(dir, "")(e)),
            };
            let mut names = Vec::new();
            for entry in entries {
                let entry = entry.map_err(io(dir, ""))?;
                // A name that is not UTF-8 is not one of ours.
                if let Ok(name) = entry.file_name().into_string() {
                    names.push(name);
                }
            }
            names
        }
    };
    // A trace file's temporary name is not a finished run's file: it is left by a run that
    // failed (named in its error) or written by one still running; `wsn run` removes a failed
    // run's before it starts, and a run that writes that trace file replaces it.
    names.retain(|n| is_output_file(n) && n != MANIFEST && !is_partial_file(n) && !keep.contains(&n.as_str()));
    names.sort();
    names.dedup();
    let mut removed = Vec::new();
    for name in names {
        match std::fs::remove_file(dir.join(&name)) {
            Ok(()) => removed.push(name),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io(dir, &name)(e)),
            Err(_) => {}
        }
    }
    Ok(removed)
}

/// Write every results file of `r` into `dir` (created if needed).
pub fn write_all(dir: &Path, r: &RunResult) -> Result<(), RunError> {
    std::fs::create_dir_all(dir).map_err(io(dir, ""))?;
    let mut w = create(dir, "summary.json")?;
    serde_json::to_writer_pretty(&mut w, &r.summary)
        .map_err(|e| RunError::Output { path: dir.join("summary.json").display().to_string(), source: e.into() })?;
    writeln!(w).and_then(|_| w.flush()).map_err(io(dir, "summary.json"))?;

    let mut w = csv::Writer::from_writer(create(dir, "flows.csv")?);
    if r.summary.flows.is_empty() {
        // The writer puts the header out with the first record: without flows, by hand.
        w.write_record(crate::runner::FLOW_CSV_COLUMNS)
            .map_err(|e| RunError::Output { path: "flows.csv".into(), source: e.into() })?;
    }
    for f in &r.summary.flows {
        w.serialize(f).map_err(|e| RunError::Output { path: "flows.csv".into(), source: e.into() })?;
    }
    w.flush().map_err(io(dir, "flows.csv"))?;

    let bin_ns = r.bin.as_nanos().max(1);
    // A bin's end in seconds, the run's end for the last one; divided, not multiplied by 1e-9,
    // so that it is the value network.csv's stamps hold (printed here in the shortest form,
    // `120`, `300.044385064`; network.csv's writer prints `120.0`).
    let end_ns = r.network.end().as_nanos();
    let bin_end_s = |b: usize| ((b as u64 + 1).saturating_mul(bin_ns)).min(end_ns) as f64 / 1e9;
    let mut w = create(dir, "timeseries.csv")?;
    let e = io(dir, "timeseries.csv");
    writeln!(w, "t_s,flow,delivered,goodput_pps").map_err(&e)?;
    let bins = r.series.len();
    // Each bin is stamped with its end; the last one ends with the run and its rate is taken
    // over its real width.
    for f in r.network.flows() {
        for (b, &d) in f.bins.iter().take(bins).enumerate() {
            let (from, to) = (b as f64 * (bin_ns as f64 / 1e9), bin_end_s(b));
            let rate = if to > from { d as f64 / (to - from) } else { 0.0 };
            writeln!(w, "{to},{},{d},{rate:.4}", f.id).map_err(&e)?;
        }
    }
    w.flush().map_err(&e)?;

    let mut w = csv::Writer::from_writer(create(dir, "network.csv")?);
    for s in &r.series {
        w.serialize(s).map_err(|e| RunError::Output { path: "network.csv".into(), source: e.into() })?;
    }
    w.flush().map_err(io(dir, "network.csv"))?;

    // RCRT and reliable runs always write their files, with only the header when empty.
    let rcrt = r.summary.protocol.starts_with("rcrt") || r.summary.protocol.starts_with("reliable");
    if rcrt || !r.network.total_rate_series().is_empty() || r.network.flows().iter().any(|f| !f.rcrt.rates.is_empty()) {
        let mut w = create(dir, "rates.csv")?;
        let e = io(dir, "rates.csv");
        writeln!(w, "t_s,flow,rate_pps").map_err(&e)?;
        for f in r.network.flows() {
            for (t, rate) in &f.rcrt.rates {
                writeln!(w, "{t},{},{rate}", f.id).map_err(&e)?;
            }
        }
        w.flush().map_err(&e)?;
        let mut w = create(dir, "total_rate.csv")?;
        let e = io(dir, "total_rate.csv");
        writeln!(w, "t_s,sink,total_pps").map_err(&e)?;
        for (t, sink, rate) in r.network.total_rate_series() {
            writeln!(w, "{t},{sink},{rate}").map_err(&e)?;
        }
        w.flush().map_err(&e)?;
        let mut w = create(dir, "congestion.csv")?;
        let e = io(dir, "congestion.csv");
        writeln!(w, "t_s,flow,level").map_err(&e)?;
        for f in r.network.flows() {
            for (t, level) in &f.rcrt.levels {
                writeln!(w, "{t},{},{level}", f.id).map_err(&e)?;
            }
        }
        w.flush().map_err(&e)?;
        let mut w = create(dir, "decreases.csv")?;
        let e = io(dir, "decreases.csv");
        writeln!(w, "t_s,sink,flow,level").map_err(&e)?;
        for &(t, sink, flow, level) in r.network.decreases() {
            writeln!(w, "{t},{sink},{flow},{level}").map_err(&e)?;
        }
        w.flush().map_err(&e)?;
        let mut w = create(dir, "deliveries.csv")?;
        let e = io(dir, "deliveries.csv");
        writeln!(w, "t_s,flow,seq").map_err(&e)?;
        for f in r.network.flows() {
            for (t, seq) in &f.rcrt.deliveries {
                writeln!(w, "{t},{},{seq}", f.id).map_err(&e)?;
            }
        }
        w.flush().map_err(&e)?;
    }

    let net = &r.network;
    if (0..net.len()).any(|i| !net.rate_trace(i).is_empty()) {
        let mut w = create(dir, "node_rates.csv")?;
        let e = io(dir, "node_rates.csv");
        writeln!(w, "t_s,node,rate_pps,level").map_err(&e)?;
        for i in 0..net.len() {
            for &(t, rate, level) in net.rate_trace(i) {
                writeln!(w, "{t},{i},{rate},{level}").map_err(&e)?;
            }
        }
        w.flush().map_err(&e)?;
    }
    let mut w = create(dir, "queues.csv")?;
    let e = io(dir, "queues.csv");
    writeln!(w, "t_s,node,max_queue").map_err(&e)?;
    for i in 0..net.len() {
        for (b, &q) in net.queue_bins(i).iter().enumerate() {
            if q > 0 {
                // Stamped with the bin's end, as timeseries.csv and network.csv.
                writeln!(w, "{},{i},{q}", bin_end_s(b)).map_err(&e)?;
            }
        }
    }
    w.flush().map_err(&e)?;

    let mut w = create(dir, "nodes.csv")?;
    let e = io(dir, "nodes.csv");
    // `parent`, `hops`: the first sink's tree; with several sinks, one more pair of columns per
    // other sink's tree, named after the sink.
    let other_trees: String = net.sinks().iter().skip(1).map(|s| format!(",parent_to_{0},hops_to_{0}", s.0)).collect();
    writeln!(
        w,
        "node,x_m,y_m,parent,hops,data_tx,beacon_tx,data_rx,data_overheard,acked,queue_drops,mac_drops,no_route_drops,loop_ttl_drops,duplicates,parent_changes,max_queue{other_trees}"
    )
    .map_err(&e)?;
    for (i, p) in r.positions.iter().enumerate() {
        let s = net.node_stats(i);
        let tree = |t: usize| {
            let parent = net.parent(i, t).map_or(-1, |p| p.0 as i64);
            let hops = net.hop_count(i, t).map_or(-1, |h| h as i64);
            format!("{parent},{hops}")
        };
        let others: String = (1..net.sinks().len()).map(|t| format!(",{}", tree(t))).collect();
        writeln!(
            w,
            "{i},{:.2},{:.2},{},{},{},{},{},{},{},{},{},{},{},{},{}{others}",
            p.x,
            p.y,
            tree(0),
            s.data_tx,
            s.beacon_tx,
            s.data_rx,
            s.data_overheard,
            s.acked,
            s.queue_drops,
            s.mac_drops,
            s.no_route_drops,
            s.other_drops,
            s.duplicates,
            s.parent_changes,
            s.max_queue
        )
        .map_err(&e)?;
    }
    w.flush().map_err(&e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trace files' temporary names are a run's names (a run replaces them, so an input of
    /// that name is refused), but no earlier run's: `clear_previous` leaves them, even in a
    /// folder an older version wrote, where every other file of a run's names goes.
    #[test]
    fn temporary_trace_names_are_left_to_the_run_that_writes_them() {
        assert!(is_partial_file("trace.csv.partial") && is_partial_file("frames.pcap.partial"));
        assert!(!is_partial_file("rates.csv.partial") && !is_partial_file("trace.csv"));
        assert!(is_output_file("trace.csv.partial") && is_output_file("frames.pcap.partial"));
        assert!(!is_output_file("trace.csv.partial.partial") && !is_output_file(".partial"));
        let dir = std::env::temp_dir().join(format!("wsn-partial-names-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["trace.csv", "trace.csv.partial", "frames.pcap.partial", "rates.csv"] {
            std::fs::write(dir.join(name), name).unwrap();
        }
        let listed = EarlierRun::Listed(vec!["trace.csv".into(), "trace.csv.partial".into()]);
        assert_eq!(clear_previous(&dir, &listed, &[]).unwrap(), ["trace.csv"]);
        assert_eq!(clear_previous(&dir, &EarlierRun::Unlisted, &[]).unwrap(), ["rates.csv"]);
        assert!(dir.join("trace.csv.partial").exists() && dir.join("frames.pcap.partial").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Publishing the trace files syncs each under its temporary name (before its rename:
    /// afterwards that name is gone), then their folder once; a file written as a stream is
    /// neither synced nor moved.
    #[test]
    fn published_trace_files_are_synced_before_the_rename_and_their_folder_after() {
        let dir = std::env::temp_dir().join(format!("wsn-publish-sync-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        let mut files = Vec::new();
        for name in TRACE_FILES {
            let f = TraceFile { name, path: dir.join(name), written: dir.join(partial_name(name)) };
            std::fs::write(&f.written, name).unwrap();
            files.push(f);
        }
        files.push(TraceFile { name: "trace.csv", path: "/dev/null".into(), written: "/dev/null".into() });
        SYNCED.with(|s| s.borrow_mut().clear());
        publish_trace_files(&files).unwrap();
        let synced = SYNCED.with(|s| s.take());
        let want = [dir.join("trace.csv.partial"), dir.join("frames.pcap.partial")];
        assert_eq!(synced[..2], want);
        #[cfg(unix)]
        assert_eq!(synced[2..], [dir.as_path()]);
        assert_eq!(std::fs::read_to_string(dir.join("frames.pcap")).unwrap(), "frames.pcap");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Syncing: a file and a folder sync; a missing file is an error, and so is a folder
    /// failure other than "not supported" (EINVAL, ENOTSUP), which is ignored.
    #[test]
    fn sync_failures_other_than_unsupported_are_errors() {
        let dir = std::env::temp_dir().join(format!("wsn-sync-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.csv"), "x").unwrap();
        sync_file(&dir.join("a.csv")).unwrap();
        sync_dir(&dir).unwrap();
        assert!(sync_file(&dir.join("missing.csv")).is_err());
        #[cfg(unix)]
        assert!(sync_dir(&dir.join("missing")).is_err());
        let io = |kind| std::io::Error::from(kind);
        assert!(dir_sync_unsupported(&io(std::io::ErrorKind::InvalidInput)));
        assert!(dir_sync_unsupported(&io(std::io::ErrorKind::Unsupported)));
        assert!(!dir_sync_unsupported(&io(std::io::ErrorKind::PermissionDenied)));
        assert!(!dir_sync_unsupported(&std::io::Error::other("EIO")));
        #[cfg(target_os = "linux")]
        {
            // The codes the file systems that cannot sync a folder return: EINVAL, EOPNOTSUPP.
            assert!(dir_sync_unsupported(&std::io::Error::from_raw_os_error(22)));
            assert!(dir_sync_unsupported(&std::io::Error::from_raw_os_error(95)));
            assert!(!dir_sync_unsupported(&std::io::Error::from_raw_os_error(5)), "EIO");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Mutation audit of the result files (session 35).
    mod audit35 {
        use crate::runner::{run, RunOptions, RunResult};
        use crate::scenario::Scenario;
        use std::collections::HashMap;

        /// A run of nine nodes on a grid (every node a source from 10 s), with `set` applied.
        fn go(set: &[&str]) -> RunResult {
            let text = "name = \"t\"\nduration_s = 57.0\n[topology]\nlayout = { kind = \"grid\", nodes = 9, spacing_m = 5.0 }\n\
                        [[flows]]\nsources = \"all\"\nrate_pps = 4.0\nstart_s = 10.0\n";
            let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
            let sc = Scenario::from_toml(text, "t.toml", crate::scenario::builtin_base(), &set).unwrap();
            run(&sc, RunOptions { seed: None, out_dir: None, progress: None }).unwrap()
        }

        /// `r`'s files written into a fresh folder: each CSV file as its rows of named cells.
        fn written(tag: &str, r: &RunResult) -> (std::path::PathBuf, impl Fn(&str) -> Vec<HashMap<String, String>>) {
            let dir = std::env::temp_dir().join(format!("wsn-audit35-{tag}-{}", std::process::id()));
            std::fs::remove_dir_all(&dir).ok();
            super::super::write_all(&dir, r).unwrap();
            let d = dir.clone();
            let rows = move |name: &str| {
                let mut rd = csv::Reader::from_path(d.join(name)).unwrap();
                let h: Vec<String> = rd.headers().unwrap().iter().map(String::from).collect();
                rd.records().map(|rec| h.iter().cloned().zip(rec.unwrap().iter().map(String::from)).collect()).collect()
            };
            (dir, rows)
        }

        fn num(row: &HashMap<String, String>, k: &str) -> f64 {
            row[k].parse().unwrap_or_else(|_| panic!("{k}: {:?}", row[k]))
        }

        /// README "What a run writes": `timeseries.csv` stamps each bin with its end, the last
        /// bin ending with the run; `goodput_pps` is the bin's count over its width (the last
        /// bin's own width, 7 s of 10 here), to 4 decimals; a flow's `delivered` column sums to
        /// its `delivered` in `flows.csv`. `queues.csv` leaves out bins with an empty queue and
        /// stamps the others with the bin's end. `nodes.csv`: −1 for no parent; `hops` the hop
        /// count the node advertises; the counters are the node's; the `parent_changes` column
        /// sums to `routing.parent_changes`. `summary.json` holds every flow.
        #[test]
        fn binned_files_and_nodes_csv_hold_what_the_readme_says() {
            let r = go(&[]);
            let (dir, rows) = written("best", &r);
            let ts = rows("timeseries.csv");
            let ends = [10.0, 20.0, 30.0, 40.0, 50.0, 57.0];
            assert_eq!(ts.len(), 8 * ends.len());
            for (k, row) in ts.iter().enumerate() {
                let (flow, bin) = (k / ends.len(), k % ends.len());
                assert_eq!((num(row, "flow"), num(row, "t_s")), (flow as f64, ends[bin]), "{row:?}");
                let width = if bin == 5 { 7.0 } else { 10.0 };
                assert_eq!(row["goodput_pps"], format!("{:.4}", num(row, "delivered") / width), "{row:?}");
            }
            let flows = rows("flows.csv");
            assert_eq!(flows.len(), 8);
            for f in &flows {
                let sum: f64 = ts.iter().filter(|row| row["flow"] == f["id"]).map(|row| num(row, "delivered")).sum();
                assert_eq!(sum, num(f, "delivered"), "{f:?}");
            }
            assert!(ts.iter().any(|row| row["t_s"] == "57" && num(row, "delivered") > 0.0));
            let q = rows("queues.csv");
            assert!(!q.is_empty());
            for row in &q {
                assert!(num(row, "max_queue") > 0.0, "{row:?}");
                assert!(ends.contains(&num(row, "t_s")), "{row:?}");
            }
            let net = &r.network;
            for (i, q) in (0..net.len()).map(|i| (i, net.queue_bins(i))) {
                let held: Vec<(f64, f64)> =
                    q.iter().enumerate().filter(|(_, &q)| q > 0).map(|(b, &q)| (ends[b], q as f64)).collect();
                let got: Vec<(f64, f64)> = q_rows(&rows("queues.csv"), i);
                assert_eq!(got, held, "node {i}");
            }
            let nodes = rows("nodes.csv");
            assert_eq!((nodes[0]["parent"].as_str(), nodes[0]["hops"].as_str()), ("-1", "0"));
            let mut changes = 0.0;
            for (i, row) in nodes.iter().enumerate() {
                let s = net.node_stats(i);
                let want = [s.data_tx, s.beacon_tx, s.data_rx, s.data_overheard, s.acked, s.queue_drops, s.mac_drops];
                let cols = ["data_tx", "beacon_tx", "data_rx", "data_overheard", "acked", "queue_drops", "mac_drops"];
                assert_eq!(cols.map(|c| num(row, c) as u64), want, "node {i}");
                let want = [s.no_route_drops, s.other_drops, s.duplicates, u64::from(s.parent_changes)];
                assert_eq!(
                    ["no_route_drops", "loop_ttl_drops", "duplicates", "parent_changes"].map(|c| num(row, c) as u64),
                    want
                );
                assert_eq!(num(row, "hops"), net.hop_count(i, 0).map_or(-1.0, f64::from));
                assert_eq!(
                    (num(row, "x_m"), num(row, "y_m")),
                    ((r.positions[i].x * 100.0).round() / 100.0, (r.positions[i].y * 100.0).round() / 100.0)
                );
                changes += num(row, "parent_changes");
            }
            assert!(r.positions.iter().any(|p| p.x != p.y));
            assert_eq!(changes, r.summary.routing.parent_changes as f64);
            let s: serde_json::Value =
                serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
            assert_eq!(s["flows"].as_array().unwrap().len(), 8);
            std::fs::remove_dir_all(&dir).unwrap();
        }

        fn q_rows(q: &[HashMap<String, String>], node: usize) -> Vec<(f64, f64)> {
            q.iter()
                .filter(|row| num(row, "node") == node as f64)
                .map(|row| (num(row, "t_s"), num(row, "max_queue")))
                .collect()
        }

        /// README: an RCRT run's `rates.csv`, `congestion.csv` and `deliveries.csv` name the flow
        /// by its id (the `flow` column of the other files, here not its source's number),
        /// `total_rate.csv` holds the total rate R over time and `decreases.csv` is
        /// `t_s,sink,flow,level`. `flows.csv` without a flow holds its header.
        #[test]
        fn rcrt_files_name_the_flow_by_its_id() {
            let r = go(&["protocol.kind=\"rcrt\"", "duration_s=300"]);
            let (dir, rows) = written("rcrt", &r);
            let net = &r.network;
            for (name, per_flow) in [
                ("rates.csv", net.flows().iter().map(|f| f.rcrt.rates.len()).collect::<Vec<_>>()),
                ("congestion.csv", net.flows().iter().map(|f| f.rcrt.levels.len()).collect()),
                ("deliveries.csv", net.flows().iter().map(|f| f.rcrt.deliveries.len()).collect()),
            ] {
                let rows = rows(name);
                assert!(per_flow.iter().all(|&n| n > 0), "{name}: {per_flow:?}");
                let got: Vec<usize> =
                    (0..8).map(|id| rows.iter().filter(|row| num(row, "flow") == id as f64).count()).collect();
                assert_eq!(got, per_flow, "{name}");
            }
            let total = rows("total_rate.csv");
            assert_eq!(total.len(), net.total_rate_series().len());
            assert!(!total.is_empty() && total.iter().all(|row| row["sink"] == "0"));
            let dec = rows("decreases.csv");
            assert_eq!(dec.len(), net.decreases().len());
            assert!(!dec.is_empty());
            for (row, d) in dec.iter().zip(net.decreases()) {
                assert_eq!((num(row, "sink"), num(row, "flow")), (f64::from(d.1), f64::from(d.2)), "{row:?}");
            }
            assert!(dec.iter().any(|row| row["flow"] != "0"));
            std::fs::remove_dir_all(&dir).unwrap();
            let r = go(&["flows=[]"]);
            let (dir, rows) = written("none", &r);
            assert!(rows("flows.csv").is_empty());
            let text = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
            assert_eq!(text.trim_end(), crate::runner::FLOW_CSV_COLUMNS.join(","));
            std::fs::remove_dir_all(&dir).unwrap();
        }

        /// README: `node_rates.csv` is written by IFRC runs (every node's starting rate at 0 s).
        #[test]
        fn ifrc_writes_node_rates() {
            let r = go(&["protocol.kind=\"ifrc\"", "mac.preset=\"ifrc2006\"", "flows.0.payload_bytes=0"]);
            let (dir, rows) = written("ifrc", &r);
            let rates = rows("node_rates.csv");
            let at0: Vec<f64> = rates.iter().filter(|row| num(row, "t_s") == 0.0).map(|row| num(row, "node")).collect();
            assert_eq!(at0, (0..9).map(f64::from).collect::<Vec<f64>>());
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
