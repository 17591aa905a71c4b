//! Node placement and link gains (spec §2).
//!
//! - [`place`] puts nodes on a grid, in jittered grid cells ("uniform"), uniformly at random, on a
//!   line, or where a CSV file says.
//! - [`generate_links`] draws the directional link gains of the USC / Zuniga–Krishnamachari
//!   log-normal shadowing model as TinyOS's `LinkLayerModel` tool does (spec §2.1–2.2), and keeps
//!   only the links strong enough to matter (pruning, spec §2.3 \[REC\]). It uses a spatial index, so
//!   its cost is O(N · neighbours), which makes 10 000+ nodes practical.
//! - [`read_tossim_gains`] / [`write_tossim_gains`] read and write TOSSIM gain files
//!   (`gain SRC DST G`, `noise ID MEAN SPREAD`).
//!
//! Gains exclude the transmit power (TOSSIM convention): received power = P_tx + G.

use crate::radio::noise::box_muller;
use crate::rng::{hash_unit, mix64, stream, Purpose, SimRng};
use rand::Rng;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Draws per node before a random placement accepts a position closer than its minimum spacing
/// (D0, `radio.link.d0_m`)
/// (LinkLayerModel retries without limit; we bound it so dense configurations terminate). \[REC\]
pub const PLACEMENT_MAX_TRIES: u32 = 100;
/// Largest chain. [REC: from the configuration format of this project]
pub const MAX_CHAIN_NODES: usize = 10_000;
/// Largest network any placement or file may give: node ids are 16-bit on the air and
/// 0xFFFF is the broadcast address, so ids run from 0 to 65,534. \[REC\]
pub const MAX_NODES: usize = 0xFFFF;
/// Shadowing tail ignored by the spatial cut-off of [`generate_links`]: pairs whose gain would
/// need a draw above +4σ to reach the threshold are not evaluated (P(X > 4σ) = 3.2·10⁻⁵). \[REC\]
pub const SHADOWING_TAIL_SIGMAS: f64 = 4.0;
/// Mean noise floor assumed when none is given (LinkLayerModel default NOISE_FLOOR).
/// [CODE t2: LinkLayerModel.java]
pub const DEFAULT_NOISE_FLOOR_DBM: f64 = -105.0;
/// Salt that separates the shadowing hash stream from other users of `hash_unit` ("SHADOW_X").
/// [DERIVED: arbitrary constant]
const SHADOW_SALT: u64 = 0x5348_4144_4f57_5f58;
/// Salt of the second uniform of a pair's Box–Muller draw ("SHADOW_2"). \[DERIVED\]
const SHADOW_SALT2: u64 = 0x5348_4144_4f57_5f32;

/// A node position in metres.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Position {
    /// x coordinate, m.
    pub x: f64,
    /// y coordinate, m.
    pub y: f64,
}

impl Position {
    /// Euclidean distance to `o`, m.
    pub fn distance(&self, o: &Position) -> f64 {
        (self.x - o.x).hypot(self.y - o.y)
    }
}

/// How nodes are placed (scenario key `kind`).
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize, PartialEq)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    deny_unknown_fields,
    expecting = "a layout table with a `kind`, e.g. { kind = \"grid\", nodes = 25, spacing_m = 5.0 }"
)]
pub enum Placement {
    /// Row-major grid with `ceil(sqrt(nodes))` columns; node 0 at (0, 0).
    Grid {
        /// Number of nodes.
        nodes: usize,
        /// Distance between neighbouring grid points, m.
        spacing_m: f64,
    },
    /// One node per cell of a cols × rows grid covering the area, at a random point in its cell
    /// (LinkLayerModel's "uniform" topology).
    Uniform {
        /// Number of nodes.
        nodes: usize,
        /// Width of the area, m.
        width_m: f64,
        /// Height of the area, m.
        height_m: f64,
    },
    /// Uniformly random in the rectangle.
    Random {
        /// Number of nodes.
        nodes: usize,
        /// Width of the area, m.
        width_m: f64,
        /// Height of the area, m.
        height_m: f64,
    },
    /// On the x axis, node i at (i · spacing, 0); at most 10 000 nodes.
    Chain {
        /// Number of nodes.
        nodes: usize,
        /// Distance between neighbours, m.
        spacing_m: f64,
    },
    /// A CSV file with a header containing `node,x_m,y_m` (other columns ignored); ids 0..n−1
    /// in any order. The path is relative to the base directory.
    File {
        /// Path of the CSV file.
        path: String,
    },
}

/// Errors of placement, link generation and gain files.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// A file could not be read or written.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A line of an input file is malformed.
    #[error("{}:{line}: {msg}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong.
        msg: String,
    },
    /// A parameter is out of range or inconsistent.
    #[error("invalid topology: {0}")]
    Invalid(String),
}

fn invalid<T>(msg: impl Into<String>) -> Result<T, TopologyError> {
    Err(TopologyError::Invalid(msg.into()))
}

fn check_count(nodes: usize, max: usize) -> Result<(), TopologyError> {
    if nodes == 0 || nodes > max {
        return invalid(format!("topology.layout.nodes = {nodes}: the node count must be in 1..={max}"));
    }
    Ok(())
}

fn check_len(name: &str, v: f64) -> Result<(), TopologyError> {
    if !(v.is_finite() && v > 0.0) {
        return invalid(format!("topology.layout.{name} = {v}: must be a positive number of metres"));
    }
    Ok(())
}

/// Smallest `c` with `c² ≥ n`.
fn ceil_sqrt(n: usize) -> usize {
    let mut c = (n as f64).sqrt() as usize;
    while c * c < n {
        c += 1;
    }
    while c > 1 && (c - 1) * (c - 1) >= n {
        c -= 1;
    }
    c.max(1)
}

/// Cell index of the minimum-spacing check (cells of side `d`, the minimum spacing).
struct SpacingIndex {
    d: f64,
    cells: HashMap<(i64, i64), Vec<Position>>,
}

impl SpacingIndex {
    fn cell(&self, p: &Position) -> (i64, i64) {
        ((p.x / self.d).floor() as i64, (p.y / self.d).floor() as i64)
    }
    fn too_close(&self, p: &Position) -> bool {
        let (cx, cy) = self.cell(p);
        for dx in -1..=1 {
            for dy in -1..=1 {
                // Saturating, as in `generate_links` (a cell checked twice does no harm here).
                if let Some(v) = self.cells.get(&(cx.saturating_add(dx), cy.saturating_add(dy))) {
                    if v.iter().any(|q| q.distance(p) < self.d) {
                        return true;
                    }
                }
            }
        }
        false
    }
    fn insert(&mut self, p: Position) {
        let c = self.cell(&p);
        self.cells.entry(c).or_default().push(p);
    }
}

/// Places the nodes. Random placements draw from `rng` (use the run's
/// `Purpose::Placement` stream) and redraw a node closer than `min_spacing_m` to an earlier one
/// (LinkLayerModel redraws nodes closer than D0 [CODE t2: LinkLayerModel.java]; pass
/// `radio.link.d0_m`); file paths are resolved against `base_dir`. Layouts so wide that the
/// distance between two of their nodes overflows are refused.
pub fn place(
    p: &Placement,
    base_dir: &Path,
    rng: &mut SimRng,
    min_spacing_m: f64,
) -> Result<Vec<Position>, TopologyError> {
    let positions = place_unchecked(p, base_dir, rng, min_spacing_m)?;
    check_extent(&positions)?;
    Ok(positions)
}

/// Refuses positions whose bounding box is so large that a distance (or its square, which the
/// link generation computes) is not a finite number.
fn check_extent(positions: &[Position]) -> Result<(), TopologyError> {
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for p in positions {
        (x0, x1, y0, y1) = (x0.min(p.x), x1.max(p.x), y0.min(p.y), y1.max(p.y));
    }
    let (dx, dy) = (x1 - x0, y1 - y0);
    if positions.len() > 1 && !(dx * dx + dy * dy).is_finite() {
        return invalid(format!(
            "the nodes span {dx:e} × {dy:e} m, too far apart for their distances to be computed (check the spacing, \
             the area or the coordinates)"
        ));
    }
    Ok(())
}

/// Pairs of nodes closer than `d` metres (each pair once, `(i, j)` with `i < j`, in ascending
/// order), at most `limit` of them, and how many there are in all.
pub fn close_pairs(positions: &[Position], d: f64, limit: usize) -> (usize, Vec<(usize, usize)>) {
    let cell = |p: &Position| ((p.x / d).floor() as i64, (p.y / d).floor() as i64);
    let mut cells: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
    for (i, p) in positions.iter().enumerate() {
        cells.entry(cell(p)).or_default().push(i);
    }
    let (mut count, mut pairs) = (0, Vec::new());
    for (i, p) in positions.iter().enumerate() {
        let (cx, cy) = cell(p);
        // Neighbouring cells in a fixed order; each pair is counted from its lower id.
        let mut near: Vec<usize> = Vec::new();
        for dx in -1..=1 {
            for dy in -1..=1 {
                if let Some(v) = cells.get(&(cx.saturating_add(dx), cy.saturating_add(dy))) {
                    near.extend(v.iter().copied().filter(|&j| j > i && positions[j].distance(p) < d));
                }
            }
        }
        near.sort_unstable();
        near.dedup();
        count += near.len();
        pairs.extend(near.into_iter().map(|j| (i, j)).take(limit.saturating_sub(pairs.len())));
    }
    (count, pairs)
}

fn place_unchecked(
    p: &Placement,
    base_dir: &Path,
    rng: &mut SimRng,
    min_spacing_m: f64,
) -> Result<Vec<Position>, TopologyError> {
    match *p {
        Placement::Grid { nodes, spacing_m } => {
            check_count(nodes, MAX_NODES)?;
            check_len("spacing_m", spacing_m)?;
            let cols = ceil_sqrt(nodes);
            Ok((0..nodes)
                .map(|i| Position { x: (i % cols) as f64 * spacing_m, y: (i / cols) as f64 * spacing_m })
                .collect())
        }
        Placement::Chain { nodes, spacing_m } => {
            check_count(nodes, MAX_CHAIN_NODES)?;
            check_len("spacing_m", spacing_m)?;
            Ok((0..nodes).map(|i| Position { x: i as f64 * spacing_m, y: 0.0 }).collect())
        }
        Placement::Uniform { nodes, width_m, height_m } => {
            check_count(nodes, MAX_NODES)?;
            check_len("width_m", width_m)?;
            check_len("height_m", height_m)?;
            // Columns ≈ √(n·W/H) so that the cells are close to square.
            let cols = ((nodes as f64 * width_m / height_m).sqrt().ceil() as usize).clamp(1, nodes);
            let rows = nodes.div_ceil(cols);
            let (cw, ch) = (width_m / cols as f64, height_m / rows as f64);
            Ok(spaced(nodes, rng, min_spacing_m, |i, rng| Position {
                x: ((i % cols) as f64 + rng.gen::<f64>()) * cw,
                y: ((i / cols) as f64 + rng.gen::<f64>()) * ch,
            }))
        }
        Placement::Random { nodes, width_m, height_m } => {
            check_count(nodes, MAX_NODES)?;
            check_len("width_m", width_m)?;
            check_len("height_m", height_m)?;
            Ok(spaced(nodes, rng, min_spacing_m, |_, rng| Position {
                x: rng.gen::<f64>() * width_m,
                y: rng.gen::<f64>() * height_m,
            }))
        }
        Placement::File { ref path } => read_positions(&base_dir.join(path)),
    }
}

/// Draws `n` positions with `draw`, redrawing a position closer than `d` to an earlier node up
/// to [`PLACEMENT_MAX_TRIES`] times (then the last draw is kept).
fn spaced(n: usize, rng: &mut SimRng, d: f64, mut draw: impl FnMut(usize, &mut SimRng) -> Position) -> Vec<Position> {
    let mut idx = SpacingIndex { d, cells: HashMap::new() };
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut p = draw(i, rng);
        let mut tries = 1;
        while tries < PLACEMENT_MAX_TRIES && idx.too_close(&p) {
            p = draw(i, rng);
            tries += 1;
        }
        idx.insert(p);
        out.push(p);
    }
    out
}

