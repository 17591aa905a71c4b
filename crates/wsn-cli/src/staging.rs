//! Staging folders: a command writes its results into a hidden folder inside its output folder
//! and moves them into place only once all are written, so that a failure while writing leaves
//! the earlier results as they were.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Prefix of every staging folder's name.
const PREFIX: &str = ".wsn-staging-";

/// Suffix of the lock file beside each staging folder (`.wsn-staging-…` and
/// `.wsn-staging-….lock`).
const LOCK_SUFFIX: &str = ".lock";

/// A staging folder of this process, and the lock that tells other processes it is in use. The
/// lock file sits beside the folder (not in it, whose entries are the results) and is locked
/// for as long as this value lives; the operating system releases the lock when the process
/// ends, however it ends. Dropping it removes the lock file: a folder left behind without one
/// (a failed command that kept its finished seeds, say) is stale for the next command.
pub(crate) struct Staging {
    path: PathBuf,
    lock_path: PathBuf,
    _lock: std::fs::File,
}

impl std::ops::Deref for Staging {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Staging {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.lock_path);
    }
}

/// Remove the staging folders an interrupted or failed earlier run left in `dir` (saying so),
/// then create a fresh one for this run (`tag` names the command). Its name holds the process id
/// and the time, so a leftover folder is never reused. The lock is taken before the folder
/// exists, so that no other command ever sees the folder unlocked while this one lives.
pub(crate) fn create(dir: &Path, tag: &str) -> Result<Staging> {
    remove_stale(dir)?;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let path = dir.join(format!("{PREFIX}{tag}-{}-{nanos}", std::process::id()));
    let lock_path = lock_path_of(&path);
    let lock = std::fs::File::create(&lock_path).with_context(|| format!("creating {}", lock_path.display()))?;
    if let Err(e) = lock.try_lock() {
        let _ = std::fs::remove_file(&lock_path);
        return Err(anyhow::anyhow!("{e}")).with_context(|| format!("locking {}", lock_path.display()));
    }
    let staging = Staging { path, lock_path, _lock: lock };
    std::fs::create_dir(&staging.path).with_context(|| format!("creating {}", staging.path.display()))?;
    Ok(staging)
}

fn lock_path_of(folder: &Path) -> PathBuf {
    let mut name = folder.as_os_str().to_owned();
    name.push(LOCK_SUFFIX);
    PathBuf::from(name)
}

/// How long a staging folder whose lock file cannot be locked (or opened) must have gone
/// unmodified before it is taken for a leftover: without the lock, only its age tells a dead
/// command's folder from a live one's. A day is far longer than a command stays silent while
/// it writes into its staging folder (a `--seeds` run adds a seed's folder every few minutes;
/// a single run writes all of its files within seconds), and a leftover folder only costs disk
/// space until then.
const UNLOCKABLE_STALE_AFTER: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// What trying the lock of a staging folder found.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Probe {
    /// No lock file: its command is done with the folder (it removes the lock file when it
    /// ends), or a version without locks made it.
    NoLockFile,
    /// The lock could be taken: no live command holds it.
    Free,
    /// Another command holds the lock: it is still running.
    Held,
    /// The lock file could not be opened or locked (a file system without locks, say): nothing
    /// tells whether a command still runs. Holds the reason.
    Unknown(String),
}

/// Try the lock of the staging folder `folder` (and let it go again).
fn probe(folder: &Path) -> Probe {
    match std::fs::OpenOptions::new().write(true).open(lock_path_of(folder)) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Probe::NoLockFile,
        Err(e) => Probe::Unknown(format!("opening it: {e}")),
        Ok(f) => match f.try_lock() {
            Ok(()) => Probe::Free,
            Err(std::fs::TryLockError::WouldBlock) => Probe::Held,
            Err(std::fs::TryLockError::Error(e)) => Probe::Unknown(e.to_string()),
        },
    }
}

