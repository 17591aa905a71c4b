//! Per-node radio noise processes (spec §3).
//!
//! Four models sit behind one interface: a shared, immutable [`NoiseModel`] built once from a
//! [`NoiseConfig`], and one small [`NodeNoise`] state per node that answers
//! "noise at this node at time t" in dBm. Every model returns the same value for repeated queries
//! inside one 1-ms slot (the slot is t rounded to the nearest millisecond, as TOSSIM does), and
//! every model adds the node's noise-floor offset δ_i (spec §2.2) to its samples.
//!
//! # Closest-pattern matching (CPM), as a walk over trace positions
//!
//! TOSSIM's CPM (spec §3.1) keeps, per node, a *key*: the 5-dB bins of the last `k` noise values.
//! Each new 1-ms sample is drawn from the empirical distribution of the values that followed that
//! key somewhere in the trace; the key is then shifted by the bin of the new value. A key never seen
//! is replaced by the most frequent key first (the fallback), which in practice happens only when
//! the walk reaches the end of the trace, whose history has no recorded successor.
//!
//! This module produces the same process in distribution, without any per-key CDF tables:
//!
//! - **State = a trace position.** The state of a node is a position `p` of the trace; its key is
//!   the bins of `trace[p-k..p]`. All positions with the same key are interchangeable states.
//! - **Drawing a successor.** The positions that have a successor (`k ≤ p < L`) are grouped by key
//!   (sorted by the key packed into a `u128`: up to 25 bins × 5 bits). Picking one occurrence `o`
//!   of the current key uniformly at random and emitting `trace[o]` samples exactly the empirical
//!   successor distribution TOSSIM builds (each recorded successor has weight 1/count, and the
//!   1-dB-resolution CDF is just that histogram). The new key is the key of position `o + 1`, which
//!   is the old key shifted by `bin(trace[o])`, so the new state is `o + 1`.
//! - **Skipping deterministic stretches.** With k = 20 most keys occur once (78.5 % of generated
//!   steps on meyer-heavy, spec §3.2). From such a position the walk can only continue along the
//!   trace. A further 7.7 % of positions have a key that occurs several times but is always
//!   followed by values of one bin: the next key is then certain, and only the emitted 1-dB value
//!   is random, which matters only if that sample is the queried one (it is then drawn from the
//!   key's occurrences). So only ≈ 13.5 % of positions are *branch points* (the next key is
//!   random). Each position stores the next branch point at or after it (or the trace end) and the
//!   range of precomputed successor states to draw from there; each node carries that record.
//!   Catching up over a gap of `m` ms therefore costs O(branch points in the gap), not O(m), and
//!   only branch points and the queried sample consume random numbers. A test checks that, with
//!   the same-bin shortcut switched off, the walk reproduces a plain key-table generator draw for
//!   draw, including the fallback; another that the shortcut leaves the statistics unchanged.
//! - **End of trace.** Position `L` has no successor. If its key occurs elsewhere, the draw uses
//!   that key's occurrences (TOSSIM finds the key in its table); otherwise it uses the occurrences
//!   of the most frequent key (TOSSIM replaces the history by that key, spec §3.2).
//! - **Start.** Every node starts at position 0; positions below `k` are deterministic, so the
//!   first `k` ms replay the trace verbatim and the walk then continues from the trace's own
//!   history, as in TOSSIM where all nodes share the 20-ms prefix. (TOSSIM only writes the prefix
//!   bins into the key when those ms are actually queried; we always continue from the prefix.)
//! - **Reset over long gaps** \[REC\]: when more than `reset_gap_s` have passed since a node's last
//!   sample, the walk is not replayed; the node jumps to a uniformly random position `p ≥ k` and
//!   emits `trace[p]`, moving to `p + 1`. A uniform position followed by a uniform occurrence of its
//!   key is again a uniform position, so this is one draw from the trace's stationary
//!   key-and-successor distribution.
//!
//! Memory is O(trace length) in the shared model (≈ 25 bytes per trace sample: about 5 MB for
//! meyer-heavy) and O(1) per node; a query costs O(1) plus the branch points walked. Measured
//! (release build, 2-core VM): 40 nodes × 1 simulated hour of k = 20 CPM on meyer-heavy ≈ 0.5 s
//! whatever the query pattern, plus ≈ 20 ns per query.
//!
//! # The other models
//! - **Replay**: `trace[(o_i + ms) mod L]` with a random per-node offset `o_i` (spec §3.4 item 2).
//! - **Constant**: the floor `floor_dbm` (spec §3.4 item 3).
//! - **Gaussian**: `floor_dbm + N(0, σ²)`, one fresh draw per 1-ms slot (spec §3.4 item 4).

use crate::rng::SimRng;
use rand::Rng;
use std::path::{Path, PathBuf};
use wsn_proto::time::Instant;

/// Default CPM history length k (samples = ms). [CODE t2: sim_noise.h NOISE_HISTORY],
/// [AMBIG-2 → chosen k = 20]
pub const DEFAULT_HISTORY: usize = 20;
/// Largest supported CPM history: 25 bins × 5 bits fill a `u128` key. \[DERIVED\]
pub const MAX_HISTORY: usize = 25;

/// Largest standard deviation of the Gaussian noise model, dB.
pub const MAX_SIGMA_DB: f64 = 50.0;
/// Default gap after which a node's CPM state is re-seeded instead of walked, in seconds; the
/// trace autocorrelation is ≤ 0.03 at 10 s. [REC §3.4], [MEASURED-HERE §3.3]
pub const DEFAULT_RESET_GAP_S: f64 = 10.0;
/// Lower edge of the CPM key range, dBm; values outside the range count as this value.
/// [CODE t2: sim_noise.h NOISE_MIN]
pub const KEY_MIN_DBM: i32 = -115;
/// Upper edge of the CPM key range, dBm. [CODE t2: sim_noise.h NOISE_MAX]
pub const KEY_MAX_DBM: i32 = -5;
/// Width of a CPM key bin, dB. [CODE t2: sim_noise.h NOISE_QUANTIZE_INTERVAL]
pub const KEY_BIN_DB: i32 = 5;
/// Width of the Gaussian model's range used by [`NoiseModel::min_dbm`], in standard deviations.
/// [REC: P(N(0,1) < −6) ≈ 1e-9]
pub const GAUSSIAN_MIN_SIGMAS: f64 = 6.0;

/// Nanoseconds per noise slot (TOSSIM generates one noise sample per ms). [CODE t2: sim_noise.c]
const NS_PER_MS: u64 = 1_000_000;
/// "No sample generated yet".
const NONE_MS: u64 = u64::MAX;

fn default_history() -> usize {
    DEFAULT_HISTORY
}
fn default_reset_gap_s() -> f64 {
    DEFAULT_RESET_GAP_S
}

/// Which noise model to use, as written in a scenario file (`model = "cpm"`, …).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize, PartialEq)]
#[serde(
    tag = "model",
    rename_all = "snake_case",
    deny_unknown_fields,
    expecting = "a noise table with a `model`, e.g. { model = \"constant\", floor_dbm = -98.0 }"
)]
pub enum NoiseConfig {
    /// Closest-pattern matching on a measured trace (TOSSIM's default model).
    Cpm {
        /// Path of the trace file (one dBm reading per line), relative to the base directory.
        trace: String,
        /// History length k in samples (1..=25). Default 20.
        #[serde(default = "default_history")]
        history: usize,
        /// Gap (seconds) after which a node's state is re-seeded at random instead of walked.
        /// Default 10 s; `inf` disables the shortcut.
        #[serde(default = "default_reset_gap_s")]
        reset_gap_s: f64,
        /// Use only the first N readings of the trace (e.g. 1000 to mimic TOSSIM scripts).
        #[serde(default)]
        max_samples: Option<usize>,
    },
    /// Replay of a measured trace with a random per-node offset.
    Replay {
        /// Path of the trace file, relative to the base directory.
        trace: String,
    },
    /// Constant noise floor.
    Constant {
        /// The floor in dBm (before the per-node offset).
        floor_dbm: f64,
    },
    /// Floor plus white Gaussian noise, drawn once per 1-ms slot.
    Gaussian {
        /// The mean floor in dBm (before the per-node offset).
        floor_dbm: f64,
        /// Standard deviation in dB.
        sigma_db: f64,
    },
}

/// Errors while building a noise model.
#[derive(Debug, thiserror::Error)]
pub enum NoiseError {
    /// The trace file could not be read.
    #[error("cannot read noise trace {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of the trace is not a noise reading.
    #[error("{}:{line}: not a noise reading in dBm: {text:?}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The offending text (trimmed).
        text: String,
    },
    /// A reading outside what a radio measures as noise.
    #[error("{}:{line}: noise reading {value} dBm: must be within −200 … 0 dBm", path.display())]
    OutOfRange {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// The reading.
        value: i16,
    },
    /// The trace has too few readings for the model.
    #[error("noise trace {} has {len} readings; the {model} model needs at least {needed}", path.display())]
    TooShort {
        /// The file (or `<in-memory trace>`).
        path: PathBuf,
        /// Readings available (after `max_samples`).
        len: usize,
        /// Readings needed.
        needed: usize,
        /// The model name.
        model: &'static str,
    },
    /// A parameter is out of range; the message names its scenario key (`radio.noise.history =
    /// 0: …`).
    #[error("{0}")]
    Config(String),
}

