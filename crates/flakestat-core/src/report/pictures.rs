//! The pictures drawn with characters: the overview's sparkline, the signature's timeline chart
//! and its heat map for the terminal, and the Mermaid `xychart-beta` text for markdown. Unicode
//! blocks and colour only when asked (`fancy`): plain ASCII otherwise, so a pipe, a log file or
//! `NO_COLOR` get characters every font has. Nothing here comes from outside except the dimension
//! values of a heat map, which the callers sanitize.

use crate::analysis::heatmap::HeatMap;
use crate::analysis::timeline::{MarkerKind, Timeline, TimelineDay};

use super::layout::date;

const SPARK: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
const SPARK_ASCII: [char; 5] = ['_', '-', '=', '+', '#'];
/// Rows of bars in the terminal timeline.
const HEIGHT: u64 = 6;
/// Columns of the terminal timeline at most (days are folded into periods beyond).
pub const MAX_COLUMNS: usize = 60;

/// One character per period: `·`/`.` for none, then a block as high as its share of the most.
pub fn sparkline(levels: &[u64], fancy: bool) -> String {
    let max = levels.iter().copied().max().unwrap_or(0);
    levels
        .iter()
        .map(|&n| match (n, fancy) {
            (0, true) => '·',
            (0, false) => '.',
            (n, true) => SPARK[((n * 8).div_ceil(max) as usize).clamp(1, 8) - 1],
            (n, false) => SPARK_ASCII[((n * 5).div_ceil(max) as usize).clamp(1, 5) - 1],
        })
        .collect()
}

/// Days folded into at most `columns` periods: (first day, runs, runs hit) each.
fn periods(days: &[TimelineDay], columns: usize) -> (usize, Vec<(&TimelineDay, u64, u64)>) {
    let per = days.len().div_ceil(columns.max(1)).max(1);
    let p = days
        .chunks(per)
        .map(|c| {
            (
                &c[0],
                c.iter().map(|d| d.runs).sum(),
                c.iter().map(|d| d.runs_hit).sum(),
            )
        })
        .collect();
    (per, p)
}

/// The terminal timeline: bars of runs (light) and runs hit (full) per day, a marker row, the
/// impact window, the first and last day, and a legend. Fits in `width` columns.
pub fn timeline_chart(t: &Timeline, fancy: bool, color: bool, width: Option<u16>) -> Vec<String> {
    let axis = 6; // "  12 ┤"
    let columns = width
        .map(|w| usize::from(w).saturating_sub(axis + 1))
        .unwrap_or(MAX_COLUMNS)
        .clamp(10, MAX_COLUMNS);
    let (per, ps) = periods(&t.days, columns);
    if ps.is_empty() {
        return vec!["No runs in the window.".to_string()];
    }
    let mut lines = timeline_bars(&ps, fancy, color);
    lines.extend(timeline_marks(t, &ps, fancy));
    lines.extend(timeline_legend(t, &ps, per, fancy));
    lines
}

/// The bars' characters: full (runs hit), light (runs), the y axis' tick.
fn bar_chars(fancy: bool) -> (char, char, char) {
    if fancy {
        ('█', '░', '┤')
    } else {
        ('#', ':', '|')
    }
}

/// `HEIGHT` rows of bars, the most runs of a period labelling the top one.
fn timeline_bars(ps: &[(&TimelineDay, u64, u64)], fancy: bool, color: bool) -> Vec<String> {
    let max = ps.iter().map(|p| p.1).max().unwrap_or(0).max(1);
    let (full, light, tick) = bar_chars(fancy);
    let (red, reset) = if color {
        ("\u{1b}[31m", "\u{1b}[0m")
    } else {
        ("", "")
    };
    let mut lines = Vec::new();
    for level in (1..=HEIGHT).rev() {
        let label = if level == HEIGHT {
            max.to_string()
        } else {
            String::new()
        };
        let mut row = format!("{label:>4} {tick}");
        for (_, runs, hits) in ps {
            let h = (hits * HEIGHT).div_ceil(max);
            let r = (runs * HEIGHT).div_ceil(max);
            if h >= level {
                row.push_str(&format!("{red}{full}{reset}"));
            } else if r >= level {
                row.push(light);
            } else {
                row.push(' ');
            }
        }
        lines.push(row.trim_end().to_string());
    }
    lines
}

