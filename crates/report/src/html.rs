//! One self-contained HTML page: every figure as inline SVG followed by its
//! table, the machines the results come from, and the sources of the published
//! figures. No scripts, no external style sheets, fonts or images: it opens
//! offline and can be mailed as one file.

use crate::figures::{Figure, Results, Table, format_value};
use crate::plot::{self, PlotError};
use crate::reference::{ReferenceData, ReferenceSet};

/// Escapes text for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:'DejaVu Sans',Verdana,sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;color:#222}\
h1{font-size:1.6em}h2{font-size:1.25em;margin-top:2.2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:.8em 0;font-size:.9em}\
th,td{border:1px solid #ccc;padding:.25em .6em}td.n{text-align:right;font-variant-numeric:tabular-nums}\
th{background:#f2f2f2;text-align:left}.figure svg{max-width:100%;height:auto}\
.note{color:#555;font-size:.9em}";

/// The page.
pub fn page(
    results: &[Results],
    sets: &[&ReferenceSet],
    refs: &ReferenceData,
    figures: &[Figure],
) -> Result<String, PlotError> {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    h.push_str("<title>clustercrypt report</title>\n");
    h.push_str(&format!("<style>{STYLE}</style>\n</head>\n<body>\n"));
    h.push_str(&format!(
        "<h1>clustercrypt report</h1>\n<p class=\"note\">Made by clustercrypt {} from {} results file(s){}.</p>\n",
        env!("CARGO_PKG_VERSION"),
        results.len(),
        if sets.is_empty() {
            String::new()
        } else {
            format!(
                " and the published figures of {}",
                escape(&sets.iter().map(|s| s.name).collect::<Vec<_>>().join(", "))
            )
        }
    ));
    if !figures.is_empty() {
        h.push_str("<nav><ul>\n");
        for f in figures {
            h.push_str(&format!(
                "<li><a href=\"#{}\">{}</a></li>\n",
                f.kind.name(),
                escape(&f.title)
            ));
        }
        h.push_str("<li><a href=\"#machines\">Machines</a></li>\n");
        if !sets.is_empty() {
            h.push_str("<li><a href=\"#sources\">Sources of the published figures</a></li>\n");
        }
        h.push_str("</ul></nav>\n");
    }
    for f in figures {
        h.push_str(&figure_section(f)?);
    }
    h.push_str(&machines(results));
    if !sets.is_empty() {
        h.push_str(&sources(sets, refs));
    }
    h.push_str("</body>\n</html>\n");
    Ok(h)
}

/// Inline SVG needs no namespace declaration in HTML; dropping it also keeps
/// the page free of any URL.
fn inline_svg(svg: &str) -> String {
    let svg = match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    };
    svg.replace(" xmlns=\"http://www.w3.org/2000/svg\"", "")
}

fn figure_section(f: &Figure) -> Result<String, PlotError> {
    let mut h = format!(
        "<section class=\"figure\" id=\"{}\">\n<h2>{}</h2>\n",
        f.kind.name(),
        escape(&f.title)
    );
    h.push_str(&inline_svg(&plot::svg(f)?));
    h.push('\n');
    h.push_str(&table_html(&f.table(), f.kind.name()));
    if !f.notes.is_empty() {
        h.push_str("<ul class=\"note\">\n");
        for n in &f.notes {
            h.push_str(&format!("<li>{}</li>\n", escape(n)));
        }
        h.push_str("</ul>\n");
    }
    h.push_str("</section>\n");
    Ok(h)
}

fn table_html(t: &Table, id: &str) -> String {
    let mut h = format!("<table id=\"table-{id}\">\n<thead><tr>");
    for c in &t.columns {
        h.push_str(&format!("<th>{}</th>", escape(c)));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for row in &t.rows {
        h.push_str("<tr>");
        for (i, cell) in row.iter().enumerate() {
            if i == 0 {
                h.push_str(&format!("<th>{}</th>", escape(cell)));
            } else {
                h.push_str(&format!("<td class=\"n\">{}</td>", escape(cell)));
            }
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody>\n</table>\n");
    h
}

fn machines(results: &[Results]) -> String {
    let mut h = String::from("<section id=\"machines\">\n<h2>Machines</h2>\n");
    if results.is_empty() {
        h.push_str("<p>No results files: published figures only.</p>\n");
    }
    for r in results {
        let m = &r.report.machine;
        let s = &r.report.settings;
        let mut rows: Vec<(&str, String)> = vec![
            ("host", m.hostname.clone()),
            ("CPU", m.cpu_model.clone()),
            ("logical CPUs", m.cores.to_string()),
            (
                "memory",
                format!(
                    "{} GiB",
                    format_value(m.memory_bytes as f64 / 1_073_741_824.0)
                ),
            ),
            ("kernel", m.kernel.clone()),
            ("architecture", m.arch.clone()),
            ("CPU features", m.cpu_features.join(", ")),
            (
                "tool",
                format!("{} {}", r.report.tool.name, r.report.tool.version),
            ),
            (
                "measurement",
                format!(
                    "at least {} s per direction, {} B buffer, {} B requests, {} run(s), {} thread(s)",
                    format_value(s.min_time_s),
                    s.buffer_size,
                    s.request_size,
                    s.runs,
                    s.threads
                ),
            ),
        ];
        // Clock, idleness, throttling and core types, as the text output says them.
        for line in clustercrypt_bench::export::conditions_text(m).lines() {
            let line = line.trim_start_matches("# ");
            let (k, v) = line.split_once(": ").unwrap_or(("conditions", line));
            rows.push((
                match k {
                    "clock" => "clock",
                    "throttling" => "throttling",
                    "core types" => "core types",
                    "idle" => "idle",
                    _ => "not idle",
                },
                v.to_string(),
            ));
        }
        if let Some(c) = &r.report.cluster {
            rows.push(("cluster", format!("{} ranks", c.ranks)));
        }
        if let Some(source) = &r.report.source {
            rows.push(("source", source.clone()));
        }
        if r.report.interrupted {
            rows.push(("interrupted", "yes: rows not reached are missing".into()));
        }
        for u in &r.report.unavailable {
            rows.push((
                "not available",
                format!("{} {}b: {}", u.cipher, u.key_bits, u.reason),
            ));
        }
        h.push_str(&format!("<h3>{}</h3>\n<table>\n", escape(&r.label)));
        for (k, v) in rows {
            h.push_str(&format!(
                "<tr><th>{}</th><td>{}</td></tr>\n",
                escape(k),
                escape(&v)
            ));
        }
        h.push_str("</table>\n");
    }
    h.push_str("</section>\n");
    h
}

fn sources(sets: &[&ReferenceSet], refs: &ReferenceData) -> String {
    let mut h = String::from(
        "<section id=\"sources\">\n<h2>Sources of the published figures</h2>\n<table>\n<thead><tr><th>set</th><th>what</th><th>source</th></tr></thead>\n<tbody>\n",
    );
    for s in sets {
        h.push_str(&format!(
            "<tr><th>{}</th><td>{}</td><td>{}</td></tr>\n",
            escape(s.name),
            escape(s.title),
            escape(s.source)
        ));
    }
    h.push_str("</tbody>\n</table>\n");
    if !refs.systems.is_empty() {
        h.push_str("<table>\n<thead><tr><th>system</th><th>CPU</th><th>memory</th><th>AES instructions</th><th>cores</th><th>cost</th></tr></thead>\n<tbody>\n");
        for s in &refs.systems {
            h.push_str(&format!(
                "<tr><th>{}</th><td>{}</td><td>{} GB</td><td>{}</td><td>{}</td><td>${}</td></tr>\n",
                escape(&s.system),
                escape(&s.cpu),
                format_value(s.memory_gb),
                if s.aes_instructions { "yes" } else { "no" },
                escape(&s.cores),
                format_value(s.cost_usd)
            ));
        }
        h.push_str("</tbody>\n</table>\n");
    }
    h.push_str("<p>Every source, with its remarks:</p>\n<ul class=\"note\">\n");
    for s in refs.sources() {
        h.push_str(&format!("<li>{}</li>\n", escape(&s.to_string())));
    }
    h.push_str("</ul>\n<p class=\"note\">The documents are the project's seed studies; figures are copied as printed.</p>\n</section>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::{build_all, tests::results};
    use crate::reference::{find, load};

    #[test]
    fn page_holds_every_figure_and_table_and_no_url() {
        let names = ["cluster-study", "tea-cluster", "iot-pi3", "power", "hpl"];
        let sets: Vec<&ReferenceSet> = names.iter().map(|n| find(n).unwrap()).collect();
        let refs = load(&names.map(String::from)).unwrap();
        let res = results("host<1>");
        let figs = build_all(&res, &refs);
        let html = page(&res, &sets, &refs, &figs).unwrap();
        for f in &figs {
            assert!(html.contains(&format!(
                "<section class=\"figure\" id=\"{}\">",
                f.kind.name()
            )));
            assert!(html.contains(&format!("<table id=\"table-{}\">", f.kind.name())));
        }
        assert_eq!(html.matches("<svg").count(), figs.len());
        assert!(!html.contains("http://") && !html.contains("https://"));
        assert!(!html.contains("<script") && !html.contains("<link"));
        assert!(html.contains("host&lt;1&gt;"));
        assert!(!html.contains("host<1>"));
        assert!(html.contains("000_9a184237f0807cfc.txt, Table I"));
        assert!(html.contains("001_45ca9799ab52d4ef.txt"));
        assert!(html.contains("Intel Core i5-8500T"));
    }

    #[test]
    fn escapes() {
        assert_eq!(
            escape("a<b & \"c\" 'd'"),
            "a&lt;b &amp; &quot;c&quot; &#39;d&#39;"
        );
    }
}