/// The shared, immutable part of a noise model (trace, CPM tables). Build it once per run and
/// pass it to [`NodeNoise::sample`].
#[derive(Clone, Debug)]
pub struct NoiseModel {
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Cpm(CpmTable),
    /// The trace as packed entries (value − `min` and the length of the run that follows), two
    /// bytes per slot in one array: a node reads one cache line per 32 ms of trace. The trace
    /// is read far apart by every node, so this halves the noise model's cache misses against
    /// separate value and run arrays.
    Replay {
        trace: Vec<ReplayEntry>,
        min: i16,
    },
    Constant {
        floor: f64,
    },
    Gaussian {
        floor: f64,
        sigma: f64,
    },
}

/// One slot of a replayed trace.
#[derive(Clone, Copy, Debug)]
struct ReplayEntry {
    /// The slot's value minus the trace minimum, dB.
    above_min: u8,
    /// How many consecutive slots after this one carry the same value (capped at `u8::MAX`; not
    /// across the wrap-around), so that a query inside such a run needs no new sample.
    same_after: u8,
}

/// CPM as a walk over trace positions (see the module documentation).
#[derive(Clone, Debug)]
struct CpmTable {
    trace: Vec<i16>,
    /// History length k.
    k: u32,
    /// Trace length L.
    len: u32,
    /// For each position `p` in `0..=L`: where the walk from `p` next needs a random draw. Read
    /// only when a node starts or re-seeds; afterwards each node carries its current [`Hop`].
    hop: Vec<Hop>,
    /// For each random-branch group (and the end-of-trace group): the states reached by drawing
    /// each of its occurrences `o`, i.e. `hop[o + 1]`, contiguous per group. Only these entries are
    /// touched at branch points, and they are few (≈ 13 % of the positions for meyer-heavy, k = 20),
    /// so they stay in cache.
    succ: Vec<Hop>,
    /// Per position `p` in `0..L`: 0 if the value emitted from `p` is `trace[p]`; otherwise
    /// `1 + g` where `same[g]` is `p`'s same-bin group (the value is then drawn from it).
    emit_group: Vec<u32>,
    /// (start, count) in `same_occ` of the keys that occur several times but are always followed
    /// by values of one bin.
    same: Vec<(u32, u32)>,
    /// Occurrence positions of the `same` groups.
    same_occ: Vec<u32>,
    /// Whether the key at position `L` occurs in the trace (if not, the fallback applies).
    #[cfg_attr(not(test), allow(dead_code))]
    end_key_known: bool,
    /// Range in `succ` drawn from at position `L` (also stored in `hop[L]`).
    #[cfg_attr(not(test), allow(dead_code))]
    end_group: (u32, u32),
    /// Number of occurrences of the most frequent key (the fallback).
    #[cfg_attr(not(test), allow(dead_code))]
    fallback_count: u32,
    /// Gap in ms beyond which a node re-seeds instead of walking.
    reset_gap_ms: u64,
    min: i16,
}

/// Walk state at position `pos`: the first position `branch ≥ pos` where the next key is random
/// (a key whose occurrences are followed by values of different bins, or the trace end `L`), and
/// the range (`start`, `count`) of `succ` drawn from there.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Hop {
    pos: u32,
    branch: u32,
    start: u32,
    count: u32,
}

/// CPM key bin of a reading: 1..=23 over [−115, −5] dBm; out-of-range values count as −115.
/// [CODE t2: sim_noise.c search_bin_num]
#[inline]
fn key_bin(v: i16) -> u8 {
    let v = v as i32;
    let v = if !(KEY_MIN_DBM..=KEY_MAX_DBM).contains(&v) { KEY_MIN_DBM } else { v };
    ((v - KEY_MIN_DBM) / KEY_BIN_DB + 1) as u8
}

impl CpmTable {
    /// Builds the tables. With `skip_same_bin`, a key whose occurrences are all followed by
    /// values of the same bin does not count as a branch point: its next key is certain, and only
    /// the emitted value (drawn when that sample is the one queried) is random. Without it, every
    /// key with ≥ 2 occurrences is a branch point, which reproduces a step-by-step generator draw
    /// for draw (used by the tests).
    fn build(trace: Vec<i16>, k: usize, reset_gap_ms: u64, skip_same_bin: bool) -> CpmTable {
        let l = trace.len();
        debug_assert!((1..=MAX_HISTORY).contains(&k) && l > k);
        let mask: u128 = if 5 * k >= 128 { u128::MAX } else { (1u128 << (5 * k)) - 1 };
        let bins: Vec<u8> = trace.iter().map(|&v| key_bin(v)).collect();
        // order = (key of p, p) for the positions p in k..L that have a successor.
        let mut order: Vec<(u128, u32)> = Vec::with_capacity(l - k);
        let mut key: u128 = 0;
        for (i, &b) in bins.iter().enumerate() {
            if i >= k {
                order.push((key, i as u32));
            }
            key = ((key << 5) | b as u128) & mask;
        }
        let end_key = key;
        order.sort_unstable();

        // Runs of equal keys = groups of occurrences (positions ascending within a run).
        #[derive(Clone, Copy, PartialEq)]
        enum Class {
            Single,
            SameBin,
            Random,
        }
        let mut runs: Vec<(usize, usize, Class)> = Vec::new();
        let mut s = 0usize;
        while s < order.len() {
            let mut e = s + 1;
            while e < order.len() && order[e].0 == order[s].0 {
                e += 1;
            }
            let b0 = bins[order[s].1 as usize];
            let class = if e - s == 1 {
                Class::Single
            } else if skip_same_bin && order[s..e].iter().all(|&(_, p)| bins[p as usize] == b0) {
                Class::SameBin
            } else {
                Class::Random
            };
            runs.push((s, e, class));
            s = e;
        }
        // Fallback = the key with most occurrences; ties → the one seen first in the trace.
        let mut best = 0usize;
        for (r, &(s, e, _)) in runs.iter().enumerate() {
            let (bs, be, _) = runs[best];
            if e - s > be - bs || (e - s == be - bs && order[s].1 < order[bs].1) {
                best = r;
            }
        }
        let end_run = runs.binary_search_by(|&(s, _, _)| order[s].0.cmp(&end_key)).ok();
        let end_key_known = end_run.is_some();
        let end_run = end_run.unwrap_or(best);

        // Ranges in `succ` for the random groups, then one for the end group.
        let mut succ_range = vec![(0u32, 0u32); runs.len()];
        let mut n_succ = 0u32;
        let mut branch_at = vec![false; l + 1];
        let mut emit_group = vec![0u32; l];
        let mut same = Vec::new();
        let mut same_occ = Vec::new();
        for (r, &(s, e, class)) in runs.iter().enumerate() {
            match class {
                Class::Random => {
                    succ_range[r] = (n_succ, (e - s) as u32);
                    n_succ += (e - s) as u32;
                    for &(_, p) in &order[s..e] {
                        branch_at[p as usize] = true;
                    }
                }
                Class::SameBin => {
                    same.push((same_occ.len() as u32, (e - s) as u32));
                    for &(_, p) in &order[s..e] {
                        emit_group[p as usize] = same.len() as u32;
                        same_occ.push(p);
                    }
                }
                Class::Single => {}
            }
        }
        let end_group = if runs[end_run].2 == Class::Random {
            succ_range[end_run]
        } else {
            let (s, e, _) = runs[end_run];
            (n_succ, (e - s) as u32)
        };
        branch_at[l] = true;

        let mut hop = vec![Hop::default(); l + 1];
        let mut next = Hop { pos: l as u32, branch: l as u32, start: end_group.0, count: end_group.1 };
        let mut run_of = vec![0u32; l];
        for (r, &(s, e, _)) in runs.iter().enumerate() {
            for &(_, p) in &order[s..e] {
                run_of[p as usize] = r as u32;
            }
        }
        for p in (0..=l).rev() {
            if p < l && branch_at[p] {
                let (start, count) = succ_range[run_of[p] as usize];
                next = Hop { pos: p as u32, branch: p as u32, start, count };
            }
            hop[p] = Hop { pos: p as u32, ..next };
        }
        drop(run_of);
        let mut succ = Vec::with_capacity(n_succ as usize + end_group.1 as usize);
        for &(s, e, class) in &runs {
            if class == Class::Random {
                succ.extend(order[s..e].iter().map(|&(_, o)| hop[o as usize + 1]));
            }
        }
        if runs[end_run].2 != Class::Random {
            let (s, e, _) = runs[end_run];
            succ.extend(order[s..e].iter().map(|&(_, o)| hop[o as usize + 1]));
        }
        let (bs, be, _) = runs[best];
        let min = trace.iter().copied().min().unwrap_or(0);
        CpmTable {
            trace,
            k: k as u32,
            len: l as u32,
            hop,
            succ,
            emit_group,
            same,
            same_occ,
            end_key_known,
            end_group,
            fallback_count: (be - bs) as u32,
            reset_gap_ms,
            min,
        }
    }

    /// Advances the walk from state `*h` by `steps ≥ 1` samples; returns the last one.
    #[inline]
    fn walk(&self, h: &mut Hop, mut steps: u64, rng: &mut SimRng, ends: &mut u64) -> i16 {
        loop {
            let d = (h.branch - h.pos) as u64;
            if d >= steps {
                // No random key change before the queried sample.
                let last = h.pos + (steps - 1) as u32;
                h.pos = last + 1;
                return self.emit(last, rng);
            }
            steps -= d;
            if h.branch == self.len {
                *ends += 1;
            }
            let pick = if h.count > 1 { rng.gen_range(0..h.count) } else { 0 };
            *h = self.succ[(h.start + pick) as usize];
            steps -= 1;
            if steps == 0 {
                return self.trace[h.pos as usize - 1];
            }
        }
    }