/// Whether a staging folder may belong to a command still running, from what its lock showed
/// and how long ago the folder was last modified (`None`: unknown, or in the future). A folder
/// whose lock tells nothing ([`Probe::Unknown`]) is taken as in use until it has gone
/// [`UNLOCKABLE_STALE_AFTER`] without a change: removing a live command's folder loses its
/// results, keeping a dead one's only costs space until then.
fn in_use(probe: &Probe, age: Option<std::time::Duration>) -> bool {
    match probe {
        Probe::NoLockFile | Probe::Free => false,
        Probe::Held => true,
        Probe::Unknown(_) => age.is_none_or(|a| a < UNLOCKABLE_STALE_AFTER),
    }
}

/// How long ago `folder` was last modified; `None` when that cannot be read or lies in the
/// future.
fn age(folder: &Path) -> Option<std::time::Duration> {
    let modified = std::fs::metadata(folder).and_then(|m| m.modified()).ok()?;
    std::time::SystemTime::now().duration_since(modified).ok()
}

/// Remove the staging folders an interrupted or failed earlier run left in `dir`, and their lock
/// files, saying so (a run that writes in place, without staging, calls it once it has written
/// everything); a folder whose command is still running (its lock is held) is left to it, and
/// said so, and so is one whose lock cannot be taken at all (a file system without locks)
/// until it has gone a day unmodified ([`in_use`]).
pub(crate) fn remove_stale(dir: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    let mut stale: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(PREFIX)))
        .collect();
    stale.sort();
    for p in stale {
        // Lock files are removed with their folders, or by their owners: one without a folder
        // may be a command's that is about to create it.
        if !p.is_dir() {
            continue;
        }
        let lock = probe(&p);
        let age = age(&p);
        if let Probe::Unknown(why) = &lock {
            // Said once per command, for the first such folder.
            static SAID: std::sync::Once = std::sync::Once::new();
            // (Its failure to be written must not stop a command that is moving its results.)
            SAID.call_once(|| {
                crate::progress::stderr_line(&format!(
                    "warning: cannot lock {} ({why}): a staging folder whose lock cannot be taken is kept as \
                     possibly in use until it has gone {} h unmodified",
                    lock_path_of(&p).display(),
                    UNLOCKABLE_STALE_AFTER.as_secs() / 3600
                ))
            });
        }
        if in_use(&lock, age) {
            match lock {
                Probe::Unknown(_) => say!(
                    "kept {} (its lock cannot be taken, and it changed less than {} h ago: a command may still \
                     write into it)",
                    p.display(),
                    UNLOCKABLE_STALE_AFTER.as_secs() / 3600
                ),
                _ => say!("kept {} (a command still running writes into it)", p.display()),
            }
            continue;
        }
        std::fs::remove_dir_all(&p).with_context(|| format!("removing {}", p.display()))?;
        let _ = std::fs::remove_file(lock_path_of(&p));
        say!("removed {} (left by an interrupted or failed run)", p.display());
    }
    Ok(())
}

/// The names of the entries of `staging`, sorted.
pub(crate) fn names(staging: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(staging).with_context(|| format!("reading {}", staging.display()))? {
        let e = e.with_context(|| format!("reading {}", staging.display()))?;
        out.push(e.file_name().to_string_lossy().into_owned());
    }
    out.sort();
    Ok(out)
}

/// Finish a staged write: once `written` succeeded, move every file of `staging` into `dir`,
/// replacing the files of the same names, and remove `staging`; returns the names moved. On an
/// error, remove `staging` and change nothing in `dir` (`left` says so in the error message).
/// When `dir` holds a folder where one of the files goes, change nothing in `dir` either, but
/// keep `staging`, which holds the complete results (perhaps hours of runs), and name it.
pub(crate) fn commit(staging: &Path, dir: &Path, written: Result<()>, left: &str) -> Result<Vec<String>> {
    commit_with(staging, dir, written, left, &[])
}

