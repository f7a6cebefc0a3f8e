//! One self-contained HTML page: the same layout as the text formats, with the timeline drawn as
//! inline SVG and the heat map as a coloured table. No external script, font, stylesheet or
//! request: a strict Content-Security-Policy (`default-src 'none'`) allows only the page's own
//! `<style>` and `<script>`, by their SHA-256 hashes, so nothing injected could run or load.
//! The page reads fine without JavaScript; the few lines of script only make tables sortable
//! (numbers as numbers, dates such as `2026-07-15 21:18 UTC` and other text as text: ISO dates
//! sort as text in time order).
//!
//! Every string that came from outside (log lines, job names, titles, URLs) is escaped with
//! `escape`; links are only `http(s)` URLs. No `style` attribute is written (CSP would block
//! it): colours are classes, and SVG presentation attributes.
//!
//! The SVG is drawn here rather than with `plotters`: the charts are a few rectangles, lines and
//! labels, and hand-written SVG lets each element carry a CSS class and a `<title>` tooltip
//! under the CSP, with no dependency tree (fonts) to build.

use std::io::{self, Write};

use sha2::{Digest, Sha256};

use super::layout::{Block, Chart, Line, MAX_LOG_CHARS, Span, Table, date};
use super::sanitize::one_line;
use crate::analysis::heatmap::HeatMap;
use crate::analysis::timeline::{MarkerKind, Timeline};