    /// The value emitted from position `p` when its next key is certain: `trace[p]` if the key
    /// occurs once, otherwise the successor of a uniformly drawn occurrence (all of one bin).
    #[inline]
    fn emit(&self, p: u32, rng: &mut SimRng) -> i16 {
        let g = self.emit_group[p as usize];
        if g == 0 {
            return self.trace[p as usize];
        }
        let (start, count) = self.same[g as usize - 1];
        let o = self.same_occ[(start + rng.gen_range(0..count)) as usize];
        self.trace[o as usize]
    }

    /// Re-seeds at a uniformly random position `p ≥ k` and emits one sample from there.
    #[inline]
    fn reseed(&self, h: &mut Hop, rng: &mut SimRng) -> i16 {
        let p = rng.gen_range(self.k..self.len);
        *h = self.hop[p as usize + 1];
        self.trace[p as usize]
    }
}

/// Parses a trace: one reading (dBm) per line; blank lines and `#` comments are skipped,
/// surrounding whitespace ignored. Integers are taken as they are; decimal readings are rounded
/// to the nearest dB (the CPM model works at 1-dB resolution). Readings must lie within
/// −200 … 0 dBm (a CC2420 reads noise near −98 dBm; a positive reading is a typo or not a noise
/// trace), as the noise means of a gain file.
fn parse_trace(text: &str, path: &Path) -> Result<Vec<i16>, NoiseError> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let v = match line.parse::<i16>() {
            Ok(v) => Some(v),
            Err(_) => line
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite() && *f >= i16::MIN as f64 && *f <= i16::MAX as f64)
                .map(|f| f.round() as i16),
        };
        match v {
            Some(v) if !(-200..=0).contains(&v) => {
                return Err(NoiseError::OutOfRange { path: path.to_path_buf(), line: i + 1, value: v })
            }
            Some(v) => out.push(v),
            None => {
                return Err(NoiseError::Parse {
                    path: path.to_path_buf(),
                    line: i + 1,
                    text: line.chars().take(80).collect(),
                })
            }
        }
    }
    Ok(out)
}

/// Reads and parses a trace file.
pub fn read_trace(path: &Path) -> Result<Vec<i16>, NoiseError> {
    let text = crate::read_text(path).map_err(|source| NoiseError::Io { path: path.to_path_buf(), source })?;
    parse_trace(&text, path)
}

impl NoiseModel {
    /// Builds the model described by `cfg`; trace paths are resolved against `base_dir`
    /// (absolute paths are used as they are).
    pub fn new(cfg: &NoiseConfig, base_dir: &Path) -> Result<NoiseModel, NoiseError> {
        match cfg {
            NoiseConfig::Cpm { trace, .. } | NoiseConfig::Replay { trace } => {
                let path = base_dir.join(trace);
                let values = read_trace(&path)?;
                Self::build(cfg, values, &path)
            }
            _ => Self::build(cfg, Vec::new(), Path::new("<none>")),
        }
    }

    /// Builds the model from a trace already in memory (tests, built-in traces). The `trace`
    /// field of the configuration is ignored; for the constant and Gaussian models the trace is
    /// ignored.
    pub fn from_trace(cfg: &NoiseConfig, trace: Vec<i16>) -> Result<NoiseModel, NoiseError> {
        Self::build(cfg, trace, Path::new("<in-memory trace>"))
    }

    fn build(cfg: &NoiseConfig, mut trace: Vec<i16>, path: &Path) -> Result<NoiseModel, NoiseError> {
        // A floor in the range a trace reading must lie in (a floor near −∞ would also keep every
        // link, the cut-off being the lowest noise less a margin).
        fn check_floor(floor_dbm: f64) -> Result<(), NoiseError> {
            if (-200.0..=0.0).contains(&floor_dbm) {
                Ok(())
            } else {
                Err(NoiseError::Config(format!("radio.noise.floor_dbm = {floor_dbm}: must be within −200 … 0 dBm")))
            }
        }
        let kind = match *cfg {
            NoiseConfig::Cpm { history, reset_gap_s, max_samples, .. } => {
                if !(1..=MAX_HISTORY).contains(&history) {
                    return Err(NoiseError::Config(format!(
                        "radio.noise.history = {history}: the CPM history must be within 1 … {MAX_HISTORY} readings"
                    )));
                }
                if reset_gap_s.is_nan() || reset_gap_s < 0.0 {
                    return Err(NoiseError::Config(format!("radio.noise.reset_gap_s = {reset_gap_s}: must be ≥ 0 s")));
                }
                if let Some(n) = max_samples {
                    if n <= history {
                        return Err(NoiseError::Config(format!(
                            "radio.noise.max_samples = {n}: the cpm model with history {history} needs at least {} \
                             readings",
                            history + 1
                        )));
                    }
                    trace.truncate(n);
                }
                if trace.len() <= history {
                    return Err(NoiseError::TooShort {
                        path: path.to_path_buf(),
                        len: trace.len(),
                        needed: history + 1,
                        model: "cpm",
                    });
                }
                if trace.len() >= u32::MAX as usize {
                    return Err(NoiseError::Config("noise trace longer than 2^32 − 1".into()));
                }
                let ms = reset_gap_s * 1000.0;
                let gap = if ms >= u64::MAX as f64 { u64::MAX } else { ms as u64 };
                Kind::Cpm(CpmTable::build(trace, history, gap, true))
            }
            NoiseConfig::Replay { .. } => {
                if trace.is_empty() {
                    return Err(NoiseError::TooShort { path: path.to_path_buf(), len: 0, needed: 1, model: "replay" });
                }
                if trace.len() >= u32::MAX as usize {
                    return Err(NoiseError::Config("noise trace longer than 2^32 − 1".into()));
                }
                let min = trace.iter().copied().min().unwrap_or(0);
                let max = trace.iter().copied().max().unwrap_or(0);
                if i32::from(max) - i32::from(min) > i32::from(u8::MAX) {
                    return Err(NoiseError::Config(format!(
                        "noise trace {} spans {min} to {max} dBm, more than 255 dB: not a noise trace",
                        path.display()
                    )));
                }
                let mut packed = vec![ReplayEntry { above_min: 0, same_after: 0 }; trace.len()];
                for i in (0..trace.len()).rev() {
                    packed[i].above_min = (trace[i] - min) as u8;
                    if i + 1 < trace.len() && trace[i + 1] == trace[i] {
                        packed[i].same_after = packed[i + 1].same_after.saturating_add(1);
                    }
                }
                Kind::Replay { trace: packed, min }
            }
            NoiseConfig::Constant { floor_dbm } => {
                check_floor(floor_dbm)?;
                Kind::Constant { floor: floor_dbm }
            }
            NoiseConfig::Gaussian { floor_dbm, sigma_db } => {
                check_floor(floor_dbm)?;
                // [AMBIG → chosen: at most 50 dB; measured noise spreads a few dB (spec §3), and
                // beyond tens of dB the draws saturate every comparison]
                if !(0.0..=MAX_SIGMA_DB).contains(&sigma_db) {
                    return Err(NoiseError::Config(format!(
                        "radio.noise.sigma_db = {sigma_db}: must be within 0 … {MAX_SIGMA_DB} dB"
                    )));
                }
                Kind::Gaussian { floor: floor_dbm, sigma: sigma_db }
            }
        };
        Ok(NoiseModel { kind })
    }

    /// The lowest value the model can produce, before per-node offsets (CPM/replay: the trace
    /// minimum; constant: the floor; Gaussian: floor − 6σ). Used for link pruning.
    pub fn min_dbm(&self) -> f64 {
        match &self.kind {
            Kind::Cpm(t) => t.min as f64,
            Kind::Replay { min, .. } => *min as f64,
            Kind::Constant { floor } => *floor,
            Kind::Gaussian { floor, sigma } => floor - GAUSSIAN_MIN_SIGMAS * sigma,
        }
    }

    /// The long-run distribution of the noise level, before per-node offsets, as (dBm, weight)
    /// pairs sorted by level, weights summing to 1: for CPM and replay the share of the trace's
    /// readings at each level (CPM's walk emits trace readings, so its long-run share is the
    /// trace's, up to the same-bin draws); constant: the floor; Gaussian: the normal density
    /// on 0.1-dB steps within ±6σ (renormalised). Used to judge a link's expected delivery on the
    /// quiet channel (the good-tree freeze, [`crate::network`]), never in a run's own draws.
    pub fn level_distribution(&self) -> Vec<(f64, f64)> {
        fn histogram(values: impl Iterator<Item = (i16, f64)>) -> Vec<(f64, f64)> {
            let mut counts = std::collections::BTreeMap::<i16, f64>::new();
            let mut total = 0.0;
            for (v, w) in values {
                *counts.entry(v).or_insert(0.0) += w;
                total += w;
            }
            counts.into_iter().map(|(v, w)| (f64::from(v), w / total)).collect()
        }
        match &self.kind {
            Kind::Cpm(t) => histogram(t.trace.iter().map(|&v| (v, 1.0))),
            Kind::Replay { trace, min } => histogram(trace.iter().map(|e| (min + i16::from(e.above_min), 1.0))),
            Kind::Constant { floor } => vec![(*floor, 1.0)],
            Kind::Gaussian { floor, sigma } => {
                if *sigma <= 0.0 {
                    return vec![(*floor, 1.0)];
                }
                let steps = (GAUSSIAN_MIN_SIGMAS * sigma / 0.1).ceil() as i64;
                let raw: Vec<(f64, f64)> = (-steps..=steps)
                    .map(|k| {
                        let x = k as f64 * 0.1;
                        (floor + x, (-0.5 * (x / sigma).powi(2)).exp())
                    })
                    .collect();
                let total: f64 = raw.iter().map(|p| p.1).sum();
                raw.into_iter().map(|(v, w)| (v, w / total)).collect()
            }
        }
    }

