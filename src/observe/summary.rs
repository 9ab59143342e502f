//! Top-level spans in the log: [`RootSpans`] keeps each request's fields and, when nothing is
//! exported, writes one `info` line (target `crowdvision_agent::requests`) as the request ends.
//! [`JsonLines`] is the `LOG_FORMAT=json` line format, with the request's trace id.

use std::fmt::Write as _;
use std::time::Instant;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::layer::Context;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

/// The target of the one-line request summaries (an `info` event each).
pub const SUMMARY_TARGET: &str = "crowdvision_agent::requests";

/// Longest value of one field in a summary line, and longest line: a question or a provider's
/// reply recorded on a span never makes a log line grow without bound.
const MAX_FIELD_CHARS: usize = 256;
const MAX_LINE_CHARS: usize = 2048;

/// `text` cut to `limit` characters, marked with `…` when cut.
fn bounded(mut text: String, limit: usize) -> String {
    if let Some((cut, _)) = text.char_indices().nth(limit) {
        text.truncate(cut);
        text.push('…');
    }
    text
}

/// The fields of a request span, as recorded so far.
struct RootFields {
    name: String,
    trace_id: Option<String>,
    fields: Vec<(&'static str, String)>,
    started: Instant,
}

impl Visit for RootFields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.set(field.name(), format!("{value:?}"));
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field.name(), value.to_string());
    }
}

impl RootFields {
    /// Fields the summary leaves out: the exporter's naming and Langfuse's mapping.
    fn shown(name: &str) -> bool {
        !(name.starts_with("otel.") || name.starts_with("langfuse.") || name == "user.id")
    }

    fn set(&mut self, name: &'static str, value: String) {
        let value = bounded(value, MAX_FIELD_CHARS);
        match name {
            "trace_id" => self.trace_id = Some(value),
            "otel.name" => self.name = value,
            _ if Self::shown(name) => match self.fields.iter_mut().find(|(n, _)| *n == name) {
                Some(slot) => slot.1 = value,
                None => self.fields.push((name, value)),
            },
            _ => {}
        }
    }

    fn line(&self) -> String {
        let mut line = format!(
            "{} {:.1} ms",
            self.name,
            self.started.elapsed().as_secs_f64() * 1000.0
        );
        for (name, value) in &self.fields {
            let _ = write!(line, " {name}={value}");
        }
        bounded(line, MAX_LINE_CHARS)
    }
}

/// Keeps the fields of top-level spans; writes their summary line when `summaries` is set
/// (no collector, and the log shows `crowdvision_agent::requests` at `info`); keeps their trace
/// id for `json` lines.
pub struct RootSpans {
    summaries: bool,
    json: bool,
}

impl RootSpans {
    pub fn new(summaries: bool, json: bool) -> RootSpans {
        RootSpans { summaries, json }
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for RootSpans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        if span.parent().is_some() {
            return;
        }
        // Nothing to keep when neither a summary line nor a JSON line will name the request.
        if !self.summaries && !self.json {
            return;
        }
        let mut fields = RootFields {
            name: span.name().to_string(),
            trace_id: None,
            fields: Vec::new(),
            started: Instant::now(),
        };
        attrs.record(&mut fields);
        span.extensions_mut().insert(fields);
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(id) else { return };
        let mut extensions = span.extensions_mut();
        if let Some(fields) = extensions.get_mut::<RootFields>() {
            values.record(fields);
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        if !self.summaries {
            return;
        }
        let Some(span) = ctx.span(&id) else { return };
        let extensions = span.extensions();
        let Some(fields) = extensions.get::<RootFields>() else {
            return;
        };
        let summary = fields.line();
        let trace_id = fields.trace_id.clone().unwrap_or_default();
        drop(extensions);
        tracing::info!(target: SUMMARY_TARGET, trace_id = %trace_id, "{summary}");
    }
}

/// `LOG_FORMAT=json`: one JSON object per line with `timestamp`, `level`, `target`, the
/// event's fields, and `trace_id` when the line was written inside a request.
pub struct JsonLines;

impl<S, N> FormatEvent<S, N> for JsonLines
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let mut line = serde_json::Map::new();
        line.insert(
            "timestamp".into(),
            chrono::Utc::now()
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
                .into(),
        );
        line.insert("level".into(), event.metadata().level().as_str().into());
        line.insert("target".into(), event.metadata().target().into());
        if let Some(trace_id) = request_trace_id(ctx) {
            line.insert("trace_id".into(), trace_id.into());
        }
        // The event's own fields last: a summary names its request's trace id itself.
        let mut fields = JsonFields(line);
        event.record(&mut fields);
        let line = fields.0;
        let text = serde_json::to_string(&line).map_err(|_| std::fmt::Error)?;
        writeln!(writer, "{text}")
    }
}

/// The trace id of the request the current event belongs to (its root span's).
fn request_trace_id<S, N>(ctx: &FmtContext<'_, S, N>) -> Option<String>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    let root = ctx.event_scope()?.from_root().next()?;
    let extensions = root.extensions();
    extensions.get::<RootFields>()?.trace_id.clone()
}

struct JsonFields(serde_json::Map<String, serde_json::Value>);

impl Visit for JsonFields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().into(), format!("{value:?}").into());
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_line_is_bounded_however_large_its_fields() {
        let mut fields = RootFields {
            name: "agent.answer".into(),
            trace_id: None,
            fields: Vec::new(),
            started: Instant::now(),
        };
        fields.set("question", "é".repeat(50_000));
        for name in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"] {
            fields.set(name, "x".repeat(10_000));
        }
        let line = fields.line();
        assert!(line.chars().count() <= MAX_LINE_CHARS + 1, "{}", line.len());
        assert!(line.contains(&format!("question={}…", "é".repeat(MAX_FIELD_CHARS))));
        assert_eq!(bounded("short".into(), 10), "short");
    }
}