/// Reads a positions CSV (`node,x_m,y_m`, extra columns ignored; column names match
/// case-insensitively, and a name given twice is refused).
pub fn read_positions(path: &Path) -> Result<Vec<Position>, TopologyError> {
    let perr = |line: u64, msg: String| TopologyError::Parse { path: path.to_path_buf(), line, msg };
    let text = crate::read_text(path).map_err(|source| TopologyError::Io { path: path.to_path_buf(), source })?;
    let bytes = text.as_bytes();
    let mut rdr = csv::ReaderBuilder::new().trim(csv::Trim::All).comment(Some(b'#')).from_reader(bytes);
    let mut lines = crate::CsvLines::new(bytes);
    let header_line = lines.record_line(0);
    let headers = rdr
        .headers()
        .map_err(|e| perr(header_line, format!("cannot read the CSV header: {}", crate::csv_error(bytes, &e).1)))?
        .clone();
    let col = |name: &str| -> Result<usize, TopologyError> {
        crate::csv_column(&headers, name)
            .map_err(|m| perr(header_line, m))?
            .ok_or_else(|| perr(header_line, format!("the header has no column `{name}` (need node,x_m,y_m)")))
    };
    let (cn, cx, cy) = (col("node")?, col("x_m")?, col("y_m")?);
    let mut rows: Vec<(usize, Position, u64)> = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| {
            let (line, msg) = crate::csv_error(bytes, &e);
            perr(line, format!("malformed CSV record: {msg}"))
        })?;
        let line = lines.record_line(rec.position().map_or(0, |p| p.byte()));
        let field = |c: usize| rec.get(c).unwrap_or("");
        let id: usize = field(cn).parse().map_err(|_| perr(line, node_id_error(field(cn))))?;
        let num = |c: usize, name: &str| -> Result<f64, TopologyError> {
            field(c)
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| perr(line, format!("{name} {:?} is not a finite number", field(c))))
        };
        let pos = Position { x: num(cx, "x_m")?, y: num(cy, "y_m")? };
        if rows.len() >= MAX_NODES {
            return Err(perr(line, format!("more than {MAX_NODES} nodes")));
        }
        rows.push((id, pos, line));
    }
    let n = rows.len();
    if n == 0 {
        return Err(perr(header_line, "no nodes".into()));
    }
    let mut out: Vec<Option<Position>> = vec![None; n];
    for (id, pos, line) in rows {
        if id >= n {
            return Err(perr(
                line,
                format!("node id {id} outside 0 to {}: the file has {n} rows, one per node", n - 1),
            ));
        }
        if out[id].is_some() {
            return Err(perr(line, format!("node id {id} appears twice")));
        }
        out[id] = Some(pos);
    }
    Ok(out.into_iter().map(|p| p.expect("all ids 0..n present")).collect())
}

fn d_tx() -> f64 {
    0.0
}
fn d_n() -> f64 {
    3.0
}
fn d_sigma() -> f64 {
    3.0
}
fn d_pl() -> f64 {
    55.0
}
fn d_d0() -> f64 {
    1.0
}
fn d_floor() -> f64 {
    DEFAULT_NOISE_FLOOR_DBM
}
fn d_s11() -> f64 {
    3.7
}
fn d_s12() -> f64 {
    -3.3
}
fn d_s22() -> f64 {
    6.0
}

/// Parameters of the log-normal shadowing link model (spec §2.1–2.2). Defaults are
/// LinkLayerModel's. [CODE t2: LinkLayerModel.java]
#[derive(Clone, Debug, serde::Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LinkModel {
    /// Transmit power of every node, dBm. [0.0; CODE t2: TossimPacketModelC.nc passes 0 dBm]
    #[serde(default = "d_tx")]
    pub tx_power_dbm: f64,
    /// Path-loss exponent n. [3.0; CODE t2: LinkLayerModel.java]
    #[serde(default = "d_n")]
    pub path_loss_exponent: f64,
    /// Shadowing standard deviation σ, dB. [3.0; CODE t2: LinkLayerModel.java]
    #[serde(default = "d_sigma")]
    pub shadowing_sigma_db: f64,
    /// Path loss at the reference distance, dB. [55.0; CODE t2: LinkLayerModel.java]
    #[serde(default = "d_pl")]
    pub pl_d0_db: f64,
    /// Reference distance D0, m; shorter distances are treated as D0. [1.0; CODE t2]
    #[serde(default = "d_d0")]
    pub d0_m: f64,
    /// Mean noise floor P_n, dBm, of the link model: the floor `wsn gains` exports (P_n + δ_i)
    /// and the shortest-tree threshold use; a run's noise comes from `[radio.noise]`.
    /// [−105.0; CODE t2]
    #[serde(default = "d_floor")]
    pub noise_floor_dbm: f64,
    /// Variance of the noise floor, dB². [3.7; CODE t2: LinkLayerModel.java]
    #[serde(default = "d_s11")]
    pub s11: f64,
    /// Covariance of noise floor and output power, dB². [−3.3; CODE t2: LinkLayerModel.java]
    #[serde(default = "d_s12")]
    pub s12: f64,
    /// Variance of the output power, dB². [6.0; CODE t2: LinkLayerModel.java]
    #[serde(default = "d_s22")]
    pub s22: f64,
}

impl Default for LinkModel {
    fn default() -> Self {
        LinkModel {
            tx_power_dbm: d_tx(),
            path_loss_exponent: d_n(),
            shadowing_sigma_db: d_sigma(),
            pl_d0_db: d_pl(),
            d0_m: d_d0(),
            noise_floor_dbm: d_floor(),
            s11: d_s11(),
            s12: d_s12(),
            s22: d_s22(),
        }
    }
}

impl LinkModel {
    /// Checks the parameters, including LinkLayerModel's rules for S: S11, S22 ≥ 0,
    /// |S12| ≤ √(S11·S22), and S11 = 0 only together with S22 = 0.
    pub fn validate(&self) -> Result<(), TopologyError> {
        // Very large or small values in exponent form (1e300, not 301 digits).
        let show =
            |v: f64| if v != 0.0 && !(1e-4..1e15).contains(&v.abs()) { format!("{v:e}") } else { format!("{v}") };
        let all = [
            ("tx_power_dbm", self.tx_power_dbm),
            ("path_loss_exponent", self.path_loss_exponent),
            ("shadowing_sigma_db", self.shadowing_sigma_db),
            ("pl_d0_db", self.pl_d0_db),
            ("d0_m", self.d0_m),
            ("noise_floor_dbm", self.noise_floor_dbm),
            ("s11", self.s11),
            ("s12", self.s12),
            ("s22", self.s22),
        ];
        if let Some((name, v)) = all.iter().find(|(_, v)| !v.is_finite()) {
            return invalid(format!("{name} = {v}: must be a finite number"));
        }
        // Wide enough for any low-power radio and path-loss fit, narrow enough that powers in mW
        // stay finite (1e9 dBm would overflow to infinity and make every SINR NaN).
        if !(-100.0..=40.0).contains(&self.tx_power_dbm) {
            return invalid(format!("tx_power_dbm = {}: must be within −100 … +40 dBm", self.tx_power_dbm));
        }
        if !(-200.0..=0.0).contains(&self.noise_floor_dbm) {
            return invalid(format!("noise_floor_dbm = {}: must be within −200 … 0 dBm", self.noise_floor_dbm));
        }
        if !(0.0..=200.0).contains(&self.pl_d0_db) {
            return invalid(format!("pl_d0_db = {}: must be within 0 … 200 dB", self.pl_d0_db));
        }
        // Bounds far beyond any measured fit (exponents 1.5–6, σ 3–14 dB, hardware
        // variances a few dB²), so that nonsense is refused rather than simulated.
        if !(1.0..=10.0).contains(&self.path_loss_exponent) {
            return invalid(format!("path_loss_exponent = {}: must be within 1 … 10", show(self.path_loss_exponent)));
        }
        if !(0.0..=30.0).contains(&self.shadowing_sigma_db) {
            return invalid(format!(
                "shadowing_sigma_db = {}: must be within 0 … 30 dB",
                show(self.shadowing_sigma_db)
            ));
        }
        if !(self.d0_m >= 1e-3 && self.d0_m <= 1e3) {
            return invalid(format!("d0_m = {}: must be within 0.001 … 1000 m", show(self.d0_m)));
        }
        if !((0.0..=100.0).contains(&self.s11) && (0.0..=100.0).contains(&self.s22)) {
            return invalid(format!(
                "s11 = {}, s22 = {}: variances must be within 0 … 100 dB²",
                show(self.s11),
                show(self.s22)
            ));
        }
        if self.s11 == 0.0 && self.s22 != 0.0 {
            return invalid(format!("s22 = {}: must be 0 when s11 = 0 (LinkLayerModel rule)", self.s22));
        }
        if self.s12.abs() > (self.s11 * self.s22).sqrt() * (1.0 + 1e-12) {
            return invalid(format!(
                "s12 = {}: |s12| exceeds √(s11·s22) = {}, so S is not a covariance matrix",
                self.s12,
                (self.s11 * self.s22).sqrt()
            ));
        }
        Ok(())
    }

    /// Cholesky factor (t11, t12, t22) of S. [CODE t2: LinkLayerModel.java obtainRadioPtPn]
    fn cholesky(&self) -> (f64, f64, f64) {
        if self.s11 == 0.0 {
            return (0.0, 0.0, 0.0);
        }
        let t11 = self.s11.sqrt();
        let t12 = self.s12 / t11;
        let t22 = ((self.s11 * self.s22 - self.s12 * self.s12) / self.s11).max(0.0).sqrt();
        (t11, t12, t22)
    }
}

/// One directional link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Link {
    /// Receiver.
    pub to: u32,
    /// Gain in dB (negative), excluding the transmit power.
    pub gain_db: f32,
}

/// The links of a network, per sender.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Links {
    /// Per sender, sorted by `to`; gains exclude TX power (TOSSIM convention).
    pub out: Vec<Vec<Link>>,
    /// δ_i = NoiseFloor_i − P_n per node, dB.
    pub noise_offset_db: Vec<f64>,
    /// Transmit power per node, dBm (ΔP_i is already folded into the gains).
    pub tx_power_dbm: Vec<f64>,
}

impl Links {
    /// Gain from `from` to `to`, if the link exists (binary search).
    pub fn gain(&self, from: usize, to: usize) -> Option<f32> {
        let v = self.out.get(from)?;
        let to = u32::try_from(to).ok()?;
        v.binary_search_by_key(&to, |l| l.to).ok().map(|i| v[i].gain_db)
    }

    /// Number of nodes.
    pub fn n(&self) -> usize {
        self.out.len()
    }

    /// Number of directional links.
    pub fn link_count(&self) -> usize {
        self.out.iter().map(Vec::len).sum()
    }
}

/// Hardware variance of node `i` (spec §2.2): (δ_i = NoiseFloor_i − P_n, ΔP_i), from the node's
/// own `Purpose::Shadowing` stream.
fn hardware_variance(seed: u64, i: u32, chol: (f64, f64, f64)) -> (f64, f64) {
    let mut rng = stream(seed, 0, i, Purpose::Shadowing);
    let (r1, r2) = box_muller(rng.gen::<f64>(), rng.gen::<f64>());
    let (t11, t12, t22) = chol;
    (t11 * r1, t12 * r1 + t22 * r2)
}

/// Standard-normal shadowing draw of the unordered pair {a, b}: depends only on the pair and the
/// seed, never on the order in which pairs are visited.
fn pair_normal(seed: u64, a: u32, b: u32) -> f64 {
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    let s = mix64(seed ^ SHADOW_SALT);
    let u1 = hash_unit(s, lo as u64, hi as u64);
    let u2 = hash_unit(s ^ SHADOW_SALT2, lo as u64, hi as u64);
    box_muller(u1, u2).0
}

/// Most directed links a generated topology may keep: each costs about 40 bytes in the
/// simulator (its gain here; its received power and its reverse link's in the network), so 50
/// million take about 2 GB; the 10,000-node benchmark keeps about half a million.
pub const MAX_LINKS: usize = 50_000_000;

