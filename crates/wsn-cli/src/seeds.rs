//! `--seeds K` for `wsn reproduce` and `wsn compare`: the whole reproduction once per run seed,
//! each into `DIR/seed-N/`, then one table of every number over the seeds.
//!
//! `DIR/numbers.csv` keeps the columns every reproduction writes (`key,paper,ours,unit,note`),
//! with `ours` the median over the seeds that gave a number; `DIR/seeds.csv` has one column per
//! seed beside the median, minimum and maximum, and `DIR/seeds.md` the same as a Markdown table.
//! `DIR/report.md` links the seeds' reports and repeats the `seeds.md` table, so that a single-seed report left in
//! `DIR` by an earlier run is not read as this run's. The folder never mixes the two kinds of run:
//! a single-seed run removes an earlier `--seeds` run's tables and `seed-N/` folders
//! ([`remove_seed_run`]), a `--seeds` run an earlier single-seed run's figures
//! ([`remove_linked_figures`]).
//!
//! Both kinds write everything into a staging folder inside `DIR` ([`crate::staging`]) and move
//! it into place only once all of it is written, so that a failed or interrupted run leaves the
//! earlier results as they were.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Largest `--seeds` accepted: a full reproduction per seed, so more is a typing slip.
pub(crate) const MAX_SEEDS: u64 = 100;

/// The run seeds `first, first + 1, …` (`first` defaults to 1), checked.
pub(crate) fn seed_list(first: Option<u64>, count: u64) -> Result<Vec<u64>> {
    anyhow::ensure!((1..=MAX_SEEDS).contains(&count), "--seeds must be between 1 and {MAX_SEEDS}");
    let first = first.unwrap_or(1);
    (0..count).map(|k| first.checked_add(k).context("--seed + --seeds overflows the seed range")).collect()
}

/// The run seeds of `wsn reproduce` and `wsn compare`.
#[derive(clap::Args, Debug)]
pub(crate) struct SeedArgs {
    /// Run every experiment with this seed instead of its scenario file's own (the layout,
    /// which comes from the topology seed or file, stays the same); the report names it.
    /// With --seeds, the first seed (default 1). 0 to 2^64 − 1.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::parse_seed)]
    seed: Option<u64>,
    /// Repeat everything over this many run seeds (seed, seed+1, …), each into
    /// DIR/seed-N/, and write numbers.csv with the median over the seeds, seeds.csv and
    /// seeds.md with every seed's value (2 to 100 seeds). 1, the default, is a single run
    /// written into DIR itself (no seed-N/ folders, seeds.csv or seeds.md; it removes those an
    /// earlier run left).
    #[arg(long, default_value_t = 1, allow_negative_numbers = true, value_parser = crate::parse_count::<u64>)]
    seeds: u64,
}

/// What a multi-seed command is: the title its single-seed `report.md` opens with (`# RCRT vs
/// IFRC`), which also marks the folders it writes, and its command line for the tables.
pub(crate) struct Command<'a> {
    pub title: &'a str,
    pub line: String,
}

impl SeedArgs {
    /// With one seed, run `one` into a staging folder inside `dir` and move its files into
    /// `dir` once all are written ([`crate::staging`]), then remove the tables and `seed-N/`
    /// folders an earlier `--seeds` run left in `dir` (printing [`crate::ONE_SEED_NOTE`] when
    /// `caution`); with several, run `one` once per seed into `dir/seed-N/` and write the tables
    /// over the seeds ([`over_seeds`]). A folder whose reports another command wrote is refused
    /// before anything runs.
    pub(crate) fn run(
        &self,
        dir: &Path,
        caution: bool,
        cmd: &Command<'_>,
        one: impl Fn(PathBuf, Option<u64>) -> Result<()>,
    ) -> Result<()> {
        let seeds = seed_list(self.seed, self.seeds)?;
        check_owner(dir, cmd.title)?;
        // A run refused before it wrote anything (a bad argument that the runs check) leaves no
        // empty folder behind that it made, nor its parents.
        let _made = crate::create_out_dir(dir)?;
        if self.seeds == 1 {
            // Everything is written into a staging folder first and replaces the earlier files
            // only once all of it is written: a failed or interrupted run leaves the folder as
            // it was (an interrupted one also leaves the staging folder, which the next run into
            // `dir` removes).
            // A folder where the report or the numbers go is refused before the runs (the
            // figures' names are known only once written: such a folder is found at the end,
            // and the results are then kept in the staging folder).
            for name in ["report.md", "numbers.csv"] {
                let to = dir.join(name);
                if to.is_dir() {
                    anyhow::bail!("{} is a folder, where a file of that name goes; move it away", to.display());
                }
            }
            let committed = crate::staging::create(dir, "report").and_then(|staging| {
                let written = one(staging.to_path_buf(), self.seed);
                let left = left_note(dir, false);
                crate::staging::commit(&staging, dir, written, &left)
                // The staging folder's lock file goes here, before `_made` looks for an empty
                // folder.
            });
            committed?;
            crate::results_in_place(&dir.join("report.md"));
            // Only now that this run's report replaced the index that lists them; before anything
            // is printed, so that standard output that cannot be written (which stops the
            // command at the first line it fails on) never leaves the two runs mixed.
            remove_seed_run(dir)?;
            // Printed from the file, now in place, not by `one`, whose folder was a staging one.
            let numbers = dir.join("numbers.csv");
            let rows = read_numbers(&numbers).with_context(|| format!("reading {}", numbers.display()))?;
            for line in numbers_table(&rows) {
                out!("{line}");
            }
            out!("report    {}", dir.join("report.md").display());
            out!("numbers   {}", numbers.display());
            if caution {
                out!("{}", crate::ONE_SEED_NOTE);
            }
            Ok(())
        } else {
            let cmd = Command { title: cmd.title, line: format!("{}{}", cmd.line, self.options()) };
            over_seeds(dir, &seeds, &cmd, |sub, s| one(sub, Some(s)))
        }
    }

    /// The `--seeds`/`--seed` options as given, for the command line a report names (empty for
    /// a single run with the scenario files' own seeds).
    fn options(&self) -> String {
        let mut out = String::new();
        if self.seeds != 1 {
            write!(out, " --seeds {}", self.seeds).expect("writing to a String");
        }
        if let Some(s) = self.seed {
            write!(out, " --seed {s}").expect("writing to a String");
        }
        out
    }
}

/// Refuse `dir` when a `report.md` in it (at its top, or in a `seed-N/` folder of a `--seeds`
/// run) was written by another command than the one whose report opens with `title`: this
/// run would replace or delete that command's results.
pub(crate) fn check_owner(dir: &Path, title: &str) -> Result<()> {
    if !dir.is_dir() {
        // Nothing to protect (a file in its place is refused when the folder is made).
        return Ok(());
    }
    let first_line = |p: &Path| std::fs::read_to_string(p).ok().and_then(|t| t.lines().next().map(str::to_string));
    let mut reports = vec![dir.join("report.md")];
    reports.extend(entries(dir)?.into_iter().filter(|p| is_seed_folder(p)).map(|p| p.join("report.md")));
    for path in reports {
        let Some(line) = first_line(&path) else { continue };
        // The index of a `--seeds` run before session 19 named no command: its seed folders'
        // reports do.
        if line.starts_with("# Reproduction over ") {
            continue;
        }
        let rest = line.strip_prefix(title);
        anyhow::ensure!(
            rest.is_some_and(|r| r.is_empty() || r.starts_with(" (") || r.starts_with(" over ")),
            "{} holds the results of another command ({line:?}); this run would replace or remove them: \
             give it another --out, or move them away",
            path.display()
        );
    }
    Ok(())
}

/// The files a `--seeds` run writes at the top of its folder, in the order they are moved into
/// place: `report.md` last, so that it is there only once everything else is.
const TOP_FILES: [&str; 4] = ["numbers.csv", "seeds.csv", "seeds.md", "report.md"];