/// The marker row under the bars, then the impact window's bar when there is one.
fn timeline_marks(t: &Timeline, ps: &[(&TimelineDay, u64, u64)], fancy: bool) -> Vec<String> {
    let column_of =
        |at: chrono::NaiveDate| ps.iter().rposition(|(d, _, _)| d.day <= at).unwrap_or(0);
    let mut marks = vec![' '; ps.len()];
    for m in &t.markers {
        let c = column_of(m.at.date_naive());
        let mark = match (m.kind, fancy) {
            (MarkerKind::Merge, true) => '▲',
            (MarkerKind::Merge, false) => '^',
            (MarkerKind::Suspect, _) => 's',
            (MarkerKind::FirstHit, _) => '*',
        };
        // The placed merge wins over a first hit on the same day; both are in the legend.
        if marks[c] == ' ' || m.kind == MarkerKind::Merge {
            marks[c] = mark;
        }
    }
    let mut lines = vec![
        format!("     {}", marks.iter().collect::<String>())
            .trim_end()
            .to_string(),
    ];
    if let (Some(start), Some(end)) = (t.impact_start, t.impact_end) {
        let (a, b) = (
            column_of(start.date_naive()),
            column_of((end - chrono::TimeDelta::seconds(1)).date_naive()),
        );
        let bar = if fancy { '━' } else { '=' };
        let mut row = "     ".to_string();
        for c in 0..ps.len() {
            row.push(if (a..=b).contains(&c) { bar } else { ' ' });
        }
        lines.push(row.trim_end().to_string());
    }
    lines
}

/// The first and last day under the chart, then the legend: bars, markers, impact window.
fn timeline_legend(
    t: &Timeline,
    ps: &[(&TimelineDay, u64, u64)],
    per: usize,
    fancy: bool,
) -> Vec<String> {
    let (full, light, _) = bar_chars(fancy);
    let first = ps[0].0.day.format("%Y-%m-%d").to_string();
    let last = t
        .days
        .last()
        .map(|d| d.day.format("%Y-%m-%d").to_string())
        .unwrap_or_default();
    let gap = (ps.len() + 5)
        .saturating_sub(first.len() + last.len() + 5)
        .max(1);
    let mut lines = vec![format!("     {first}{}{last}", " ".repeat(gap))];
    let per = if per > 1 {
        format!(" (one column = {per} days)")
    } else {
        " (one column a day)".to_string()
    };
    lines.push(format!("{full} runs hit  {light} runs{per}",));
    for m in &t.markers {
        let (mark, what) = match (m.kind, fancy) {
            (MarkerKind::Merge, true) => ("▲", "merged (where the bisection places it)"),
            (MarkerKind::Merge, false) => ("^", "merged (where the bisection places it)"),
            (MarkerKind::Suspect, _) => ("s", "merged (another suspect)"),
            (MarkerKind::FirstHit, _) => ("*", "first hit"),
        };
        if m.kind == MarkerKind::FirstHit {
            lines.push(format!("{mark} {what}: {}, {}", m.label, date(m.at)));
        } else {
            lines.push(format!("{mark} {} {what}, {}", m.label, date(m.at)));
        }
    }
    if let Some(start) = t.impact_start {
        let bar = if fancy { "━" } else { "=" };
        lines.push(format!("{bar} impact window, from {}", date(start)));
    }
    lines
}

/// The heat map as grids of `hits/jobs` cells, its columns split over as many grids as it takes
/// to fit `width`; with `color`, hit cells on a red background as strong as their rate. `-`
/// where no job ran. `clean` sanitizes dimension values.
pub fn heatmap_grid(
    h: &HeatMap,
    color: bool,
    clean: impl Fn(&str) -> String + Copy,
    width: Option<usize>,
) -> Vec<String> {
    let all = grid(h, color, clean, 0..h.column_values.len());
    let Some(width) = width else {
        return all;
    };
    let mut lines = Vec::new();
    let mut start = 0;
    while start < h.column_values.len() {
        let mut end = h.column_values.len();
        while end > start + 1 && visible_width(&grid(h, false, clean, start..end)) > width {
            end -= 1;
        }
        if start > 0 {
            lines.push(String::new());
        }
        lines.extend(grid(h, color, clean, start..end));
        start = end;
    }
    lines
}

fn visible_width(lines: &[String]) -> usize {
    lines.iter().map(|l| l.chars().count()).max().unwrap_or(0)
}