/// Gains a TOSSIM gain file may hold, dB: a path gain is negative, but one with the transmit
/// power folded in (`wsn gains --fold-tx-power`, up to +40 dBm) may be positive.
pub const GAIN_RANGE_DB: std::ops::RangeInclusive<f64> = -500.0..=60.0;

/// Generates the links of the log-normal shadowing model:
/// `G_i→j = −PL_D0 − 10·n·log10(d/D0) + X_ij + ΔP_i`, with `X_ij ~ N(0, σ²)` drawn once per
/// unordered pair (shared by both directions, derived from `hash_unit` so it does not depend on
/// enumeration order), `ΔP_i` and the noise offsets δ_i from the Cholesky factor of S with each
/// node's `Purpose::Shadowing` stream, and `d < D0` clamped to D0. Only links with
/// `tx_power + G ≥ min_rx_dbm` are kept (`min_rx_dbm = −∞` keeps all pairs, O(N²)).
///
/// Cost O(N · neighbours): nodes are bucketed in square cells whose side is the cut-off distance
/// beyond which even `tx_power − PL(d) + 4σ + max ΔP` is below `min_rx_dbm`. Pairs farther apart
/// are treated as unreachable; one of them would be kept only if its shadowing draw exceeded +4σ
/// (probability 3.2·10⁻⁵ per pair).
pub fn generate_links(pos: &[Position], m: &LinkModel, seed: u64, min_rx_dbm: f64) -> Result<Links, TopologyError> {
    links_up_to(pos, m, seed, min_rx_dbm, false, MAX_LINKS)
}

/// [`generate_links`] for receivers whose noise carries their offsets δ_j
/// (`radio.noise_offsets`): the cut-off of a link to j is `min_rx_dbm + δ_j`, since j's lowest
/// possible noise is the model's plus δ_j (spec §2.3: prune below the lowest noise *at the
/// receiver* minus the margin). A quiet receiver (δ_j < 0) keeps weaker links.
pub fn generate_links_per_receiver(
    pos: &[Position],
    m: &LinkModel,
    seed: u64,
    min_rx_dbm: f64,
) -> Result<Links, TopologyError> {
    links_up_to(pos, m, seed, min_rx_dbm, true, MAX_LINKS)
}

/// [`generate_links`] (or, `per_receiver`, [`generate_links_per_receiver`]), refusing a
/// topology of more than `max_links` links.
fn links_up_to(
    pos: &[Position],
    m: &LinkModel,
    seed: u64,
    min_rx_dbm: f64,
    per_receiver: bool,
    max_links: usize,
) -> Result<Links, TopologyError> {
    m.validate()?;
    if min_rx_dbm.is_nan() || min_rx_dbm == f64::INFINITY {
        return invalid(format!("min_rx_dbm must be a number or −∞, got {min_rx_dbm}"));
    }
    let n = pos.len();
    if n > MAX_NODES {
        return invalid(format!("{n} nodes exceed the limit of {MAX_NODES}"));
    }
    if let Some(i) = pos.iter().position(|p| !(p.x.is_finite() && p.y.is_finite())) {
        return invalid(format!("node {i} has a non-finite position"));
    }
    let chol = m.cholesky();
    let hw: Vec<(f64, f64)> = (0..n as u32).map(|i| hardware_variance(seed, i, chol)).collect();
    // The cut-off at receiver j.
    let min_rx_at = |j: usize| if per_receiver { min_rx_dbm + hw[j].0 } else { min_rx_dbm };
    let lowest_min_rx = (0..n).map(min_rx_at).fold(min_rx_dbm, f64::min);
    let tenn = 10.0 * m.path_loss_exponent;
    // Largest distance at which node i's links could still reach the lowest cut-off (bound on
    // X: +4σ).
    let reach = |dp: f64| -> f64 {
        let slack = m.tx_power_dbm - m.pl_d0_db + SHADOWING_TAIL_SIGMAS * m.shadowing_sigma_db + dp - lowest_min_rx;
        m.d0_m * 10f64.powf(slack.max(0.0) / tenn)
    };
    let reach_sq: Vec<f64> = hw.iter().map(|&(_, dp)| reach(dp).powi(2)).collect();
    let max_dp = hw.iter().map(|h| h.1).fold(f64::NEG_INFINITY, f64::max);
    let cell = if n == 0 { f64::INFINITY } else { reach(max_dp) };

    // Bucket nodes by cell, sorted by (row, column), so the three cells of a row are contiguous.
    let (minx, miny) = pos.iter().fold((f64::INFINITY, f64::INFINITY), |(a, b), p| (a.min(p.x), b.min(p.y)));
    let cell_of = |p: &Position| -> (i64, i64) {
        if cell.is_finite() {
            (((p.y - miny) / cell).floor() as i64, ((p.x - minx) / cell).floor() as i64)
        } else {
            (0, 0)
        }
    };
    let mut order: Vec<((i64, i64), u32)> = pos.iter().enumerate().map(|(i, p)| (cell_of(p), i as u32)).collect();
    order.sort_unstable();

    let mut out: Vec<Vec<Link>> = vec![Vec::new(); n];
    let mut kept = 0usize;
    for (i, &pi) in pos.iter().enumerate() {
        if kept > max_links {
            return invalid(format!(
                "more than {max_links} directed links within the neighbour cut-off among {n} nodes (after {i} of them): \
                 they would take more than {} GB; spread the nodes (topology.layout), lower \
                 radio.link.tx_power_dbm, or lower radio.prune_margin_db",
                max_links as f64 * 40.0 / 1e9
            ));
        }
        let (cy, cx) = cell_of(&pi);
        let (_, dpi) = hw[i];
        // Saturating: in a layout ~10^18 cut-off distances wide the cell indices reach the ends
        // of i64 (the `as` casts above saturate), where neighbouring rows or cells may coincide;
        // each row is scanned once, and the distance test below still decides.
        let rows = [cy.saturating_sub(1), cy, cy.saturating_add(1)];
        for (k, &row) in rows.iter().enumerate() {
            if rows[..k].contains(&row) {
                continue;
            }
            let lo = order.partition_point(|e| e.0 < (row, cx.saturating_sub(1)));
            let hi = order.partition_point(|e| e.0 <= (row, cx.saturating_add(1)));
            for &(_, j) in &order[lo..hi] {
                let j = j as usize;
                if j <= i {
                    continue;
                }
                let d2 = (pos[j].x - pi.x).powi(2) + (pos[j].y - pi.y).powi(2);
                if d2 > reach_sq[i].max(reach_sq[j]) {
                    continue;
                }
                let d = d2.sqrt().max(m.d0_m);
                let x = m.shadowing_sigma_db * pair_normal(seed, i as u32, j as u32);
                let base = -m.pl_d0_db - tenn * (d / m.d0_m).log10() + x;
                let gij = base + dpi;
                let gji = base + hw[j].1;
                if m.tx_power_dbm + gij >= min_rx_at(j) {
                    out[i].push(Link { to: j as u32, gain_db: gij as f32 });
                    kept += 1;
                }
                if m.tx_power_dbm + gji >= min_rx_at(i) {
                    out[j].push(Link { to: i as u32, gain_db: gji as f32 });
                    kept += 1;
                }
            }
        }
    }
    for v in &mut out {
        v.sort_unstable_by_key(|l| l.to);
    }
    Ok(Links { out, noise_offset_db: hw.iter().map(|h| h.0).collect(), tx_power_dbm: vec![m.tx_power_dbm; n] })
}

/// Why `s` is not a node id: a string of digits too large for a number, or not a non-negative
/// integer at all.
fn node_id_error(s: &str) -> String {
    let digits = s.strip_prefix('+').unwrap_or(s);
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        format!("node id {s:?} is far too large (a network has at most {MAX_NODES} nodes)")
    } else {
        format!("node id {s:?} is not a non-negative integer")
    }
}

