//! Static trees read from CSV files (for runs with routes frozen from a precomputed tree,
//! spec §8.5 and §6.4).
//!
//! Format: a header row that names at least the columns `node` and `parent`, and optionally
//! `hops`; other columns (such as `x_m`, `y_m`) are ignored. Column names are matched
//! case-insensitively after trimming, and a name given twice is refused; lines starting with `#`
//! are comments. Node ids must be exactly 0..N−1, each on one row, in any order. `parent` is −1
//! (or empty) for a root. When a row's `hops` is given (not empty) it must agree with the depth
//! the parents give.
//!
//! Example (`data/topologies/lrwpan40.csv`):
//! ```text
//! node,x_m,y_m,parent,hops
//! 0,17.50,17.50,-1,0
//! 1,4.77,4.69,13,4
//! ```

use std::path::{Path, PathBuf};

use wsn_wire::NodeId;

use super::RoutingError;

/// A tree: for each node id (the vector index), its parent (`None` at a root) and its depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaticTree {
    /// Parent of node `i`; `None` for a root.
    pub parent: Vec<Option<NodeId>>,
    /// Hops from node `i` to its root (0 at a root).
    pub hops: Vec<u8>,
}

impl StaticTree {
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.parent.len()
    }

    /// True for a tree without nodes.
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }

    /// Largest depth in the tree (0 for an empty tree).
    pub fn max_depth(&self) -> u8 {
        self.hops.iter().copied().max().unwrap_or(0)
    }
}

/// Depth of every node: 0 for a node whose parent is `None` (a root), the parent's depth + 1
/// otherwise. `None` for nodes without a path to a root: on or behind a cycle, behind a parent
/// id outside the slice, or deeper than 255 hops.
pub fn tree_depths(parent: &[Option<NodeId>]) -> Vec<Option<u8>> {
    const UNSEEN: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let n = parent.len();
    let mut state = vec![UNSEEN; n];
    let mut depth: Vec<Option<u8>> = vec![None; n];
    let mut path: Vec<usize> = Vec::new();
    for start in 0..n {
        if state[start] == DONE {
            continue;
        }
        // Walk up until a root, a finished node, a bad parent or a node of this walk.
        path.clear();
        let mut cur = start;
        let base: Option<u8> = loop {
            match state[cur] {
                DONE => break depth[cur],
                ON_PATH => break None, // a cycle
                _ => {}
            }
            state[cur] = ON_PATH;
            path.push(cur);
            match parent[cur] {
                None => {
                    // A root: depth 0; the nodes below it count up from here.
                    path.pop();
                    state[cur] = DONE;
                    depth[cur] = Some(0);
                    break Some(0);
                }
                Some(p) if p.index() < n => cur = p.index(),
                Some(_) => break None, // unknown parent
            }
        };
        // Unwind: each node on the path is one deeper than the node above it.
        let mut d = base;
        while let Some(i) = path.pop() {
            d = d.and_then(|x| x.checked_add(1));
            depth[i] = d;
            state[i] = DONE;
        }
    }
    depth
}

/// Read a static tree from a CSV file (see the module docs for the format).
///
/// # Errors
/// [`RoutingError`] when the file cannot be read, is malformed, has a node id outside
/// 0..N−1 or twice, names an unknown parent, contains a parent cycle, is deeper than 255 hops,
/// or has a `hops` value that disagrees with the parents. Messages name the file and line.
pub fn read_tree(path: &Path) -> Result<StaticTree, RoutingError> {
    // As text: a leading byte-order mark is dropped, so that lines count from the file's start.
    let text = crate::read_text(path).map_err(|source| RoutingError::Io { path: path.to_path_buf(), source })?;
    parse_tree(text.as_bytes(), path)
}

/// One parsed row.
struct Row {
    line: u64,
    node: u16,
    parent: Option<u16>,
    hops: Option<u64>,
}