    /// The trace length (CPM and replay), or `None`.
    pub fn trace_len(&self) -> Option<usize> {
        match &self.kind {
            Kind::Cpm(t) => Some(t.trace.len()),
            Kind::Replay { trace, .. } => Some(trace.len()),
            _ => None,
        }
    }

    /// Creates the per-node state. `offset_db` is the node's noise-floor offset δ_i (spec §2.2),
    /// added to every sample; `rng` is the node's own noise stream (e.g.
    /// `rng::stream(seed, run, node, Purpose::Noise)`).
    pub fn node(&self, offset_db: f64, mut rng: SimRng) -> NodeNoise {
        let state = match &self.kind {
            Kind::Cpm(t) => NodeState::Cpm { hop: t.hop[0], ends: 0 },
            Kind::Replay { trace, .. } => NodeState::Replay { offset: rng.gen_range(0..trace.len() as u32), pos: 0 },
            Kind::Constant { .. } => NodeState::Constant,
            Kind::Gaussian { .. } => NodeState::Gaussian { spare: None },
        };
        NodeNoise { offset: offset_db, rng, last_ms: NONE_MS, last: self.min_dbm(), state }
    }
}

/// One node's noise process. O(1) memory; the shared tables live in [`NoiseModel`].
#[derive(Clone, Debug)]
pub struct NodeNoise {
    offset: f64,
    rng: SimRng,
    /// Slot (ms) of the last generated sample, or `NONE_MS`.
    last_ms: u64,
    /// Last generated value, without the offset.
    last: f64,
    state: NodeState,
}

#[derive(Clone, Debug)]
enum NodeState {
    Cpm {
        hop: Hop,
        ends: u64,
    },
    /// `pos` is the trace index of the last generated slot (valid once one was generated).
    Replay {
        offset: u32,
        pos: u32,
    },
    Constant,
    Gaussian {
        spare: Option<f64>,
    },
}

/// The 1-ms noise slot of `t`: t rounded to the nearest millisecond. [CODE t2: sim_noise.c]
#[inline]
pub fn slot_ms(t: Instant) -> u64 {
    let ns = t.as_nanos();
    ns / NS_PER_MS + u64::from(ns % NS_PER_MS >= NS_PER_MS / 2)
}

/// Two independent standard normals from two uniforms (Box–Muller); `u1` in [0, 1).
#[inline]
pub(crate) fn box_muller(u1: f64, u2: f64) -> (f64, f64) {
    let r = (-2.0 * (1.0 - u1).ln()).sqrt();
    let a = core::f64::consts::TAU * u2;
    (r * a.cos(), r * a.sin())
}

/// The end (ns, exclusive) of the validity of a sample taken in slot `ms` whose value holds for
/// `run` more slots: the query times that map to those slots.
#[inline]
fn slot_end_ns(ms: u64, run: u64) -> u64 {
    (ms + run) * NS_PER_MS + NS_PER_MS / 2
}

impl NodeNoise {
    /// Noise at the node at time `t`, in dBm (including the node's offset). The same value is
    /// returned for every query inside the same 1-ms slot ([`slot_ms`]). A query for an earlier
    /// slot than the last generated one returns the last value.
    #[inline]
    pub fn sample(&mut self, model: &NoiseModel, t: Instant) -> f64 {
        let m = slot_ms(t);
        if self.last_ms != NONE_MS && m <= self.last_ms {
            return self.last + self.offset;
        }
        self.sample_new(model, m)
    }

    /// A sample for a slot `m` later than the last generated one (or the first sample).
    fn sample_new(&mut self, model: &NoiseModel, m: u64) -> f64 {
        let v = match (&model.kind, &mut self.state) {
            (Kind::Cpm(tab), NodeState::Cpm { hop, ends }) => {
                // Steps since the last sample; the first call walks from "slot −1".
                let steps = if self.last_ms == NONE_MS { m.saturating_add(1) } else { m - self.last_ms };
                if steps > tab.reset_gap_ms && m >= tab.k as u64 {
                    tab.reseed(hop, &mut self.rng) as f64
                } else {
                    tab.walk(hop, steps, &mut self.rng, ends) as f64
                }
            }
            (Kind::Replay { trace, min }, NodeState::Replay { offset, pos }) => {
                // Index (o_i + m) mod L. Slots only move forward, so a step shorter than the trace
                // advances the last index with one wrap instead of a 64-bit division (which cost
                // more than the rest of the query); the first query and long gaps take the modulo.
                let len = trace.len() as u64;
                let steps = m.wrapping_sub(self.last_ms);
                let p = if self.last_ms != NONE_MS && steps < len {
                    let p = *pos as u64 + steps;
                    if p >= len {
                        p - len
                    } else {
                        p
                    }
                } else {
                    // offset < len, so one modulo suffices (m < 2^63 ns-derived milliseconds).
                    (*offset as u64 + m) % len
                };
                *pos = p as u32;
                (*min + i16::from(trace[p as usize].above_min)) as f64
            }
            (Kind::Constant { floor }, NodeState::Constant) => *floor,
            (Kind::Gaussian { floor, sigma }, NodeState::Gaussian { spare }) => {
                let z = match spare.take() {
                    Some(z) => z,
                    None => {
                        let (z0, z1) = box_muller(self.rng.gen::<f64>(), self.rng.gen::<f64>());
                        *spare = Some(z1);
                        z0
                    }
                };
                floor + sigma * z
            }
            // The node state was made by another model: keep the last value.
            _ => return self.last + self.offset,
        };
        self.last_ms = m;
        self.last = v;
        v + self.offset
    }

    /// [`NodeNoise::sample`] returns the last generated sample again, without drawing, for every
    /// query time (ns) before this one: the end of the last sample's 1-ms slot (0 before the
    /// first sample). Every query time before [`NodeNoise::same_until_ns`] gets the same value.
    #[inline]
    pub fn valid_until_ns(&self) -> u64 {
        if self.last_ms == NONE_MS {
            0
        } else {
            slot_end_ns(self.last_ms, 0)
        }
    }

    /// Until when (ns, exclusive) a query is certain to return the last generated value: the end
    /// of its slot, or for replay noise the end of the run of equal trace values it belongs to,
    /// and never for constant noise. A query before this time may skip [`NodeNoise::sample`]:
    /// neither model draws from the node's stream, so skipping it changes nothing.
    #[inline]
    pub fn same_until_ns(&self, model: &NoiseModel) -> u64 {
        if self.last_ms == NONE_MS {
            return 0;
        }
        let run = match (&model.kind, &self.state) {
            (Kind::Replay { trace, .. }, NodeState::Replay { pos, .. }) => trace[*pos as usize].same_after as u64,
            (Kind::Constant { .. }, NodeState::Constant) => return u64::MAX,
            _ => 0,
        };
        slot_end_ns(self.last_ms, run)
    }

    /// [`NodeNoise::sample`] at `t`, then [`NodeNoise::same_until_ns`]: the same value, the same
    /// state and the same time, in one call. Replay noise queried at a later slot (within one
    /// trace length of the last one, the channel's common case) takes a path of its own that
    /// reads the trace entry once, without the general model dispatch.
    #[inline]
    pub fn sample_and_until(&mut self, model: &NoiseModel, t: Instant) -> (f64, u64) {
        if let (Kind::Replay { trace, min }, NodeState::Replay { pos, .. }) = (&model.kind, &mut self.state) {
            let m = slot_ms(t);
            let len = trace.len() as u64;
            if self.last_ms != NONE_MS && m > self.last_ms && m - self.last_ms < len {
                // As in `sample_new`: advance the last index with at most one wrap.
                let p = *pos as u64 + (m - self.last_ms);
                let p = if p >= len { p - len } else { p };
                *pos = p as u32;
                let e = trace[p as usize];
                let v = (*min + i16::from(e.above_min)) as f64;
                self.last_ms = m;
                self.last = v;
                return (v + self.offset, slot_end_ns(m, u64::from(e.same_after)));
            }
        }
        self.sample_and_until_general(model, t)
    }

    /// [`NodeNoise::sample_and_until`] for every other case (kept out of line, so that the
    /// replay path needs no stack frame).
    #[cold]
    #[inline(never)]
    fn sample_and_until_general(&mut self, model: &NoiseModel, t: Instant) -> (f64, u64) {
        let v = self.sample(model, t);
        (v, self.same_until_ns(model))
    }

    /// The node's noise-floor offset δ_i in dB.
    pub fn offset_db(&self) -> f64 {
        self.offset
    }