/// Run `one(dir_of_seed, seed)` for every seed, then write the tables. The seeds run, and the
/// tables and the index are written, in a staging folder inside `dir`; only when all of that is
/// written do they replace the earlier run's (all of its `seed-N/` folders: a folder of a seed
/// this run does not have would otherwise stay), so that a failed or interrupted run leaves
/// `dir` as it was. The moves into place ([`install`]) remove the earlier `report.md` first and
/// put the new one last: a folder without a `report.md` (beside a staging folder) is one whose
/// moves were interrupted.
pub(crate) fn over_seeds(
    dir: &Path,
    seeds: &[u64],
    cmd: &Command<'_>,
    one: impl Fn(PathBuf, u64) -> Result<()>,
) -> Result<()> {
    let _made = crate::create_out_dir(dir)?;
    // What would stop the moves half-way is refused before the first seed runs.
    check_targets(dir, seeds)?;
    let staging = crate::staging::create(dir, "seeds")?;
    // A failure keeps the seeds that finished (hours of runs, perhaps) in the staging folder,
    // and says where; the next run into `dir` removes it.
    let kept = |e: anyhow::Error| {
        // Without a finished seed there is nothing to keep.
        let finished = entries(&staging).map_or(0, |v| v.iter().filter(|p| is_seed_folder(p)).count());
        if finished == 0 {
            let _ = std::fs::remove_dir_all(&staging);
            return e.context(left_note(dir, false));
        }
        e.context(format!(
            "{}; the seeds that finished ({finished}) are in {} (until the next run into that folder)",
            left_note(dir, true),
            staging.display()
        ))
    };
    let merged = run_seeds(dir, &staging, seeds, one).and_then(|tables| merge(seeds, &tables)).map_err(kept)?;
    write(&staging, seeds, &merged, &cmd.line)
        .and_then(|table| write_index(&staging, seeds, &table, cmd))
        // Checked again: a folder may have appeared while the seeds ran.
        .and_then(|()| check_targets(dir, seeds))
        .map_err(kept)?;
    install(dir, &staging, seeds).map_err(|e| {
        e.context(format!(
            "moving this run's results into {} stopped part-way (the earlier report.md is removed first, the new \
             one moved in last); what was not moved is in {} (until the next run into that folder)",
            dir.display(),
            staging.display()
        ))
    })?;
    crate::results_in_place(&dir.join("report.md"));
    for line in medians_table(&merged) {
        out!("{line}");
    }
    out!(
        "over seeds {}: {}",
        seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
        dir.join("seeds.md").display()
    );
    Ok(())
}

/// Refuse, before anything changes in `dir`, what would stop a `--seeds` run's moves half-way: a
/// folder of a seed's name that no run wrote, or a folder where one of its files goes.
fn check_targets(dir: &Path, seeds: &[u64]) -> Result<()> {
    for &s in seeds {
        let to = dir.join(format!("seed-{s}"));
        anyhow::ensure!(
            !to.exists() || is_seed_folder(&to),
            "{} exists and was not written by a run (no numbers.csv); move it away",
            to.display()
        );
    }
    for name in TOP_FILES {
        let to = dir.join(name);
        anyhow::ensure!(!to.is_dir(), "{} is a folder, where a file of that name goes; move it away", to.display());
    }
    Ok(())
}

/// Move a `--seeds` run's results from `staging` into `dir`: remove the earlier `report.md`, the
/// figures of an earlier single-seed run that it linked and the earlier `seed-N/` folders, move
/// in the new seed folders and [`TOP_FILES`], `report.md` last, and remove `staging`.
fn install(dir: &Path, staging: &Path, seeds: &[u64]) -> Result<()> {
    // Everything staged reaches the disk before any of it is renamed into place (the seeds'
    // reports were rewritten and the tables written after their runs' own syncs), and the
    // folder after the renames.
    crate::staging::sync_tree(staging).with_context(|| format!("syncing {} to disk", staging.display()))?;
    let report = dir.join("report.md");
    let earlier = std::fs::read_to_string(&report).ok();
    if earlier.is_some() {
        std::fs::remove_file(&report).with_context(|| format!("removing {}", report.display()))?;
    }
    if let Some(text) = &earlier {
        remove_linked_figures(dir, text)?;
    }
    remove_seed_folders(dir, seeds)?;
    let moves = seeds.iter().map(|s| format!("seed-{s}")).chain(TOP_FILES.iter().map(|n| n.to_string()));
    for name in moves {
        let (from, to) = (staging.join(&name), dir.join(&name));
        std::fs::rename(&from, &to).with_context(|| format!("moving {} into place", to.display()))?;
    }
    std::fs::remove_dir(staging).with_context(|| format!("removing {}", staging.display()))?;
    crate::staging::sync_dir(dir).with_context(|| {
        format!(
            "syncing {} to disk, after the new results were moved into it (they may not all be on disk)",
            dir.display()
        )
    })
}

/// Run every seed into `staging/seed-N/` and read its `numbers.csv`; an error names the seed.
fn run_seeds(
    dir: &Path,
    staging: &Path,
    seeds: &[u64],
    one: impl Fn(PathBuf, u64) -> Result<()>,
) -> Result<Vec<Vec<NumberRow>>> {
    let mut tables = Vec::new();
    for &s in seeds {
        let sub = staging.join(format!("seed-{s}"));
        // While the seeds run, lines that cannot be printed do not stop them ([`say!`]).
        say!("seed {s} → {} (moved there once every seed ran)", dir.join(format!("seed-{s}")).display());
        one(sub.clone(), s).with_context(|| format!("seed {s}"))?;
        name_the_seed(&sub, s, seeds).with_context(|| format!("seed {s}: naming its seed in its report"))?;
        let path = sub.join("numbers.csv");
        let table = read_numbers(&path).with_context(|| format!("seed {s}: reading its numbers.csv"))?;
        for line in numbers_table(&table) {
            say!("{line}");
        }
        tables.push(table);
    }
    Ok(tables)
}

/// In the report a seed of a `--seeds` run wrote into `sub`, say how its seed was chosen (the
/// run itself sees only a `--seed`), and point to the medians instead of asking for them.
fn name_the_seed(sub: &Path, s: u64, seeds: &[u64]) -> Result<()> {
    let path = sub.join("report.md");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(()) };
    let k = seeds.iter().position(|&x| x == s).map_or(0, |i| i + 1);
    let text = text
        .replacen(
            &crate::reproduce::seed_line(s),
            &format!(
                "Run seed: {s} (seed {k} of `--seeds {}`, starting at {}) for every run.\n",
                seeds.len(),
                seeds[0]
            ),
            1,
        )
        .replacen(crate::reproduce::QUOTE_MEDIANS, "The medians over the seeds are in `../report.md`.", 1);
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))
}

/// Whether `path` is a `seed-N/` folder a run wrote (its name, and a `numbers.csv` inside).
fn is_seed_folder(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let is_seed = name.strip_prefix("seed-").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    is_seed && path.is_dir() && path.join("numbers.csv").is_file()
}

/// Remove every `seed-N/` folder an earlier run left in `dir`, saying so for the seeds this run
/// does not replace.
fn remove_seed_folders(dir: &Path, seeds: &[u64]) -> Result<()> {
    for path in entries(dir)? {
        if !is_seed_folder(&path) {
            continue;
        }
        std::fs::remove_dir_all(&path).with_context(|| format!("removing {}", path.display()))?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("").to_string();
        if !seeds.iter().any(|s| name == format!("seed-{s}")) {
            say!("removed {} (an earlier --seeds run's seed folder)", path.display());
        }
    }
    Ok(())
}

/// The tables only a `--seeds` run writes at the top of its folder.
const SEED_TABLES: [&str; 2] = ["seeds.csv", "seeds.md"];

/// Remove an earlier `--seeds` run from `dir` once a single-seed run has written its own
/// `numbers.csv`, `report.md` and figures there, so that the folder never mixes the two: its
/// tables, and its `seed-N/` folders (only folders of that name that hold a `numbers.csv`, i.e.
/// written by a run). A missing file is not an error.
pub(crate) fn remove_seed_run(dir: &Path) -> Result<()> {
    for name in SEED_TABLES {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Ok(()) => say!("removed {} (an earlier --seeds run's table)", path.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", path.display())),
        }
    }
    remove_seed_folders(dir, &[])
}

/// Remove the figures an earlier single-seed run's `report` (its text) links from the top of
/// `dir`, once a `--seeds` run has run every seed (its figures are in the `seed-N/` folders): a
/// plain file name ending in `.png`, each with its `.svg` twin. Nothing else is touched, so a
/// folder that holds other images keeps them.
fn remove_linked_figures(dir: &Path, report: &str) -> Result<()> {
    let mut removed = 0;
    for link in report.split("](").skip(1) {
        let Some(name) = link.split(')').next().and_then(|n| n.strip_suffix(".png")) else {
            continue;
        };
        if name.is_empty() || name.contains(['/', '\\']) || name.starts_with('.') {
            continue;
        }
        for ext in ["png", "svg"] {
            let path = dir.join(format!("{name}.{ext}"));
            if path.is_file() {
                std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
                removed += 1;
            }
        }
    }
    if removed > 0 {
        say!("removed {removed} figures of an earlier single-seed run from {}", dir.display());
    }
    Ok(())
}