/// [`commit`], moving in with the staged files the files `outside` (each a file already in
/// `dir` under another name, and the name it takes there: a run's trace written under its
/// temporary name), which are left where they are on an error and are among the names
/// returned.
pub(crate) fn commit_with(
    staging: &Path,
    dir: &Path,
    written: Result<()>,
    left: &str,
    outside: &[(&Path, &str)],
) -> Result<Vec<String>> {
    let staged = match written.and_then(|()| names(staging)) {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_dir_all(staging);
            return Err(e.context(left.to_string()));
        }
    };
    let names: Vec<&str> = staged.iter().map(String::as_str).chain(outside.iter().map(|o| o.1)).collect();
    if let Some(n) = names.iter().find(|n| dir.join(n).is_dir()) {
        anyhow::bail!(
            "{} is a folder, where a file of that name goes; {left}; this run's results are in {} (until the next \
             run into that folder)",
            dir.join(n).display(),
            staging.display()
        );
    }
    let moves: Vec<(PathBuf, &str)> =
        staged.iter().map(|n| (staging.join(n), n.as_str())).chain(outside.iter().map(|o| (o.0.into(), o.1))).collect();
    // Each file reaches the disk before its new name does, so that a crash (a power loss) soon
    // after cannot leave that name on an empty file: one sync per file, then one of the folder.
    for (from, _) in &moves {
        if let Err(e) = sync_file(from) {
            let _ = std::fs::remove_dir_all(staging);
            return Err(anyhow::Error::from(e)
                .context(format!("syncing {} to disk", from.display()))
                .context(left.to_string()));
        }
    }
    for (from, n) in moves {
        let to = dir.join(n);
        std::fs::rename(from, &to).with_context(|| format!("moving the new {} into place", to.display()))?;
    }
    std::fs::remove_dir(staging).with_context(|| format!("removing {}", staging.display()))?;
    sync_dir(dir).with_context(|| {
        format!(
            "syncing {} to disk, after the new files were moved into it (they may not all be on disk)",
            dir.display()
        )
    })?;
    Ok(names.into_iter().map(String::from).collect())
}

/// Sync every file under `root` and then every folder (each after what it holds, `root` last),
/// in name order: for a tree of results about to be renamed into place as a whole (the seed
/// folders of a `--seeds` run), so that no renamed name can lead to a file or folder whose
/// contents are not on the disk yet.
pub(crate) fn sync_tree(root: &Path) -> std::io::Result<()> {
    let mut entries: Vec<std::fs::DirEntry> = std::fs::read_dir(root)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let ty = e.file_type()?;
        if ty.is_dir() {
            sync_tree(&e.path())?;
        } else if ty.is_file() {
            sync_file(&e.path())?;
        }
    }
    sync_dir(root)
}

/// [`wsn_sim::output::sync_file`], logged for the tests.
fn sync_file(path: &Path) -> std::io::Result<()> {
    wsn_sim::output::sync_file(path)?;
    #[cfg(test)]
    tests::SYNCED.with(|s| s.borrow_mut().push(path.to_path_buf()));
    Ok(())
}

/// [`wsn_sim::output::sync_dir`], logged for the tests.
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    wsn_sim::output::sync_dir(dir)?;
    #[cfg(test)]
    tests::SYNCED.with(|s| s.borrow_mut().push(dir.to_path_buf()));
    Ok(())
}

/// Name of the lock file of `wsn run` in its output folder ([`lock_run`]).
pub(crate) const RUN_LOCK: &str = ".wsn-run.lock";

/// `wsn run`'s hold on its output folder: its lock file, locked for as long as this value
/// lives (the operating system releases it when the process ends, however it ends), and
/// holding the process id. `file` is `None` where the lock could not be taken (a file system
/// without locks), which [`lock_run`] warned about. Dropping it removes the lock file.
pub(crate) struct RunLock {
    path: PathBuf,
    file: Option<std::fs::File>,
}

