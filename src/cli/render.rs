//! Tables for people. The only place that decides how results look on a terminal.
//!
//! On a terminal, tables fit its width (wide columns wrap). Piped, the listing commands print
//! plain tab-separated lines instead ([`plain_lines`]), one record a line, as `rg` does, and
//! `--json` stays the way to get everything.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, ContentArrangement, Table};
use crowdvision_agent::contract::{AskResponse, TraceEntry};
use crowdvision_agent::eval::formats;
use crowdvision_agent::eval::report::{BaselineDiff, Report, Status};
use crowdvision_agent::retrieval::chunk::Chunk;
use crowdvision_agent::retrieval::ingest::{Action, IngestSummary};
use crowdvision_agent::retrieval::search::SearchResult;
use crowdvision_agent::retrieval::store::StoreStatus;
use std::io::IsTerminal;
use std::time::Duration;

/// Prints a streamed answer's text as it arrives. A `retract` takes the withdrawn text back: on
/// a terminal it is erased (the cursor returns to where the text began and the rest of the
/// screen is cleared); piped, where nothing printed can be taken back, a line says that the
/// text above was withdrawn and the replacement follows.
pub struct StreamPrinter {
    terminal: bool,
    /// Text has been printed since the start or the last retract.
    printed: bool,
}

/// Saves and restores the cursor position (DEC), and clears from the cursor to the end.
const SAVE_CURSOR: &str = "\x1b7";
const RESTORE_AND_CLEAR: &str = "\x1b8\x1b[J";

impl StreamPrinter {
    pub fn new() -> StreamPrinter {
        StreamPrinter {
            terminal: std::io::stdout().is_terminal(),
            printed: false,
        }
    }

    pub fn token(&mut self, out: &mut impl std::io::Write, text: &str) {
        if !self.printed && self.terminal {
            let _ = write!(out, "{SAVE_CURSOR}");
        }
        self.printed = true;
        let _ = write!(out, "{text}");
    }

    pub fn retract(&mut self, out: &mut impl std::io::Write) {
        if !self.printed {
            return;
        }
        if self.terminal {
            let _ = write!(out, "{RESTORE_AND_CLEAR}");
        } else {
            let _ = writeln!(out, "\n[the text above was withdrawn; the answer follows]");
        }
        self.printed = false;
    }
}

impl Default for StreamPrinter {
    fn default() -> StreamPrinter {
        StreamPrinter::new()
    }
}

pub fn table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.to_vec());
    table
}

/// Whether stdout is a terminal (tables) rather than a pipe or file (plain lines).
pub fn stdout_is_terminal() -> bool {
    std::io::stdout().is_terminal()
}