fn grid(
    h: &HeatMap,
    color: bool,
    clean: impl Fn(&str) -> String,
    range: std::ops::Range<usize>,
) -> Vec<String> {
    let h = &HeatMap {
        rows: h.rows.clone(),
        columns: h.columns.clone(),
        row_values: h.row_values.clone(),
        column_values: h.column_values[range.clone()].to_vec(),
        cells: h.cells.iter().map(|r| r[range.clone()].to_vec()).collect(),
    };
    let cells: Vec<Vec<String>> = h
        .cells
        .iter()
        .map(|row| {
            row.iter()
                .map(|c| {
                    if c.jobs_total == 0 {
                        "-".to_string()
                    } else {
                        format!("{}/{}", c.jobs_hit, c.jobs_total)
                    }
                })
                .collect()
        })
        .collect();
    let columns: Vec<String> = h.column_values.iter().map(|v| clean(v)).collect();
    let rows: Vec<String> = h.row_values.iter().map(|v| clean(v)).collect();
    let corner = format!("{} \\ {}", clean(&h.rows), clean(&h.columns));
    let first = rows
        .iter()
        .map(|r| r.chars().count())
        .chain([corner.chars().count()])
        .max()
        .unwrap_or(0);
    let widths: Vec<usize> = (0..columns.len())
        .map(|c| {
            cells
                .iter()
                .map(|r| r[c].len())
                .chain([columns[c].chars().count()])
                .max()
                .unwrap_or(1)
        })
        .collect();
    let pad = |s: &str, w: usize| format!("{s}{}", " ".repeat(w.saturating_sub(s.chars().count())));
    let mut lines = Vec::new();
    let mut head = pad(&corner, first);
    for (c, name) in columns.iter().enumerate() {
        head.push_str("  ");
        head.push_str(&pad(name, widths[c]));
    }
    lines.push(head.trim_end().to_string());
    for (r, name) in rows.iter().enumerate() {
        let mut line = pad(name, first);
        for (c, cell) in cells[r].iter().enumerate() {
            line.push_str("  ");
            let text = pad(cell, widths[c]);
            let hc = h.cells[r][c];
            if color && hc.jobs_hit > 0 {
                let rate = hc.jobs_hit as f64 / hc.jobs_total as f64;
                // As in the HTML page: any hit is clearly lit, darker from 10% and 25% on.
                let shade = match rate {
                    r if r < 0.10 => 210,
                    r if r < 0.25 => 203,
                    _ => 196,
                };
                line.push_str(&format!("\u{1b}[30;48;5;{shade}m{text}\u{1b}[0m"));
            } else {
                line.push_str(&text);
            }
        }
        lines.push(line.trim_end().to_string());
    }
    lines
}

/// Bars of a Mermaid chart, at most: its x axis has no room for more labels, and labels must
/// be unique (Mermaid merges equal ones).
pub const MERMAID_BARS: usize = 16;

/// A Mermaid `xychart-beta`: runs (first bar) and runs hit (second bar, drawn over it) per day,
/// or per few days beyond `MERMAID_BARS` days; the periods holding the placed merge and the
/// first hit say so on the x axis. Only dates and fixed words appear in it, nothing from
/// outside.
pub fn mermaid(t: &Timeline) -> String {
    let (per, ps) = periods(&t.days, MERMAID_BARS);
    let label = |first: &TimelineDay| {
        let last = first.day + chrono::TimeDelta::days(per as i64 - 1);
        let mut l = first.day.format("%m-%d").to_string();
        let mut marks = Vec::new();
        for m in t
            .markers
            .iter()
            .filter(|m| (first.day..=last).contains(&m.at.date_naive()))
        {
            match m.kind {
                MarkerKind::Merge => marks.push("merge"),
                MarkerKind::FirstHit => marks.push("1st hit"),
                MarkerKind::Suspect => {}
            }
        }
        if !marks.is_empty() {
            l.push(' ');
            l.push_str(&marks.join(" / "));
        }
        format!("\"{l}\"")
    };
    let max = ps.iter().map(|p| p.1).max().unwrap_or(0).max(1);
    let join = |f: &dyn Fn(&(&TimelineDay, u64, u64)) -> String| {
        ps.iter().map(f).collect::<Vec<_>>().join(", ")
    };
    let unit = if per == 1 {
        "day".to_string()
    } else {
        format!("{per} days")
    };
    format!(
        "xychart-beta\n    title \"Runs (light) and runs hit (dark) per {unit}\"\n    x-axis [{}]\n    y-axis \"runs\" 0 --> {max}\n    bar [{}]\n    bar [{}]\n",
        join(&|p| label(p.0)),
        join(&|p| p.1.to_string()),
        join(&|p| p.2.to_string()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparklines_scale_to_the_most_and_keep_zero_visible() {
        assert_eq!(sparkline(&[0, 1, 4, 8], true), "·▁▄█");
        assert_eq!(sparkline(&[0, 1, 3, 5], false), "._=#");
        assert_eq!(sparkline(&[], true), "");
    }
}