/// The entries of `dir`, sorted (a missing folder has none).
fn entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    match std::fs::read_dir(dir) {
        Ok(rd) => {
            for e in rd {
                out.push(e.with_context(|| format!("reading {}", dir.display()))?.path());
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
    }
    out.sort();
    Ok(out)
}

/// `DIR/report.md` of a `--seeds` run: what the folder holds, then the table of `seeds.md`
/// (`table`: every seed's value, median and range, with links to each seed's report). It
/// replaces a single-seed report an earlier run may have left there.
fn write_index(dir: &Path, seeds: &[u64], table: &str, cmd: &Command<'_>) -> Result<()> {
    let md = format!(
        "{}{} over {} run seeds\n\nCommand: `{}`. The whole reproduction ran once per seed, each into its own folder \
         (`seed-N/`) with its own report and figures. `numbers.csv` here holds the median of every number over \
         the seeds; the table below (also `seeds.md`, and `seeds.csv`) holds every seed's value. A ratio's median is \
         the median of the per-seed ratios, not the ratio of the medians of its parts. The note column is the first \
         seed's note. Figures or files in this folder that none of these links name are left from an earlier \
         run.\n\n{table}",
        cmd.title,
        quick_mark(&cmd.line),
        seeds.len(),
        cmd.line
    );
    let path = dir.join("report.md");
    std::fs::write(&path, md).with_context(|| format!("writing {}", path.display()))
}

/// " (quick)" when the command line has `--quick`, for the titles of the merged tables.
fn quick_mark(line: &str) -> &'static str {
    if line.split_whitespace().any(|w| w == "--quick") {
        " (quick)"
    } else {
        ""
    }
}

/// The note of a ratio row's median: it is not the ratio of the other rows' medians.
const RATIO_MEDIAN: &str = "median of the per-seed ratios, not the ratio of the medians";

/// A seed's note cell for the merged tables: the first seed's note, marked where the seeds' notes
/// differ, with `|` escaped for Markdown.
fn note_cell(r: &Merged) -> String {
    let mut n = r.note.replace('|', "\\|");
    if r.notes_differ {
        n.push_str(" (notes differ across seeds)");
    }
    n
}

/// One line of a reproduction's `numbers.csv`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NumberRow {
    key: String,
    paper: String,
    ours: String,
    unit: String,
    note: String,
}

/// The "paper | ours" lines printed for a report's numbers (`rows`, its `numbers.csv`).
fn numbers_table(rows: &[NumberRow]) -> Vec<String> {
    let width = rows.iter().map(|r| r.key.chars().count()).max().unwrap_or(0);
    rows.iter().map(|r| format!("{:<width$} paper {:>8}  ours {:>8} {}", r.key, r.paper, r.ours, r.unit)).collect()
}

/// The closing table of a `--seeds` run, one line per key: the paper's value, the median and the
/// range over the seeds. The key column is as wide as the longest key, as in [`numbers_table`]
/// (it was 48 characters, and the longer keys, such as
/// `two_sinks_a1_over_b1_within_10pct_share_reference_code`, pushed their lines out of line).
fn medians_table(rows: &[Merged]) -> Vec<String> {
    let width = rows.iter().map(|r| r.key.chars().count()).max().unwrap_or(0);
    rows.iter()
        .map(|r| {
            format!(
                "{:<width$} paper {:>8}  median {:>8}  min … max {} … {} {}",
                r.key,
                r.paper,
                fmt_for(&r.key, r.median()),
                fmt_for(&r.key, r.min()),
                fmt_for(&r.key, r.max()),
                r.unit
            )
        })
        .collect()
}

fn read_numbers(path: &Path) -> Result<Vec<NumberRow>> {
    let mut r = csv::Reader::from_path(path)?;
    let mut rows = Vec::new();
    for rec in r.records() {
        let rec = rec?;
        let f = |i: usize| rec.get(i).unwrap_or_default().to_string();
        rows.push(NumberRow { key: f(0), paper: f(1), ours: f(2), unit: f(3), note: f(4) });
    }
    Ok(rows)
}

/// A key's values over the seeds.
#[derive(Debug, PartialEq)]
pub(crate) struct Merged {
    key: String,
    paper: String,
    unit: String,
    /// The first seed's note (notes can carry seed-specific detail; the first is kept as an
    /// example, marked with its seed).
    note: String,
    /// Another seed's note says something else (e.g. that its knee is only a bound).
    notes_differ: bool,
    /// One entry per seed: the number, or `None` where that seed gave none (`n/a`).
    values: Vec<Option<f64>>,
    /// One entry per seed: whether its number is only a bound ([`bound_of`]).
    bounds: Vec<Bound>,
}

/// Whether a seed's number is exact or only one side of a bound (its note says so).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bound {
    Exact,
    /// The real value is at least this (a knee at the top of its sweep).
    AtLeast,
    /// The real value is at most this (a ratio over a rate that is only a lower bound, a
    /// boundary below its sweep).
    AtMost,
}

impl Bound {
    /// The cell's prefix in seeds.md.
    fn mark(self) -> &'static str {
        match self {
            Bound::Exact => "",
            Bound::AtLeast => "≥ ",
            Bound::AtMost => "≤ ",
        }
    }
}

/// Read from a seed's note whether its number of `key` is only a bound: the reproductions say
/// so in words (`reproduce::knee_note`, the best fixed rate's and the stability sweeps' notes).
/// A knee or best fixed rate that is only a lower bound is itself one (≥); a ratio over it is
/// then an upper bound (≤).
fn bound_of(key: &str, note: &str) -> Bound {
    if note.contains("so this ratio is an upper bound") || note.contains("lies below the sweep") {
        Bound::AtMost
    } else if note.contains("only a lower bound") {
        if key.contains("_over_") {
            Bound::AtMost
        } else if key.contains("knee_pps") || key.contains("best_fixed_fair_pps") {
            Bound::AtLeast
        } else {
            Bound::Exact
        }
    } else {
        Bound::Exact
    }
}

/// What a seed's `n/a` means for the statistics of a key.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Censor {
    /// Nothing was measured: the seed is left out.
    Drop,
    /// Below the swept range: a knee or best fixed rate whose lowest swept point already failed.
    Below,
    /// Above the swept range: no unstable ε up to the largest swept one, or a ratio whose knee
    /// denominator was below the sweep.
    Above,
}

/// How `n/a` counts for `key` (every profile's variant of it). For the ratio keys this assumes
/// the knee in the denominator is what was missing; a full reproduction always measures the
/// numerators.
fn censor(key: &str) -> Censor {
    // (`rcrt_over_reliable_knee` divides by the larger of the knee and a measured goodput since
    // session 18: its n/a can only be a missing plateau, so it is dropped, not censored.)
    if key.contains("first_unstable_eps") || key.contains("over_best_fixed") {
        Censor::Above
    } else if key.contains("knee_pps") || key.contains("best_fixed_fair_pps") {
        Censor::Below
    } else {
        Censor::Drop
    }
}

impl Merged {
    /// The values in ascending order, `None` (an `n/a` beyond one end of the sweep) placed at
    /// that end; the seeds without a measurement are left out.
    fn sorted(&self) -> Vec<Option<f64>> {
        let c = censor(&self.key);
        let mut v: Vec<Option<f64>> =
            self.values.iter().copied().filter(|x| x.is_some() || c != Censor::Drop).collect();
        v.sort_by(|a, b| match (a, b) {
            (Some(x), Some(y)) => x.total_cmp(y),
            (None, None) => std::cmp::Ordering::Equal,
            (None, Some(_)) if c == Censor::Below => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some(_), None) if c == Censor::Below => std::cmp::Ordering::Greater,
            (Some(_), None) => std::cmp::Ordering::Less,
        });
        v
    }
    /// Median over the seeds (the mean of the middle two for an even count). Seeds without a
    /// measurement are left out; a value beyond the swept range counts at its end, and makes the
    /// median `n/a` when it falls in the middle.
    pub(crate) fn median(&self) -> Option<f64> {
        let v = self.sorted();
        match v.len() {
            0 => None,
            n if n % 2 == 1 => v[n / 2],
            n => Some((v[n / 2 - 1]? + v[n / 2]?) / 2.0),
        }
    }
    fn min(&self) -> Option<f64> {
        self.sorted().first().copied().flatten()
    }
    fn max(&self) -> Option<f64> {
        self.sorted().last().copied().flatten()
    }
}

