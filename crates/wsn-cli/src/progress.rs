//! Progress of a batch of runs (`wsn sweep`, `wsn reproduce`, `wsn compare`), on a terminal and
//! in a log.
//!
//! On a terminal, an `indicatif` bar. When standard error is not a terminal (output redirected
//! to a file, CI, `nohup`), `indicatif` draws nothing, and a reproduction of several minutes
//! would print nothing until its report; each finished run then prints one plain line instead,
//! so that a log shows how far the batch is. Wall-clock time appears only in these lines, never
//! in a result.

use std::sync::Mutex;
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};

/// Progress of `len` runs labelled `label`.
pub(crate) struct Batch {
    bar: ProgressBar,
    label: String,
    /// Runs finished so far; held while a line is written, so that the lines of runs that
    /// finish at the same time on two threads come out in their count's order.
    done: Mutex<usize>,
    started: Instant,
}

impl Batch {
    pub(crate) fn new(label: &str, len: usize) -> Batch {
        let bar = ProgressBar::new(len as u64);
        bar.set_style(
            ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} runs  {elapsed} eta {eta}")
                .expect("static template")
                .progress_chars("=> "),
        );
        bar.set_message(label.to_string());
        Batch { bar, label: label.to_string(), done: Mutex::new(0), started: Instant::now() }
    }

    /// One run of the batch has finished (called from any worker thread).
    pub(crate) fn done_one(&self) {
        self.done_one_to(stderr_line);
    }

    /// [`Batch::done_one`], writing its line (when the bar is hidden) with `write`, which is
    /// called while the count is held.
    fn done_one_to(&self, write: impl FnOnce(&str)) {
        self.bar.inc(1);
        // A worker that panicked while holding the count left a valid count.
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        *done += 1;
        if self.bar.is_hidden() {
            let len = self.bar.length().unwrap_or(0);
            let line =
                format!("{}: {}/{len} runs done, {:.0} s", self.label, *done, self.started.elapsed().as_secs_f64());
            write(&line);
        }
    }

    pub(crate) fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// Writes a line to standard error, ignoring a failure: progress lines (like the bar, progress
/// is best effort, and standard error that cannot be written, `2> /dev/full`, must not stop the
/// runs: eprintln! would panic, and the command stop without its results), a warning said while
/// results are moved into place, and error reports (nowhere left to report a failure to). Other
/// warnings use eprintln!, and stop the command when they cannot be written.
pub(crate) fn stderr_line(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lines of runs that finish at the same time on two threads come out in their count's
    /// order because each is written while the count is held: no other run can take the next
    /// count until the line is out.
    #[test]
    fn a_line_is_written_while_the_count_is_held() {
        let b = Batch { bar: ProgressBar::hidden(), ..Batch::new("sweep", 2) };
        b.bar.set_length(2);
        let mut lines = Vec::new();
        for _ in 0..2 {
            b.done_one_to(|line| {
                assert!(b.done.try_lock().is_err(), "the count was released before its line: {line}");
                lines.push(line.split(',').next().unwrap().to_string());
            });
        }
        assert_eq!(lines, ["sweep: 1/2 runs done", "sweep: 2/2 runs done"]);
    }
}