/// Reads a TOSSIM gain file: `gain SRC DST G` lines (also the older bare `SRC DST G` form) and
/// `noise ID MEAN SPREAD` lines; `#` starts a comment; blank lines are ignored. A second gain
/// line for a pair (TOSSIM would keep the last one silently; here it is taken for a slip), a
/// second noise line for a node, a `gain i i` line (a node to itself) are errors, and so is a
/// file
/// without any gain line (a network without links). With `n_hint = Some(n)` the file must name
/// exactly `n` nodes (larger ids are errors with their line, a largest id below n − 1 an error
/// of the file); otherwise it has (largest id + 1) nodes. TX power is 0 dBm
/// (TOSSIM).
///
/// Noise offsets: δ_i = MEAN_i − (average MEAN over the nodes that have a noise line); nodes
/// without one get 0. SPREAD is not used here (it is the σ of the Gaussian noise mode), but must
/// be ≥ 0. Gains must be within [`GAIN_RANGE_DB`] and noise means within −200 … 0 dBm.
/// [AMBIG-1 → mean used as a relative floor offset]
///
/// A file `wsn gains` wrote says more in `#` lines (comments to TOSSIM): its header's
/// `noise_floor_dbm=F` makes δ_i = MEAN_i − F instead of the centring, and the
/// `# wsn noise_offset ID δ` line after each noise line gives δ_i bit for bit (taken when
/// F + δ is that node's MEAN; otherwise, say after an edit of the MEAN, MEAN − F is). Without
/// the field (TOSSIM's files, `wsn gains` files of earlier versions) the offset lines are checked
/// but unused. A malformed field or offset line, a second header line, a second offset line for a
/// node, or one for a node without a noise line is an error naming its line.
pub fn read_tossim_gains(path: &Path, n_hint: Option<usize>) -> Result<Links, TopologyError> {
    let text = crate::read_text(path).map_err(|source| TopologyError::Io { path: path.to_path_buf(), source })?;
    let perr = |line: usize, msg: String| TopologyError::Parse { path: path.to_path_buf(), line: line as u64, msg };
    let limit = n_hint.unwrap_or(MAX_NODES).min(MAX_NODES);
    let id = |s: &str, line: usize| -> Result<usize, TopologyError> {
        let v: usize = s.parse().map_err(|_| perr(line, node_id_error(s)))?;
        if v >= limit {
            return Err(perr(
                line,
                match n_hint {
                    // A file for another network: say why the id is out of range.
                    Some(n) if n <= MAX_NODES => {
                        format!(
                            "node id {v} outside 0 to {}: the layout has {n} nodes (a gain file of another network?)",
                            n.saturating_sub(1)
                        )
                    }
                    _ => format!("node id {v} outside 0 to {}", limit - 1),
                },
            ));
        }
        Ok(v)
    };
    let num = |s: &str, line: usize| -> Result<f64, TopologyError> {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| perr(line, format!("{s:?} is not a finite number")))
    };
    let mut gains: Vec<(u32, u32, f32)> = Vec::new();
    // The line of each pair's gain, to name both lines of a repeated pair.
    let mut seen: std::collections::HashMap<(usize, usize), usize> = std::collections::HashMap::new();
    // Ordered: the average below is a sum in node order, the same in every process.
    let mut noise: std::collections::BTreeMap<usize, f64> = std::collections::BTreeMap::new();
    let mut max_id: Option<usize> = None;
    // The floor the noise lines were written against (`noise_floor_dbm=` in a `wsn gains`
    // header), and the header's line.
    let mut floor: Option<f64> = None;
    let mut header_line: Option<usize> = None;
    // Each node's offset as `wsn gains` had it (`# wsn noise_offset` lines), with its line.
    let mut exact: std::collections::BTreeMap<usize, (usize, f64)> = std::collections::BTreeMap::new();
    for (k, raw) in text.lines().enumerate() {
        let line = k + 1;
        if let Some(rest) = raw.trim_start().strip_prefix(HEADER_TAG) {
            if let Some(first) = header_line.replace(line) {
                return Err(perr(line, format!("a second `{HEADER_TAG}` header line (the first is on line {first})")));
            }
            floor = header_noise_floor(rest).map_err(|msg| perr(line, msg))?;
            continue;
        }
        if let Some(rest) = raw.trim_start().strip_prefix(OFFSET_TAG) {
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.len() != 2 {
                return Err(perr(line, format!("`{OFFSET_TAG} ID DELTA_DB`: expected 2 fields, found {}", f.len())));
            }
            let (i, off) = (id(f[0], line)?, num(f[1], line)?);
            if let Some((first, _)) = exact.insert(i, (line, off)) {
                return Err(perr(
                    line,
                    format!("a second noise offset line for node {i} (the first is on line {first})"),
                ));
            }
            continue;
        }
        let body = raw.split('#').next().unwrap_or("");
        let tok: Vec<&str> = body.split_whitespace().collect();
        if tok.is_empty() {
            continue;
        }
        let fields = match tok[0] {
            "gain" | "noise" => &tok[1..],
            _ if tok.len() == 3 => &tok[..],
            other => return Err(perr(line, format!("unknown line type {other:?} (expected gain or noise)"))),
        };
        if fields.len() != 3 {
            return Err(perr(line, format!("expected 3 fields after the keyword, found {}", fields.len())));
        }
        if tok[0] == "noise" {
            let i = id(fields[0], line)?;
            let mean = num(fields[1], line)?;
            if !(-200.0..=0.0).contains(&mean) {
                return Err(perr(line, format!("noise mean {mean} dBm: must be within −200 … 0 dBm")));
            }
            let spread = num(fields[2], line)?;
            if spread < 0.0 {
                return Err(perr(line, format!("noise spread {spread} dB: must be ≥ 0")));
            }
            if noise.insert(i, mean).is_some() {
                return Err(perr(line, format!("a second noise line for node {i}")));
            }
            max_id = max_id.max(Some(i));
        } else {
            let (s, d) = (id(fields[0], line)?, id(fields[1], line)?);
            let g = num(fields[2], line)?;
            // A gain is a path loss (TOSSIM's are −40 … −110 dB), or one with the sender's
            // transmit power folded in (up to +40 dBm): beyond the range it is a typo.
            if !GAIN_RANGE_DB.contains(&g) {
                return Err(perr(
                    line,
                    format!("gain {g} dB: must be within {} … +{} dB", GAIN_RANGE_DB.start(), GAIN_RANGE_DB.end()),
                ));
            }
            max_id = max_id.max(Some(s.max(d)));
            if s == d {
                return Err(perr(line, format!("gain from node {s} to itself (a link needs two nodes)")));
            }
            if let Some(first) = seen.insert((s, d), line) {
                return Err(perr(line, format!("a second gain line for {s} → {d} (the first is on line {first})")));
            }
            // Parsed as an f32 directly (not the f64 above cast down, which would round twice):
            // the shortest decimal `wsn gains` writes gives back the very f32 it came from.
            let g32: f32 =
                fields[2].parse().map_err(|_| perr(line, format!("{:?} is not a finite number", fields[2])))?;
            gains.push((s as u32, d as u32, g32));
        }
    }
    if gains.is_empty() {
        return Err(TopologyError::Invalid(format!(
            "{}: no gain lines: the network would have no links",
            path.display()
        )));
    }
    let named = max_id.map_or(0, |m| m + 1);
    if let Some(n) = n_hint {
        if named < n {
            return Err(TopologyError::Invalid(format!(
                "{}: the file names {named} nodes (its largest id + 1) but the layout has {n}",
                path.display()
            )));
        }
    }
    let n = n_hint.unwrap_or(named);
    let mut out: Vec<Vec<Link>> = vec![Vec::new(); n];
    for (s, d, g) in gains {
        out[s as usize].push(Link { to: d, gain_db: g });
    }
    for v in &mut out {
        // (A pair given twice was refused above, so every sender's links are distinct.)
        v.sort_by_key(|l| l.to);
        debug_assert!(v.windows(2).all(|w| w[0].to < w[1].to));
    }
    // Relative to the header's floor when the file has one; else (TOSSIM's files, and `wsn gains`
    // files of earlier versions) centred on the mean of the MEANs.
    let reference = match floor {
        Some(f) => f,
        None if noise.is_empty() => 0.0,
        None => noise.values().sum::<f64>() / noise.len() as f64,
    };
    if let Some((i, &(line, _))) = exact.iter().find(|(i, _)| !noise.contains_key(i)) {
        return Err(perr(line, format!("a noise offset for node {i}, which has no noise line")));
    }
    let mut offs = vec![0.0; n];
    for (i, mean) in noise {
        offs[i] = mean - reference;
        // MEAN − floor loses the offset's last bits (MEAN is rounded to the floor's precision);
        // the comment line keeps them, and is taken when it still gives this noise line's MEAN
        // (an edited MEAN wins).
        if let (Some(f), Some(&(_, off))) = (floor, exact.get(&i)) {
            if (f + off).to_bits() == mean.to_bits() {
                offs[i] = off;
            }
        }
    }
    Ok(Links { out, noise_offset_db: offs, tx_power_dbm: vec![0.0; n] })
}

/// What the `#` header line `wsn gains` writes at the top of a gain file says about it.
#[derive(Clone, Debug, PartialEq)]
pub struct GainFileHeader {
    /// The scenario's `name`.
    pub scenario: String,
    /// The scenario's `radio.link.tx_power_dbm`.
    pub tx_power_dbm: f64,
    /// Whether each sender's transmit power is added to its gains (`--fold-tx-power`).
    pub tx_power_folded: bool,
    /// The received power below which links were left out, dBm (`None`: the links came from a
    /// gain file, all kept).
    pub pruned_below_dbm: Option<f64>,
    /// Whether each receiver's noise offset δ_j raises that threshold for links to it.
    pub per_receiver: bool,
    /// The floor P_n the `noise` lines are written against (MEAN_i = P_n + δ_i): with it,
    /// [`read_tossim_gains`] reads the offsets back relative to it instead of centring them.
    pub noise_floor_dbm: f64,
}

/// The start of the header line (a `#` comment, so TOSSIM and [`read_tossim_gains`] skip it).
const HEADER_TAG: &str = "# wsn gains:";

/// The start of the comment line after each `noise` line that `wsn gains` writes,
/// `# wsn noise_offset ID DELTA_DB`: the node's offset δ_i itself, which `MEAN − noise_floor_dbm`
/// gives back only to about 10⁻¹⁴ dB (TOSSIM skips it, as any `#` line).
const OFFSET_TAG: &str = "# wsn noise_offset";

impl GainFileHeader {
    /// The header line, without its newline: `key=value` fields after `# wsn gains:`, then a
    /// sentence for the reader.
    pub fn line(&self) -> String {
        let pruned = match self.pruned_below_dbm {
            Some(p) => format!(
                "links kept where tx_power_dbm + gain >= {p} dBm{}",
                if self.per_receiver { " + the receiver's noise offset" } else { "" }
            ),
            None => "links copied from a gain file, none pruned".into(),
        };
        // `tx_power_folded` first, where a scenario name cannot imitate it.
        format!(
            "{HEADER_TAG} tx_power_folded={} tx_power_dbm={} pruned_below_dbm={} per_receiver_offset={} \
             noise_floor_dbm={} scenario={:?} ({pruned}; {})",
            if self.tx_power_folded { "yes" } else { "no" },
            self.tx_power_dbm,
            self.pruned_below_dbm.map_or("none".to_string(), |p| p.to_string()),
            if self.per_receiver { "yes" } else { "no" },
            self.noise_floor_dbm,
            self.scenario,
            if self.tx_power_folded {
                "the power is in the gains: read back with radio.link.tx_power_dbm = 0"
            } else {
                "gains exclude the transmit power"
            }
        )
    }
}

/// The `noise_floor_dbm=F` field of a `wsn gains` header line (`rest`: the line after
/// [`HEADER_TAG`]): `None` when absent (headers written before the field existed). Only the
/// `key=value` words before `scenario=` are fields: a scenario's name cannot imitate one.
fn header_noise_floor(rest: &str) -> Result<Option<f64>, String> {
    let fields = rest.split_whitespace().take_while(|w| !w.starts_with("scenario="));
    let Some(v) = fields.filter_map(|w| w.strip_prefix("noise_floor_dbm=")).next() else {
        return Ok(None);
    };
    match v.parse::<f64>() {
        Ok(f) if (-200.0..=0.0).contains(&f) => Ok(Some(f)),
        _ => Err(format!("header field noise_floor_dbm={v:?}: expected a number of dBm within −200 … 0")),
    }
}

/// Whether a gain file's `wsn gains` header (if it has one) says the transmit power is folded
/// into its gains. Files without the header (TOSSIM's own, or written before it existed) say
/// nothing: `false`.
pub fn gain_file_marked_folded(text: &str) -> bool {
    text.lines()
        .filter_map(|l| l.trim_start().strip_prefix(HEADER_TAG))
        .any(|rest| rest.split_whitespace().next() == Some("tx_power_folded=yes"))
}

/// Writes a TOSSIM gain file: one `gain SRC DST G` line per directional link (by sender, then
/// receiver), then one `noise ID MEAN SPREAD` line per node with MEAN = `noise_floor_dbm` + δ_i
/// and SPREAD = `spread_db`. Every number is written in the shortest decimal form that reads back
/// to the same value (a gain to the same f32, MEAN to the same f64), so that
/// [`read_tossim_gains`] gives back the very gains. After each noise line, a comment line
/// `# wsn noise_offset ID δ_i` keeps the offset's last bits, which MEAN − floor loses: with a
/// [`GainFileHeader`] line (its `noise_floor_dbm`) first, the offsets come back bit for bit;
/// without one they come back centred on their mean.
pub fn write_tossim_gains(links: &Links, noise_floor_dbm: f64, spread_db: f64, path: &Path) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    write_tossim_gains_to(links, noise_floor_dbm, spread_db, false, &mut w)?;
    w.flush()
}