impl Drop for RunLock {
    fn drop(&mut self) {
        // Removed while still locked: a command that opened it before sees it held; one that
        // locks it after finds that the name no longer leads to it, and takes a fresh one.
        // Without a lock (a file system without locks) the file means nothing: removed too, so
        // that it is not left in the results (or in a folder the failed run would remove).
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether the open `file` is the one at `path` now (not removed or replaced since it was
/// opened). Where that cannot be told (not Unix), it is taken to be.
fn is_file_at(file: &std::fs::File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (file, path);
        true
    }
}

/// Take the lock of `wsn run` on its output folder `dir` ([`RUN_LOCK`]), for the whole run:
/// two runs into one folder would write the same temporary trace files
/// (`trace.csv.partial`) and mix their results, so a second run stops with an error naming
/// the process that holds the lock. Where the lock cannot be taken at all (a file system
/// without locks), warns and goes on without it.
pub(crate) fn lock_run(dir: &Path) -> Result<RunLock> {
    use std::io::{Read, Write};
    let path = dir.join(RUN_LOCK);
    // The file at the name changes only when its owner removes it, between our open and lock.
    for _ in 0..100 {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .with_context(|| format!("creating {}", path.display()))?;
        match file.try_lock() {
            Ok(()) if !is_file_at(&file, &path) => continue,
            Ok(()) => {
                let mut f = &file;
                f.set_len(0)
                    .and_then(|()| write!(f, "{}", std::process::id()))
                    .with_context(|| format!("writing {}", path.display()))?;
                return Ok(RunLock { path, file: Some(file) });
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut pid = String::new();
                let _ = (&file).read_to_string(&mut pid);
                let who = match pid.trim().parse::<u32>() {
                    Ok(p) => format!("process {p}"),
                    Err(_) => "another process".to_string(),
                };
                anyhow::bail!(
                    "{} is in use: another `wsn run` ({who}) is writing into it (it holds the lock {}); wait for it \
                     to end, or choose another --out",
                    dir.display(),
                    path.display()
                );
            }
            Err(std::fs::TryLockError::Error(e)) => {
                eprintln!(
                    "warning: cannot lock {} ({e}): another `wsn run` into {} at the same time would write the same \
                     files",
                    path.display(),
                    dir.display()
                );
                return Ok(RunLock { path, file: None });
            }
        }
    }
    anyhow::bail!("cannot lock {}: it was replaced again and again while this run tried", path.display())
}

/// Remove the temporary trace files (`trace.csv.partial`, `frames.pcap.partial`) an
/// interrupted or failed earlier run left in `dir`, saying so, as [`remove_stale`] removes
/// staging folders. Called once this run holds the folder's `lock`, so no live run writes
/// them; without a lock (a file system without locks) a file is kept, and said so, until it
/// has gone [`UNLOCKABLE_STALE_AFTER`] unmodified, as a staging folder would be.
pub(crate) fn remove_stale_partials(dir: &Path, lock: &RunLock) -> Result<()> {
    for name in wsn_sim::output::TRACE_FILES {
        let p = dir.join(wsn_sim::output::partial_name(name));
        // A folder of that name is not one of ours (and a run that traces refuses it).
        if std::fs::symlink_metadata(&p).map_or(true, |m| m.is_dir()) {
            continue;
        }
        if lock.file.is_none() && in_use(&Probe::Unknown(String::new()), age(&p)) {
            say!(
                "kept {} (this run cannot lock its folder, and it changed less than {} h ago: another run may \
                 still write it)",
                p.display(),
                UNLOCKABLE_STALE_AFTER.as_secs() / 3600
            );
            continue;
        }
        std::fs::remove_file(&p).with_context(|| format!("removing {}", p.display()))?;
        say!("removed {} (left by an interrupted or failed run)", p.display());
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    thread_local! {
        /// The files and folders this thread synced, in order.
        pub(crate) static SYNCED: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
    }

    mod audit37 {
        use super::*;

        /// A fresh, empty scratch folder for one test.
        fn scratch(name: &str) -> PathBuf {
            let dir = std::env::temp_dir().join(format!("wsn-audit37-{name}-{}", std::process::id()));
            std::fs::remove_dir_all(&dir).ok();
            std::fs::create_dir_all(&dir).unwrap();
            dir
        }

        /// [`remove_stale`] and [`in_use`]: a folder whose lock file cannot be opened is kept,
        /// pass after pass, until it has gone [`UNLOCKABLE_STALE_AFTER`] unmodified, and removed
        /// then, with its lock file. (The lock file is a symbolic link to itself, which no
        /// command can open, and which is no folder.)
        #[cfg(unix)]
        #[test]
        fn an_unlockable_folder_is_kept_on_every_pass_until_a_day_old() {
            let dir = scratch("unlockable");
            let folder = dir.join(".wsn-staging-run-7-8");
            std::fs::create_dir(&folder).unwrap();
            std::fs::write(folder.join("summary.json"), "{}").unwrap();
            let lock = lock_path_of(&folder);
            std::os::unix::fs::symlink(&lock, &lock).unwrap();
            assert!(matches!(probe(&folder), Probe::Unknown(_)), "{:?}", probe(&folder));
            for _ in 0..2 {
                remove_stale(&dir).unwrap();
                assert!(folder.join("summary.json").exists(), "a recent folder whose lock cannot be taken went");
            }
            let old = std::time::SystemTime::now() - UNLOCKABLE_STALE_AFTER - std::time::Duration::from_secs(60);
            std::fs::File::open(&folder).unwrap().set_modified(old).unwrap();
            remove_stale(&dir).unwrap();
            assert!(!folder.exists(), "a folder unmodified for a day was kept");
            assert!(std::fs::symlink_metadata(&lock).is_err(), "its lock file stayed");
            std::fs::remove_dir_all(&dir).ok();
        }

        /// [`names`]' doc comment: the entries of a staging folder, sorted.
        #[test]
        fn names_are_sorted() {
            let dir = scratch("names");
            let mut want: Vec<String> = (0..40).map(|k| format!("f{:02}-{}.csv", (k * 17) % 40, k)).collect();
            for n in &want {
                std::fs::write(dir.join(n), "").unwrap();
            }
            want.sort();
            assert_eq!(names(&dir).unwrap(), want);
            std::fs::remove_dir_all(&dir).ok();
        }

        /// [`sync_tree`]'s doc comment: every file, then every folder after what it holds, in
        /// name order, the root last.
        #[test]
        fn sync_tree_syncs_in_name_order_folders_after_their_contents() {
            let dir = scratch("tree");
            for n in ["c", "a", "e", "b"] {
                std::fs::write(dir.join(n), n).unwrap();
            }
            std::fs::create_dir(dir.join("d")).unwrap();
            std::fs::write(dir.join("d").join("x"), "x").unwrap();
            SYNCED.with(|s| s.borrow_mut().clear());
            sync_tree(&dir).unwrap();
            let synced = SYNCED.with(|s| s.take());
            let want: Vec<PathBuf> =
                ["a", "b", "c", "d/x", "d", "e"].iter().map(|n| dir.join(n)).chain([dir.clone()]).collect();
            assert_eq!(synced, want);
            std::fs::remove_dir_all(&dir).ok();
        }

        /// [`is_file_at`]'s doc comment: true for the file still at its name, false once the name
        /// was removed or now leads to another file.
        #[cfg(unix)]
        #[test]
        fn is_file_at_tells_a_replaced_file() {
            let dir = scratch("isfile");
            let path = dir.join(RUN_LOCK);
            std::fs::write(&path, "").unwrap();
            let file = std::fs::File::open(&path).unwrap();
            assert!(is_file_at(&file, &path));
            std::fs::remove_file(&path).unwrap();
            assert!(!is_file_at(&file, &path), "a removed file");
            std::fs::write(&path, "").unwrap();
            assert!(!is_file_at(&file, &path), "a file replaced by another");
            std::fs::remove_dir_all(&dir).ok();
        }

        /// [`RunLock`]'s doc comment: the lock file holds the process id — only it, even where a
        /// killed run left a longer one in the file.
        #[test]
        fn the_run_lock_holds_only_this_process_id() {
            let dir = scratch("runlock");
            std::fs::write(dir.join(RUN_LOCK), "4294967295 left by a killed run").unwrap();
            let lock = lock_run(&dir).unwrap();
            assert_eq!(std::fs::read_to_string(dir.join(RUN_LOCK)).unwrap(), std::process::id().to_string());
            drop(lock);
            std::fs::remove_dir_all(&dir).ok();
        }
    }

    /// A commit syncs every file it moves, staged or not, under the name it was written under
    /// (so before its rename: that name is gone after), then the folder they went into.
    #[test]
    fn a_commit_syncs_each_file_before_moving_it_and_the_folder_after() {
        let dir = std::env::temp_dir().join(format!("wsn-staging-sync-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        let staging = create(&dir, "run").unwrap();
        for n in ["b.csv", "a.csv"] {
            std::fs::write(staging.join(n), n).unwrap();
        }
        let outside = dir.join("trace.csv.partial");
        std::fs::write(&outside, "trace").unwrap();
        SYNCED.with(|s| s.borrow_mut().clear());
        let moved = commit_with(&staging, &dir, Ok(()), "left", &[(&outside, "trace.csv")]).unwrap();
        assert_eq!(moved, ["a.csv", "b.csv", "trace.csv"]);
        let synced = SYNCED.with(|s| s.take());
        assert_eq!(synced, [staging.join("a.csv"), staging.join("b.csv"), outside, dir.clone()]);
        assert_eq!(std::fs::read_to_string(dir.join("trace.csv")).unwrap(), "trace");
        drop(staging);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// One run holds a folder's run lock at a time: a second is refused, naming the first's
    /// process id; once the first lets go (its lock file is removed) the next run takes it.
    /// The run that holds it removes the temporary trace files a killed run left, and keeps a
    /// folder of such a name.
    #[test]
    fn one_run_at_a_time_holds_a_folder_and_it_removes_leftover_partials() {
        let dir = std::env::temp_dir().join(format!("wsn-run-lock-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        let first = lock_run(&dir).unwrap();
        assert!(first.file.is_some());
        assert_eq!(std::fs::read_to_string(dir.join(RUN_LOCK)).unwrap(), std::process::id().to_string());
        let err = lock_run(&dir).err().expect("a second run took a held lock").to_string();
        assert!(err.contains(&format!("process {}", std::process::id())) && err.contains(RUN_LOCK), "{err}");
        drop(first);
        assert!(!dir.join(RUN_LOCK).exists(), "the lock file stayed");
        std::fs::write(dir.join("trace.csv.partial"), "a killed run's").unwrap();
        std::fs::create_dir(dir.join("frames.pcap.partial")).unwrap();
        let next = lock_run(&dir).unwrap();
        remove_stale_partials(&dir, &next).unwrap();
        assert!(!dir.join("trace.csv.partial").exists() && dir.join("frames.pcap.partial").is_dir());
        drop(next);
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A run that could not lock its folder (a file system without locks) still removes the
    /// lock file it created when it ends.
    #[test]
    fn an_unlocked_run_lock_removes_its_file_too() {
        let dir = std::env::temp_dir().join(format!("wsn-run-nolock-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(RUN_LOCK);
        std::fs::write(&path, "").unwrap();
        drop(RunLock { path: path.clone(), file: None });
        assert!(!path.exists(), "the lock file stayed");
        std::fs::remove_dir(&dir).unwrap();
    }

    /// A leftover staging folder is removed, never reused; other hidden folders stay, and so do
    /// the staging folders of commands still running (their lock is held; here by this
    /// process, through a second staging folder still alive).
    #[test]
    fn leftovers_are_removed_and_names_are_fresh() {
        let dir = std::env::temp_dir().join(format!("wsn-staging-test-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        // A leftover without a lock file, and one whose lock file nobody holds.
        let (dead, crashed) = (".wsn-staging-run-1-2", ".wsn-staging-run-3-4");
        for d in [dead, crashed] {
            std::fs::create_dir_all(dir.join(d)).unwrap();
            std::fs::write(dir.join(d).join("rates.csv"), "stale").unwrap();
        }
        std::fs::write(dir.join(format!("{crashed}.lock")), "").unwrap();
        std::fs::create_dir_all(dir.join(".mine")).unwrap();
        let live = create(&dir, "sweep").unwrap();
        assert!(!dir.join(dead).exists() && !dir.join(crashed).exists() && dir.join(".mine").is_dir());
        assert!(!dir.join(format!("{crashed}.lock")).exists());
        let a = create(&dir, "run").unwrap();
        assert!(live.is_dir(), "a staging folder in use was removed");
        assert!(names(&a).unwrap().is_empty());
        std::fs::write(a.join("x"), "1").unwrap();
        assert_eq!(names(&a).unwrap(), vec!["x".to_string()]);
        // Once its owner is done with it, a folder left behind is stale.
        let left = live.to_path_buf();
        drop(live);
        let _b = create(&dir, "run").unwrap();
        assert!(!left.exists(), "a folder whose lock was released stayed");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The decision for each thing a folder's lock can show: a lock that cannot be taken keeps
    /// the folder until it has gone a day unmodified, or for good when its age is unknown.
    #[test]
    fn a_lock_that_cannot_be_taken_keeps_the_folder_for_a_day() {
        let h = |n: u64| Some(std::time::Duration::from_secs(n * 3600));
        let unknown = Probe::Unknown("locks not supported".into());
        for age in [None, h(0), h(23), h(24), h(1000)] {
            assert!(!in_use(&Probe::NoLockFile, age) && !in_use(&Probe::Free, age), "{age:?}");
            assert!(in_use(&Probe::Held, age), "{age:?}");
        }
        assert!(in_use(&unknown, None), "an unknown age");
        assert!(in_use(&unknown, h(0)) && in_use(&unknown, h(23)));
        assert!(in_use(&unknown, Some(UNLOCKABLE_STALE_AFTER - std::time::Duration::from_secs(1))));
        assert!(!in_use(&unknown, h(24)) && !in_use(&unknown, h(1000)));
    }

    /// `remove_stale` keeps a folder whose lock file cannot be opened (here a folder stands in
    /// its place) while it is recent, and removes it once it has gone a day unmodified.
    #[cfg(unix)]
    #[test]
    fn a_folder_whose_lock_cannot_be_taken_goes_when_old() {
        let dir = std::env::temp_dir().join(format!("wsn-staging-unlockable-{}", std::process::id()));
        std::fs::remove_dir_all(&dir).ok();
        let folder = dir.join(".wsn-staging-run-5-6");
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("summary.json"), "{}").unwrap();
        std::fs::create_dir(lock_path_of(&folder)).unwrap();
        assert!(matches!(probe(&folder), Probe::Unknown(_)), "{:?}", probe(&folder));
        remove_stale(&dir).unwrap();
        assert!(folder.join("summary.json").exists(), "a recent folder whose lock cannot be taken was removed");
        let old = std::time::SystemTime::now() - UNLOCKABLE_STALE_AFTER - std::time::Duration::from_secs(60);
        std::fs::File::open(&folder).unwrap().set_modified(old).unwrap();
        remove_stale(&dir).unwrap();
        assert!(!folder.exists(), "a folder unmodified for a day was kept");
        std::fs::remove_dir_all(&dir).ok();
    }
}