/// The tables of every seed, key by key, in the first seed's order. Every seed's reproduction
/// writes the same keys once each, with the same paper value and unit, and every value is a
/// number or `n/a`: anything else is an error rather than a silent gap or mix.
pub(crate) fn merge(seeds: &[u64], tables: &[Vec<NumberRow>]) -> Result<Vec<Merged>> {
    let first = tables.first().context("no seed ran")?;
    for (s, t) in seeds.iter().zip(tables) {
        let mut seen = std::collections::HashSet::new();
        for x in t {
            anyhow::ensure!(seen.insert(x.key.as_str()), "seed {s}: numbers.csv has key {} twice", x.key);
            anyhow::ensure!(
                first.iter().any(|r| r.key == x.key),
                "seed {s}: numbers.csv has key {}, which seed {} has not",
                x.key,
                seeds[0]
            );
        }
    }
    let mut out = Vec::new();
    for r in first {
        let mut values = Vec::new();
        let mut bounds = Vec::new();
        let mut notes_differ = false;
        for (s, t) in seeds.iter().zip(tables) {
            let row = t
                .iter()
                .find(|x| x.key == r.key)
                .with_context(|| format!("seed {s}: numbers.csv has no key {}", r.key))?;
            anyhow::ensure!(
                row.paper == r.paper && row.unit == r.unit,
                "seed {s}: key {} has paper value {:?} and unit {:?}, seed {} {:?} and {:?}",
                r.key,
                row.paper,
                row.unit,
                seeds[0],
                r.paper,
                r.unit
            );
            let v = match row.ours.trim() {
                "n/a" => None,
                t => Some(t.parse::<f64>().ok().filter(|v| v.is_finite()).with_context(|| {
                    format!("seed {s}: key {} has the value {t:?}, neither a number nor n/a", r.key)
                })?),
            };
            bounds.push(if v.is_some() { bound_of(&r.key, &row.note) } else { Bound::Exact });
            values.push(v);
            notes_differ |= row.note != r.note;
        }
        out.push(Merged {
            key: r.key.clone(),
            paper: r.paper.clone(),
            unit: r.unit.clone(),
            note: r.note.clone(),
            notes_differ,
            values,
            bounds,
        });
    }
    Ok(out)
}

fn fmt(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".into(), crate::reproduce::sig4)
}

/// A seed's value (or a median, minimum, maximum) of `key` for seeds.csv, seeds.md and the
/// console: a missing number says which kind of missing it is (beyond the sweep at one end, or
/// nothing measured).
fn fmt_for(key: &str, v: Option<f64>) -> String {
    match (v, censor(key)) {
        (Some(_), _) | (None, Censor::Drop) => fmt(v),
        (None, Censor::Above) => "above range".into(),
        (None, Censor::Below) => "below range".into(),
    }
}

/// Write `numbers.csv`, `seeds.csv` and `seeds.md`; returns the body of `seeds.md` below its
/// title (the links and the table).
fn write(dir: &Path, seeds: &[u64], rows: &[Merged], command: &str) -> Result<String> {
    let range = format!("{}–{}", seeds[0], seeds[seeds.len() - 1]);
    // numbers.csv: the common format, `ours` = the median over the seeds.
    let mut w = csv::Writer::from_path(dir.join("numbers.csv"))?;
    w.write_record(["key", "paper", "ours", "unit", "note"])?;
    for r in rows {
        let missing = r.values.iter().filter(|v| v.is_none()).count();
        let mut note = format!("median over run seeds {range} (per seed: seeds.csv)");
        if r.unit == "ratio" {
            write!(note, "; {RATIO_MEDIAN}")?;
        }
        if missing > 0 {
            match censor(&r.key) {
                Censor::Above => {
                    write!(note, "; {missing} of {} seeds beyond the swept range, counted above it", seeds.len())?
                }
                Censor::Below => {
                    write!(note, "; {missing} of {} seeds below the swept range, counted below it", seeds.len())?
                }
                Censor::Drop => write!(note, "; {missing} of {} seeds gave no number", seeds.len())?,
            }
        }
        let bounded = r.bounds.iter().filter(|b| **b != Bound::Exact).count();
        if bounded > 0 {
            write!(
                note,
                "; {bounded} of {} seeds' values are only bounds (marked ≥ or ≤ in seeds.md, column `bounds` of \
                 seeds.csv) and enter the median as if exact",
                seeds.len()
            )?;
        }
        if !r.note.is_empty() {
            write!(note, "; seed {}: {}", seeds[0], r.note)?;
        }
        if r.notes_differ {
            write!(note, " (the other seeds' notes differ: see each seed-N/numbers.csv)")?;
        }
        w.write_record([r.key.as_str(), r.paper.as_str(), &fmt(r.median()), r.unit.as_str(), &note])?;
    }
    w.flush()?;
    // seeds.csv: one column per seed.
    let mut w = csv::Writer::from_path(dir.join("seeds.csv"))?;
    let mut head: Vec<String> = vec!["key".into(), "paper".into()];
    head.extend(seeds.iter().map(|s| format!("seed_{s}")));
    head.extend(["median", "min", "max", "unit", "bounds"].map(String::from));
    w.write_record(&head)?;
    for r in rows {
        let mut rec = vec![r.key.clone(), r.paper.clone()];
        rec.extend(r.values.iter().map(|v| fmt_for(&r.key, *v)));
        rec.extend([fmt_for(&r.key, r.median()), fmt_for(&r.key, r.min()), fmt_for(&r.key, r.max()), r.unit.clone()]);
        // The seeds whose value is only a bound, e.g. `seed_2 ≤; seed_3 ≤` (empty: all exact).
        let bounds: Vec<String> = seeds
            .iter()
            .zip(&r.bounds)
            .filter(|(_, b)| **b != Bound::Exact)
            .map(|(s, b)| format!("seed_{s} {}", b.mark().trim()))
            .collect();
        rec.push(bounds.join("; "));
        w.write_record(&rec)?;
    }
    w.flush()?;
    // seeds.md: the same table, with links to each seed's report.
    let mut md = String::new();
    for s in seeds {
        writeln!(md, "- seed {s}: [report](seed-{s}/report.md)")?;
    }
    writeln!(
        md,
        "\n| key | paper | {} | median | min … max | unit | note (seed {}) |",
        seeds.iter().map(|s| format!("seed {s}")).collect::<Vec<_>>().join(" | "),
        seeds[0]
    )?;
    writeln!(md, "|---|---|{}---|---|---|---|", "---|".repeat(seeds.len()))?;
    for r in rows {
        let per: Vec<String> =
            r.values.iter().zip(&r.bounds).map(|(v, b)| format!("{}{}", b.mark(), fmt_for(&r.key, *v))).collect();
        writeln!(
            md,
            "| {} | {} | {} | {} | {} … {} | {} | {}{} |",
            r.key,
            r.paper,
            per.join(" | "),
            fmt_for(&r.key, r.median()),
            fmt_for(&r.key, r.min()),
            fmt_for(&r.key, r.max()),
            r.unit,
            if r.unit == "ratio" { format!("{RATIO_MEDIAN}. ") } else { String::new() },
            note_cell(r)
        )?;
    }
    std::fs::write(
        dir.join("seeds.md"),
        format!("# Numbers over run seeds {range}{}\n\nCommand: `{command}`.\n\n{md}", quick_mark(command)),
    )?;
    Ok(md)
}