/// [`write_tossim_gains`] into any writer. With `fold_tx_power`, each sender's transmit power is
/// added to its gains (G + P_tx), so that TOSSIM, which sends at 0 dBm, sees the received powers
/// of this scenario; such a file read back here needs `radio.link.tx_power_dbm = 0`.
pub fn write_tossim_gains_to(
    links: &Links,
    noise_floor_dbm: f64,
    spread_db: f64,
    fold_tx_power: bool,
    w: &mut dyn Write,
) -> std::io::Result<()> {
    for (i, v) in links.out.iter().enumerate() {
        let p = if fold_tx_power { links.tx_power_dbm.get(i).copied().unwrap_or(0.0) } else { 0.0 };
        for l in v {
            let g = f64::from(l.gain_db) + p;
            // What the reader would refuse is not written: the file must read back.
            if !GAIN_RANGE_DB.contains(&g) {
                return Err(std::io::Error::other(format!(
                    "gain {i} → {} = {g:.2} dB is outside the {} … +{} dB a gain file may hold (the scenario's \
                     radio.link settings are extreme){}",
                    l.to,
                    GAIN_RANGE_DB.start(),
                    GAIN_RANGE_DB.end(),
                    if fold_tx_power { "; without --fold-tx-power the transmit power is left out" } else { "" }
                )));
            }
            // The f32 the reader stores (with the power folded in, the sum rounded to an f32),
            // in Rust's shortest round-trip form: `{:.2}` lost up to 0.005 dB per link.
            writeln!(w, "gain {} {} {}", i, l.to, g as f32)?;
        }
    }
    for i in 0..links.n() {
        let off = links.noise_offset_db.get(i).copied().unwrap_or(0.0);
        let mean = noise_floor_dbm + off;
        if !(-200.0..=0.0).contains(&mean) {
            return Err(std::io::Error::other(format!(
                "noise {i} = {mean:.2} dBm (the floor plus the node's offset) is outside the −200 … 0 dBm a gain \
                 file may hold (the scenario's radio.link settings are extreme)"
            )));
        }
        writeln!(w, "noise {} {} {}", i, mean, spread_db)?;
        writeln!(w, "{OFFSET_TAG} {i} {off}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::radio::prr::prr;

    fn rng() -> SimRng {
        stream(7, 0, 0, Purpose::Placement)
    }

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("wsn-topo-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A positions file's errors name the file's own line, past comments, blank lines and
    /// `\r\n` line ends.
    #[test]
    fn position_errors_name_the_real_line() {
        let d = tmpdir("lines");
        let f = d.join("p.csv");
        let cases = [
            ("# a\n# b\nnode,x\n0,1\n", ":3: the header has no column `x_m`"),
            ("node,x_m,y_m\r\n0,1,2\r\n# c\r\n\r\n1,x,2\r\n", ":5: x_m \"x\" is not a finite number"),
            ("# c\nnode,x_m,y_m\n0,1,2\n\n0,3,4\n", ":5: node id 0 appears twice"),
            ("node,x_m,y_m\n0,1,2\n# c\n1,2\n", ":4: malformed CSV record: 2 fields, where the header has 3"),
            ("node,x_m,y_m\n0,1,2\n2,3,4\n", ":3: node id 2 outside 0 to 1: the file has 2 rows, one per node"),
        ];
        for (text, want) in cases {
            std::fs::write(&f, text).unwrap();
            let e = read_positions(&f).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
        std::fs::remove_dir_all(&d).ok();
    }

    /// With receiver noise offsets the cut-off of each link follows its receiver's δ_j: every
    /// pair kept is above `min_rx + δ_j` and every pair above it is kept (all pairs compared
    /// with the uncut topology); without, one cut-off for all.
    #[test]
    fn cut_off_follows_each_receivers_noise_offset() {
        let pos = place(&Placement::Grid { nodes: 100, spacing_m: 4.0 }, Path::new("."), &mut rng(), 1.0).unwrap();
        let m = LinkModel::default();
        assert!(m.s11 > 0.0, "the default S gives noise offsets");
        let min_rx = -95.0;
        let all = generate_links(&pos, &m, 3, f64::NEG_INFINITY).unwrap();
        let flat = generate_links(&pos, &m, 3, min_rx).unwrap();
        let per = generate_links_per_receiver(&pos, &m, 3, min_rx).unwrap();
        let (mut gained, mut lost) = (0, 0);
        for i in 0..pos.len() {
            for l in &all.out[i] {
                let p = m.tx_power_dbm + f64::from(l.gain_db);
                let j = l.to as usize;
                let in_flat = flat.out[i].iter().any(|k| k.to == l.to);
                let in_per = per.out[i].iter().any(|k| k.to == l.to);
                assert_eq!(in_flat, p >= min_rx, "{i}->{j}");
                assert_eq!(in_per, p >= min_rx + all.noise_offset_db[j], "{i}->{j}");
                gained += usize::from(in_per && !in_flat);
                lost += usize::from(in_flat && !in_per);
            }
        }
        // Quiet receivers keep weaker links, noisy ones drop some.
        assert!(gained > 0 && lost > 0, "gained {gained}, lost {lost}");
    }

    #[test]
    fn grid_and_chain() {
        let here = Path::new(".");
        let g = place(&Placement::Grid { nodes: 10, spacing_m: 5.0 }, here, &mut rng(), 1.0).unwrap();
        assert_eq!(g.len(), 10);
        assert_eq!(g[0], Position { x: 0.0, y: 0.0 });
        assert_eq!(g[3], Position { x: 15.0, y: 0.0 }); // 4 columns
        assert_eq!(g[4], Position { x: 0.0, y: 5.0 });
        assert_eq!(g[9], Position { x: 5.0, y: 10.0 });
        let g = place(&Placement::Grid { nodes: 9, spacing_m: 2.0 }, here, &mut rng(), 1.0).unwrap();
        assert_eq!(g[8], Position { x: 4.0, y: 4.0 });
        let c = place(&Placement::Chain { nodes: 4, spacing_m: 7.5 }, here, &mut rng(), 1.0).unwrap();
        assert_eq!(c[3], Position { x: 22.5, y: 0.0 });
        assert!(place(&Placement::Chain { nodes: 10_001, spacing_m: 1.0 }, here, &mut rng(), 1.0).is_err());
        assert!(place(&Placement::Grid { nodes: 0, spacing_m: 1.0 }, here, &mut rng(), 1.0).is_err());
        assert!(place(&Placement::Grid { nodes: 4, spacing_m: f64::NAN }, here, &mut rng(), 1.0).is_err());
        // Finite spacings whose layout is too wide for a distance to be computed.
        for p in [Placement::Grid { nodes: 9, spacing_m: 1e308 }, Placement::Chain { nodes: 10_000, spacing_m: 1e305 }]
        {
            let e = place(&p, here, &mut rng(), 1.0).unwrap_err().to_string();
            assert!(e.contains("too far apart"), "{e}");
        }
        assert!(place(&Placement::Chain { nodes: 3, spacing_m: 1e150 }, here, &mut rng(), 1.0).is_ok());
    }

    #[test]
    fn close_pairs_finds_every_pair_below_the_distance_once() {
        let at = |x: f64, y: f64| Position { x, y };
        let p = [at(0.0, 0.0), at(5.0, 0.0), at(5.0, 0.0), at(0.9, 0.0), at(20.0, 20.0), at(5.5, 0.5)];
        let (count, pairs) = close_pairs(&p, 1.0, 10);
        assert_eq!((count, pairs), (4, vec![(0, 3), (1, 2), (1, 5), (2, 5)]));
        assert_eq!(close_pairs(&p, 1.0, 2), (4, vec![(0, 3), (1, 2)]));
        assert_eq!(close_pairs(&p, 0.1, 10), (1, vec![(1, 2)]));
        // A brute-force count on a random layout.
        let r = place(&Placement::Random { nodes: 300, width_m: 30.0, height_m: 30.0 }, here_dir(), &mut rng(), 0.01)
            .unwrap();
        let brute = (0..r.len()).flat_map(|i| (i + 1..r.len()).map(move |j| (i, j)));
        let brute: Vec<_> = brute.filter(|&(i, j)| r[i].distance(&r[j]) < 1.5).collect();
        assert!(!brute.is_empty());
        assert_eq!(close_pairs(&r, 1.5, usize::MAX), (brute.len(), brute));
    }

    fn here_dir() -> &'static Path {
        Path::new(".")
    }

    #[test]
    fn random_placements_respect_area_and_spacing() {
        let here = Path::new(".");
        for p in [
            Placement::Uniform { nodes: 100, width_m: 50.0, height_m: 50.0 },
            Placement::Random { nodes: 100, width_m: 50.0, height_m: 50.0 },
            Placement::Uniform { nodes: 30, width_m: 90.0, height_m: 10.0 },
        ] {
            // D0 = 1 m (the default) and a larger D0: the spacing follows it.
            for d0 in [1.0, 2.5] {
                let a = place(&p, here, &mut rng(), d0).unwrap();
                let b = place(&p, here, &mut rng(), d0).unwrap();
                assert_eq!(a, b, "deterministic for the same stream");
                let (w, h) = match p {
                    Placement::Uniform { width_m, height_m, .. } | Placement::Random { width_m, height_m, .. } => {
                        (width_m, height_m)
                    }
                    _ => unreachable!(),
                };
                for (i, q) in a.iter().enumerate() {
                    assert!(q.x >= 0.0 && q.x <= w && q.y >= 0.0 && q.y <= h);
                    for r in &a[..i] {
                        assert!(q.distance(r) >= d0, "{q:?} too close to {r:?} (D0 {d0})");
                    }
                }
            }
        }
        // Uniform: one node per cell (10 × 10 cells of 5 m).
        let u =
            place(&Placement::Uniform { nodes: 100, width_m: 50.0, height_m: 50.0 }, here, &mut rng(), 1.0).unwrap();
        for (i, q) in u.iter().enumerate() {
            assert_eq!(((q.x / 5.0) as usize, (q.y / 5.0) as usize), (i % 10, i / 10));
        }
    }

    #[test]
    fn positions_columns_match_case_insensitively_once() {
        let d = std::env::temp_dir().join(format!("wsn-poscols-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let read = |text: &str| {
            std::fs::write(d.join("p.csv"), text).unwrap();
            place(&Placement::File { path: "p.csv".into() }, &d, &mut rng(), 1.0)
        };
        let p = read("Node, X_m ,Y_M,Parent\n0,1,2,-1\n1,3,4,0\n").unwrap();
        assert_eq!(p, vec![Position { x: 1.0, y: 2.0 }, Position { x: 3.0, y: 4.0 }]);
        let e = read("node,x_m,y_m,x_m\n0,1,2,9\n").unwrap_err().to_string();
        assert!(e.contains("p.csv:1") && e.contains("`x_m` twice"), "{e}");
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn csv_placement() {
        let base = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/topologies"));
        let p = place(&Placement::File { path: "lrwpan40.csv".into() }, base, &mut rng(), 1.0).unwrap();
        assert_eq!(p.len(), 40);
        assert_eq!(p[0], Position { x: 17.5, y: 17.5 });
        assert_eq!(p[1], Position { x: 4.77, y: 4.69 });
        let d = tmpdir("csv");
        std::fs::write(d.join("a.csv"), "x_m,node,y_m,extra\n1,1,2,z\n3,0,4,z\n").unwrap();
        let p = place(&Placement::File { path: "a.csv".into() }, &d, &mut rng(), 1.0).unwrap();
        assert_eq!(p, vec![Position { x: 3.0, y: 4.0 }, Position { x: 1.0, y: 2.0 }]);
        std::fs::write(d.join("b.csv"), "node,x_m,y_m\n0,1,2\n1,abc,3\n").unwrap();
        let e = place(&Placement::File { path: "b.csv".into() }, &d, &mut rng(), 1.0).unwrap_err();
        assert!(e.to_string().contains("b.csv:3"), "{e}");
        std::fs::write(d.join("c.csv"), "node,x_m,y_m\n0,1,2\n2,1,3\n").unwrap();
        let e = place(&Placement::File { path: "c.csv".into() }, &d, &mut rng(), 1.0).unwrap_err();
        assert!(e.to_string().contains("c.csv:3"), "{e}");
        std::fs::write(d.join("d.csv"), "node,x,y\n0,1,2\n").unwrap();
        let e = place(&Placement::File { path: "d.csv".into() }, &d, &mut rng(), 1.0).unwrap_err();
        assert!(e.to_string().contains("d.csv:1") && e.to_string().contains("x_m"), "{e}");
        std::fs::write(d.join("e.csv"), "node,x_m,y_m\n0,1,2\n0,1,3\n").unwrap();
        assert!(place(&Placement::File { path: "e.csv".into() }, &d, &mut rng(), 1.0).is_err());
        assert!(place(&Placement::File { path: "nope.csv".into() }, &d, &mut rng(), 1.0).is_err());
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn link_model_defaults_and_validation() {
        let m: LinkModel = toml::from_str("shadowing_sigma_db = 4.0\n").unwrap();
        assert_eq!(m.shadowing_sigma_db, 4.0);
        assert_eq!(LinkModel { shadowing_sigma_db: 3.0, ..m.clone() }, LinkModel::default());
        let d = LinkModel::default();
        assert_eq!((d.s11, d.s12, d.s22, d.pl_d0_db), (3.7, -3.3, 6.0, 55.0));
        assert!(toml::from_str::<LinkModel>("bogus = 1\n").is_err());
        assert!(d.validate().is_ok());
        let bad = |f: &dyn Fn(&mut LinkModel)| {
            let mut m = LinkModel::default();
            f(&mut m);
            m.validate().is_err()
        };
        assert!(bad(&|m| m.s12 = -5.0)); // 25 > 3.7·6
        assert!(bad(&|m| {
            m.s11 = 0.0;
            m.s12 = 0.0
        }));
        assert!(bad(&|m| m.s22 = -1.0));
        assert!(bad(&|m| m.d0_m = 0.0));
        assert!(bad(&|m| m.path_loss_exponent = f64::NAN));
        // Powers whose milliwatts overflow, and implausible floors, are refused.
        assert!(bad(&|m| m.tx_power_dbm = 1e9));
        assert!(bad(&|m| m.noise_floor_dbm = 50.0));
        assert!(bad(&|m| m.pl_d0_db = -1.0));
        // Nonsense magnitudes are refused too.
        assert!(bad(&|m| m.shadowing_sigma_db = 1e300));
        assert!(bad(&|m| m.s11 = 1e300));
        assert!(bad(&|m| m.path_loss_exponent = 1e-300));
        assert!(bad(&|m| m.path_loss_exponent = 11.0));
        assert!(bad(&|m| m.d0_m = 1e-50));
        assert!(!bad(&|m| m.shadowing_sigma_db = 14.0));
        assert!(!bad(&|m| m.path_loss_exponent = 6.0));
        assert!(!bad(&|m| m.tx_power_dbm = -27.0));
        assert!(!bad(&|m| {
            m.s11 = 0.0;
            m.s12 = 0.0;
            m.s22 = 0.0
        }));
        assert!(!bad(&|m| {
            m.s22 = 0.0;
            m.s12 = 0.0
        }));
        assert!(bad(&|m| m.s22 = 0.0)); // S12 ≠ 0 with S22 = 0
        let pos = [Position { x: 0.0, y: 0.0 }];
        let m = LinkModel { s12: 9.0, ..LinkModel::default() };
        assert!(generate_links(&pos, &m, 1, -110.0).is_err());
        assert!(generate_links(&pos, &LinkModel::default(), 1, f64::NAN).is_err());
        // Too many links for the memory: refused by name, not built.
        let grid: Vec<Position> = (0..400).map(|k| Position { x: (k % 20) as f64, y: (k / 20) as f64 }).collect();
        let all = links_up_to(&grid, &LinkModel::default(), 1, f64::NEG_INFINITY, false, usize::MAX).unwrap();
        assert_eq!(all.out.iter().map(Vec::len).sum::<usize>(), 400 * 399);
        let e = links_up_to(&grid, &LinkModel::default(), 1, f64::NEG_INFINITY, false, 1000).unwrap_err().to_string();
        assert!(e.contains("more than 1000 directed links") && e.contains("topology.layout"), "{e}");
    }

    #[test]
    fn hardware_variance_has_covariance_s() {
        let m = LinkModel::default();
        let chol = m.cholesky();
        let n = 40_000;
        let v: Vec<(f64, f64)> = (0..n).map(|i| hardware_variance(3, i, chol)).collect();
        let mean = |f: &dyn Fn(&(f64, f64)) -> f64| v.iter().map(f).sum::<f64>() / n as f64;
        let (ma, mb) = (mean(&|x| x.0), mean(&|x| x.1));
        let s11 = mean(&|x| (x.0 - ma).powi(2));
        let s22 = mean(&|x| (x.1 - mb).powi(2));
        let s12 = mean(&|x| (x.0 - ma) * (x.1 - mb));
        assert!(ma.abs() < 0.05 && mb.abs() < 0.05);
        assert!((s11 - 3.7).abs() < 0.15, "{s11}");
        assert!((s22 - 6.0).abs() < 0.25, "{s22}");
        assert!((s12 - -3.3).abs() < 0.15, "{s12}");
    }

    #[test]
    fn shadowing_is_shared_by_both_directions() {
        let here = Path::new(".");
        let pos =
            place(&Placement::Random { nodes: 60, width_m: 40.0, height_m: 40.0 }, here, &mut rng(), 1.0).unwrap();
        let m = LinkModel::default();
        let links = generate_links(&pos, &m, 99, f64::NEG_INFINITY).unwrap();
        assert_eq!(links.link_count(), 60 * 59);
        let chol = m.cholesky();
        let mut xs = Vec::new();
        for i in 0..60u32 {
            let (off, dpi) = hardware_variance(99, i, chol);
            assert_eq!(links.noise_offset_db[i as usize], off);
            for j in 0..60u32 {
                if i == j {
                    assert_eq!(links.gain(i as usize, j as usize), None);
                    continue;
                }
                let dpj = hardware_variance(99, j, chol).1;
                let gij = links.gain(i as usize, j as usize).unwrap() as f64;
                let gji = links.gain(j as usize, i as usize).unwrap() as f64;
                assert!(((gij - dpi) - (gji - dpj)).abs() < 1e-4);
                // X_ij recovered from the gain equals the order-independent pair draw.
                let d = pos[i as usize].distance(&pos[j as usize]).max(1.0);
                let x = gij - dpi + 55.0 + 30.0 * d.log10();
                assert!((x - 3.0 * pair_normal(99, j, i)).abs() < 1e-4);
                if i < j {
                    xs.push(x);
                }
            }
        }
        let mx = xs.iter().sum::<f64>() / xs.len() as f64;
        let sd = (xs.iter().map(|x| (x - mx).powi(2)).sum::<f64>() / xs.len() as f64).sqrt();
        assert!(mx.abs() < 0.25 && (sd - 3.0).abs() < 0.25, "X mean {mx} sd {sd}");
        // Symmetric hardware (S = 0): gains are exactly symmetric.
        let sym = LinkModel { s11: 0.0, s12: 0.0, s22: 0.0, ..m };
        let l = generate_links(&pos, &sym, 99, f64::NEG_INFINITY).unwrap();
        assert_eq!(l.gain(3, 17), l.gain(17, 3));
        assert!(l.noise_offset_db.iter().all(|&o| o == 0.0));
    }

    /// Layouts so wide that the cell indices saturate i64 (spacing 10^25 m, or two nodes far
    /// apart beside two close ones) give links as the brute force does, without a panic or a
    /// link listed twice.
    #[test]
    fn huge_layouts_do_not_overflow_the_cells() {
        let m = LinkModel::default();
        let p = |x: f64, y: f64| Position { x, y };
        for pos in [
            vec![p(0.0, 0.0), p(1e25, 0.0), p(0.0, 1e25), p(1e25, 1e25)],
            vec![p(0.0, 0.0), p(2.0, 0.0), p(1e22, 0.0), p(1e22 + 2.0, 0.0)],
            vec![p(-1e300, -1e300), p(1e300, 1e300), p(1e300, 1e300 - 3.0)],
        ] {
            let fast = generate_links(&pos, &m, 5, -110.0).unwrap();
            let all = generate_links(&pos, &m, 5, f64::NEG_INFINITY).unwrap();
            for i in 0..pos.len() {
                let want: Vec<Link> = all.out[i].iter().copied().filter(|l| l.gain_db as f64 >= -110.0).collect();
                assert_eq!(fast.out[i], want, "node {i} of {pos:?}");
            }
            // The close pairs are linked both ways; nodes 10^22 m apart are not.
            let close = pos
                .iter()
                .enumerate()
                .filter(|(i, a)| pos.iter().enumerate().any(|(j, b)| j != *i && a.distance(b) < 5.0));
            assert_eq!(fast.link_count(), close.count(), "{pos:?}");
        }
    }

    #[test]
    fn spatial_index_matches_brute_force() {
        let here = Path::new(".");
        let pos =
            place(&Placement::Random { nodes: 400, width_m: 200.0, height_m: 120.0 }, here, &mut rng(), 1.0).unwrap();
        let m = LinkModel { tx_power_dbm: -10.0, ..LinkModel::default() };
        let min_rx = -100.0;
        let fast = generate_links(&pos, &m, 5, min_rx).unwrap();
        let all = generate_links(&pos, &m, 5, f64::NEG_INFINITY).unwrap();
        // Brute force: prune the complete set by the threshold.
        let mut missed = 0;
        for i in 0..pos.len() {
            let want: Vec<Link> = all.out[i].iter().copied().filter(|l| -10.0 + l.gain_db as f64 >= min_rx).collect();
            for l in &fast.out[i] {
                assert!(want.contains(l));
            }
            missed += want.len() - fast.out[i].len();
        }
        assert_eq!(missed, 0, "links beyond the cut-off should need a > 4σ draw");
        assert!(fast.link_count() > 1000 && fast.link_count() < all.link_count() / 4);
    }

    #[test]
    fn ten_thousand_nodes_quickly() {
        // 28 m² per node (≈ the lrwpan40 density), −25 dBm, prune below −115 dBm.
        let n = 10_000;
        let side = (28.0 * n as f64).sqrt();
        let start = std::time::Instant::now();
        let pos =
            place(&Placement::Uniform { nodes: n, width_m: side, height_m: side }, Path::new("."), &mut rng(), 1.0)
                .unwrap();
        let m = LinkModel { tx_power_dbm: -25.0, ..LinkModel::default() };
        let links = generate_links(&pos, &m, 1, -115.0).unwrap();
        let el = start.elapsed();
        let deg = links.link_count() as f64 / n as f64;
        eprintln!("10 000 nodes: {el:?}, mean out-degree {deg:.1}");
        // Mean-gain range: −25 − 55 − 30·log10(d) = −115 → 14.7 m → π·14.7²/28 ≈ 24 neighbours;
        // shadowing and ΔP (total σ ≈ 3.9 dB) enlarge the mean area by ≈ 20 %; edges cut ≈ 5 %.
        assert!((22.0..34.0).contains(&deg), "mean degree {deg}");
        assert!(el.as_secs_f64() < 3.0, "too slow: {el:?}");
    }

    #[test]
    fn gain_file_round_trip() {
        // A gain the reader would refuse is not written: the export fails instead.
        let odd = Links {
            out: vec![vec![Link { to: 1, gain_db: -40.0 }], vec![Link { to: 0, gain_db: 25.0 }]],
            noise_offset_db: vec![0.0; 2],
            tx_power_dbm: vec![40.0; 2],
        };
        let mut text = Vec::new();
        write_tossim_gains_to(&odd, -98.0, 0.0, false, &mut text).unwrap();
        let e = write_tossim_gains_to(&odd, -98.0, 0.0, true, &mut Vec::new()).unwrap_err().to_string();
        assert!(e.contains("gain 1 → 0 = 65.00 dB is outside"), "{e}");
        let loud = Links { noise_offset_db: vec![0.0, 4.0], ..odd };
        let e = write_tossim_gains_to(&loud, -2.0, 0.0, false, &mut Vec::new()).unwrap_err().to_string();
        assert!(e.contains("noise 1 = 2.00 dBm"), "{e}");
        let pos =
            place(&Placement::Random { nodes: 50, width_m: 60.0, height_m: 60.0 }, Path::new("."), &mut rng(), 1.0)
                .unwrap();
        let links = generate_links(&pos, &LinkModel::default(), 4, -110.0).unwrap();
        let d = tmpdir("gains");
        let f = d.join("g.txt");
        write_tossim_gains(&links, -105.0, 4.0, &f).unwrap();
        let back = read_tossim_gains(&f, Some(50)).unwrap();
        assert_eq!(back.n(), 50);
        assert_eq!(back.link_count(), links.link_count());
        for (a, b) in links.out.iter().zip(&back.out) {
            for (x, y) in a.iter().zip(b) {
                assert_eq!(x.to, y.to);
                // Bit for bit: the file holds each f32 in a form that parses back to it.
                assert_eq!(x.gain_db.to_bits(), y.gain_db.to_bits(), "{x:?} {y:?}");
            }
        }
        // Offsets come back relative to their mean, to the last bits of the f64 arithmetic
        // (MEAN = floor + δ is written exactly; the centring subtracts the mean of the MEANs).
        let avg = links.noise_offset_db.iter().sum::<f64>() / 50.0;
        assert!(avg.abs() > 1e-3, "the test needs offsets whose mean is not 0");
        for (a, b) in links.noise_offset_db.iter().zip(&back.noise_offset_db) {
            assert!((a - avg - b).abs() < 1e-9, "{a} {avg} {b}");
        }
        assert!(back.tx_power_dbm.iter().all(|&p| p == 0.0));

        // The header `wsn gains` writes is a comment: the links read the same with it.
        let h = GainFileHeader {
            scenario: "x y".into(),
            tx_power_dbm: -8.0,
            tx_power_folded: true,
            pruned_below_dbm: Some(-104.5),
            per_receiver: true,
            noise_floor_dbm: -105.0,
        };
        let mut text = format!("{}\n", h.line()).into_bytes();
        write_tossim_gains_to(&links, -105.0, 4.0, false, &mut text).unwrap();
        std::fs::write(&f, &text).unwrap();
        let with_header = read_tossim_gains(&f, Some(50)).unwrap();
        assert_eq!(with_header.out, back.out);
        // With the header's floor the offsets come back themselves, bit for bit (from the
        // `# wsn noise_offset` lines: MEAN − floor alone differs in the last bits).
        let mut inexact = 0;
        for (i, (a, b)) in links.noise_offset_db.iter().zip(&with_header.noise_offset_db).enumerate() {
            assert_eq!(a.to_bits(), b.to_bits(), "node {i}: {a} {b}");
            inexact += usize::from((-105.0 + a) - -105.0 != *a);
        }
        assert!(inexact > 25, "the test needs offsets that MEAN − floor does not give back exactly");
        let text = String::from_utf8(text).unwrap();
        assert!(gain_file_marked_folded(&text));
        assert!(!gain_file_marked_folded(&text.replace("tx_power_folded=yes", "tx_power_folded=no")));
        // A scenario named like the field does not mark a file folded.
        let sly = GainFileHeader { scenario: "a tx_power_folded=yes".into(), tx_power_folded: false, ..h };
        assert!(!gain_file_marked_folded(&sly.line()), "{}", sly.line());
        assert!(
            sly.line().contains("pruned_below_dbm=-104.5 per_receiver_offset=yes noise_floor_dbm=-105 scenario="),
            "{}",
            sly.line()
        );
        std::fs::write(&f, "# comment\n\ngain 0 1 -59.25 # again\n1 0 -61\nnoise 0 -100 4\nnoise 2 -104 4\n").unwrap();
        let l = read_tossim_gains(&f, None).unwrap();
        assert_eq!(l.n(), 3);
        assert_eq!(l.gain(0, 1), Some(-59.25));
        assert_eq!(l.gain(1, 0), Some(-61.0));
        assert_eq!(l.gain(0, 2), None);
        assert_eq!(l.noise_offset_db, vec![2.0, 0.0, -2.0]);
        assert!(read_tossim_gains(&f, Some(2)).unwrap_err().to_string().contains("g.txt:6"));
        std::fs::write(&f, "gain 0 1 -60\ngain 0 x -60\n").unwrap();
        let e = read_tossim_gains(&f, None).unwrap_err().to_string();
        assert!(e.contains("g.txt:2"), "{e}");
        // An id of digits too large for any number is named as such, not as a non-integer.
        std::fs::write(&f, "gain 0 1 -60\ngain 0 99999999999999999999999 -60\n").unwrap();
        let e = read_tossim_gains(&f, None).unwrap_err().to_string();
        assert!(e.contains("g.txt:2") && e.contains("\"99999999999999999999999\" is far too large"), "{e}");
        std::fs::write(&f, "gain 0 1 -60\ngain 0 -1 -60\n").unwrap();
        let e = read_tossim_gains(&f, None).unwrap_err().to_string();
        assert!(e.contains("g.txt:2") && e.contains("\"-1\" is not a non-negative integer"), "{e}");
        std::fs::write(&f, "gain 0 1\n").unwrap();
        assert!(read_tossim_gains(&f, None).unwrap_err().to_string().contains("g.txt:1"));
        std::fs::write(&f, "link 0 1 3 4\n").unwrap();
        assert!(read_tossim_gains(&f, None).is_err());
        // A node's gain to itself, and a file without links, are errors (they used to be
        // ignored and to give a network without links).
        std::fs::write(&f, "gain 0 1 -60\ngain 1 1 -60\n").unwrap();
        let e = read_tossim_gains(&f, None).unwrap_err().to_string();
        assert!(e.contains("g.txt:2") && e.contains("itself"), "{e}");
        std::fs::write(&f, "# nothing\nnoise 0 -100 4\n").unwrap();
        let e = read_tossim_gains(&f, Some(2)).unwrap_err().to_string();
        assert!(e.contains("no gain lines"), "{e}");
        // Magnitudes no radio has are refused with their line.
        for (text, what) in [
            ("gain 0 1 -60\ngain 1 0 1000\n", "gain 1000 dB"),
            ("gain 0 1 -60\nnoise 0 -100 -4\n", "noise spread -4 dB"),
            ("gain 0 1 -60\nnoise 0 20 4\n", "noise mean 20 dBm"),
            ("noise 0 -100 4\nnoise 0 -98 4\ngain 0 1 -60\n", "a second noise line for node 0"),
            ("gain 0 1 -60\n0 1 -200\n", "a second gain line for 0 → 1 (the first is on line 1)"),
        ] {
            std::fs::write(&f, text).unwrap();
            let e = read_tossim_gains(&f, None).unwrap_err().to_string();
            assert!(e.contains("g.txt:2") && e.contains(what), "{e}");
        }
        std::fs::remove_dir_all(&d).ok();
    }

    /// The header's `noise_floor_dbm=` field: present, the offsets are MEAN − that floor; absent
    /// (TOSSIM's files, older `wsn gains` headers), centred on the mean MEAN; malformed, an error
    /// naming the line.
    #[test]
    fn gain_file_header_noise_floor() {
        let d = tmpdir("floor");
        let f = d.join("g.txt");
        let body = "gain 0 1 -60\nnoise 0 -99 0\nnoise 1 -102.5 0\n";
        let offsets = |header: &str| {
            std::fs::write(&f, format!("{header}\n{body}")).unwrap();
            read_tossim_gains(&f, None).map(|l| l.noise_offset_db).map_err(|e| e.to_string())
        };
        let tag = "# wsn gains: tx_power_folded=no tx_power_dbm=0 pruned_below_dbm=none per_receiver_offset=no";
        assert_eq!(offsets(&format!("{tag} noise_floor_dbm=-100 scenario=\"s\" (…)")), Ok(vec![1.0, -2.5]));
        assert_eq!(offsets(&format!("{tag} noise_floor_dbm=-99 scenario=\"s\"")), Ok(vec![0.0, -3.5]));
        // Absent: centred, as before the field existed; a scenario name cannot supply it.
        assert_eq!(offsets(&format!("{tag} scenario=\"s\" (…)")), Ok(vec![1.75, -1.75]));
        assert_eq!(offsets(&format!("{tag} scenario=\"s noise_floor_dbm=-90\"")), Ok(vec![1.75, -1.75]));
        assert_eq!(offsets("# a comment"), Ok(vec![1.75, -1.75]));
        for bad in ["abc", "", "5", "-300", "nan", "-inf"] {
            let e = offsets(&format!("{tag} noise_floor_dbm={bad} scenario=\"s\"")).unwrap_err();
            assert!(e.contains("g.txt:1") && e.contains(&format!("noise_floor_dbm={bad:?}")), "{e}");
        }
        let e = offsets(&format!("{tag}\n{tag} noise_floor_dbm=-100")).unwrap_err();
        assert!(e.contains("g.txt:2") && e.contains("second") && e.contains("line 1"), "{e}");

        // `# wsn noise_offset ID δ` lines give the offset itself where floor + δ is the MEAN.
        let floor = format!("{tag} noise_floor_dbm=-105");
        let d0 = 0.1_f64;
        let m0 = -105.0 + d0;
        assert_ne!(m0 - -105.0, d0, "the test needs an offset that MEAN − floor does not give back");
        let text = |n0: &str, n1: &str| format!("{floor}\ngain 0 1 -60\nnoise 0 {m0} 0\n{n0}\nnoise 1 -104 0\n{n1}\n");
        let read = |t: String| {
            std::fs::write(&f, t).unwrap();
            read_tossim_gains(&f, None).map(|l| l.noise_offset_db).map_err(|e| e.to_string())
        };
        let exact = Ok(vec![d0, 1.0]);
        assert_eq!(read(text("# wsn noise_offset 0 0.1", "# wsn noise_offset 1 1")), exact);
        assert_eq!(read(text("  # wsn noise_offset  0  0.1  ", "")), exact);
        // Without one, or where the MEAN was edited since, MEAN − floor.
        assert_eq!(read(text("", "")), Ok(vec![m0 + 105.0, 1.0]));
        assert_eq!(read(text("# wsn noise_offset 0 0.1", "").replace(&m0.to_string(), "-104.5")), Ok(vec![0.5, 1.0]));
        // Without the header's floor they are unused: centred, as TOSSIM's files are.
        let no_floor = text("# wsn noise_offset 0 0.1", "").replacen(" noise_floor_dbm=-105", "", 1);
        let mid = (m0 + -104.0) / 2.0;
        assert_eq!(read(no_floor), Ok(vec![m0 - mid, -104.0 - mid]));
        for (n0, n1, want) in [
            ("# wsn noise_offset 0", "", "g.txt:4: `# wsn noise_offset ID DELTA_DB`: expected 2 fields, found 1"),
            ("# wsn noise_offset 0 x", "", "g.txt:4: \"x\" is not a finite number"),
            ("# wsn noise_offset 0 0.1", "# wsn noise_offset 0 0.1", "g.txt:6: a second noise offset line for node 0"),
            ("", "# wsn noise_offset 2 0.1", "g.txt:6: a noise offset for node 2, which has no noise line"),
        ] {
            let e = read(text(n0, n1)).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        std::fs::remove_dir_all(&d).ok();
    }

    #[test]
    fn transitional_region_matches_spec() {
        // Spec §8.2, Java defaults: σ = 3, n = 3, PL_D0 = 55, −105 dBm constant floor, 0 dBm.
        let inv = |p: f64| {
            let (mut lo, mut hi) = (0.0, 10.0);
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if prr(mid) < p {
                    lo = mid
                } else {
                    hi = mid
                }
            }
            lo
        };
        let (tx, pl, n, floor, sigma) = (0.0, 55.0, 3.0, -105.0, 3.0);
        let dist = |snr: f64| 10f64.powf((tx - pl - floor - snr) / (10.0 * n));
        let d50 = dist(inv(0.5));
        let d_conn = dist(inv(0.9) + 2.0 * sigma);
        let d_disc = dist(inv(0.1) - 2.0 * sigma);
        assert!((d50 - 32.6).abs() < 0.1, "{d50}");
        assert!((d_conn - 19.5).abs() < 0.1, "{d_conn}");
        assert!((d_disc - 53.8).abs() < 0.15, "{d_disc}");
        // The generated mean gain at that distance gives the median PRR (no shadowing).
        let pos = [Position { x: 0.0, y: 0.0 }, Position { x: d50, y: 0.0 }];
        let m = LinkModel { shadowing_sigma_db: 0.0, s11: 0.0, s12: 0.0, s22: 0.0, ..LinkModel::default() };
        let l = generate_links(&pos, &m, 1, f64::NEG_INFINITY).unwrap();
        let g = l.gain(0, 1).unwrap() as f64;
        assert!((prr(tx + g - floor) - 0.5).abs() < 0.001);
        // Worked numbers of §2.3: −85 dB at 10 m, −94 at 20 m.
        let pos = [Position { x: 0.0, y: 0.0 }, Position { x: 10.0, y: 0.0 }, Position { x: 0.0, y: 20.0 }];
        let l = generate_links(&pos, &m, 1, f64::NEG_INFINITY).unwrap();
        assert!((l.gain(0, 1).unwrap() + 85.0).abs() < 1e-4);
        assert!((l.gain(0, 2).unwrap() + 94.03).abs() < 0.01);
    }

    mod audit35 {
        use super::*;

        fn no_shadowing() -> LinkModel {
            LinkModel { shadowing_sigma_db: 0.0, s11: 0.0, s12: 0.0, s22: 0.0, ..LinkModel::default() }
        }

        /// `check_len`: spacings, widths and heights "must be a positive number of metres": 0 is
        /// refused for every layout that takes one.
        #[test]
        fn zero_lengths_are_refused() {
            for p in [
                Placement::Grid { nodes: 4, spacing_m: 0.0 },
                Placement::Chain { nodes: 4, spacing_m: 0.0 },
                Placement::Uniform { nodes: 4, width_m: 0.0, height_m: 10.0 },
                Placement::Random { nodes: 4, width_m: 10.0, height_m: 0.0 },
            ] {
                let e = place(&p, here_dir(), &mut rng(), 1.0).unwrap_err().to_string();
                assert!(e.contains("must be a positive number of metres"), "{p:?}: {e}");
            }
        }

        /// README, layouts: `uniform` puts one node per grid cell, at a random point in it, with
        /// ⌈√(nodes·width/height)⌉ columns and as many rows as needed. 30 nodes on 60 m × 40 m:
        /// ⌈√45⌉ = 7 columns of 60/7 m and ⌈30/7⌉ = 5 rows of 8 m, node i in column i mod 7 and
        /// row ⌊i/7⌋ (the last row's cells 2–6 stay empty).
        #[test]
        fn uniform_has_one_node_per_cell_of_the_documented_grid() {
            let p = Placement::Uniform { nodes: 30, width_m: 60.0, height_m: 40.0 };
            let pos = place(&p, here_dir(), &mut rng(), 0.0).unwrap();
            let (cw, ch) = (60.0 / 7.0, 8.0);
            for (i, q) in pos.iter().enumerate() {
                let (col, row) = ((i % 7) as f64, (i / 7) as f64);
                assert!((col * cw..(col + 1.0) * cw).contains(&q.x), "node {i} at x {} not in column {col}", q.x);
                assert!((row * ch..(row + 1.0) * ch).contains(&q.y), "node {i} at y {} not in row {row}", q.y);
            }
        }

        /// `spaced` / [`PLACEMENT_MAX_TRIES`]: a node is drawn at most 100 times and the last draw is
        /// kept. With a spacing no position can meet, node 1 is the 100th of its draws.
        #[test]
        fn impossible_spacing_keeps_the_hundredth_draw() {
            let p = place(&Placement::Random { nodes: 2, width_m: 1.0, height_m: 1.0 }, here_dir(), &mut rng(), 10.0)
                .unwrap();
            let mut r = rng();
            let mut draw = || Position { x: r.gen::<f64>(), y: r.gen::<f64>() };
            let first = draw();
            let mut last = first;
            for _ in 0..PLACEMENT_MAX_TRIES {
                last = draw();
            }
            assert_eq!(p, vec![first, last]);
        }

        /// `Placement::Random`: uniformly random in the rectangle: x spans the width, y the height.
        #[test]
        fn random_placement_spans_a_wide_rectangle() {
            let (w, h) = (90.0, 10.0);
            let p =
                place(&Placement::Random { nodes: 200, width_m: w, height_m: h }, here_dir(), &mut rng(), 1.0).unwrap();
            assert!(p.iter().all(|q| (0.0..=w).contains(&q.x) && (0.0..=h).contains(&q.y)));
            let max_x = p.iter().map(|q| q.x).fold(0.0, f64::max);
            assert!(max_x > 80.0, "x should cover the 90 m width, max {max_x}");
        }

        /// `MAX_NODES`: ids run from 0 to 65,534, so a positions file of 65,535 rows is read and one
        /// of 65,536 is refused; so is a link generation over 65,536 positions.
        #[test]
        fn node_limit_is_65535() {
            let d = tmpdir("limit35");
            let f = d.join("p.csv");
            let rows = |n: usize| {
                let mut s = String::from("node,x_m,y_m\n");
                for i in 0..n {
                    s.push_str(&format!("{i},{i},0\n"));
                }
                s
            };
            std::fs::write(&f, rows(MAX_NODES)).unwrap();
            assert_eq!(read_positions(&f).unwrap().len(), MAX_NODES);
            std::fs::write(&f, rows(MAX_NODES + 1)).unwrap();
            let e = read_positions(&f).unwrap_err().to_string();
            assert!(e.contains("more than 65535 nodes"), "{e}");
            std::fs::remove_dir_all(&d).ok();

            let line = |n: usize| (0..n).map(|i| Position { x: i as f64 * 1000.0, y: 0.0 }).collect::<Vec<_>>();
            let ok = generate_links(&line(MAX_NODES), &no_shadowing(), 1, -110.0).unwrap();
            assert_eq!((ok.n(), ok.link_count()), (MAX_NODES, 0));
            let e = generate_links(&line(MAX_NODES + 1), &no_shadowing(), 1, -110.0).unwrap_err().to_string();
            assert!(e.contains("exceed the limit"), "{e}");
        }

        /// `validate`: the ranges are inclusive ("within −100 … +40 dBm", "within 0.001 … 1000 m").
        #[test]
        fn validation_bounds_are_inclusive() {
            let ok = |f: &dyn Fn(&mut LinkModel)| {
                let mut m = LinkModel::default();
                f(&mut m);
                m.validate().is_ok()
            };
            assert!(ok(&|m| m.tx_power_dbm = 40.0));
            assert!(ok(&|m| m.tx_power_dbm = -100.0));
            assert!(!ok(&|m| m.tx_power_dbm = 40.001));
            assert!(!ok(&|m| m.tx_power_dbm = -100.001));
            assert!(ok(&|m| m.d0_m = 1e-3));
            assert!(ok(&|m| m.d0_m = 1e3));
            assert!(!ok(&|m| m.d0_m = 0.9e-3));
            assert!(!ok(&|m| m.d0_m = 1.001e3));
        }

        /// Spec §2.2: |S12| ≤ √(S11·S22) admits a perfectly correlated S. Written with its √ one
        /// ulp high (as a rounded decimal may be), it is still accepted (`validate` allows for
        /// rounding) and must give finite offsets and gains: t22 = √((S11·S22 − S12²)/S11) is
        /// clamped at 0 rather than taken of a negative rounding residue.
        #[test]
        fn perfectly_correlated_s_gives_finite_gains() {
            let s12 = f64::from_bits((3.7f64 * 6.0).sqrt().to_bits() + 1);
            assert!(3.7 * 6.0 - s12 * s12 < 0.0, "the test needs a negative residue");
            let m = LinkModel { s11: 3.7, s12: -s12, s22: 6.0, ..LinkModel::default() };
            m.validate().unwrap();
            let pos = place(&Placement::Grid { nodes: 16, spacing_m: 5.0 }, here_dir(), &mut rng(), 1.0).unwrap();
            let l = generate_links(&pos, &m, 2, f64::NEG_INFINITY).unwrap();
            assert_eq!(l.link_count(), 16 * 15);
            assert!(l.noise_offset_db.iter().all(|o| o.is_finite()));
            assert!(l.out.iter().flatten().all(|k| k.gain_db.is_finite()));
        }

        /// `hardware_variance` doc / spec §2.2: node i's noise offset is t11·r1 with (r1, r2) the
        /// Box–Muller normals of the first two uniforms of its own `Purpose::Shadowing` stream.
        #[test]
        fn noise_offsets_come_from_each_nodes_shadowing_stream() {
            let pos = place(&Placement::Grid { nodes: 9, spacing_m: 5.0 }, here_dir(), &mut rng(), 1.0).unwrap();
            let m = LinkModel::default();
            let l = generate_links(&pos, &m, 11, -110.0).unwrap();
            for i in 0..9u32 {
                let mut r = stream(11, 0, i, Purpose::Shadowing);
                let (r1, _) = box_muller(r.gen::<f64>(), r.gen::<f64>());
                assert_eq!(l.noise_offset_db[i as usize], m.s11.sqrt() * r1, "node {i}");
            }
        }

        /// `generate_links`: `min_rx_dbm` must be a number or −∞ (+∞ would silently give a network
        /// without links), and every position must be finite.
        #[test]
        fn infinite_threshold_and_non_finite_positions_are_refused() {
            let pos = [Position { x: 0.0, y: 0.0 }, Position { x: 5.0, y: 0.0 }];
            let e = generate_links(&pos, &LinkModel::default(), 1, f64::INFINITY).unwrap_err().to_string();
            assert!(e.contains("min_rx_dbm"), "{e}");
            for bad in [f64::NAN, f64::INFINITY] {
                let pos = [Position { x: 0.0, y: 0.0 }, Position { x: 5.0, y: bad }];
                let e = generate_links(&pos, &LinkModel::default(), 1, -110.0).unwrap_err().to_string();
                assert!(e.contains("node 1 has a non-finite position"), "{e}");
            }
        }

        /// `generate_links` / `generate_links_per_receiver`: only links with
        /// `tx_power + G ≥ cut-off` are kept, and without shadowing (σ = 0, so no 4σ tail) the
        /// spatial cut-off loses none of them, even from strong transmitters (large ΔP) or to quiet
        /// receivers (δ_j < 0): the kept links are exactly the uncut ones above the cut-off.
        #[test]
        fn without_shadowing_the_cut_off_is_exact() {
            let pos =
                place(&Placement::Random { nodes: 300, width_m: 150.0, height_m: 150.0 }, here_dir(), &mut rng(), 1.0)
                    .unwrap();
            let m = LinkModel { shadowing_sigma_db: 0.0, s11: 25.0, s12: 0.0, s22: 36.0, ..LinkModel::default() };
            let min_rx = -95.0;
            let all = generate_links(&pos, &m, 8, f64::NEG_INFINITY).unwrap();
            for per in [false, true] {
                let cut = if per {
                    generate_links_per_receiver(&pos, &m, 8, min_rx)
                } else {
                    generate_links(&pos, &m, 8, min_rx)
                };
                let cut = cut.unwrap();
                let mut n = 0;
                for i in 0..pos.len() {
                    let want: Vec<Link> = all.out[i]
                        .iter()
                        .copied()
                        .filter(|l| {
                            let at = if per { min_rx + all.noise_offset_db[l.to as usize] } else { min_rx };
                            f64::from(l.gain_db) >= at
                        })
                        .collect();
                    assert_eq!(cut.out[i], want, "node {i}, per receiver {per}");
                    n += want.len();
                }
                assert!(n > 1000, "{n}");
            }
        }

        /// Spec §2.1: G = −PL_D0 − 10·n·log10(d/D0) + X + ΔP, with d < D0 treated as D0
        /// (`LinkModel::d0_m`), and a link whose `tx_power + G` equals the cut-off is kept (≥).
        #[test]
        fn mean_gain_uses_d_over_d0_clamped_and_keeps_the_equal_link() {
            let m = LinkModel { d0_m: 2.0, ..no_shadowing() };
            let pos = [Position { x: 0.0, y: 0.0 }, Position { x: 0.5, y: 0.0 }, Position { x: 20.0, y: 0.0 }];
            let l = generate_links(&pos, &m, 1, f64::NEG_INFINITY).unwrap();
            assert_eq!(l.gain(0, 1), Some(-55.0));
            assert_eq!(l.gain(0, 2), Some(-85.0));
            let two = [Position { x: 0.0, y: 0.0 }, Position { x: 10.0, y: 0.0 }];
            let l = generate_links(&two, &no_shadowing(), 1, -85.0).unwrap();
            assert_eq!((l.gain(0, 1), l.gain(1, 0)), (Some(-85.0), Some(-85.0)));
            let l = generate_links(&two, &no_shadowing(), 1, -84.999).unwrap();
            assert_eq!(l.link_count(), 0);
        }

        /// `links_up_to`: "refusing a topology of more than `max_links` links": exactly
        /// `max_links` is accepted.
        #[test]
        fn exactly_max_links_is_accepted() {
            let grid: Vec<Position> = (0..400).map(|k| Position { x: (k % 20) as f64, y: (k / 20) as f64 }).collect();
            let full = 400 * 399;
            let m = LinkModel::default();
            assert_eq!(links_up_to(&grid, &m, 1, f64::NEG_INFINITY, false, full).unwrap().link_count(), full);
            assert!(links_up_to(&grid, &m, 1, f64::NEG_INFINITY, false, full - 1).is_err());
        }

        /// `gain_file_marked_folded`: only the header's first field says the power is folded; a
        /// scenario name holding the bare word `tx_power_folded=yes` does not.
        #[test]
        fn scenario_name_cannot_mark_a_file_folded() {
            let h = GainFileHeader {
                scenario: "x tx_power_folded=yes y".into(),
                tx_power_dbm: 0.0,
                tx_power_folded: false,
                pruned_below_dbm: None,
                per_receiver: false,
                noise_floor_dbm: -105.0,
            };
            assert!(!gain_file_marked_folded(&h.line()), "{}", h.line());
            assert!(gain_file_marked_folded(&GainFileHeader { tx_power_folded: true, ..h }.line()));
        }
    }
}