/// Parse tree CSV `bytes`; `path` is used in error messages only.
fn parse_tree(bytes: &[u8], path: &Path) -> Result<StaticTree, RoutingError> {
    let file: PathBuf = path.to_path_buf();
    let parse_err = |line: u64, msg: String| RoutingError::Parse { path: file.clone(), line, msg };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .comment(Some(b'#'))
        .trim(csv::Trim::All)
        .flexible(false)
        .from_reader(bytes);
    let headers = reader
        .headers()
        .map_err(|e| {
            let (line, msg) = crate::csv_error(bytes, &e);
            parse_err(line, format!("bad header: {msg}"))
        })?
        .clone();
    let mut lines = crate::CsvLines::new(bytes);
    let header_line = lines.record_line(0);
    let column = |name: &str| crate::csv_column(&headers, name).map_err(|m| parse_err(header_line, m));
    let node_col = column("node")?.ok_or_else(|| parse_err(header_line, "header has no `node` column".into()))?;
    let parent_col = column("parent")?.ok_or_else(|| parse_err(header_line, "header has no `parent` column".into()))?;
    let hops_col = column("hops")?;

    let mut rows: Vec<Row> = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| {
            let (line, msg) = crate::csv_error(bytes, &e);
            parse_err(line, format!("bad row: {msg}"))
        })?;
        let line = lines.record_line(record.position().map_or(0, |p| p.byte()));
        let field = |i: usize| record.get(i).unwrap_or("").trim();
        let node_s = field(node_col);
        let node: u16 = node_s
            .parse()
            .ok()
            .filter(|n| *n != NodeId::BROADCAST.0)
            .ok_or_else(|| parse_err(line, format!("bad node id `{node_s}`")))?;
        let parent_s = field(parent_col);
        let parent: Option<u16> = match parent_s {
            "" | "-1" => None,
            s => Some(
                s.parse()
                    .ok()
                    .filter(|p| *p != NodeId::BROADCAST.0)
                    .ok_or_else(|| parse_err(line, format!("bad parent `{s}` (a node id, or -1 for a root)")))?,
            ),
        };
        // An empty `hops` cell says nothing, as an empty `parent` cell means a root.
        let hops = match hops_col.map(field) {
            Some("") | None => None,
            Some(s) => Some(s.parse::<u64>().map_err(|_| parse_err(line, format!("bad hops `{s}`")))?),
        };
        rows.push(Row { line, node, parent, hops });
    }

    // Node ids must be exactly 0..N−1, once each.
    let n = rows.len();
    if n > usize::from(NodeId::BROADCAST.0) {
        // Named at the first row beyond the 65,535 ids.
        let line = rows[usize::from(NodeId::BROADCAST.0)].line;
        return Err(parse_err(line, format!("{n} rows: more nodes than 16-bit ids allow (ids 0 to 65534)")));
    }
    let mut line_of: Vec<Option<u64>> = vec![None; n];
    for r in &rows {
        let i = usize::from(r.node);
        if i >= n {
            return Err(parse_err(
                r.line,
                format!("node id {} out of range: the file has {n} rows (ids 0 to {})", r.node, n - 1),
            ));
        }
        if let Some(first) = line_of[i] {
            return Err(parse_err(r.line, format!("node {} already defined on line {first}", r.node)));
        }
        line_of[i] = Some(r.line);
    }
    // With n rows, ids < n and no duplicates, every id 0..n−1 is present; kept as a guard.
    if let Some(missing) = line_of.iter().position(Option::is_none) {
        return Err(RoutingError::MissingNode { path: file, node: missing as u16 });
    }

    let mut parent: Vec<Option<NodeId>> = vec![None; n];
    for r in &rows {
        if let Some(p) = r.parent {
            if usize::from(p) >= n {
                return Err(RoutingError::UnknownParent { path: file, line: r.line, node: r.node, parent: p });
            }
            parent[usize::from(r.node)] = Some(NodeId(p));
        }
    }

    let depths = tree_depths(&parent);
    // Report problems in file order.
    for r in &rows {
        let i = usize::from(r.node);
        let Some(d) = depths[i] else {
            // Walk n steps: if a root is reached the chain is merely too deep, else we are
            // now standing on the cycle.
            let mut cur = i;
            for _ in 0..n {
                match parent[cur] {
                    Some(p) => cur = p.index(),
                    None => return Err(RoutingError::TooDeep { path: file, line: r.line, node: r.node }),
                }
            }
            return Err(RoutingError::Cycle { path: file, line: line_of[cur].unwrap_or(0), node: cur as u16 });
        };
        if let Some(given) = r.hops {
            if given != u64::from(d) {
                return Err(RoutingError::HopsMismatch { path: file, line: r.line, node: r.node, given, depth: d });
            }
        }
    }
    let hops = depths.into_iter().map(|d| d.unwrap_or(0)).collect();
    Ok(StaticTree { parent, hops })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Result<StaticTree, RoutingError> {
        parse_tree(s.as_bytes(), Path::new("t.csv"))
    }

    fn ids(v: &[i32]) -> Vec<Option<NodeId>> {
        v.iter().map(|&p| if p < 0 { None } else { Some(NodeId(p as u16)) }).collect()
    }

    /// The project's copy of the lrwpan40 layout (`data/topologies/`).
    fn lrwpan40() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/topologies/lrwpan40.csv")
    }

    // ---- tree_depths ----

    #[test]
    fn depths_of_a_chain_and_a_star() {
        assert_eq!(tree_depths(&ids(&[-1, 0, 1, 2])), vec![Some(0), Some(1), Some(2), Some(3)]);
        // Reverse order of ids along the chain.
        assert_eq!(tree_depths(&ids(&[1, 2, 3, -1])), vec![Some(3), Some(2), Some(1), Some(0)]);
        assert_eq!(tree_depths(&ids(&[-1, 0, 0, -1, 3])), vec![Some(0), Some(1), Some(1), Some(0), Some(1)]);
        assert_eq!(tree_depths(&[]), Vec::<Option<u8>>::new());
    }

    #[test]
    fn depths_none_for_cycles_and_unknown_parents() {
        // 1 ↔ 2 cycle, 3 hangs below it, 4 has an unknown parent, 5 is a self loop.
        assert_eq!(tree_depths(&ids(&[-1, 2, 1, 2, 99, 5])), vec![Some(0), None, None, None, None, None]);
        // Broadcast as parent is just an unknown id.
        assert_eq!(tree_depths(&[None, Some(NodeId::BROADCAST)]), vec![Some(0), None]);
    }

    #[test]
    fn depths_beyond_255_are_none() {
        let mut p: Vec<Option<NodeId>> = vec![None];
        for i in 1..300u16 {
            p.push(Some(NodeId(i - 1)));
        }
        let d = tree_depths(&p);
        assert_eq!(d[255], Some(255));
        assert_eq!(d[256], None);
        assert_eq!(d[299], None);
    }

    // ---- read_tree ----

    #[test]
    fn empty_hops_cells_say_nothing_and_repeated_columns_are_refused() {
        // An empty hops cell is not checked (as an empty parent cell is a root); a given one is.
        let t = parse("node,parent,hops\n0,,\n1,0,\n2,1,2\n").unwrap();
        assert_eq!(t.hops, vec![0, 1, 2]);
        assert!(matches!(parse("node,parent,hops\n0,,\n1,0,\n2,1,1\n"), Err(RoutingError::HopsMismatch { .. })));
        for header in ["node,parent,Parent", "node,parent,hops,HOPS", "Node,node,parent"] {
            let e = parse(&format!("{header}\n0,-1,-1\n")).unwrap_err().to_string();
            assert!(e.contains("t.csv:1") && e.contains("twice"), "{header}: {e}");
        }
    }

    #[test]
    fn lrwpan40_has_root_zero_and_depth_seven() {
        let path = lrwpan40();
        let t = read_tree(&path).unwrap();
        assert_eq!(t.len(), 40);
        assert_eq!(t.parent[0], None);
        assert_eq!(t.hops[0], 0);
        assert_eq!(t.parent.iter().filter(|p| p.is_none()).count(), 1);
        assert_eq!(t.parent[1], Some(NodeId(13)));
        assert_eq!(t.hops[1], 4);
        // The maximum of the file's hops column (checked row by row while reading).
        assert_eq!(t.max_depth(), 7);
    }

    #[test]
    fn hops_computed_when_column_absent_and_extra_columns_ignored() {
        let t = parse("x, Parent ,NODE\n1.0,-1,0\n2.0,0,2\n3.0,2,1\n").unwrap();
        assert_eq!(t.parent, ids(&[-1, 2, 0]));
        assert_eq!(t.hops, vec![0, 2, 1]);
        // Comments and an empty parent for the root.
        let t = parse("# a tree\nnode,parent\n0,\n1,0\n").unwrap();
        assert_eq!(t.hops, vec![0, 1]);
    }

    #[test]
    fn cycle_is_an_error_naming_file_and_line() {
        let e = parse("node,parent\n0,-1\n1,2\n2,1\n3,1\n").unwrap_err();
        assert!(matches!(e, RoutingError::Cycle { line: 3, node: 1, .. }), "{e:?}");
        assert_eq!(e.to_string(), "t.csv:3: node 1 lies on a parent cycle");
        let e = parse("node,parent\n0,0\n").unwrap_err();
        assert!(matches!(e, RoutingError::Cycle { line: 2, node: 0, .. }), "{e:?}");
    }

    #[test]
    fn unknown_parent_is_an_error() {
        let e = parse("node,parent\n0,-1\n1,7\n").unwrap_err();
        assert_eq!(e.to_string(), "t.csv:3: node 1 has parent 7, which is not a node of the file");
    }

    #[test]
    fn hops_mismatch_is_an_error() {
        let e = parse("node,parent,hops\n0,-1,0\n1,0,2\n").unwrap_err();
        assert!(matches!(e, RoutingError::HopsMismatch { line: 3, node: 1, given: 2, depth: 1, .. }));
    }

    #[test]
    fn malformed_files_are_errors_not_panics() {
        let cases = [
            ("", "no `node` column"),
            ("node\n0\n", "no `parent` column"),
            ("node,parent\nx,-1\n", "t.csv:2: bad node id `x`"),
            ("node,parent\n0,-2\n", "t.csv:2: bad parent `-2`"),
            ("node,parent\n0,65535\n", "bad parent `65535`"),
            ("node,parent,hops\n0,-1,z\n", "t.csv:2: bad hops `z`"),
            ("node,parent\n0,-1\n0,-1\n", "t.csv:3: node 0 already defined on line 2"),
            ("node,parent\n0,-1\n5,0\n", "t.csv:3: node id 5 out of range: the file has 2 rows (ids 0 to 1)"),
            ("node,parent\n0,-1\n1,0,9\n", "t.csv:3: bad row"),
        ];
        for (text, want) in cases {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: got {e}");
            assert!(e.starts_with("t.csv"), "{e}");
        }
        let e = read_tree(Path::new("/nonexistent/tree.csv")).unwrap_err();
        assert!(matches!(e, RoutingError::Io { .. }));
        assert!(e.to_string().starts_with("/nonexistent/tree.csv: "));
    }

    /// Lines are the file's own, counting the comment and blank lines before the header and
    /// between rows (the `csv` crate reports where it began to look for a record).
    #[test]
    fn errors_name_the_real_line_past_comments_and_blanks() {
        let e = parse("# one\n# two\nnode,x\n0,1\n").unwrap_err().to_string();
        assert!(e.starts_with("t.csv:3: header has no `parent` column"), "{e}");
        let e = parse("node,parent\n0,-1\n# comment\n\n1,7\n").unwrap_err().to_string();
        assert!(e.starts_with("t.csv:5: node 1 has parent 7"), "{e}");
        let e = parse("# c\nnode,parent\n\n0,-1\n# c\n0,-1\n").unwrap_err().to_string();
        assert!(e.starts_with("t.csv:6: node 0 already defined on line 4"), "{e}");
        let e = parse("node,parent\r\n0,-1\r\n#c\r\n\r\nx,0\r\n").unwrap_err().to_string();
        assert!(e.starts_with("t.csv:5: bad node id `x`"), "{e}");
        let e = parse("node,parent\r\n0,-1\r\n# c\r\n1,0,9\r\n").unwrap_err().to_string();
        assert_eq!(e, "t.csv:4: bad row: 3 fields, where the header has 2");
    }

    /// A file with a byte-order mark reads like one without, lines included.
    #[test]
    fn a_byte_order_mark_is_dropped() {
        let d = std::env::temp_dir().join(format!("wsn-tree-bom-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("t.csv");
        std::fs::write(&f, "\u{feff}# a\n# b\nnode,x\n0,1\n").unwrap();
        let e = read_tree(&f).unwrap_err().to_string();
        assert!(e.ends_with("t.csv:3: header has no `parent` column"), "{e}");
        std::fs::write(&f, "\u{feff}node,parent\n0,-1\n1,0\n").unwrap();
        assert_eq!(read_tree(&f).unwrap().hops, vec![0, 1]);
        std::fs::remove_dir_all(&d).ok();
    }

    /// Counting lines record by record (as the readers do) gives every record's line, as
    /// counting each from the start would.
    #[test]
    fn incremental_line_count_matches_a_fresh_count() {
        let text = "# c\r\nnode,parent\r\n\r\n0,-1\r\n# c\r\n1,0\n2,1\n\n# x\n3,2\n";
        let mut reader = csv::ReaderBuilder::new().comment(Some(b'#')).from_reader(text.as_bytes());
        let mut lines = crate::CsvLines::new(text.as_bytes());
        assert_eq!(lines.record_line(0), 2);
        let got: Vec<u64> =
            reader.records().map(|r| lines.record_line(r.unwrap().position().unwrap().byte())).collect();
        assert_eq!(got, vec![4, 6, 7, 10]);
        let fresh: Vec<u64> = {
            let mut reader = csv::ReaderBuilder::new().comment(Some(b'#')).from_reader(text.as_bytes());
            reader
                .records()
                .map(|r| crate::csv_record_line(text.as_bytes(), r.unwrap().position().unwrap().byte()))
                .collect()
        };
        assert_eq!(got, fresh);
    }

    #[test]
    fn too_deep_is_an_error() {
        let mut s = String::from("node,parent\n0,-1\n");
        for i in 1..300 {
            s.push_str(&format!("{i},{}\n", i - 1));
        }
        let e = parse(&s).unwrap_err();
        assert!(matches!(e, RoutingError::TooDeep { node: 256, line: 258, .. }), "{e:?}");
    }
}

/// Tests added by a hand mutation audit of this module (fwd34): each one kills a mutant of the
/// code above that the tests in `tests` let live.
#[cfg(test)]
mod audit34 {
    use super::*;

    fn parse(s: &str) -> Result<StaticTree, RoutingError> {
        parse_tree(s.as_bytes(), Path::new("t.csv"))
    }

    /// An empty tree has no nodes and depth 0; a tree of one root is not empty.
    #[test]
    fn an_empty_tree_is_empty_with_depth_zero() {
        let empty = StaticTree { parent: Vec::new(), hops: Vec::new() };
        assert_eq!((empty.len(), empty.is_empty(), empty.max_depth()), (0, true, 0));
        let root = parse("node,parent\n0,-1\n").unwrap();
        assert_eq!((root.len(), root.is_empty(), root.max_depth()), (1, false, 0));
    }

    /// A parent id equal to the number of nodes is the first id outside the slice: no path to a
    /// root (and no panic).
    #[test]
    fn a_parent_just_past_the_last_id_has_no_depth() {
        assert_eq!(tree_depths(&[None, Some(NodeId(2))]), vec![Some(0), None]);
    }

    /// With N rows the ids are 0..N−1: an id equal to N, or a parent equal to N, is refused
    /// with the file's line (not a panic).
    #[test]
    fn an_id_or_parent_just_past_the_last_row_is_refused() {
        let e = parse("node,parent\n0,-1\n2,0\n").unwrap_err().to_string();
        assert!(e.starts_with("t.csv:3: node id 2 out of range"), "{e}");
        let e = parse("node,parent\n0,-1\n1,2\n").unwrap_err();
        assert!(matches!(e, RoutingError::UnknownParent { line: 3, node: 1, parent: 2, .. }), "{e:?}");
    }

    /// The broadcast address is no node id: a row naming it is a bad node id, as a parent
    /// naming it is a bad parent.
    #[test]
    fn the_broadcast_address_is_a_bad_node_id() {
        let e = parse("node,parent\n65535,-1\n").unwrap_err().to_string();
        assert!(e.starts_with("t.csv:2: bad node id `65535`"), "{e}");
    }

    /// 65,535 rows (ids 0..65534) are the most a file may have; a row more is refused at that
    /// row's line, before its id is looked at (here a repeated one).
    #[test]
    fn at_most_65535_rows() {
        let rows = |n: usize| {
            let mut s = String::from("node,parent\n0,-1\n");
            for i in 1..n {
                s.push_str(&format!("{},0\n", i % 65_535));
            }
            s
        };
        let t = parse(&rows(65_535)).unwrap();
        assert_eq!((t.len(), t.max_depth()), (65_535, 1));
        let e = parse(&rows(65_536)).unwrap_err().to_string();
        assert!(e.starts_with("t.csv:65537: 65536 rows: more nodes than 16-bit ids allow"), "{e}");
    }
}