/// What a failed run left in `dir`: the earlier results as they were, or, where there were none
/// (nothing but hidden staging and lock files), nothing ("left as they were" suggested results
/// that never existed); `kept_aside`: some results were written, but kept out of `dir`.
fn left_note(dir: &Path, kept_aside: bool) -> String {
    let earlier = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().any(|e| !e.file_name().to_string_lossy().starts_with('.')))
        .unwrap_or(false);
    match (earlier, kept_aside) {
        (true, _) => format!("the results in {} were left as they were", dir.display()),
        (false, false) => format!("no result was written into {}", dir.display()),
        (false, true) => format!("nothing was moved into {}", dir.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(key: &str, ours: &str) -> NumberRow {
        NumberRow { key: key.into(), paper: "1".into(), ours: ours.into(), unit: "ratio".into(), note: String::new() }
    }

    #[test]
    fn seed_list_checks_its_bounds() {
        assert_eq!(seed_list(None, 3).unwrap(), vec![1, 2, 3]);
        assert_eq!(seed_list(Some(7), 2).unwrap(), vec![7, 8]);
        assert!(seed_list(None, 0).is_err());
        assert!(seed_list(None, MAX_SEEDS + 1).is_err());
        assert!(seed_list(Some(u64::MAX), 2).is_err());
    }

    /// The closing table's columns line up whatever the keys' lengths (a 55-character key, as
    /// `reproduce rcrt` has, pushed its line out of the 48-character key column).
    #[test]
    fn medians_table_aligns_long_keys() {
        let long = "two_sinks_a1_over_b1_within_10pct_share_reference_code";
        let t1 = vec![row("a", "0.5"), row(long, "1")];
        let t2 = vec![row("a", "0.7"), row(long, "1")];
        let lines = medians_table(&merge(&[1, 2], &[t1, t2]).unwrap());
        let at: Vec<usize> = lines.iter().map(|l| l.find(" paper ").unwrap()).collect();
        assert_eq!(at, [long.len(), long.len()], "{lines:#?}");
        assert!(lines[0].starts_with("a ") && lines[0].contains("median      0.6"), "{lines:#?}");
    }

    /// Medians skip the seeds without a number; a key missing from one seed is an error.
    #[test]
    fn merge_takes_medians_over_the_seeds_with_numbers() {
        let t1 = vec![row("a", "0.100"), row("b", "n/a")];
        let t2 = vec![row("a", "0.300"), row("b", "2.000")];
        let t3 = vec![row("b", "4.000"), row("a", "0.200")];
        let m = merge(&[1, 2, 3], &[t1.clone(), t2, t3]).unwrap();
        assert_eq!(m[0].key, "a");
        assert_eq!(m[0].median(), Some(0.2));
        assert_eq!((m[0].min(), m[0].max()), (Some(0.1), Some(0.3)));
        assert_eq!(m[1].values, vec![None, Some(2.0), Some(4.0)]);
        assert_eq!(m[1].median(), Some(3.0));
        let e = merge(&[1, 2], &[t1, vec![row("a", "1")]]).unwrap_err().to_string();
        assert!(e.contains("seed 2") && e.contains("no key b"), "{e}");
    }

    /// A knee below the swept range counts as the lowest value, a stability boundary above it as
    /// the highest, instead of being left out (which moved knee medians up and boundary medians
    /// down); a median that lands on such a seed is `n/a`.
    #[test]
    fn out_of_range_seeds_count_at_their_end_of_the_sweep() {
        let seeds = [1, 2, 3, 4];
        let tables: Vec<Vec<NumberRow>> = [("0.6", "0.3"), ("n/a", "0.5"), ("0.8", "n/a"), ("0.8", "0.3")]
            .iter()
            .map(|(k, e)| vec![row("reliable_knee_pps", k), row("stability_30node_first_unstable_eps", e)])
            .collect();
        let m = merge(&seeds, &tables).unwrap();
        // Knee: n/a (below), 0.6, 0.8, 0.8: median 0.7; dropping the n/a would give 0.8.
        assert_eq!(m[0].median(), Some(0.7));
        assert_eq!((m[0].min(), m[0].max()), (None, Some(0.8)));
        // Boundary: 0.3, 0.3, 0.5, n/a (above): median 0.4 whether or not the n/a counts here,
        // but with three seeds 0.3, 0.5, n/a the median is 0.5, not 0.4.
        assert_eq!(m[1].median(), Some(0.4));
        assert_eq!((m[1].min(), m[1].max()), (Some(0.3), None));
        let m3 = merge(&seeds[1..], &tables[1..]).unwrap();
        assert_eq!(m3[1].median(), Some(0.5));
        // Two of three knees below the sweep: the median itself is below it.
        let low: Vec<Vec<NumberRow>> =
            ["n/a", "n/a", "0.4"].iter().map(|k| vec![row("best_effort_knee_pps", k)]).collect();
        assert_eq!(merge(&[1, 2, 3], &low).unwrap()[0].median(), None);
        // Any other key still leaves out the seeds without a number.
        assert_eq!(censor("feedback_ratio"), Censor::Drop);
        assert_eq!(censor("rcrt_over_reliable_knee_reference_code"), Censor::Drop);
        assert_eq!(censor("ifrc_over_best_fixed"), Censor::Above);
    }

    /// A key only a later seed has, a key twice, a paper value or unit that differs, and a value
    /// that is neither a number nor n/a are errors naming the seed (they were dropped, taken
    /// twice, taken from seed 1 and counted as "no number"); notes that differ are flagged.
    /// A seed whose note says its number is only a bound is marked so in seeds.md and seeds.csv,
    /// and numbers.csv's note says the median includes bounds.
    #[test]
    fn bounds_are_read_from_the_notes_and_marked() {
        let knee_bound = "largest swept load …; every swept rate passed, so R is only a lower bound of the knee";
        assert_eq!(bound_of("best_effort_knee_pps", knee_bound), Bound::AtLeast);
        assert_eq!(bound_of("ifrc_best_fixed_fair_pps", knee_bound), Bound::AtLeast);
        assert_eq!(bound_of("cmp_ifrc_over_best_fixed", knee_bound), Bound::AtMost);
        assert_eq!(bound_of("goodput_spread", knee_bound), Bound::Exact);
        assert_eq!(bound_of("ifrc_over_best_fixed", "…, so this ratio is an upper bound"), Bound::AtMost);
        let eps = "the lowest swept ε is already unstable: the boundary lies below the sweep";
        assert_eq!(bound_of("stability_2node_first_unstable_eps", eps), Bound::AtMost);
        assert_eq!(bound_of("best_effort_knee_pps", "largest swept load …"), Bound::Exact);
        let with = |key: &str, ours: &str, note: &str| NumberRow { note: note.into(), ..row(key, ours) };
        let t1 = vec![with("best_effort_knee_pps", "1.6", knee_bound), with("x_over_y", "0.5", "")];
        let t2 = vec![with("best_effort_knee_pps", "1.2", "largest swept load …"), with("x_over_y", "0.7", "")];
        let m = merge(&[1, 2], &[t1, t2]).unwrap();
        assert_eq!(m[0].bounds, [Bound::AtLeast, Bound::Exact]);
        let dir = std::env::temp_dir().join(format!("wsn-seeds-bounds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let md = write(&dir, &[1, 2], &m, "wsn reproduce rcrt --seeds 2").unwrap();
        let line = md.lines().find(|l| l.starts_with("| best_effort_knee_pps |")).unwrap();
        assert!(line.contains("| ≥ 1.6 | 1.2 |"), "{line}");
        let csv = std::fs::read_to_string(dir.join("seeds.csv")).unwrap();
        assert!(csv.lines().next().unwrap().ends_with(",unit,bounds"), "{csv}");
        assert!(csv.lines().nth(1).unwrap().ends_with(",seed_1 ≥"), "{csv}");
        assert!(csv.lines().nth(2).unwrap().ends_with(",ratio,"), "{csv}");
        let numbers = std::fs::read_to_string(dir.join("numbers.csv")).unwrap();
        assert!(numbers.contains("1 of 2 seeds' values are only bounds"), "{numbers}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn merge_refuses_tables_that_do_not_match() {
        let t1 = vec![row("a", "1")];
        let cases: Vec<(Vec<NumberRow>, &str)> = vec![
            (vec![row("a", "2"), row("b", "3")], "seed 2: numbers.csv has key b, which seed 1 has not"),
            (vec![row("a", "2"), row("a", "3")], "seed 2: numbers.csv has key a twice"),
            (vec![NumberRow { unit: "pkt/s".into(), ..row("a", "2") }], "unit \"pkt/s\""),
            (vec![NumberRow { paper: "2".into(), ..row("a", "2") }], "paper value \"2\""),
            (vec![row("a", "> 3600")], "seed 2: key a has the value \"> 3600\", neither a number nor n/a"),
        ];
        for (t2, says) in cases {
            let e = merge(&[1, 2], &[t1.clone(), t2]).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        }
        let noted = vec![NumberRow { note: "knee at the top of the sweep".into(), ..row("a", "2") }];
        let m = merge(&[1, 2], &[t1.clone(), noted]).unwrap();
        assert!(m[0].notes_differ);
        assert!(!merge(&[1, 2], &[t1.clone(), t1]).unwrap()[0].notes_differ);
        assert_eq!(fmt_for("stability_30node_first_unstable_eps", None), "above range");
        assert_eq!(fmt_for("best_effort_knee_pps", None), "below range");
        assert_eq!(fmt_for("feedback_ratio", None), "n/a");
    }

    fn test_cmd() -> Command<'static> {
        Command { title: "# Test", line: "wsn test --quick".into() }
    }

    /// A folder whose reports another command wrote (at its top, or in a `--seeds` run's seed
    /// folders) is refused; the same command's, an old index that names no command, or no
    /// report at all are fine.
    #[test]
    fn another_commands_folder_is_refused() {
        let dir = std::env::temp_dir().join(format!("wsn-seeds-owner-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("seed-1")).unwrap();
        check_owner(&dir, "# RCRT vs IFRC").unwrap();
        std::fs::write(dir.join("report.md"), "# Reproduction over 1 run seeds\n").unwrap();
        std::fs::write(dir.join("seed-1/numbers.csv"), "key,paper,ours,unit,note\n").unwrap();
        std::fs::write(dir.join("seed-1/report.md"), "# RCRT reproduction (quick)\n").unwrap();
        check_owner(&dir, "# RCRT reproduction").unwrap();
        let e = check_owner(&dir, "# RCRT vs IFRC").unwrap_err().to_string();
        assert!(e.contains("seed-1/report.md") && e.contains("another command"), "{e}");
        std::fs::remove_dir_all(dir.join("seed-1")).unwrap();
        std::fs::write(dir.join("report.md"), "# RCRT vs IFRC over 5 run seeds\n").unwrap();
        check_owner(&dir, "# RCRT vs IFRC").unwrap();
        assert!(check_owner(&dir, "# RCRT").is_err(), "a prefix of another title is not the same title");
        assert!(check_owner(&dir, "# IFRC reproduction").is_err());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A run that fails into a folder without earlier results says that nothing was written,
    /// not that earlier results were kept; with earlier results, that they were kept.
    #[test]
    fn a_failed_first_run_says_nothing_was_written() {
        let dir = std::env::temp_dir().join(format!("wsn-seeds-first-fail-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let one = SeedArgs { seed: None, seeds: 1 };
        let e = format!("{:#}", one.run(&dir, false, &test_cmd(), |sub, _| single(&sub, "1.0", true)).unwrap_err());
        assert!(e.contains("no result was written into") && !e.contains("left as they were"), "{e}");
        let two = SeedArgs { seed: None, seeds: 2 };
        let e = format!(
            "{:#}",
            two.run(&dir, false, &test_cmd(), |_, _| -> Result<()> { anyhow::bail!("bad argument") }).unwrap_err()
        );
        assert!(e.contains("no result was written into") && e.contains("bad argument"), "{e}");
        // A later seed's failure keeps the finished ones in the staging folder: nothing was moved
        // into the (empty) folder, but results were written.
        let e = format!(
            "{:#}",
            two.run(&dir, false, &test_cmd(), |sub, s| if s == Some(2) {
                anyhow::bail!("boom")
            } else {
                single(&sub, "1.0", false)
            })
            .unwrap_err()
        );
        assert!(e.contains("nothing was moved into") && e.contains("the seeds that finished (1)"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
        one.run(&dir, false, &test_cmd(), |sub, _| single(&sub, "1.0", false)).unwrap();
        let e = format!("{:#}", one.run(&dir, false, &test_cmd(), |sub, _| single(&sub, "2.0", true)).unwrap_err());
        assert!(e.contains("left as they were"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A run that fails at its second seed leaves the folder as it was (the earlier run's
    /// seed-N/ folders and tables), and says which seed failed; a later run with fewer seeds
    /// removes the folders of the seeds it does not have.
    #[test]
    fn a_failed_seed_leaves_the_earlier_run() {
        let dir = std::env::temp_dir().join(format!("wsn-seeds-fail-{}", std::process::id()));
        let write = |sub: PathBuf, s: u64, v: u64| -> Result<()> {
            std::fs::create_dir_all(&sub)?;
            std::fs::write(sub.join("numbers.csv"), format!("key,paper,ours,unit,note\nx,1,{}.0,ratio,\n", s * v))?;
            Ok(())
        };
        over_seeds(&dir, &[1, 2, 3], &test_cmd(), |sub, s| write(sub, s, 10)).unwrap();
        let before = std::fs::read_to_string(dir.join("seeds.csv")).unwrap();
        let e = over_seeds(
            &dir,
            &[1, 2],
            &test_cmd(),
            |sub, s| if s == 2 { anyhow::bail!("boom") } else { write(sub, s, 100) },
        )
        .unwrap_err();
        let e = format!("{e:#}");
        assert!(e.contains("seed 2") && e.contains("boom") && e.contains("left as they were"), "{e}");
        assert_eq!(std::fs::read_to_string(dir.join("seeds.csv")).unwrap(), before);
        let seed1 = std::fs::read_to_string(dir.join("seed-1/numbers.csv")).unwrap();
        assert!(seed1.contains("x,1,10.0"), "seed 1's folder was overwritten: {seed1}");
        // The seed that finished is kept in the staging folder the message names.
        let hidden = || -> Vec<PathBuf> {
            entries(&dir).unwrap().into_iter().filter(|p| p.to_string_lossy().contains(".wsn-")).collect()
        };
        let kept = hidden();
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(e.contains(&kept[0].display().to_string()), "{e}");
        assert!(std::fs::read_to_string(kept[0].join("seed-1/numbers.csv")).unwrap().contains("x,1,100.0"));
        // A folder of a seed's name that no run wrote is refused before anything changes.
        std::fs::create_dir_all(dir.join("seed-9/mine")).unwrap();
        let e = over_seeds(&dir, &[9], &test_cmd(), |_, _| panic!("a seed ran before the refusal")).unwrap_err();
        let e = format!("{e:#}");
        assert!(e.contains("seed-9 exists and was not written by a run"), "{e}");
        assert!(dir.join("seed-9/mine").is_dir());
        assert_eq!(std::fs::read_to_string(dir.join("seeds.csv")).unwrap(), before);
        std::fs::remove_dir_all(dir.join("seed-9")).unwrap();
        over_seeds(&dir, &[1, 2], &test_cmd(), |sub, s| write(sub, s, 100)).unwrap();
        assert!(hidden().is_empty(), "the next run removes the leftovers: {:?}", hidden());
        assert!(dir.join("seed-1").is_dir() && dir.join("seed-2").is_dir() && !dir.join("seed-3").exists());
        assert!(std::fs::read_to_string(dir.join("seed-2/numbers.csv")).unwrap().contains("x,1,200.0"));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Every file under `dir` (hidden ones too) with its bytes, and every folder.
    fn snapshot(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
        let mut out = Vec::new();
        for p in entries(dir).unwrap() {
            if p.is_dir() {
                out.push((p.clone(), None));
                out.extend(snapshot(&p));
            } else {
                out.push((p.clone(), Some(std::fs::read(&p).unwrap())));
            }
        }
        out
    }

    /// A single run's files (`v` marks their contents), or an error once some are written.
    fn single(sub: &Path, v: &str, fail: bool) -> Result<()> {
        std::fs::create_dir_all(sub)?;
        std::fs::write(sub.join("fig.png"), format!("png {v}"))?;
        std::fs::write(sub.join("fig.svg"), format!("svg {v}"))?;
        std::fs::write(sub.join("numbers.csv"), format!("key,paper,ours,unit,note\nx,1,{v},ratio,\n"))?;
        anyhow::ensure!(!fail, "writing report.md: disk full");
        std::fs::write(sub.join("report.md"), format!("# Test (quick)\n\n![Fig.](fig.png)\n{v}\n"))?;
        Ok(())
    }

    /// A run that fails while it writes its report, or whose file would go where a folder is,
    /// leaves the earlier results byte for byte as they were, a single-seed run's as a `--seeds`
    /// run's; so does a `--seeds` run refused for a folder in its way, before its first seed
    /// runs.
    #[test]
    fn a_failed_report_write_leaves_the_earlier_results() {
        let dir = std::env::temp_dir().join(format!("wsn-seeds-report-fail-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let one = SeedArgs { seed: None, seeds: 1 };
        let two = SeedArgs { seed: None, seeds: 2 };
        one.run(&dir, false, &test_cmd(), |sub, _| single(&sub, "1.0", false)).unwrap();
        let before = snapshot(&dir);
        assert_eq!(before.len(), 4, "{before:?}");
        let e = one.run(&dir, false, &test_cmd(), |sub, _| single(&sub, "2.0", true)).unwrap_err();
        let e = format!("{e:#}");
        assert!(e.contains("disk full") && e.contains("left as they were"), "{e}");
        assert_eq!(snapshot(&dir), before);
        // A folder where the new figure goes: refused once everything is written, nothing moved;
        // the complete new results are kept in the staging folder the error names.
        std::fs::remove_file(dir.join("fig.svg")).unwrap();
        std::fs::create_dir(dir.join("fig.svg")).unwrap();
        let before = snapshot(&dir);
        let e = format!("{:#}", one.run(&dir, false, &test_cmd(), |sub, _| single(&sub, "2.0", false)).unwrap_err());
        assert!(e.contains("fig.svg is a folder"), "{e}");
        let after = snapshot(&dir);
        let (kept, rest): (Vec<_>, Vec<_>) =
            after.into_iter().partition(|(p, _)| p.to_string_lossy().contains(".wsn-staging-"));
        assert_eq!(rest, before);
        assert!(e.contains(&kept[0].0.display().to_string()), "{e}");
        assert!(kept
            .iter()
            .any(|(p, c)| p.ends_with("report.md") && c.as_deref().is_some_and(|c| c.ends_with(b"2.0\n"))));
        std::fs::remove_dir_all(&kept[0].0).unwrap();
        std::fs::remove_dir(dir.join("fig.svg")).unwrap();
        // A folder where the report goes is refused before the run.
        std::fs::create_dir(dir.join("report.md.tmp")).unwrap();
        std::fs::rename(dir.join("report.md"), dir.join("report.md.tmp/r")).unwrap();
        std::fs::rename(dir.join("report.md.tmp"), dir.join("report.md")).unwrap();
        let ran = std::cell::Cell::new(false);
        let e = one.run(&dir, false, &test_cmd(), |sub, _| {
            ran.set(true);
            single(&sub, "2.0", false)
        });
        assert!(format!("{:#}", e.unwrap_err()).contains("report.md is a folder") && !ran.get());
        std::fs::rename(dir.join("report.md/r"), dir.join("r")).unwrap();
        std::fs::remove_dir(dir.join("report.md")).unwrap();
        std::fs::rename(dir.join("r"), dir.join("report.md")).unwrap();
        // A --seeds run refused for a folder where its table goes, or a seed folder no run
        // wrote, before any seed runs.
        for (path, says) in [("seeds.md", "seeds.md is a folder"), ("seed-2", "seed-2 exists and was not written")] {
            std::fs::create_dir(dir.join(path)).unwrap();
            let before = snapshot(&dir);
            let ran = std::cell::Cell::new(0);
            let e = two.run(&dir, false, &test_cmd(), |sub, s| {
                ran.set(ran.get() + 1);
                single(&sub, &format!("{}.0", s.unwrap_or(0)), false)
            });
            let e = format!("{:#}", e.unwrap_err());
            assert!(e.contains(says), "{e}");
            assert_eq!(ran.get(), 0, "a seed ran before the refusal");
            assert_eq!(snapshot(&dir), before);
            std::fs::remove_dir(dir.join(path)).unwrap();
        }
        // A --seeds run replaces the single run (its figures go); a single run that fails then
        // leaves the --seeds run as it was; one that succeeds replaces it.
        two.run(&dir, false, &test_cmd(), |sub, s| single(&sub, &format!("{}.0", s.unwrap_or(0)), false)).unwrap();
        assert!(!dir.join("fig.png").exists() && dir.join("seed-2/fig.png").is_file());
        let index = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(index.starts_with("# Test (quick) over 2 run seeds"), "{index}");
        let before = snapshot(&dir);
        assert!(one.run(&dir, false, &test_cmd(), |sub, _| single(&sub, "3.0", true)).is_err());
        assert_eq!(snapshot(&dir), before);
        one.run(&dir, false, &test_cmd(), |sub, _| single(&sub, "3.0", false)).unwrap();
        let names: Vec<PathBuf> = snapshot(&dir).into_iter().map(|(p, _)| p).collect();
        let want: Vec<PathBuf> =
            ["fig.png", "fig.svg", "numbers.csv", "report.md"].iter().map(|n| dir.join(n)).collect();
        assert_eq!(names, want);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The command line of a `--seeds` run's index and `seeds.md` gives its `--seeds` and
    /// `--seed`, so that it reproduces the run.
    #[test]
    fn the_command_line_names_the_seeds() {
        let dir = std::env::temp_dir().join(format!("wsn-seeds-command-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let args = SeedArgs { seed: Some(5), seeds: 2 };
        args.run(&dir, false, &test_cmd(), |sub, s| single(&sub, &format!("{}.0", s.unwrap_or(0)), false)).unwrap();
        let line = "Command: `wsn test --quick --seeds 2 --seed 5`.";
        assert!(std::fs::read_to_string(dir.join("report.md")).unwrap().contains(line));
        assert!(std::fs::read_to_string(dir.join("seeds.md")).unwrap().contains(line));
        assert_eq!(SeedArgs { seed: None, seeds: 3 }.options(), " --seeds 3");
        assert_eq!(SeedArgs { seed: None, seeds: 1 }.options(), "");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Each seed's report says which seed of the `--seeds` run it is and points to the medians;
    /// the merged tables say that a ratio's median is the median of the per-seed ratios, carry
    /// the first seed's note (marked where the seeds' notes differ) and name a quick run.
    #[test]
    fn seed_reports_and_merged_notes_say_what_they_are() {
        let dir = std::env::temp_dir().join(format!("wsn-seeds-notes-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        over_seeds(&dir, &[1, 2], &test_cmd(), |sub, s| {
            std::fs::create_dir_all(&sub)?;
            let report =
                format!("# Test (quick)\n\n{}\n{}\n", crate::reproduce::seed_line(s), crate::reproduce::QUOTE_MEDIANS);
            std::fs::write(sub.join("report.md"), report)?;
            let csv = format!("key,paper,ours,unit,note\nr,1,{s},ratio,note of seed {s}\nq,1,{s},pkt/s,same\n");
            std::fs::write(sub.join("numbers.csv"), csv)?;
            Ok(())
        })
        .unwrap();
        let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
        let r2 = read("seed-2/report.md");
        assert!(r2.contains("Run seed: 2 (seed 2 of `--seeds 2`, starting at 1) for every run."), "{r2}");
        assert!(!r2.contains("`--seed`)") && !r2.contains("Quote the medians"), "{r2}");
        let md = read("seeds.md");
        assert!(md.starts_with("# Numbers over run seeds 1–2 (quick)"), "{md}");
        assert!(
            md.contains(&format!("| ratio | {RATIO_MEDIAN}. note of seed 1 (notes differ across seeds) |")),
            "{md}"
        );
        assert!(md.contains("| pkt/s | same |"), "{md}");
        let numbers = read("numbers.csv");
        let r_line = numbers.lines().find(|l| l.starts_with("r,")).unwrap();
        assert!(r_line.contains(RATIO_MEDIAN), "{r_line}");
        assert!(!numbers.lines().find(|l| l.starts_with("q,")).unwrap().contains(RATIO_MEDIAN));
        assert!(read("report.md").starts_with("# Test (quick) over 2 run seeds"));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The tables are written in the reproduction's own `numbers.csv` format plus `seeds.csv`.
    #[test]
    fn over_seeds_writes_the_three_tables() {
        let dir = std::env::temp_dir().join(format!("wsn-seeds-test-{}", std::process::id()));
        crate::staging::tests::SYNCED.with(|s| s.borrow_mut().clear());
        over_seeds(&dir, &[4, 5], &test_cmd(), |sub, s| {
            std::fs::create_dir_all(&sub)?;
            std::fs::write(
                sub.join("numbers.csv"),
                format!("key,paper,ours,unit,note\nx,1,{}.000,ratio,seed note\n", s),
            )?;
            Ok(())
        })
        .unwrap();
        // Every staged file and folder was synced before the renames (so under its staged
        // name), the seed folders after their files, and the results folder after the renames.
        let synced = crate::staging::tests::SYNCED.with(|s| s.take());
        let staged = synced.iter().find(|p| p.ends_with("seeds.csv")).and_then(|p| p.parent()).unwrap().to_path_buf();
        assert!(staged != dir && staged.starts_with(&dir), "{synced:?}");
        let at = |name: &str| synced.iter().position(|p| *p == staged.join(name));
        for name in ["seed-4/numbers.csv", "seed-5/numbers.csv", "numbers.csv", "seeds.csv", "seeds.md", "report.md"] {
            assert!(at(name).is_some(), "{name} was not synced before its rename: {synced:?}");
        }
        assert!(at("seed-4/numbers.csv") < at("seed-4") && at("seed-4") < at(""), "{synced:?}");
        assert_eq!(synced.last(), Some(&dir), "{synced:?}");
        let numbers = std::fs::read_to_string(dir.join("numbers.csv")).unwrap();
        assert!(
            numbers.starts_with("key,paper,ours,unit,note\nx,1,4.5,ratio,\"median over run seeds 4–5"),
            "{numbers}"
        );
        assert!(numbers.contains("; seed 4: seed note"), "{numbers}");
        let seeds = std::fs::read_to_string(dir.join("seeds.csv")).unwrap();
        assert!(
            seeds.starts_with("key,paper,seed_4,seed_5,median,min,max,unit,bounds\nx,1,4,5,4.5,4,5,ratio,\n"),
            "{seeds}"
        );
        assert!(std::fs::read_to_string(dir.join("seeds.md")).unwrap().contains("[report](seed-5/report.md)"));
        let index = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(index.starts_with("# Test (quick) over 2 run seeds\n\nCommand: `wsn test --quick`."), "{index}");
        assert!(index.contains("(seed-4/report.md)"), "{index}");
        assert!(std::fs::read_to_string(dir.join("seeds.md")).unwrap().contains("Command: `wsn test --quick`."));
        assert!(index.contains("| x | 1 |"), "the index holds the table: {index}");
        // A single-seed run into the same folder then removes the seed tables and the seeds'
        // folders, but no folder it did not write; a second removal finds nothing to do.
        std::fs::create_dir_all(dir.join("seed-x")).unwrap();
        std::fs::create_dir_all(dir.join("seed-7")).unwrap();
        remove_seed_run(&dir).unwrap();
        assert!(!dir.join("seeds.csv").exists() && !dir.join("seeds.md").exists());
        assert!(!dir.join("seed-4").exists() && !dir.join("seed-5").exists());
        assert!(dir.join("seed-x").is_dir() && dir.join("seed-7").is_dir());
        remove_seed_run(&dir).unwrap();
        // A --seeds run removes the figures a single-seed run's report links, nothing else.
        for f in ["fig3.png", "fig3.svg", "mine.png", "notes.txt"] {
            std::fs::write(dir.join(f), "x").unwrap();
        }
        std::fs::write(dir.join("report.md"), "# R\n![Fig. 3](fig3.png)\n[elsewhere](../x.png)\n").unwrap();
        remove_linked_figures(&dir, &std::fs::read_to_string(dir.join("report.md")).unwrap()).unwrap();
        assert!(!dir.join("fig3.png").exists() && !dir.join("fig3.svg").exists());
        assert!(dir.join("mine.png").exists() && dir.join("notes.txt").exists() && dir.join("seed-x").is_dir());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A run's report as the commands write it ([`crate::reproduce::write_numbers`]), with the
    /// value `v`.
    fn report(sub: &Path, v: f64) -> Result<()> {
        std::fs::create_dir_all(sub)?;
        let rows = [crate::reproduce::row("x", 1, v, "ratio", "")];
        crate::reproduce::write_numbers(sub, "# Test (quick)\n\n".into(), &rows)
    }

    /// The hidden entries of `dir` (staging folders and their lock files).
    fn hidden(dir: &Path) -> Vec<PathBuf> {
        entries(dir).unwrap().into_iter().filter(|p| p.to_string_lossy().contains(".wsn-")).collect()
    }

    /// Standard output that cannot be written stops a single-seed run only once its results are
    /// in place and an earlier `--seeds` run's tables and seed folders are gone (they were
    /// printed before, or in, the commit: the report was left in a staging folder the next run
    /// removes, or beside the earlier run's tables).
    #[test]
    fn unwritable_stdout_leaves_a_single_run_in_place() {
        let dir = std::env::temp_dir().join(format!("wsn-seeds-stdout-one-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let two = SeedArgs { seed: None, seeds: 2 };
        two.run(&dir, false, &test_cmd(), |sub, s| report(&sub, s.unwrap() as f64)).unwrap();
        assert!(dir.join("seeds.csv").is_file() && dir.join("seed-1").is_dir());
        let one = SeedArgs { seed: None, seeds: 1 };
        let why = crate::stdout_test::full(|| one.run(&dir, true, &test_cmd(), |sub, _| report(&sub, 7.0)))
            .expect_err("the table was printed");
        assert!(why.contains("standard output is full"), "{why}");
        assert!(std::fs::read_to_string(dir.join("numbers.csv")).unwrap().contains("x,1,7,ratio"));
        assert!(std::fs::read_to_string(dir.join("report.md")).unwrap().starts_with("# Test (quick)"));
        for gone in ["seeds.csv", "seeds.md", "seed-1", "seed-2"] {
            assert!(!dir.join(gone).exists(), "the earlier --seeds run's {gone} stayed");
        }
        assert!(hidden(&dir).is_empty(), "{:?}", hidden(&dir));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Standard output that cannot be written neither stops a `--seeds` run while its seeds run
    /// nor while it moves them into place (removing an earlier run's seed folder is said
    /// there): every result is in place, nothing left in a staging folder; the table of the
    /// medians, printed last, is where it stops.
    #[test]
    fn unwritable_stdout_leaves_a_seeds_run_in_place() {
        let dir = std::env::temp_dir().join(format!("wsn-seeds-stdout-many-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let three = SeedArgs { seed: None, seeds: 3 };
        three.run(&dir, false, &test_cmd(), |sub, s| report(&sub, s.unwrap() as f64)).unwrap();
        let two = SeedArgs { seed: Some(5), seeds: 2 };
        let why =
            crate::stdout_test::full(|| two.run(&dir, false, &test_cmd(), |sub, s| report(&sub, s.unwrap() as f64)))
                .expect_err("the medians were printed");
        assert!(why.contains("standard output is full"), "{why}");
        let index = std::fs::read_to_string(dir.join("report.md")).unwrap();
        assert!(index.starts_with("# Test (quick) over 2 run seeds"), "{index}");
        assert!(std::fs::read_to_string(dir.join("seeds.csv")).unwrap().contains("x,1,5,6,5.5"));
        assert!(dir.join("seed-5/report.md").is_file() && dir.join("seed-6/report.md").is_file());
        assert!(!dir.join("seed-1").exists() && !dir.join("seed-3").exists(), "an earlier seed folder stayed");
        assert!(hidden(&dir).is_empty(), "{:?}", hidden(&dir));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Mutation audit (session 36) of the multi-seed merge: each test pins what the function's
    /// doc comment, or README's `--seeds` paragraph, says.
    mod audit36 {
        use super::*;

        /// [`seed_list`] and `--seeds`' help: 1 to [`MAX_SEEDS`] seeds, `first, first + 1, …`; any
        /// first seed up to 2^64 − 1 as long as the list does not overflow.
        #[test]
        fn seed_list_accepts_max_seeds_and_the_last_seed() {
            let v = seed_list(Some(5), MAX_SEEDS).unwrap();
            assert_eq!(v.len() as u64, MAX_SEEDS);
            assert_eq!((v[0], v[v.len() - 1]), (5, 4 + MAX_SEEDS));
            assert_eq!(seed_list(Some(u64::MAX), 1).unwrap(), vec![u64::MAX]);
        }

        /// [`censor`] and [`Censor::Below`]: a best fixed rate whose lowest swept point already
        /// failed is below the range, as a knee is (it counts at the low end, and prints so).
        #[test]
        fn a_best_fixed_rate_without_a_number_is_below_the_range() {
            assert_eq!(censor("best_fixed_fair_pps"), Censor::Below);
            assert_eq!(fmt_for("best_fixed_fair_pps", None), "below range");
            let t: Vec<Vec<NumberRow>> =
                ["n/a", "0.5", "0.7"].iter().map(|v| vec![row("best_fixed_fair_pps", v)]).collect();
            let m = merge(&[1, 2, 3], &t).unwrap();
            assert_eq!((m[0].min(), m[0].median(), m[0].max()), (None, Some(0.5), Some(0.7)));
        }

        /// [`merge`]: "every value is a number or `n/a`: anything else is an error". A reproduction
        /// writes a value that is not finite as `n/a` (`reproduce::sig4`), so `NaN` or `inf` is
        /// not one of its numbers.
        #[test]
        fn non_finite_values_are_refused() {
            for bad in ["NaN", "inf", "-inf"] {
                let e = merge(&[1, 2], &[vec![row("a", "1")], vec![row("a", bad)]]).unwrap_err().to_string();
                assert!(e.contains("seed 2") && e.contains("neither a number nor n/a"), "{bad}: {e}");
            }
        }

        /// [`Merged::bounds`]: whether a seed's *number* is only a bound, as its note says in the
        /// words of [`crate::reproduce::knee_note`]; a seed without a number has none to mark.
        #[test]
        fn a_knee_note_marks_a_bound_only_on_a_number() {
            let pts: Vec<(f64, f64, f64, f64)> = [0.2, 0.4].iter().map(|&x| (x, 0.0, 0.0, 0.0)).collect();
            let note = format!("largest swept load …{}", crate::reproduce::knee_note(&pts, 0.4));
            assert_eq!(bound_of("reliable_knee_pps", &note), Bound::AtLeast);
            let with = |ours: &str| NumberRow { note: note.clone(), ..row("reliable_knee_pps", ours) };
            let m = merge(&[1, 2], &[vec![with("n/a")], vec![with("0.4")]]).unwrap();
            assert_eq!(m[0].bounds, [Bound::Exact, Bound::AtLeast]);
        }

        /// [`quick_mark`]: " (quick)" only "when the command line has `--quick`".
        #[test]
        fn only_a_quick_command_line_is_marked() {
            assert_eq!(quick_mark("wsn reproduce rcrt --quick --seeds 2"), " (quick)");
            assert_eq!(quick_mark("wsn reproduce rcrt --seeds 2"), "");
        }

        /// [`note_cell`]: the first seed's note "with `|` escaped for Markdown".
        #[test]
        fn note_cells_escape_pipes() {
            let m = merge(&[1], &[vec![NumberRow { note: "a | b".into(), ..row("k", "1") }]]).unwrap();
            assert_eq!(note_cell(&m[0]), "a \\| b");
        }
    }
}
