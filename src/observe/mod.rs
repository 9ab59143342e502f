//! Observability: the spans an answer and an ingest run are made of, the payload gate, the
//! metrics, and (in [`telemetry`]) where they go: OTLP, one log line per request, Prometheus.
//!
//! Spans are ordinary `tracing` spans under one target ([`SPAN_TARGET`]) whose field names are
//! the OpenTelemetry GenAI semantic conventions and Langfuse's attribute mapping
//! (`langfuse.observation.type`), so that an OTLP collector or Langfuse renders generations,
//! tools and retrievers as such. `otel.name` gives a span its exported name.
//!
//! Payloads (question text, passages, prompts, tool arguments and results) are recorded only
//! when [`set_payloads`] turned them on (`OBSERVE_PAYLOADS`); names, counts, timings, tokens and
//! status always are.

pub mod metrics;
mod open_spans;
pub mod summary;
pub mod telemetry;

use std::sync::atomic::{AtomicBool, Ordering};
use tracing::field::Empty;
use tracing::Span;

/// Every span of this module is under this target: the log filter and the exporters select
/// them by it. Requests (`agent.answer`, `ingest.run`) are `info` spans, everything inside them
/// `debug`: without an exporter only the requests are made (for their summary line or the
/// trace id of JSON lines), and with no reader at all none is.
pub const SPAN_TARGET: &str = "crowdvision_agent::spans";

/// A process-wide switch, like the tracing subscriber it belongs with: set once at start.
static PAYLOADS: AtomicBool = AtomicBool::new(false);

/// Turns recording of payloads on or off (`OBSERVE_PAYLOADS`).
pub fn set_payloads(enabled: bool) {
    PAYLOADS.store(enabled, Ordering::Relaxed);
}

/// Whether payloads may be recorded.
pub fn payloads() -> bool {
    PAYLOADS.load(Ordering::Relaxed)
}

/// Records `value` as the span's `field` when payloads are on.
pub fn record_payload(span: &Span, field: &str, value: impl FnOnce() -> String) {
    if payloads() && !span.is_disabled() {
        span.record(field, value());
    }
}

/// The request: one answer for one caller. The root of its trace; with its trace id.
pub fn answer_span(subject: &str, model: &str) -> (Span, Option<String>) {
    let span = tracing::info_span!(
        target: SPAN_TARGET,
        "agent.answer",
        otel.name = "agent.answer",
        langfuse.observation.type = "agent",
        user.id = subject,
        gen_ai.request.model = model,
        trace_id = Empty,
        decision = Empty,
        gen_ai.response.model = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cost = Empty,
        tool_calls = Empty,
        citations = Empty,
        langfuse.observation.input = Empty,
        langfuse.observation.output = Empty,
        otel.status_code = Empty,
        error.type = Empty,
    );
    let trace_id = telemetry::trace_id(&span);
    (span, trace_id)
}

/// One model turn of the loop and the tool calls it asked for.
pub fn hop_span(hop: u32) -> Span {
    tracing::debug_span!(
        target: SPAN_TARGET,
        "agent.hop",
        otel.name = format!("agent.hop.{hop}"),
        langfuse.observation.type = "span",
        hop,
    )
}

/// One call to the chat model: a Langfuse generation.
pub fn chat_span(model: &str, purpose: &'static str) -> Span {
    tracing::debug_span!(
        target: SPAN_TARGET,
        "gen_ai.chat",
        otel.name = format!("gen_ai.chat {model}"),
        otel.kind = "client",
        langfuse.observation.type = "generation",
        gen_ai.operation.name = "chat",
        gen_ai.system = "openai",
        gen_ai.request.model = model,
        purpose,
        gen_ai.response.model = Empty,
        gen_ai.response.finish_reasons = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cost = Empty,
        langfuse.observation.input = Empty,
        langfuse.observation.output = Empty,
        otel.status_code = Empty,
        error.type = Empty,
    )
}

/// Feedback on an answer, as a score of that answer's trace: an `agent.feedback` event naming
/// the answer's trace id, the rating as `score.value` (1 up, 0 down) and the reason, both from
/// bounded lists. The comment goes with it only when payloads are on; the question never does.
pub fn record_feedback(answer_trace_id: &str, rating: &str, reason: &str, comment: Option<&str>) {
    let span = tracing::info_span!(
        target: SPAN_TARGET,
        "agent.feedback",
        otel.name = "agent.feedback",
        langfuse.observation.type = "event",
        feedback.answer_trace_id = answer_trace_id,
        feedback.rating = rating,
        feedback.reason = reason,
        score.name = "user_feedback",
        score.value = u8::from(rating == "up"),
        langfuse.observation.input = Empty,
    );
    if let Some(comment) = comment {
        record_payload(&span, "langfuse.observation.input", || comment.to_string());
    }
}

/// One tool call.
pub fn tool_span(tool: &str, call_id: &str) -> Span {
    tracing::debug_span!(
        target: SPAN_TARGET,
        "tool",
        otel.name = format!("tool.{tool}"),
        langfuse.observation.type = "tool",
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = tool,
        gen_ai.tool.call.id = call_id,
        ok = Empty,
        langfuse.observation.input = Empty,
        langfuse.observation.output = Empty,
        otel.status_code = Empty,
        error.type = Empty,
    )
}

/// One stage of a documentation search: `embed`, `vector`, `keyword` or `rerank`.
pub fn retrieve_span(stage: &'static str) -> Span {
    let kind = if stage == "embed" {
        "embedding"
    } else {
        "retriever"
    };
    tracing::debug_span!(
        target: SPAN_TARGET,
        "retrieve",
        otel.name = format!("retrieve.{stage}"),
        langfuse.observation.type = kind,
        stage,
        results = Empty,
        ranked = Empty,
        langfuse.observation.input = Empty,
        otel.status_code = Empty,
        error.type = Empty,
    )
}

/// A whole ingest run.
pub fn ingest_run_span(roots: usize) -> Span {
    let span = tracing::info_span!(
        target: SPAN_TARGET,
        "ingest.run",
        otel.name = "ingest.run",
        langfuse.observation.type = "span",
        roots,
        trace_id = Empty,
        written = Empty,
        skipped = Empty,
        failed = Empty,
        chunks = Empty,
    );
    telemetry::record_trace_id(&span);
    span
}

/// One document of an ingest run (its name is never a payload: the caller gave it).
pub fn ingest_document_span(source: &str) -> Span {
    tracing::debug_span!(
        target: SPAN_TARGET,
        "ingest.document",
        otel.name = "ingest.document",
        langfuse.observation.type = "span",
        source,
        outcome = Empty,
        chunks = Empty,
        otel.status_code = Empty,
        error.type = Empty,
    )
}

/// Marks a span failed with the kind of error (never the error's text: it may carry data).
pub fn record_error(span: &Span, kind: &str) {
    span.record("otel.status_code", "error");
    span.record("error.type", kind);
}

/// Chunk ids with their scores, `id:score` joined by spaces (ids are names, not payload).
pub fn ranked_ids<'a>(ranked: impl Iterator<Item = (&'a str, f64)>) -> String {
    ranked
        .map(|(id, score)| format!("{id}:{score:.4}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranked_ids_keep_the_order_and_round_the_scores() {
        let ranked = ranked_ids([("a#1", 0.123456), ("b#2", 0.5)].into_iter());
        assert_eq!(ranked, "a#1:0.1235 b#2:0.5000");
    }
}
