//! Staging folders: a command writes its results into a hidden folder inside its output folder
//! and moves them into place only once all are written, so that a failure while writing leaves
//! the earlier results as they were.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Prefix of every staging folder's name.
const PREFIX: &str = ".wsn-staging-";

/// Remove the staging folders an interrupted or failed earlier run left in `dir` (saying so),
/// then create a fresh one for this run (`tag` names the command). Its name holds the process id
/// and the time, so a leftover folder is never reused.
pub(crate) fn create(dir: &Path, tag: &str) -> Result<PathBuf> {
    remove_stale(dir)?;
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let path = dir.join(format!("{PREFIX}{tag}-{}-{nanos}", std::process::id()));
    std::fs::create_dir(&path).with_context(|| format!("creating {}", path.display()))?;
    Ok(path)
}

/// Whether the process that created the staging folder `name` (`PREFIX` tag-pid-nanos) may
/// still be writing into it: another process of that id that is running, on a system with
/// `/proc`; without `/proc`, a folder changed within the last day. A second command writing
/// into the same folder must not lose its staging folder to the first. This process's own are
/// left by an earlier command of it that failed (no command stages twice into one folder).
fn owner_may_be_running(path: &Path, name: &str) -> bool {
    let Some(pid) = name.rsplit('-').nth(1).and_then(|p| p.parse::<u32>().ok()) else { return false };
    if pid == std::process::id() {
        return false;
    }
    if Path::new("/proc/self").exists() {
        return Path::new("/proc").join(pid.to_string()).exists();
    }
    const DAY: std::time::Duration = std::time::Duration::from_secs(24 * 3600);
    std::fs::metadata(path).and_then(|m| m.modified()).ok().and_then(|t| t.elapsed().ok()).is_some_and(|age| age < DAY)
}

/// Remove the staging folders an interrupted or failed earlier run left in `dir`, saying so
/// (a run that writes in place, without staging, calls it once it has written everything); a
/// folder whose command may still be running is left to it.
pub(crate) fn remove_stale(dir: &Path) -> Result<()> {
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut stale: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| {
                p.is_dir()
                    && p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with(PREFIX) && !owner_may_be_running(p, n))
            })
            .collect();
        stale.sort();
        for p in stale {
            std::fs::remove_dir_all(&p).with_context(|| format!("removing {}", p.display()))?;
            println!("removed {} (left by an interrupted or failed run)", p.display());
        }
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
/// error, or when `dir` holds a folder where one of the files goes, remove `staging` and change
/// nothing in `dir` (`left` says so in the error message).
pub(crate) fn commit(staging: &Path, dir: &Path, written: Result<()>, left: &str) -> Result<Vec<String>> {
    let names = match written.and_then(|()| names(staging)) {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_dir_all(staging);
            return Err(e.context(left.to_string()));
        }
    };
    if let Some(n) = names.iter().find(|n| dir.join(n).is_dir()) {
        let _ = std::fs::remove_dir_all(staging);
        anyhow::bail!("{} is a folder, where a file of that name goes; {left}", dir.join(n).display());
    }
    for n in &names {
        let to = dir.join(n);
        std::fs::rename(staging.join(n), &to).with_context(|| format!("moving the new {} into place", to.display()))?;
    }
    std::fs::remove_dir(staging).with_context(|| format!("removing {}", staging.display()))?;
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A leftover staging folder is removed, never reused; other hidden folders stay, and so do
    /// the staging folders of other commands still running (here the parent process's, which
    /// runs the tests).
    #[test]
    #[cfg(unix)]
    fn leftovers_are_removed_and_names_are_fresh() {
        let dir = std::env::temp_dir().join(format!("wsn-staging-test-{}", std::process::id()));
        // No process has an id above the kernel's limit of 2^22.
        let dead = ".wsn-staging-run-4294967290-2";
        std::fs::create_dir_all(dir.join(dead)).unwrap();
        std::fs::write(dir.join(dead).join("rates.csv"), "stale").unwrap();
        std::fs::create_dir_all(dir.join(".mine")).unwrap();
        let live = dir.join(format!(".wsn-staging-sweep-{}-7", std::os::unix::process::parent_id()));
        std::fs::create_dir_all(&live).unwrap();
        let a = create(&dir, "run").unwrap();
        assert!(!dir.join(dead).exists() && dir.join(".mine").is_dir() && live.is_dir());
        assert!(names(&a).unwrap().is_empty());
        std::fs::write(a.join("x"), "1").unwrap();
        assert_eq!(names(&a).unwrap(), vec!["x".to_string()]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