/// Whether text may be coloured: stdout is a terminal and `NO_COLOR` is not set.
pub fn colour() -> bool {
    stdout_is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// Rows as tab-separated lines; tabs and line breaks inside a field become spaces.
pub fn plain_lines(rows: &[Vec<String>]) -> String {
    rows.iter()
        .map(|row| {
            row.iter()
                .map(|field| field.replace(['\t', '\n', '\r'], " "))
                .collect::<Vec<_>>()
                .join("\t")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` with every case-insensitive occurrence of a term in bold yellow (ANSI).
pub fn highlight(text: &str, terms: &[String]) -> String {
    let lower = text.to_lowercase();
    if lower.len() != text.len() {
        // Lowercasing changed byte offsets: leave the text as it is rather than misplace marks.
        return text.to_string();
    }
    let mut marked = vec![false; text.len()];
    for term in terms.iter().filter(|t| !t.is_empty()) {
        for (start, _) in lower.match_indices(term.as_str()) {
            marked[start..start + term.len()]
                .iter_mut()
                .for_each(|m| *m = true);
        }
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut inside = false;
    for (i, c) in text.char_indices() {
        if marked[i] != inside {
            out.push_str(if marked[i] { "\x1b[1;33m" } else { "\x1b[0m" });
            inside = marked[i];
        }
        out.push(c);
    }
    if inside {
        out.push_str("\x1b[0m");
    }
    out
}

fn number(value: impl ToString) -> Cell {
    Cell::new(value.to_string()).set_alignment(CellAlignment::Right)
}

pub fn ingest_summary(summary: &IngestSummary, elapsed: Duration) -> Table {
    let mut t = table(&[
        "added",
        "replaced",
        "skipped",
        "pruned",
        "failed",
        "public",
        "chunks written",
        "seconds",
    ]);
    t.add_row(vec![
        number(summary.added),
        number(summary.replaced),
        number(summary.skipped),
        number(summary.pruned),
        number(summary.failed),
        number(summary.public),
        number(summary.chunks_written),
        number(format!("{:.2}", elapsed.as_secs_f64())),
    ]);
    t
}

pub fn dry_run_diff(summary: &IngestSummary) -> Table {
    let mut t = table(&["would be", "source"]);
    for report in &summary.sources {
        let action = match report.action {
            Action::Duplicate => "unchanged (duplicate content)",
            other => other.as_str(),
        };
        t.add_row(vec![Cell::new(action), Cell::new(&report.source)]);
    }
    t
}

pub fn chunk_table(source: &str, chunks: &[Chunk]) -> Table {
    let mut t = table(&["#", "section", "kind", "size", "starts with"]);
    for chunk in chunks {
        let first_line: String = chunk
            .text
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(60)
            .collect();
        t.add_row(vec![
            number(chunk.ordinal),
            Cell::new(chunk.section_path()),
            Cell::new(chunk.kind.as_str()),
            number(chunk.size),
            Cell::new(first_line),
        ]);
    }
    t.set_header(vec![
        format!("# ({source})"),
        "section".into(),
        "kind".into(),
        "size".into(),
        "starts with".into(),
    ]);
    t
}

pub fn status_table(status: &StoreStatus) -> Table {
    let mut t = table(&["", ""]);
    let show = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    t.add_row(vec!["backend".to_string(), status.backend.to_string()]);
    t.add_row(vec!["location".to_string(), status.location.clone()]);
    t.add_row(vec![
        "applied migrations".to_string(),
        format!("{:?}", status.applied_migrations),
    ]);
    t.add_row(vec![
        "pending migrations".to_string(),
        format!("{:?}", status.pending_migrations),
    ]);
    t.add_row(vec![
        "embedding model".to_string(),
        show(status.embedding_model.clone()),
    ]);
    t.add_row(vec![
        "embedding dimension".to_string(),
        show(status.embedding_dim.map(|d| d.to_string())),
    ]);
    t.add_row(vec!["documents".to_string(), status.documents.to_string()]);
    t.add_row(vec!["chunks".to_string(), status.chunks.to_string()]);
    t
}

/// Search results as a table, the query's terms highlighted in the snippets when `terms` is
/// not empty.
pub fn search_table(results: &[SearchResult], terms: &[String]) -> Table {
    let mut t = table(&[
        "#", "source", "section", "vector", "keyword", "fused", "snippet",
    ]);
    for (i, row) in search_rows(results).into_iter().enumerate() {
        let snippet = highlight(&row[6], terms);
        t.add_row(vec![
            number(i + 1),
            Cell::new(&row[1]),
            Cell::new(&row[2]),
            number(&row[3]),
            number(&row[4]),
            number(&row[5]),
            Cell::new(snippet),
        ]);
    }
    t
}

/// Each result as (rank, source, section, vector rank, keyword rank, fused score, snippet).
pub fn search_rows(results: &[SearchResult]) -> Vec<Vec<String>> {
    let rank = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
    results
        .iter()
        .enumerate()
        .map(|(i, result)| {
            let snippet: String = result
                .chunk
                .text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .take(70)
                .collect();
            vec![
                (i + 1).to_string(),
                result.chunk.source.clone(),
                result.chunk.section.clone(),
                rank(result.vector_rank),
                rank(result.keyword_rank),
                format!("{:.4}", result.fused_score),
                snippet,
            ]
        })
        .collect()
}

/// The citations under an answer, one line each.
pub fn citation_lines(response: &AskResponse) -> String {
    response
        .citations
        .iter()
        .map(|c| format!("  {} {} › {}\n", c.marker, c.source, c.section))
        .collect()
}

pub fn trace_table(trace: &[TraceEntry]) -> Table {
    let mut t = table(&["#", "tool", "ok", "ms", "summary", "arguments"]);
    for (i, entry) in trace.iter().enumerate() {
        t.add_row(vec![
            number(i + 1),
            Cell::new(&entry.tool),
            Cell::new(if entry.ok { "yes" } else { "no" }),
            number(entry.ms),
            Cell::new(&entry.summary),
            Cell::new(entry.arguments.to_string()),
        ]);
    }
    t
}

/// Decision, model, tokens and cost on one line.
pub fn usage_line(response: &AskResponse) -> String {
    let dollars = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("${v:.6}"));
    format!(
        "decision {} · model {} · tokens {} in + {} out = {} · cost estimated {}, provider {}",
        response.decision.as_str(),
        response.model,
        response.usage.prompt_tokens,
        response.usage.completion_tokens,
        response.usage.total_tokens,
        dollars(response.cost.estimated_usd),
        dollars(response.cost.provider_usd),
    )
}

/// Per model, every case with its status and, for the ones that did not behave, each failing
/// assertion (expected vs got); then the summary matrix, and with a sweep the cases whose
/// outcome differs between models.
pub fn eval_report(report: &Report) -> String {
    let mut out = String::new();
    for model in &report.models {
        let mut t = table(&["status", "case", "ms", "details"]);
        for case in &model.cases {
            let latency = case.runs.iter().map(|r| r.latency_ms).max().unwrap_or(0);
            let status = if case.flaky {
                format!(
                    "{} (flaky {:.0}%)",
                    case.status.as_str(),
                    case.pass_rate * 100.0
                )
            } else {
                case.status.as_str().to_string()
            };
            let details = match case.status {
                Status::Pass => String::new(),
                Status::Xfail => format!(
                    "xfail: {}\n{}",
                    case.xfail.as_deref().unwrap_or_default(),
                    formats::case_details(case)
                ),
                Status::Xpass => "passed though marked xfail: remove the marker".to_string(),
                Status::Fail | Status::Error => formats::case_details(case),
            };
            t.add_row(vec![
                Cell::new(status),
                Cell::new(&case.id),
                number(latency),
                Cell::new(details.trim_end()),
            ]);
        }
        out.push_str(&format!("model {}\n{t}\n\n", model.model));
    }
    out.push_str(&eval_matrix(report).to_string());
    if let Some(judge) = &report.judge_model {
        out.push_str(&format!("\njudge: {judge}"));
    }
    if !report.differing.is_empty() {
        let mut header = vec!["case".to_string()];
        header.extend(report.models.iter().map(|m| m.model.clone()));
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED).set_header(header);
        for case in &report.differing {
            let mut row = vec![Cell::new(&case.id)];
            row.extend(case.statuses.iter().map(|(_, s)| Cell::new(s.as_str())));
            t.add_row(row);
        }
        out.push_str(&format!(
            "\n\ncases whose outcome differs between models\n{t}"
        ));
    }
    out
}

/// One row per model: pass rate, statuses, latency, tokens and cost (answers, then judge).
pub fn eval_matrix(report: &Report) -> Table {
    let mut t = table(&[
        "model",
        "pass rate",
        "PASS",
        "FAIL",
        "ERROR",
        "XFAIL",
        "XPASS",
        "flaky",
        "mean ms",
        "p95 ms",
        "tokens",
        "cost",
        "judge tokens",
        "judge cost",
    ]);
    for model in &report.models {
        let s = &model.summary;
        t.add_row(vec![
            Cell::new(&model.model),
            number(format!("{:.1}%", s.pass_rate * 100.0)),
            number(s.pass),
            number(s.fail),
            number(s.error),
            number(s.xfail),
            number(s.xpass),
            number(s.flaky),
            number(format!("{:.0}", s.latency_ms_mean)),
            number(s.latency_ms_p95),
            number(s.usage.total_tokens),
            number(formats::usd(s.cost_usd)),
            number(s.judge_usage.total_tokens),
            number(formats::usd(s.judge_cost_usd)),
        ]);
    }
    t
}

/// The change against a baseline report, as lines.
pub fn baseline_diff(diff: &BaselineDiff) -> String {
    let mut lines = vec!["against the baseline:".to_string()];
    for rate in &diff.pass_rates {
        lines.push(format!(
            "  {} pass rate {:.1}% → {:.1}% ({:+.1} points)",
            rate.model,
            rate.before * 100.0,
            rate.after * 100.0,
            (rate.after - rate.before) * 100.0
        ));
    }
    for (title, changes) in [
        ("new failure", &diff.new_failures),
        ("fixed", &diff.fixed),
        ("changed", &diff.other_changes),
    ] {
        for change in changes.iter() {
            lines.push(format!(
                "  {title}: {} ({}) {} → {}",
                change.id,
                change.model,
                change.before.as_str(),
                change.after.as_str()
            ));
        }
    }
    for case in &diff.new_cases {
        lines.push(format!("  new case: {case}"));
    }
    for case in &diff.gone_cases {
        lines.push(format!("  no longer run: {case}"));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_keep_one_record_a_line() {
        let rows = vec![
            vec![
                "1".to_string(),
                "a.md".to_string(),
                "two\tlines\nhere".to_string(),
            ],
            vec!["2".to_string(), "b.md".to_string(), String::new()],
        ];
        assert_eq!(plain_lines(&rows), "1\ta.md\ttwo lines here\n2\tb.md\t");
    }

    #[test]
    fn terms_are_highlighted_whatever_their_case() {
        let terms = vec!["co2".to_string(), "air".to_string()];
        assert_eq!(
            highlight("CO2 and fresh air", &terms),
            "\x1b[1;33mCO2\x1b[0m and fresh \x1b[1;33mair\x1b[0m"
        );
        assert_eq!(highlight("nothing here", &terms), "nothing here");
        assert_eq!(highlight("İstanbul air", &terms), "İstanbul air");
    }
}