    /// How many times this node's CPM walk reached the end of the trace and continued from the
    /// end key (or, if that key is unknown, from the most frequent key). 0 for other models.
    pub fn trace_end_count(&self) -> u64 {
        match self.state {
            NodeState::Cpm { ends, .. } => ends,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{stream, Purpose};

    const HEAVY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/noise/meyer-heavy.txt");
    const SHORT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/noise/meyer-short.txt");

    fn cpm(history: usize, max_samples: Option<usize>) -> NoiseConfig {
        NoiseConfig::Cpm { trace: "meyer-heavy.txt".into(), history, reset_gap_s: DEFAULT_RESET_GAP_S, max_samples }
    }

    fn ms(m: u64) -> Instant {
        Instant::from_millis(m)
    }

    struct Stats {
        mean: f64,
        p90: f64,
        p80: f64,
        p72: f64,
        ac1: f64,
        ac10: f64,
    }

    fn stats(x: &[f64]) -> Stats {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        let ac = |lag: usize| {
            let s: f64 = (0..x.len() - lag).map(|i| (x[i] - mean) * (x[i + lag] - mean)).sum();
            s / (x.len() - lag) as f64 / var
        };
        let frac = |thr: f64| x.iter().filter(|&&v| v >= thr).count() as f64 / n;
        Stats { mean, p90: frac(-90.0), p80: frac(-80.0), p72: frac(-72.0), ac1: ac(1), ac10: ac(10) }
    }

    /// The level distribution (the good-tree freeze's noise): a replayed trace's readings by
    /// share, a constant floor, and a Gaussian with its mean and spread.
    #[test]
    fn level_distribution_of_each_model() {
        let cfg = NoiseConfig::Replay { trace: String::new() };
        let m = NoiseModel::from_trace(&cfg, vec![-98, -90, -98, -95]).unwrap();
        assert_eq!(m.level_distribution(), vec![(-98.0, 0.5), (-95.0, 0.25), (-90.0, 0.25)]);
        let cfg = NoiseConfig::Cpm { trace: String::new(), history: 1, reset_gap_s: 10.0, max_samples: None };
        let m = NoiseModel::from_trace(&cfg, vec![-98, -90, -98, -95]).unwrap();
        assert_eq!(m.level_distribution(), vec![(-98.0, 0.5), (-95.0, 0.25), (-90.0, 0.25)]);
        let m = NoiseModel::new(&NoiseConfig::Constant { floor_dbm: -97.5 }, Path::new(".")).unwrap();
        assert_eq!(m.level_distribution(), vec![(-97.5, 1.0)]);
        let m = NoiseModel::new(&NoiseConfig::Gaussian { floor_dbm: -95.0, sigma_db: 2.0 }, Path::new(".")).unwrap();
        let d = m.level_distribution();
        let total: f64 = d.iter().map(|p| p.1).sum();
        let mean: f64 = d.iter().map(|p| p.0 * p.1).sum();
        let var: f64 = d.iter().map(|p| (p.0 - mean).powi(2) * p.1).sum();
        assert!((total - 1.0).abs() < 1e-12 && (mean + 95.0).abs() < 1e-9, "{total} {mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.01, "{}", var.sqrt());
        assert!(d.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn parses_the_shipped_traces() {
        let heavy = read_trace(Path::new(HEAVY)).unwrap();
        assert_eq!(heavy.len(), 196_608);
        let mean = heavy.iter().map(|&v| v as f64).sum::<f64>() / heavy.len() as f64;
        assert!((mean - -87.4).abs() < 0.05, "trace mean {mean}");
        assert_eq!(*heavy.iter().min().unwrap(), -102);
        assert_eq!(*heavy.iter().max().unwrap(), -28);
        let short = read_trace(Path::new(SHORT)).unwrap();
        assert_eq!(short.len(), 998);
    }

    #[test]
    fn cpm_k20_matches_spec_statistics() {
        let trace = read_trace(Path::new(HEAVY)).unwrap();
        let model = NoiseModel::from_trace(&cpm(20, None), trace).unwrap();
        assert_eq!(model.min_dbm(), -102.0);
        // 8 independent nodes × 125 000 ms, queried every ms. The trace is correlated over
        // seconds (autocorrelation 0.16 at 1 s), so one node's 100 s wander around the mean;
        // pooling nodes gives stable figures.
        let mut all = Vec::new();
        let mut pooled_ac = (0.0, 0.0);
        for node in 0..8 {
            let mut nn = model.node(0.0, stream(42, 0, node, Purpose::Noise));
            let x: Vec<f64> = (0..125_000).map(|m| nn.sample(&model, ms(m))).collect();
            let s = stats(&x);
            eprintln!(
                "node {node}: mean {:.2} P≥-90 {:.3} P≥-80 {:.3} P≥-72 {:.3} ac1 {:.3} ac10 {:.3}",
                s.mean, s.p90, s.p80, s.p72, s.ac1, s.ac10
            );
            assert!((s.mean - -87.4).abs() < 2.0, "node mean {}", s.mean);
            pooled_ac.0 += s.ac1 / 8.0;
            pooled_ac.1 += s.ac10 / 8.0;
            all.extend(x);
        }
        let s = stats(&all);
        eprintln!(
            "pooled: mean {:.2} P≥-90 {:.3} P≥-80 {:.3} P≥-72 {:.3} ac1 {:.3} ac10 {:.3}",
            s.mean, s.p90, s.p80, s.p72, pooled_ac.0, pooled_ac.1
        );
        assert!((s.mean - -87.4).abs() < 0.7, "mean {}", s.mean);
        assert!((s.p90 - 0.58).abs() < 0.03, "P(≥−90) {}", s.p90);
        assert!((s.p72 - 0.03).abs() < 0.01, "P(≥−72) {}", s.p72);
        assert!((pooled_ac.0 - 0.48).abs() < 0.05, "lag-1 {}", pooled_ac.0);
        assert!((0.25..=0.35).contains(&pooled_ac.1), "lag-10 {}", pooled_ac.1);
    }

    /// A direct, step-by-step CPM generator written the way TOSSIM describes it (spec §3.1):
    /// history key → list of observed successors in trace order; one draw per ms.
    struct Naive {
        succ: std::collections::HashMap<Vec<u8>, Vec<i16>>,
        fallback: Vec<u8>,
        key: Vec<u8>,
        trace: Vec<i16>,
        k: usize,
        m: usize,
    }

    impl Naive {
        fn new(trace: &[i16], k: usize) -> Naive {
            let bins: Vec<u8> = trace.iter().map(|&v| key_bin(v)).collect();
            let mut succ: std::collections::HashMap<Vec<u8>, Vec<i16>> = Default::default();
            let mut first_seen: Vec<Vec<u8>> = Vec::new();
            for i in k..trace.len() {
                let key = bins[i - k..i].to_vec();
                let e = succ.entry(key.clone()).or_default();
                if e.is_empty() {
                    first_seen.push(key);
                }
                e.push(trace[i]);
            }
            let mut fallback = first_seen[0].clone();
            for key in &first_seen {
                if succ[key].len() > succ[&fallback].len() {
                    fallback = key.clone();
                }
            }
            Naive { succ, fallback, key: bins[..k].to_vec(), trace: trace.to_vec(), k, m: 0 }
        }
        fn next(&mut self, rng: &mut SimRng) -> i16 {
            let m = self.m;
            self.m += 1;
            if m < self.k {
                return self.trace[m];
            }
            if !self.succ.contains_key(&self.key) {
                self.key = self.fallback.clone();
            }
            let list = &self.succ[&self.key];
            let v = if list.len() == 1 { list[0] } else { list[rng.gen_range(0..list.len() as u32) as usize] };
            self.key.remove(0);
            self.key.push(key_bin(v));
            v
        }
    }

    #[test]
    fn cpm_walk_equals_step_by_step_generator() {
        // Without the same-bin shortcut, the position walk makes exactly the draws of a
        // straightforward key-table generator, so the outputs coincide value for value, across
        // the trace-end fallback and for jumps over many slots.
        let heavy = read_trace(Path::new(HEAVY)).unwrap();
        let short = read_trace(Path::new(SHORT)).unwrap();
        for (trace, k, n) in [(&short, 20, 30_000u64), (&short, 3, 20_000), (&heavy, 20, 60_000), (&heavy, 10, 30_000)]
        {
            let tab = CpmTable::build(trace.clone(), k, u64::MAX, false);
            let mut naive = Naive::new(trace, k);
            let mut r1 = stream(8, 0, k as u32, Purpose::Noise);
            let mut r2 = r1.clone();
            let (mut pos, mut ends) = (tab.hop[0], 0u64);
            let mut m = 0u64;
            while m < n {
                let gap = 1 + (m * 7919) % 37; // irregular query gaps, 1..37 ms
                let mut want = 0;
                for _ in 0..gap {
                    want = naive.next(&mut r2);
                }
                let got = tab.walk(&mut pos, gap, &mut r1, &mut ends);
                assert_eq!(got, want, "k {k}, slot {}", m + gap - 1);
                m += gap;
            }
            if trace.len() < 2000 {
                assert!(ends > 10, "the trace end should be reached ({ends})");
            }
        }
    }

    #[test]
    fn same_bin_shortcut_keeps_the_statistics() {
        let trace = read_trace(Path::new(HEAVY)).unwrap();
        let fast = CpmTable::build(trace.clone(), 20, u64::MAX, true);
        let slow = CpmTable::build(trace, 20, u64::MAX, false);
        let run = |tab: &CpmTable, seed: u64| {
            let mut rng = stream(seed, 0, 0, Purpose::Noise);
            let mut ends = 0u64;
            let mut x = Vec::new();
            for _ in 0..6 {
                let mut pos = tab.hop[0];
                x.extend((0..100_000).map(|_| tab.walk(&mut pos, 1, &mut rng, &mut ends) as f64));
            }
            stats(&x)
        };
        let (a, b) = (run(&fast, 1), run(&slow, 2));
        assert!((a.mean - b.mean).abs() < 0.8, "{} vs {}", a.mean, b.mean);
        assert!((a.p90 - b.p90).abs() < 0.04, "{} vs {}", a.p90, b.p90);
        assert!((a.p80 - b.p80).abs() < 0.03, "{} vs {}", a.p80, b.p80);
        assert!((a.ac1 - b.ac1).abs() < 0.04 && (a.ac10 - b.ac10).abs() < 0.05);
    }

    #[test]
    fn cpm_sparse_queries_have_the_same_marginal() {
        // Queries every 7 ms (multi-step catch-up) and every 20 s (reset path).
        let trace = read_trace(Path::new(HEAVY)).unwrap();
        let model = NoiseModel::from_trace(&cpm(20, None), trace).unwrap();
        let mut a = model.node(0.0, stream(5, 0, 1, Purpose::Noise));
        let x: Vec<f64> = (0..60_000).map(|i| a.sample(&model, ms(i * 7))).collect();
        let s = stats(&x);
        assert!((s.mean - -87.4).abs() < 0.7 && (s.p90 - 0.58).abs() < 0.03, "{}", s.mean);
        let mut b = model.node(0.0, stream(5, 0, 2, Purpose::Noise));
        let y: Vec<f64> = (1..40_000).map(|i| b.sample(&model, ms(i * 20_000))).collect();
        let s = stats(&y);
        assert!((s.mean - -87.4).abs() < 0.7 && (s.p90 - 0.585).abs() < 0.03, "{}", s.mean);
        assert!(s.ac1.abs() < 0.05, "reset samples should be independent: {}", s.ac1);
    }

    #[test]
    fn same_value_within_a_slot_and_offset_applied() {
        let trace = read_trace(Path::new(HEAVY)).unwrap();
        let model = NoiseModel::from_trace(&cpm(20, None), trace).unwrap();
        let mut n = model.node(-2.5, stream(1, 0, 0, Purpose::Noise));
        let mut m0 = model.node(0.0, stream(1, 0, 0, Purpose::Noise));
        for m in [25u64, 26, 40, 1000, 1001, 5000] {
            let base = m * NS_PER_MS;
            let v = n.sample(&model, Instant(base - 500_000)); // rounds up to m
            for dt in [-400_000i64, -1, 0, 1, 250_000, 499_999] {
                let t = Instant((base as i64 + dt) as u64);
                assert_eq!(n.sample(&model, t), v);
            }
            assert_eq!(m0.sample(&model, Instant(base)) - 2.5, v);
        }
        // An earlier slot returns the last value, without panicking.
        let last = n.sample(&model, ms(5000));
        assert_eq!(n.sample(&model, ms(30)), last);
        assert_eq!(slot_ms(Instant(1_499_999)), 1);
        assert_eq!(slot_ms(Instant(1_500_000)), 2);
        assert_eq!(slot_ms(Instant::MAX), u64::MAX / NS_PER_MS + 1);
    }

    #[test]
    fn deterministic_for_a_seed() {
        let trace = read_trace(Path::new(HEAVY)).unwrap();
        let model = NoiseModel::from_trace(&cpm(20, None), trace).unwrap();
        let run = |seed: u64| {
            let mut n = model.node(0.0, stream(seed, 0, 7, Purpose::Noise));
            (0..20_000u64).map(|i| n.sample(&model, Instant(i * 3_300_000))).collect::<Vec<_>>()
        };
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
    }

    #[test]
    fn first_k_ms_replay_the_trace() {
        let trace = read_trace(Path::new(HEAVY)).unwrap();
        let model = NoiseModel::from_trace(&cpm(20, None), trace.clone()).unwrap();
        for seed in 0..3 {
            let mut n = model.node(0.0, stream(seed, 0, 0, Purpose::Noise));
            for m in 0..20u64 {
                assert_eq!(n.sample(&model, ms(m)), trace[m as usize] as f64);
            }
            // Sparse queries inside the prefix too.
            let mut n = model.node(0.0, stream(seed, 0, 1, Purpose::Noise));
            assert_eq!(n.sample(&model, ms(5)), trace[5] as f64);
            assert_eq!(n.sample(&model, ms(19)), trace[19] as f64);
        }
        // With k = 10 only 10 ms are fixed.
        let model = NoiseModel::from_trace(&cpm(10, None), trace.clone()).unwrap();
        let mut n = model.node(0.0, stream(0, 0, 0, Purpose::Noise));
        for m in 0..10u64 {
            assert_eq!(n.sample(&model, ms(m)), trace[m as usize] as f64);
        }
    }

    #[test]
    fn fallback_fires_at_end_of_short_trace_and_walk_continues() {
        let trace = read_trace(Path::new(SHORT)).unwrap();
        let cfg =
            NoiseConfig::Cpm { trace: "meyer-short.txt".into(), history: 20, reset_gap_s: 10.0, max_samples: None };
        let model = NoiseModel::from_trace(&cfg, trace.clone()).unwrap();
        let Kind::Cpm(tab) = &model.kind else { unreachable!() };
        assert!(!tab.end_key_known, "meyer-short's final history should be unknown");
        let mut n = model.node(0.0, stream(3, 0, 0, Purpose::Noise));
        let x: Vec<f64> = (0..20_000).map(|m| n.sample(&model, ms(m))).collect();
        let ends = n.trace_end_count();
        // Spec §3.2: about every 500 ms with this trace.
        assert!((15..=120).contains(&ends), "trace end reached {ends} times");
        let lo = *trace.iter().min().unwrap() as f64;
        let hi = *trace.iter().max().unwrap() as f64;
        assert!(x.iter().all(|&v| v >= lo && v <= hi));
        // The process keeps moving after the fallback (not stuck on one value).
        let tail = &x[15_000..];
        assert!(tail.iter().any(|&v| v != tail[0]));
        // Walking from the trace end draws from the most frequent key's successors.
        let naive = Naive::new(&trace, 20);
        let list = &naive.succ[&naive.fallback];
        assert!(list.len() >= 2);
        assert_eq!(tab.fallback_count as usize, list.len());
        assert_eq!(tab.end_group.1 as usize, list.len());
        let mut rng = stream(1, 0, 0, Purpose::Noise);
        for _ in 0..50 {
            let mut h = tab.hop[tab.len as usize];
            let mut e = 0;
            let v = tab.walk(&mut h, 1, &mut rng, &mut e);
            assert_eq!(e, 1);
            assert!(list.contains(&v));
        }
    }

    #[test]
    fn cpm_walk_is_fast() {
        // 10 nodes × 1 simulated hour with queries 1–97 ms apart: the cost is the walk over every
        // elapsed ms (≈ 13 % of them are random branch points with k = 20). Release build on the
        // 2-core development VM: 40 nodes × 1 h ≈ 0.5 s.
        let trace = read_trace(Path::new(HEAVY)).unwrap();
        let model = NoiseModel::from_trace(&cpm(20, None), trace).unwrap();
        let start = std::time::Instant::now();
        let mut acc = 0.0;
        for node in 0..10 {
            let mut n = model.node(0.0, stream(2, 0, node, Purpose::Noise));
            let mut t = 0u64;
            while t < 3_600_000 {
                acc += n.sample(&model, ms(t));
                t += 1 + (t * 2_654_435_761 + node as u64) % 97;
            }
        }
        let el = start.elapsed();
        eprintln!("10 nodes × 1 h of CPM: {el:?} (checksum {acc})");
        assert!(el.as_secs_f64() < 2.0, "too slow: {el:?}");
    }

    #[test]
    fn same_until_covers_only_equal_values() {
        // Runs of equal values, including one at the end (no run continues across the wrap).
        let trace: Vec<i16> = vec![-90, -90, -90, -91, -92, -92, -93, -93];
        let m = NoiseModel::from_trace(&NoiseConfig::Replay { trace: "x".into() }, trace.clone()).unwrap();
        for node in 0..8 {
            let mut cached = m.node(0.0, stream(3, 0, node, Purpose::Noise));
            let mut reference = cached.clone();
            let (mut value, mut until) = (f64::NAN, 0u64);
            // Query times in ns with sub-slot jitter, as the channel makes them.
            let mut t = 0u64;
            for k in 0..400u64 {
                t += 137_000 + (k * 7_919) % 1_900_000;
                let exact = reference.sample(&m, Instant::ZERO + wsn_proto::time::Duration::from_nanos(t));
                if t >= until {
                    value = cached.sample(&m, Instant::ZERO + wsn_proto::time::Duration::from_nanos(t));
                    until = cached.same_until_ns(&m);
                    assert!(until >= cached.valid_until_ns());
                }
                assert_eq!(value, exact, "node {node}, t = {t} ns");
            }
        }
        let c = NoiseModel::from_trace(&NoiseConfig::Constant { floor_dbm: -98.0 }, vec![]).unwrap();
        let mut n = c.node(0.0, stream(1, 0, 0, Purpose::Noise));
        assert_eq!(n.same_until_ns(&c), 0, "nothing is valid before the first sample");
        n.sample(&c, ms(5));
        assert_eq!(n.same_until_ns(&c), u64::MAX);
    }

    #[test]
    fn sample_and_until_is_sample_then_same_until() {
        // Every model, with an offset, and gaps from within a slot to past the trace's length
        // (replay's fast path and its fallbacks, the wrap-around included): the fused call gives
        // the same value, the same validity and leaves the same state as the two calls.
        let trace: Vec<i16> = vec![-90, -90, -91, -95, -95, -95, -88, -90, -97, -97, -99];
        let len_ns = trace.len() as u64 * NS_PER_MS;
        let models = [
            NoiseModel::from_trace(&NoiseConfig::Replay { trace: "x".into() }, trace.clone()).unwrap(),
            NoiseModel::from_trace(&cpm(3, None), trace.clone()).unwrap(),
            NoiseModel::from_trace(&NoiseConfig::Constant { floor_dbm: -98.0 }, vec![]).unwrap(),
            NoiseModel::from_trace(&NoiseConfig::Gaussian { floor_dbm: -100.0, sigma_db: 3.0 }, vec![]).unwrap(),
        ];
        let gaps = [0, 1, 400_000, 600_000, NS_PER_MS, 3 * NS_PER_MS, len_ns - NS_PER_MS, len_ns, 5 * len_ns + 3];
        for (mi, m) in models.iter().enumerate() {
            for (node, offset) in [(0u32, 0.0), (1, -1.5), (2, 2.25)] {
                let mut fused = m.node(offset, stream(9, 0, node, Purpose::Noise));
                let mut two = fused.clone();
                let mut t = 0u64;
                for k in 0..600usize {
                    t += gaps[(k * 7 + node as usize) % gaps.len()];
                    let at = Instant(t);
                    let (v, until) = fused.sample_and_until(m, at);
                    let w = two.sample(m, at);
                    assert_eq!(v.to_bits(), w.to_bits(), "model {mi}, node {node}, t = {t} ns");
                    assert_eq!(until, two.same_until_ns(m), "model {mi}, node {node}, t = {t} ns");
                    assert_eq!(fused.last_ms, two.last_ms);
                    match (&fused.state, &two.state) {
                        (NodeState::Replay { pos: a, .. }, NodeState::Replay { pos: b, .. }) => assert_eq!(a, b),
                        _ => assert_eq!(fused.rng.gen::<u64>(), two.rng.gen::<u64>()),
                    }
                }
            }
        }
    }

    #[test]
    fn replay_runs_longer_than_the_packed_cap_and_wide_traces() {
        // A run of 600 equal slots (more than the 255 a packed entry can count), then others:
        // every query still returns exactly the trace value, with or without the run shortcut.
        let mut trace: Vec<i16> = vec![-97; 600];
        trace.extend([-60, -101, -101, -80]);
        let m = NoiseModel::from_trace(&NoiseConfig::Replay { trace: "x".into() }, trace.clone()).unwrap();
        let mut n = m.node(0.0, stream(5, 0, 1, Purpose::Noise));
        let v0 = n.sample(&m, ms(0));
        // The first value occurs at many positions; keep those that match the walk so far.
        let mut o_set: Vec<usize> = (0..trace.len()).filter(|&i| trace[i] as f64 == v0).collect();
        for k in 1..2_000u64 {
            let v = n.sample(&m, ms(k));
            o_set.retain(|&o| trace[(o + k as usize) % trace.len()] as f64 == v);
            assert!(!o_set.is_empty(), "slot {k}: {v} is not the trace's next value");
            assert!(n.same_until_ns(&m) >= n.valid_until_ns());
        }
        // 255 dB between the lowest and the highest value still fits; 256 dB is refused.
        assert!(NoiseModel::from_trace(&NoiseConfig::Replay { trace: "x".into() }, vec![-300, -45]).is_ok());
        let err = NoiseModel::from_trace(&NoiseConfig::Replay { trace: "x".into() }, vec![-300, -44]).unwrap_err();
        assert!(err.to_string().contains("more than 255 dB"), "{err}");
    }

    #[test]
    fn replay_constant_gaussian() {
        let trace: Vec<i16> = vec![-90, -91, -92, -93, -94];
        let m = NoiseModel::from_trace(&NoiseConfig::Replay { trace: "x".into() }, trace.clone()).unwrap();
        assert_eq!(m.min_dbm(), -94.0);
        let mut n = m.node(1.0, stream(1, 0, 0, Purpose::Noise));
        let v0 = n.sample(&m, ms(0));
        let o = trace.iter().position(|&v| v as f64 + 1.0 == v0).unwrap();
        for k in 1..12u64 {
            assert_eq!(n.sample(&m, ms(k)), trace[(o + k as usize) % 5] as f64 + 1.0);
        }

        // Irregular gaps, shorter and longer than the trace, and repeated slots: the incremental
        // index must give exactly trace[(o + ms) mod L].
        let mut t = 12u64;
        for gap in [0u64, 1, 4, 5, 6, 9, 10, 11, 3, 0, 2, 1_000_003, 7, 5] {
            t += gap;
            assert_eq!(n.sample(&m, ms(t)), trace[(o + t as usize) % 5] as f64 + 1.0);
        }

        let c = NoiseModel::from_trace(&NoiseConfig::Constant { floor_dbm: -98.0 }, vec![]).unwrap();
        let mut n = c.node(-1.5, stream(1, 0, 0, Purpose::Noise));
        assert_eq!(n.sample(&c, ms(3)), -99.5);
        assert_eq!(c.min_dbm(), -98.0);

        let g = NoiseModel::from_trace(&NoiseConfig::Gaussian { floor_dbm: -105.0, sigma_db: 4.0 }, vec![]).unwrap();
        assert_eq!(g.min_dbm(), -129.0);
        let mut n = g.node(0.0, stream(1, 0, 0, Purpose::Noise));
        let a = n.sample(&g, Instant(10_000_000));
        assert_eq!(n.sample(&g, Instant(10_400_000)), a);
        let x: Vec<f64> = (11..100_011).map(|k| n.sample(&g, ms(k))).collect();
        let s = stats(&x);
        let sd = (x.iter().map(|v| (v - s.mean).powi(2)).sum::<f64>() / x.len() as f64).sqrt();
        assert!((s.mean - -105.0).abs() < 0.05, "{}", s.mean);
        assert!((sd - 4.0).abs() < 0.05, "{sd}");
        assert!(s.ac1.abs() < 0.02);
    }

    #[test]
    fn file_errors_name_path_and_line() {
        let dir = std::env::temp_dir().join(format!("wsn-noise-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("bad.txt"), "-98\n\n-97 \nabc\n-96\n").unwrap();
        let cfg = NoiseConfig::Replay { trace: "bad.txt".into() };
        let err = NoiseModel::new(&cfg, &dir).unwrap_err();
        let msg = err.to_string();
        assert!(matches!(err, NoiseError::Parse { line: 4, .. }), "{msg}");
        assert!(msg.contains("bad.txt:4"), "{msg}");
        let err = NoiseModel::new(&NoiseConfig::Replay { trace: "missing.txt".into() }, &dir).unwrap_err();
        assert!(err.to_string().contains("missing.txt"));
        std::fs::write(dir.join("short.txt"), "-98\n-97\n").unwrap();
        let cfg = NoiseConfig::Cpm { trace: "short.txt".into(), history: 20, reset_gap_s: 10.0, max_samples: None };
        assert!(matches!(NoiseModel::new(&cfg, &dir), Err(NoiseError::TooShort { len: 2, needed: 21, .. })));
        // A byte-order mark is dropped; bytes that are not UTF-8 are named by their line.
        std::fs::write(dir.join("bom.txt"), b"\xef\xbb\xbf-98\n-97\n").unwrap();
        assert!(NoiseModel::new(&NoiseConfig::Replay { trace: "bom.txt".into() }, &dir).is_ok());
        std::fs::write(dir.join("latin1.txt"), b"-98\n-97\n-9\xe96\n").unwrap();
        let err = NoiseModel::new(&NoiseConfig::Replay { trace: "latin1.txt".into() }, &dir).unwrap_err();
        assert!(err.to_string().contains("latin1.txt: line 3 is not UTF-8 text"), "{err}");
        // A positive reading is no noise floor (a +50 dBm line used to run, delivering nothing).
        std::fs::write(dir.join("hot.txt"), "-98\n50\n").unwrap();
        let err = NoiseModel::new(&NoiseConfig::Replay { trace: "hot.txt".into() }, &dir).unwrap_err();
        assert!(err.to_string().contains("hot.txt:2: noise reading 50 dBm"), "{err}");
        std::fs::write(dir.join("ok.txt"), "# comment\n-98\n-97.4\n").unwrap();
        let m = NoiseModel::new(&NoiseConfig::Replay { trace: "ok.txt".into() }, &dir).unwrap();
        assert_eq!(m.trace_len(), Some(2));
        std::fs::remove_dir_all(&dir).ok();
        assert!(NoiseModel::from_trace(&cpm(0, None), vec![-90; 50]).is_err());
        assert!(NoiseModel::from_trace(&cpm(26, None), vec![-90; 50]).is_err());
        let g = NoiseConfig::Gaussian { floor_dbm: -100.0, sigma_db: -1.0 };
        assert!(NoiseModel::from_trace(&g, vec![]).is_err());
    }

    #[test]
    fn config_parses_from_toml_with_defaults() {
        let c: NoiseConfig = toml::from_str("model = \"cpm\"\ntrace = \"a.txt\"\n").unwrap();
        assert_eq!(c, cpm_named("a.txt"));
        let c: NoiseConfig = toml::from_str("model = \"gaussian\"\nfloor_dbm = -105.0\nsigma_db = 2.0\n").unwrap();
        assert!(matches!(c, NoiseConfig::Gaussian { .. }));
        assert!(toml::from_str::<NoiseConfig>("model = \"cpm\"\ntrace = \"a\"\nfoo = 1\n").is_err());
        // max_samples keeps only the prefix.
        let trace = read_trace(Path::new(HEAVY)).unwrap();
        let m = NoiseModel::from_trace(&cpm(20, Some(1000)), trace).unwrap();
        assert_eq!(m.trace_len(), Some(1000));
        assert_eq!(m.min_dbm(), -100.0); // spec §3.3: first 1,000 of meyer-heavy, min −100
    }

    fn cpm_named(t: &str) -> NoiseConfig {
        NoiseConfig::Cpm { trace: t.into(), history: 20, reset_gap_s: 10.0, max_samples: None }
    }
}

#[cfg(test)]
mod audit34 {
    use super::*;
    use crate::rng::{stream, Purpose};

    fn cpm_k(history: usize, reset_gap_s: f64) -> NoiseConfig {
        NoiseConfig::Cpm { trace: String::new(), history, reset_gap_s, max_samples: None }
    }

    /// One reading in each of the 23 key bins, ascending: −115, −110, …, −5 dBm (all distinct).
    fn one_per_bin() -> Vec<i16> {
        (0..23).map(|j| -115 + 5 * j as i16).collect()
    }

    #[test]
    fn key_bins_follow_the_spec_formula() {
        // Spec §3.1: bin(v) = ⌊(v + 115) / 5⌋ + 1 on [−115, −5] dBm (23 bins); values outside the
        // range count as −115 (bin 1).
        for v in -115i16..=-5 {
            assert_eq!(key_bin(v) as i32, (v as i32 + 115) / 5 + 1, "{v} dBm");
        }
        assert_eq!(key_bin(-111), 1);
        assert_eq!(key_bin(-110), 2);
        assert_eq!(key_bin(-5), 23);
        for v in [-4i16, 0, -116, -200] {
            assert_eq!(key_bin(v), 1, "{v} dBm is outside the key range");
        }
    }

    #[test]
    fn fallback_ties_go_to_the_key_seen_first() {
        // k = 1, keys = bin of the previous reading. Keys bin(A) (successors B, B) and bin(B)
        // (successors A, Z) both occur twice; bin(A) is seen first, so it is the fallback. The
        // end key bin(Z) never occurs earlier, so after a Z (which ends the trace) the walk draws
        // from bin(A)'s successors: always B.
        let (a, b, z) = (-100i16, -80i16, -30i16);
        let model = NoiseModel::from_trace(&cpm_k(1, 1e9), vec![a, b, a, b, z]).unwrap();
        let mut zs = 0;
        for seed in 0..20 {
            let mut n = model.node(0.0, stream(seed, 0, 0, Purpose::Noise));
            let x: Vec<f64> = (0..400).map(|m| n.sample(&model, Instant::from_millis(m))).collect();
            for w in x.windows(2) {
                if w[0] == z as f64 {
                    zs += 1;
                    assert_eq!(w[1], b as f64, "seed {seed}: after the trace end the fallback emits B");
                }
            }
        }
        assert!(zs > 100, "the trace end should be reached often ({zs})");
    }

    #[test]
    fn same_bin_successors_are_drawn_not_replayed() {
        // k = 1 and every reading in one key bin (−90 … −86 dBm): the single key's successors are
        // the readings at positions 1..6, all of the same bin. Each sample after the first is a
        // uniform draw among them (spec §3.1: drawn from the key's empirical successor
        // distribution), whatever the slot.
        let trace: Vec<i16> = vec![-90, -86, -88, -89, -87, -90];
        let model = NoiseModel::from_trace(&cpm_k(1, 1e9), trace.clone()).unwrap();
        let succ = &trace[1..];
        for slot in [1u64, 3, 4, 17] {
            let n_nodes = 1000;
            let mut count = std::collections::HashMap::<i64, usize>::new();
            for node in 0..n_nodes {
                let mut n = model.node(0.0, stream(7, 0, node, Purpose::Noise));
                *count.entry(n.sample(&model, Instant::from_millis(slot)) as i64).or_default() += 1;
            }
            for v in [-86i64, -87, -88, -89, -90] {
                let want = succ.iter().filter(|&&s| s as i64 == v).count() as f64 / succ.len() as f64;
                let got = *count.get(&v).unwrap_or(&0) as f64 / n_nodes as f64;
                assert!((got - want).abs() < 0.07, "slot {slot}, {v} dBm: {got} vs {want}");
            }
        }
    }

    #[test]
    fn reset_gap_boundary_reseed_position_and_continuation() {
        // One reading per key bin and k = 1: every key occurs once, so the walk is deterministic
        // and replays the trace; only a re-seed is random. Reset gap 5 ms.
        let trace = one_per_bin();
        let len = trace.len();
        let model = NoiseModel::from_trace(&cpm_k(1, 0.005), trace.clone()).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for seed in 0..300 {
            let mut n = model.node(0.0, stream(seed, 0, 0, Purpose::Noise));
            assert_eq!(n.sample(&model, Instant::from_millis(1)), trace[1] as f64);
            // Exactly 5 ms later: not *more* than the gap, so the walk goes on along the trace.
            assert_eq!(n.sample(&model, Instant::from_millis(6)), trace[6] as f64, "seed {seed}");
            // 6 ms later: re-seed at a uniform position p ≥ k, emitting trace[p]…
            let v = n.sample(&model, Instant::from_millis(12));
            let p = trace.iter().position(|&t| t as f64 == v).unwrap();
            assert!(p >= 1, "seed {seed}: re-seeded below k");
            seen.insert(p);
            // …and moving to p + 1: the next ms is trace[p + 1] (at the trace end, the fallback
            // key bin(trace[0])'s only successor, trace[1]).
            let next = n.sample(&model, Instant::from_millis(13));
            let want = if p + 1 < len { trace[p + 1] } else { trace[1] };
            assert_eq!(next, want as f64, "seed {seed}, re-seeded at {p}");
        }
        assert!(seen.len() >= 15, "re-seed positions {seen:?}");
    }

    #[test]
    fn first_k_ms_replay_the_trace_even_with_a_zero_reset_gap() {
        // Spec §3.1: for m < k the trace is returned directly; a re-seed only happens from k on.
        let trace = one_per_bin();
        let model = NoiseModel::from_trace(&cpm_k(3, 0.0), trace.clone()).unwrap();
        for seed in 0..20 {
            let mut n = model.node(0.0, stream(seed, 0, 0, Purpose::Noise));
            for m in 0..3u64 {
                assert_eq!(n.sample(&model, Instant::from_millis(m)), trace[m as usize] as f64, "seed {seed}");
            }
        }
    }

    #[test]
    fn replay_offsets_differ_between_nodes() {
        // Spec §3.4 item 2: trace[(o_i + ms) mod L] with a random per-node offset o_i.
        let trace: Vec<i16> = (0..10).map(|j| -90 - j as i16).collect();
        let m = NoiseModel::from_trace(&NoiseConfig::Replay { trace: String::new() }, trace).unwrap();
        let firsts: std::collections::BTreeSet<i64> = (0..40)
            .map(|node| m.node(0.0, stream(1, 0, node, Purpose::Noise)).sample(&m, Instant::from_millis(0)) as i64)
            .collect();
        assert!(firsts.len() >= 6, "offsets {firsts:?}");
    }

    #[test]
    fn replay_validity_spans_the_run_of_equal_values() {
        // `same_until_ns`: for replay, the end of the last slot of the run of equal trace values
        // (not across the wrap-around) the sample belongs to; a slot m ends at m ms + 0.5 ms.
        let trace: Vec<i16> = vec![-90, -90, -90, -91, -92, -92, -93];
        let m = NoiseModel::from_trace(&NoiseConfig::Replay { trace: String::new() }, trace.clone()).unwrap();
        let mut n = m.node(0.0, stream(2, 0, 0, Purpose::Noise));
        let mut runs_seen = 0;
        for slot in 0..40u64 {
            n.sample(&m, Instant::from_millis(slot));
            let NodeState::Replay { pos, .. } = n.state else { unreachable!() };
            let pos = pos as usize;
            let run = trace[pos + 1..].iter().take_while(|&&v| v == trace[pos]).count() as u64;
            runs_seen += usize::from(run > 0);
            assert_eq!(n.same_until_ns(&m), (slot + run) * 1_000_000 + 500_000, "slot {slot}, index {pos}");
            assert_eq!(n.valid_until_ns(), slot * 1_000_000 + 500_000);
        }
        assert!(runs_seen > 10);
    }

    #[test]
    fn validity_ends_exactly_where_the_next_slot_begins() {
        let c = NoiseModel::from_trace(&NoiseConfig::Gaussian { floor_dbm: -98.0, sigma_db: 2.0 }, vec![]).unwrap();
        let mut n = c.node(0.0, stream(1, 0, 0, Purpose::Noise));
        assert_eq!(n.valid_until_ns(), 0);
        for slot in [0u64, 1, 7, 1000] {
            let v = n.sample(&c, Instant::from_millis(slot));
            let until = n.valid_until_ns();
            assert_eq!(slot_ms(Instant(until - 1)), slot);
            assert_eq!(slot_ms(Instant(until)), slot + 1);
            assert_eq!(n.sample(&c, Instant(until - 1)), v);
            assert_ne!(n.sample(&c, Instant(until)), v, "a fresh Gaussian draw in the next slot");
        }
    }

    #[test]
    fn gaussian_with_zero_sigma_has_the_floor_as_its_only_level() {
        let g = NoiseModel::from_trace(&NoiseConfig::Gaussian { floor_dbm: -97.0, sigma_db: 0.0 }, vec![]).unwrap();
        assert_eq!(g.level_distribution(), vec![(-97.0, 1.0)]);
        assert_eq!(g.min_dbm(), -97.0);
    }

    #[test]
    fn out_of_range_reset_gap_and_floor_are_refused() {
        for gap in [-1.0, -0.001, f64::NAN] {
            let err = NoiseModel::from_trace(&cpm_k(1, gap), one_per_bin()).unwrap_err();
            assert!(err.to_string().contains("radio.noise.reset_gap_s"), "{err}");
        }
        assert!(NoiseModel::from_trace(&cpm_k(1, 0.0), one_per_bin()).is_ok());
        assert!(NoiseModel::from_trace(&cpm_k(1, f64::INFINITY), one_per_bin()).is_ok());
        for floor in [0.5, 30.0, -200.5, f64::NAN] {
            for cfg in
                [NoiseConfig::Constant { floor_dbm: floor }, NoiseConfig::Gaussian { floor_dbm: floor, sigma_db: 1.0 }]
            {
                let err = NoiseModel::from_trace(&cfg, vec![]).unwrap_err();
                assert!(err.to_string().contains("radio.noise.floor_dbm"), "{err}");
            }
        }
        for floor in [0.0, -200.0, -98.0] {
            assert!(NoiseModel::from_trace(&NoiseConfig::Constant { floor_dbm: floor }, vec![]).is_ok());
        }
    }

    #[test]
    fn decimal_readings_round_to_the_nearest_db() {
        let got = parse_trace("-97.6\n-97.4\n-0.2\n-98.9\n", Path::new("x")).unwrap();
        assert_eq!(got, vec![-98, -97, 0, -99]);
    }
}
