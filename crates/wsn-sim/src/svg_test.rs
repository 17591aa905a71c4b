//! Test helpers that read the SVG files plotters writes (for the tests of [`crate::plots`] and
//! [`crate::figures`]).

use std::path::Path;

/// The texts of an SVG file written by plotters (each on the line after its `<text` tag).
pub(crate) fn svg_texts(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = svg.lines().collect();
    lines.windows(2).filter(|w| w[0].starts_with("<text")).map(|w| w[1].trim().to_string()).collect()
}

/// Every `<tag …>` element of an SVG file, as the text between `<tag ` and its `>`.
pub(crate) fn svg_elements(path: &Path, tag: &str) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    let open = format!("<{tag} ");
    svg.match_indices(&open)
        .map(|(i, _)| {
            let rest = &svg[i + open.len()..];
            rest[..rest.find('>').unwrap_or(rest.len())].to_string()
        })
        .collect()
}

/// The value of attribute `name` of an element from [`svg_elements`].
pub(crate) fn svg_attr(element: &str, name: &str) -> Option<String> {
    let element = format!(" {element}");
    let key = format!(" {name}=\"");
    let rest = &element[element.find(&key)? + key.len()..];
    Some(rest[..rest.find('"')?].to_string())
}

/// The vertices of a `points` list or a path's `d` ("115,240 325,141", "M115 240 L325 141").
pub(crate) fn vertices(list: &str) -> Vec<(f64, f64)> {
    let nums: Vec<f64> = list
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
        .filter(|t| !t.is_empty())
        .map(|t| t.parse().unwrap())
        .collect();
    nums.chunks_exact(2).map(|c| (c[0], c[1])).collect()
}

/// The vertices of every `<polyline>` or `<polygon>` (`tag`) of an SVG file.
pub(crate) fn svg_shapes(path: &Path, tag: &str) -> Vec<Vec<(f64, f64)>> {
    svg_elements(path, tag).iter().filter_map(|e| svg_attr(e, "points")).map(|p| vertices(&p)).collect()
}

/// The vertices of every line of an SVG file (plotters writes `<polyline>`; `<path>` too, in
/// case a later version does).
pub(crate) fn svg_lines(path: &Path) -> Vec<Vec<(f64, f64)>> {
    let paths = svg_elements(path, "path").iter().filter_map(|e| svg_attr(e, "d")).map(|d| vertices(&d)).collect();
    [svg_shapes(path, "polyline"), paths].concat()
}

/// The lines of exactly `n` vertices (a data series of `n` points: axes, ticks and legend
/// samples have two).
pub(crate) fn lines_with(path: &Path, n: usize) -> Vec<Vec<(f64, f64)>> {
    svg_lines(path).into_iter().filter(|l| l.len() == n).collect()
}
