//! Tables for people. The only place that decides how results look on a terminal.

use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};
use crowdvision_agent::agent::response::{AskResponse, TraceEntry};
use crowdvision_agent::retrieval::chunk::Chunk;
use crowdvision_agent::retrieval::ingest::{Action, IngestSummary};
use crowdvision_agent::retrieval::search::SearchResult;
use crowdvision_agent::retrieval::store::StoreStatus;
use std::time::Duration;

fn table(header: &[&str]) -> Table {
    let mut table = Table::new();
    table
        .load_preset(UTF8_FULL_CONDENSED)
        .set_header(header.to_vec());
    table
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

pub fn search_table(results: &[SearchResult]) -> Table {
    let mut t = table(&[
        "#", "source", "section", "vector", "keyword", "fused", "snippet",
    ]);
    let rank = |r: Option<usize>| r.map_or("-".to_string(), |r| r.to_string());
    for (i, result) in results.iter().enumerate() {
        let snippet: String = result
            .chunk
            .text
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(70)
            .collect();
        t.add_row(vec![
            number(i + 1),
            Cell::new(&result.chunk.source),
            Cell::new(&result.chunk.section),
            number(rank(result.vector_rank)),
            number(rank(result.keyword_rank)),
            number(format!("{:.4}", result.fused_score)),
            Cell::new(snippet),
        ]);
    }
    t
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
        serde_json::to_value(response.decision)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        response.model,
        response.usage.prompt_tokens,
        response.usage.completion_tokens,
        response.usage.total_tokens,
        dollars(response.cost.estimated_usd),
        dollars(response.cost.provider_usd),
    )
}