const CSS: &str = r#"
:root{color-scheme:light;--hit:#c62828;--run:#cfd8dc;--impact:#fff3e0;--ink:#1f2328;--muted:#59636e}
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);margin:0;background:#fff}
main{max-width:1100px;margin:0 auto;padding:1.5rem}
h1{font-size:1.6rem;margin:.2rem 0 .8rem}h2{font-size:1.3rem;border-bottom:1px solid #d0d7de;padding-bottom:.2rem}
h3{font-size:1.1rem;margin-top:1.6rem}
code{font:13px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;padding:.1em .3em;border-radius:4px;overflow-wrap:break-word}
code.id{white-space:nowrap;overflow-wrap:normal}
table{border-collapse:collapse;margin:.6rem 0;font-size:14px}
th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top}
th{background:#f6f8fa}table.sortable th{cursor:pointer}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
details>summary{cursor:pointer;color:var(--muted);margin:.4rem 0}
a{color:#0969da}
.chart{max-width:100%;height:auto;display:block;margin:.4rem 0}
.chart text{font:11px system-ui,sans-serif;fill:var(--muted)}
.chart .impact{fill:var(--impact)}.chart .runs{fill:var(--run)}.chart .hits{fill:var(--hit)}
.chart .axis{stroke:#8c959f;stroke-width:1}.chart .merge{stroke:#1a7f37;stroke-width:2}
.chart .suspect{stroke:#8c959f;stroke-width:1;stroke-dasharray:3 3}.chart .first{fill:#1f2328}
.chart text.merge-label{fill:#1a7f37;font-weight:600}
.legend span{display:inline-block;margin-right:1rem;color:var(--muted);font-size:13px}
.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em;vertical-align:-.05em}
.swatch.hits{background:var(--hit)}.swatch.runs{background:var(--run)}.swatch.impact{background:var(--impact);border:1px solid #e0c9a6}
.swatch.merge{background:#1a7f37;width:.25em}
table.heat td{text-align:center;font-variant-numeric:tabular-nums;min-width:3.5em}
td.h0{background:#fff;color:#59636e}td.hn{background:#f6f8fa;color:#afb8c1}
td.h1{background:#ffebee}td.h2{background:#ffcdd2}td.h3{background:#ef9a9a}td.h4{background:#e57373;color:#fff}td.h5{background:#c62828;color:#fff}
.spark{vertical-align:middle}
"#;

const SCRIPT: &str = r#"
document.querySelectorAll("table.sortable").forEach(function(t){t.querySelectorAll("th").forEach(function(th,i){th.title="Sort";th.addEventListener("click",function(){var b=t.tBodies[0],d=th.dataset.dir==="asc"?-1:1;th.dataset.dir=d>0?"asc":"desc";var k=function(r){return r.cells[i]?r.cells[i].textContent.trim():""};Array.from(b.rows).sort(function(x,y){return d*order(k(x),k(y))}).forEach(function(r){b.appendChild(r)})})})});
function order(a,c){var iso=/^\d{4}-\d\d-\d\d/,na=parseFloat(a),nc=parseFloat(c);return iso.test(a)||iso.test(c)||isNaN(na)||isNaN(nc)?a.localeCompare(c):na-nc}
"#;

/// `'sha256-…'` of a text, for the Content-Security-Policy.
pub fn csp_hash(text: &str) -> String {
    format!("'sha256-{}'", base64(&Sha256::digest(text.as_bytes())))
}

/// The page's Content-Security-Policy.
pub fn content_security_policy() -> String {
    format!(
        "default-src 'none'; style-src {}; script-src {}; img-src 'none'; base-uri 'none'; form-action 'none'",
        csp_hash(CSS),
        csp_hash(SCRIPT)
    )
}

fn base64(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Text escaped for HTML content and attribute values, on one line, control characters gone.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in one_line(s).chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A word shorter than this is broken only between the items of a comma-separated list.
const BREAKABLE_FROM: usize = 30;
/// A comma-separated list this long or longer (a matrix cell's values, `3.10,3.11,3.12,3.13`)
/// may wrap after its commas; shorter words are never broken.
const LIST_BREAKABLE_FROM: usize = 20;

/// [`escape`], with a `<wbr>` after each `_ / . : [ ( , =` of a long word (30 characters or
/// more, such as a test id or a path), and after each comma of a list of 20 characters or more
/// (a matrix cell's values): it may then wrap where a reader expects it, and a table
/// gives its column the width of the word's longest part instead of squeezing it to one letter
/// a line (as breaking anywhere would) or widening it past the page (as not breaking would).
/// Copied text is unchanged.
/// Identifiers this long or shorter (a pool, host, signature or image name) are never broken.
const IDENTIFIER_MAX: usize = 48;

/// A hyphenated name people copy whole (a pool, host or signature): one token of letters,
/// digits, `-`, `_` and `.` with a hyphen in it, at most [`IDENTIFIER_MAX`] characters. A
/// browser would break it after a hyphen (`linux-amd64-gpu-rtxpro6000-latest-` / `1`), so its
/// `<code>` gets the class `id`, which keeps it on one line. Names without a hyphen (a test's
/// `test_slot_owners_released_after_graph_destroyed`) and longer text keep their break points
/// ([`breakable`]), so a narrow column still fits the page.
fn is_identifier(t: &str) -> bool {
    t.len() <= IDENTIFIER_MAX
        && t.contains('-')
        && t.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn breakable(t: &str) -> String {
    let line = one_line(t);
    let mut out = String::with_capacity(line.len() + line.len() / 4);
    for (i, word) in line.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let len = word.chars().count();
        if len < LIST_BREAKABLE_FROM || (len < BREAKABLE_FROM && !word.contains(',')) {
            out.push_str(&escape(word));
            continue;
        }
        let list_only = len < BREAKABLE_FROM;
        let breaks = |c: char| {
            c == ',' || (!list_only && matches!(c, '_' | '/' | '.' | ':' | '[' | '(' | '='))
        };
        let mut buf = [0u8; 4];
        let mut chars = word.chars().peekable();
        while let Some(c) = chars.next() {
            out.push_str(&escape(c.encode_utf8(&mut buf)));
            // After the last of a run (`::`, `/_`), never at the end.
            if breaks(c) && chars.peek().is_some_and(|&next| !breaks(next)) {
                out.push_str("<wbr>");
            }
        }
    }
    out
}

fn safe_url(url: &str) -> Option<&str> {
    let u = url.trim();
    (u.starts_with("https://") || u.starts_with("http://"))
        .then_some(u)
        .filter(|u| !u.chars().any(|c| c.is_whitespace() || c.is_control()))
}

/// The page: `title` in the `<title>`, then the blocks.
pub fn render(title: &str, blocks: &[Block], out: &mut dyn Write) -> io::Result<()> {
    let mut body = String::new();
    for block in blocks {
        write_block(block, &mut body);
    }
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{csp}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"flakestat\">\n\
         <title>{title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n<main>\n{body}</main>\n\
         <script>{SCRIPT}</script>\n</body>\n</html>\n",
        csp = content_security_policy(),
        title = escape(title),
    )
}

fn write_block(block: &Block, out: &mut String) {
    match block {
        Block::Heading(level, line) => {
            let l = (*level).clamp(1, 6);
            out.push_str(&format!("<h{l}>{}</h{l}>\n", inline(line)));
        }
        Block::Paragraph(line) => out.push_str(&format!("<p>{}</p>\n", inline(line))),
        Block::Bullets(items) => {
            out.push_str("<ul>\n");
            for item in items {
                out.push_str(&format!("<li>{}</li>\n", inline(item)));
            }
            out.push_str("</ul>\n");
        }
        Block::Table(t) => table(t, out),
        // Open: a page has room, and a closed block would hide the failing jobs.
        Block::Details { summary, blocks } => {
            out.push_str(&format!(
                "<details open>\n<summary>{}</summary>\n",
                escape(summary)
            ));
            for b in blocks {
                write_block(b, out);
            }
            out.push_str("</details>\n");
        }
        Block::Chart(Chart::Timeline(t)) => timeline_svg(t, out),
        Block::Chart(Chart::HeatMap(h)) => heatmap_table(h, out),
    }
}

fn table(t: &Table, out: &mut String) {
    out.push_str("<table class=\"sortable\">\n<thead><tr>");
    for (i, h) in t.headers.iter().enumerate() {
        let class = if t.numeric.get(i) == Some(&true) {
            " class=\"num\""
        } else {
            ""
        };
        out.push_str(&format!("<th{class}>{}</th>", escape(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        out.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            let class = if t.numeric.get(i) == Some(&true) {
                " class=\"num\""
            } else {
                ""
            };
            out.push_str(&format!("<td{class}>{}</td>", inline(cell)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

fn inline(line: &Line) -> String {
    let mut s = String::new();
    for span in line {
        match span {
            Span::Text(t) => s.push_str(&breakable(t)),
            Span::Strong(t) => s.push_str(&format!("<strong>{}</strong>", escape(t))),
            Span::Code(t) => {
                let mut t = one_line(t).trim().to_string();
                if t.chars().count() > MAX_LOG_CHARS {
                    t = t.chars().take(MAX_LOG_CHARS).collect::<String>() + "…";
                }
                if is_identifier(&t) {
                    s.push_str(&format!("<code class=\"id\">{}</code>", escape(&t)));
                } else if !t.is_empty() {
                    s.push_str(&format!("<code>{}</code>", breakable(&t)));
                }
            }
            // Whole, however long: a command is pasted, not read.
            Span::Command(t) => {
                let t = one_line(t).trim().to_string();
                if !t.is_empty() {
                    s.push_str(&format!("<code>{}</code>", breakable(&t)));
                }
            }
            Span::Link { text, url } | Span::Url { text, url } => {
                match url.as_deref().and_then(safe_url) {
                    Some(u) => s.push_str(&format!(
                        "<a href=\"{}\" rel=\"noreferrer\">{}</a>",
                        escape(u),
                        escape(text)
                    )),
                    None => s.push_str(&escape(text)),
                }
            }
            Span::Spark(levels) => s.push_str(&spark_svg(levels)),
        }
    }
    s
}

/// A small bar sparkline; the counts are in its `<title>` for readers and screen readers.
fn spark_svg(levels: &[u64]) -> String {
    let max = levels.iter().copied().max().unwrap_or(0).max(1);
    let (w, h) = (4 * levels.len().max(1), 16u64);
    let mut s = format!(
        "<svg class=\"spark\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\"><title>runs hit per period: {}</title>",
        levels
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (i, &n) in levels.iter().enumerate() {
        let bh = if n == 0 {
            1
        } else {
            (n * (h - 1)).div_ceil(max).max(2)
        };
        let class = if n == 0 { "runs" } else { "hits" };
        s.push_str(&format!(
            "<rect class=\"{class}\" x=\"{}\" y=\"{}\" width=\"3\" height=\"{bh}\" fill=\"{}\"/>",
            i * 4,
            h - bh,
            if n == 0 { "#cfd8dc" } else { "#c62828" }
        ));
    }
    s.push_str("</svg>");
    s
}

fn timeline_svg(t: &Timeline, out: &mut String) {
    let (Some(first), Some(last)) = (t.days.first(), t.days.last()) else {
        out.push_str("<p>No runs in the window.</p>\n");
        return;
    };
    let plot = Plot::new(t, first.day);
    let (w, h) = (plot.w, plot.h);
    let hits: u64 = t.days.iter().map(|d| d.runs_hit).sum();
    out.push_str(&format!(
        "<svg class=\"chart\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-labelledby=\"tl-title\">\
         <title id=\"tl-title\">Runs and runs hit per day, {} to {}: {hits} runs hit</title>\n",
        first.day, last.day
    ));
    if let (Some(a), Some(b)) = (t.impact_start, t.impact_end) {
        let (xa, xb) = (plot.x_of(a), plot.x_of(b));
        let (top, ph) = (plot.top, plot.ph);
        out.push_str(&format!(
            "<rect class=\"impact\" x=\"{xa:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{ph}\" fill=\"#fff3e0\"><title>impact window from {}</title></rect>\n",
            (xb - xa).max(1.0),
            escape(&date(a))
        ));
    }
    timeline_bars(t, &plot, out);
    timeline_axes(t, &plot, out);
    timeline_markers(t, &plot, out);
    out.push_str("</svg>\n");
    timeline_legend(t, out);
}

/// The timeline picture's geometry: the plot area inside the margins, a column per day.
struct Plot {
    w: f64,
    h: f64,
    left: f64,
    top: f64,
    /// The plot area's width and height.
    pw: f64,
    ph: f64,
    days: f64,
    day_w: f64,
    /// The most runs in a day (at least 1): the top of the y axis.
    max: f64,
    start: chrono::DateTime<chrono::Utc>,
}

impl Plot {
    fn new(t: &Timeline, first_day: chrono::NaiveDate) -> Plot {
        let n = t.days.len() as f64;
        let (w, h) = (960.0, 260.0);
        let (left, right, top, bottom) = (40.0, 10.0, 34.0, 40.0);
        let pw = w - left - right;
        let ph = h - top - bottom;
        Plot {
            w,
            h,
            left,
            top,
            pw,
            ph,
            days: n,
            day_w: pw / n,
            max: t.days.iter().map(|d| d.runs).max().unwrap_or(0).max(1) as f64,
            start: first_day
                .and_hms_opt(0, 0, 0)
                .expect("midnight exists")
                .and_utc(),
        }
    }

    fn x_of(&self, at: chrono::DateTime<chrono::Utc>) -> f64 {
        let days = (at - self.start).num_seconds() as f64 / 86_400.0;
        self.left + days.clamp(0.0, self.days) * self.day_w
    }

    fn y_of(&self, v: f64) -> f64 {
        self.top + self.ph - v / self.max * self.ph
    }
}

/// A grey bar of runs and a red bar of runs hit per day.
fn timeline_bars(t: &Timeline, plot: &Plot, out: &mut String) {
    let Plot {
        left,
        day_w,
        max,
        ph,
        ..
    } = *plot;
    for (i, d) in t.days.iter().enumerate() {
        let x = left + i as f64 * day_w + day_w * 0.12;
        let bw = day_w * 0.76;
        let tip = format!("{}: {} runs, {} hit", d.day, d.runs, d.runs_hit);
        if d.runs > 0 {
            out.push_str(&format!(
                "<rect class=\"runs\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" fill=\"#cfd8dc\"><title>{tip}</title></rect>\n",
                plot.y_of(d.runs as f64),
                d.runs as f64 / max * ph
            ));
        }
        if d.runs_hit > 0 {
            out.push_str(&format!(
                "<rect class=\"hits\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{bw:.1}\" height=\"{:.1}\" fill=\"#c62828\"><title>{tip}</title></rect>\n",
                plot.y_of(d.runs_hit as f64),
                d.runs_hit as f64 / max * ph
            ));
        }
    }
}

/// Axes: 0 and the most runs on y; a date every week on x.
fn timeline_axes(t: &Timeline, plot: &Plot, out: &mut String) {
    let Plot {
        left,
        top,
        pw,
        ph,
        day_w,
        max,
        ..
    } = *plot;
    out.push_str(&format!(
        "<line class=\"axis\" x1=\"{left}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#8c959f\"/>\n\
         <line class=\"axis\" x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{0}\" stroke=\"#8c959f\"/>\n\
         <text x=\"{2}\" y=\"{0}\" text-anchor=\"end\">0</text><text x=\"{2}\" y=\"{3}\" text-anchor=\"end\">{4}</text>\n",
        top + ph,
        left + pw,
        left - 6.0,
        top + 8.0,
        max as u64
    ));
    for (i, d) in t.days.iter().enumerate().step_by(7) {
        out.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>\n",
            left + (i as f64 + 0.5) * day_w,
            top + ph + 16.0,
            d.day.format("%b %-d")
        ));
    }
}

/// Markers: the placed merge (green, labelled), other suspects (dashed), the first hit (a dot).
fn timeline_markers(t: &Timeline, plot: &Plot, out: &mut String) {
    let (top, ph) = (plot.top, plot.ph);
    for m in &t.markers {
        let x = plot.x_of(m.at);
        let label = escape(&m.label);
        let when = escape(&date(m.at));
        match m.kind {
            MarkerKind::Merge | MarkerKind::Suspect => {
                let (class, stroke) = if m.kind == MarkerKind::Merge {
                    ("merge", "#1a7f37")
                } else {
                    ("suspect", "#8c959f")
                };
                out.push_str(&format!(
                    "<line class=\"{class}\" x1=\"{x:.1}\" y1=\"{:.1}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"{stroke}\"><title>{label} merged {when}</title></line>\n",
                    top - 4.0,
                    top + ph
                ));
                if m.kind == MarkerKind::Merge {
                    out.push_str(&format!(
                        "<text class=\"merge-label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{label} merged</text>\n",
                        x - 3.0,
                        top - 8.0
                    ));
                }
            }
            MarkerKind::FirstHit => {
                out.push_str(&format!(
                    "<circle class=\"first\" cx=\"{x:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#1f2328\"><title>first hit, {label}, {when}</title></circle>\n\
                     <text x=\"{:.1}\" y=\"{:.1}\">first hit</text>\n",
                    top + ph + 26.0,
                    x + 6.0,
                    top + ph + 30.0
                ));
            }
        }
    }
}

/// The legend, and the markers in words (the picture is not the only place they are).
fn timeline_legend(t: &Timeline, out: &mut String) {
    out.push_str("<p class=\"legend\"><span><i class=\"swatch runs\"></i>runs</span><span><i class=\"swatch hits\"></i>runs hit</span><span><i class=\"swatch impact\"></i>impact window</span><span><i class=\"swatch merge\"></i>merge the bisection places it on</span></p>\n<ul>\n");
    for m in &t.markers {
        let what = match m.kind {
            MarkerKind::Merge => "merged (where the bisection places it)",
            MarkerKind::Suspect => "merged (another suspect)",
            MarkerKind::FirstHit => "first hit",
        };
        let (label, when) = (escape(&m.label), escape(&date(m.at)));
        out.push_str(&if m.kind == MarkerKind::FirstHit {
            format!("<li>{what}: {label}, {when}</li>\n")
        } else {
            format!("<li>{label} {what}, {when}</li>\n")
        });
    }
    out.push_str("</ul>\n");
}

fn heatmap_table(h: &HeatMap, out: &mut String) {
    out.push_str(&format!(
        "<table class=\"heat\">\n<caption>Jobs hit / jobs run, {} by {}</caption>\n<thead><tr><th>{} \\ {}</th>",
        escape(&h.rows),
        escape(&h.columns),
        escape(&h.rows),
        escape(&h.columns)
    ));
    for c in &h.column_values {
        out.push_str(&format!("<th>{}</th>", escape(c)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (r, name) in h.row_values.iter().enumerate() {
        out.push_str(&format!("<tr><th>{}</th>", escape(name)));
        for cell in &h.cells[r] {
            if cell.jobs_total == 0 {
                out.push_str("<td class=\"hn\" title=\"no job ran\">–</td>");
                continue;
            }
            let rate = cell.jobs_hit as f64 / cell.jobs_total as f64;
            // Any hit lights a cell clearly; darker from 10% and 25% on.
            let class = match rate {
                0.0 => 0,
                r if r < 0.10 => 3,
                r if r < 0.25 => 4,
                _ => 5,
            };
            out.push_str(&format!(
                "<td class=\"h{class}\">{}/{}</td>",
                cell.jobs_hit, cell.jobs_total
            ));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn outside_text_cannot_open_a_tag_or_leave_an_attribute() {
        assert_eq!(
            escape("<script>\"x\"&'y'</script>\n"),
            "&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt; "
        );
        assert_eq!(safe_url("javascript:alert(1)"), None);
        assert_eq!(safe_url("https://x/y"), Some("https://x/y"));
    }

    #[test]
    fn the_policy_hashes_the_page_own_style_and_script() {
        let csp = content_security_policy();
        assert!(csp.starts_with("default-src 'none';"));
        assert!(csp.contains(&csp_hash(CSS)) && csp.contains(&csp_hash(SCRIPT)));
        assert!(!csp.contains("unsafe"));
    }

    /// Pool and host names stay on one line; a test's name and an error line keep their
    /// break points, and nothing else is let into the class's markup.
    #[test]
    fn hyphenated_names_are_kept_whole() {
        let code = |t: &str| inline(&vec![Span::Code(t.into())]);
        assert_eq!(
            code("windows-amd64-gpu-rtxpro6000-latest-1"),
            "<code class=\"id\">windows-amd64-gpu-rtxpro6000-latest-1</code>"
        );
        assert_eq!(
            code("test_slot_owners_released_after_graph_destroyed"),
            "<code>test_<wbr>slot_<wbr>owners_<wbr>released_<wbr>after_<wbr>graph_<wbr>destroyed</code>"
        );
        assert!(code("E   OSError: no-space").starts_with("<code>"));
        assert!(code("a-<b>").starts_with("<code>") && code("a-<b>").contains("&lt;b&gt;"));
        assert!(code(&"x-".repeat(30)).starts_with("<code>"));
    }

    #[test]
    fn long_words_wrap_at_their_separators_and_stay_escaped() {
        assert_eq!(
            breakable("tests/graph/test_lifetime.py::test_x[<b>]"),
            "tests/<wbr>graph/<wbr>test_<wbr>lifetime.<wbr>py::<wbr>test_<wbr>x[<wbr>&lt;b&gt;]"
        );
        // Short words, and the spaces between words, as escape() gives them.
        assert_eq!(
            breakable("a_b/c.d and <i>short</i>"),
            escape("a_b/c.d and <i>short</i>")
        );
        // A run of separators breaks once, after its last; never at the end.
        assert_eq!(
            breakable("cuda_core/cuda/core/_memory/_buffer.pyx_"),
            "cuda_<wbr>core/<wbr>cuda/<wbr>core/_<wbr>memory/_<wbr>buffer.<wbr>pyx_"
        );
        // A list of 20 to 29 characters (a matrix cell's values) wraps after its commas only;
        // a shorter one, or a word as long without a comma, stays whole.
        assert_eq!(
            breakable("(never 3.10,3.11,3.12,3.13,3.14);"),
            "(never 3.10,<wbr>3.11,<wbr>3.12,<wbr>3.13,<wbr>3.14);"
        );
        assert_eq!(breakable("a100,h100,t4"), "a100,h100,t4");
        assert_eq!(
            breakable("&lt;script&gt;alert(1)"),
            escape("&lt;script&gt;alert(1)")
        );
    }
}
