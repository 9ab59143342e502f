//! Where spans and logs go: the tracing subscriber of the process.
//!
//! - Logs to stderr, `pretty` or `json` (`LOG_FORMAT`), filtered by `RUST_LOG`. JSON lines
//!   written inside a request carry its trace id.
//! - With `OTEL_EXPORTER_OTLP_ENDPOINT`, the spans of [`super::SPAN_TARGET`] are exported over
//!   OTLP/HTTP (protobuf) by [`QueuedExport`]: a bounded queue and one worker thread, so a slow
//!   or dead collector never holds up an answer; spans that find the queue full are dropped
//!   and counted. Without it, one summary line per finished request when the log shows them
//!   (see [`super::summary`]).

use super::open_spans::OpenSpans;
pub use super::summary::SUMMARY_TARGET;
use super::summary::{JsonLines, RootSpans};
use super::SPAN_TARGET;
use crate::config::LogFormat;
use opentelemetry::trace::{TraceContextExt, TracerProvider as _};
use opentelemetry_otlp::{Protocol, WithExportConfig, WithHttpConfig};
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter, SpanProcessor};
use opentelemetry_sdk::Resource;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tracing::Span;
use tracing_subscriber::filter::{EnvFilter, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;
use url::Url;

#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    #[error("OTLP exporter: {0}")]
    Exporter(String),
    #[error("the tracing subscriber was set already")]
    AlreadySet,
}

/// What the process's telemetry is made of.
pub struct TelemetrySettings<'a> {
    pub log_format: LogFormat,
    pub otlp_endpoint: Option<&'a Url>,
    pub payloads: bool,
    /// The log filter when `RUST_LOG` is unset.
    pub default_filter: &'a str,
}

/// The installed telemetry; [`Telemetry::shutdown`] sends what is queued before exit.
pub struct Telemetry {
    provider: Option<SdkTracerProvider>,
    /// The exported spans not closed yet; [`Telemetry::shutdown`] waits a moment for them.
    open: OpenSpans,
}

/// Whether spans go to an OpenTelemetry layer (their trace ids come from it then).
static EXPORTING: AtomicBool = AtomicBool::new(false);
/// Whether a log line may name the trace id (a summary line or a JSON line).
static LOGGED_TRACE_IDS: AtomicBool = AtomicBool::new(true);

impl Telemetry {
    /// Installs the subscriber for this process.
    pub fn init(settings: TelemetrySettings<'_>) -> Result<Telemetry, TelemetryError> {
        let (dispatch, telemetry) = Telemetry::build(settings)?;
        dispatch
            .try_init()
            .map_err(|_| TelemetryError::AlreadySet)?;
        Ok(telemetry)
    }

    /// The subscriber without installing it (benchmarks install it for one task).
    pub fn build(
        settings: TelemetrySettings<'_>,
    ) -> Result<(tracing::Dispatch, Telemetry), TelemetryError> {
        super::set_payloads(settings.payloads);
        let filter = EnvFilter::try_new(filter_text(settings.default_filter))
            .unwrap_or_else(|_| EnvFilter::new(settings.default_filter))
            // async-openai logs whole provider error bodies; our errors carry a bounded summary.
            .add_directive("async_openai=off".parse().expect("a valid directive"));
        let ansi = std::env::var_os("NO_COLOR").is_none()
            && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let logs = match settings.log_format {
            LogFormat::Pretty => tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(ansi)
                .with_filter(filter)
                .boxed(),
            // JSON lines look up the request's trace id, so they see the request spans.
            LogFormat::Json => tracing_subscriber::fmt::layer()
                .event_format(JsonLines)
                .with_writer(std::io::stderr)
                .with_filter(
                    filter.add_directive(
                        format!("{SPAN_TARGET}=info")
                            .parse()
                            .expect("a valid directive"),
                    ),
                )
                .boxed(),
        };
        let spans = |level| Targets::new().with_target(SPAN_TARGET, level);
        let provider = match settings.otlp_endpoint {
            Some(endpoint) => Some(otlp_provider(endpoint)?),
            None => None,
        };
        // Only what is exported: no source locations, thread names, busy/idle times or
        // context activation (nothing else here reads OpenTelemetry's context).
        let otel = provider.as_ref().map(|provider| {
            tracing_opentelemetry::layer()
                .with_tracer(provider.tracer("crowdvision-agent"))
                .with_location(false)
                .with_threads(false)
                .with_target(false)
                .with_tracked_inactivity(false)
                .with_context_activation(false)
                .with_filter(spans(LevelFilter::DEBUG))
        });
        // Request fields are kept for the summary line (nothing exported) and for the trace id
        // of JSON lines.
        // Request spans are made only for a reader: the exporter, the summary line, or the
        // trace id of JSON lines. With none of them no span is made at all.
        let summaries_shown =
            provider.is_none() && shows_summaries(&filter_text(settings.default_filter));
        let keep_roots = summaries_shown || settings.log_format == LogFormat::Json;
        let roots = keep_roots.then(|| {
            RootSpans::new(summaries_shown, settings.log_format == LogFormat::Json)
                .with_filter(spans(LevelFilter::INFO))
        });
        let open = OpenSpans::default();
        let counted = provider
            .as_ref()
            .map(|_| open.clone().with_filter(spans(LevelFilter::DEBUG)));
        // Outside the exporter's layer: a span is uncounted once the exporter has it.
        let subscriber = tracing_subscriber::registry()
            .with(otel)
            .with(roots)
            .with(logs)
            .with(counted);
        EXPORTING.store(provider.is_some(), Ordering::Relaxed);
        LOGGED_TRACE_IDS.store(keep_roots, Ordering::Relaxed);
        Ok((
            tracing::Dispatch::new(subscriber),
            Telemetry { provider, open },
        ))
    }

    /// Sends what is queued (bounded by the shutdown timeout) and stops the exporter.
    pub fn shutdown(self) {
        if let Some(provider) = self.provider {
            self.open.wait_closed(LATE_SPANS);
            if let Err(error) = provider.shutdown_with_timeout(SHUTDOWN_TIMEOUT) {
                tracing::warn!(%error, "spans may be lost: the OTLP export did not finish");
            }
        }
    }
}

/// The log filter: `RUST_LOG`, else `default`.
fn filter_text(default: &str) -> String {
    std::env::var("RUST_LOG")
        .ok()
        .filter(|v| !v.trim().is_empty())
        .unwrap_or_else(|| default.to_string())
}

/// Whether `filter` (`RUST_LOG` syntax) shows the request summaries (`info` events of
/// [`SUMMARY_TARGET`]): the directive with the longest matching target decides. Read from the
/// text because asking the subscriber (`tracing::enabled!`) leaves its per-layer filters
/// expecting an event that never comes, and the next span is then lost.
fn shows_summaries(filter: &str) -> bool {
    let mut best: Option<(usize, bool)> = None;
    for directive in filter.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        if directive.contains('[') {
            continue; // span-field filters select spans, not this event
        }
        let (target, level) = match directive.rsplit_once('=') {
            Some((target, level)) => (target, level),
            None if directive.parse::<LevelFilter>().is_ok() => ("", directive),
            None => (directive, "trace"),
        };
        let matches = target.is_empty()
            || SUMMARY_TARGET == target
            || SUMMARY_TARGET.starts_with(&format!("{target}::"));
        let Ok(level) = level.parse::<LevelFilter>() else {
            continue;
        };
        if matches && best.is_none_or(|(length, _)| target.len() >= length) {
            best = Some((target.len(), level >= LevelFilter::INFO));
        }
    }
    best.is_some_and(|(_, shown)| shown)
}

/// How long the end of a process waits for spans another thread is still closing.
const LATE_SPANS: Duration = Duration::from_millis(250);

/// How long the end of a process waits for the last spans to go out.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether spans are exported (to OTLP): what is worth reading only for a trace is read then.
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}

/// Records the trace id on a root span when log lines name it: the exported trace's id, else a
/// fresh random one, so that log lines of one request can be found together either way.
pub fn record_trace_id(span: &Span) {
    if LOGGED_TRACE_IDS.load(Ordering::Relaxed) {
        let _ = trace_id(span);
    }
}

/// The trace id of a root span, recorded on it when log lines name it: the exported trace's id,
/// else (when log lines carry one) a fresh random one. `None` when nothing reads the span.
pub fn trace_id(span: &Span) -> Option<String> {
    if span.is_disabled() {
        return None;
    }
    let logged = LOGGED_TRACE_IDS.load(Ordering::Relaxed);
    let id = if EXPORTING.load(Ordering::Relaxed) {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        span.context().span().span_context().trace_id().to_string()
    } else if logged {
        hex::encode(rand::random::<[u8; 16]>())
    } else {
        return None;
    };
    if logged {
        span.record("trace_id", &id);
    }
    Some(id)
}

fn otlp_provider(endpoint: &Url) -> Result<SdkTracerProvider, TelemetryError> {
    let traces = format!("{}/v1/traces", endpoint.as_str().trim_end_matches('/'));
    let client = crate::http::client_builder()
        .build()
        .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
    let mut exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_http_client(client)
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(traces)
        .build()
        .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
    let mut resource = Resource::builder();
    if std::env::var_os("OTEL_SERVICE_NAME").is_none() {
        resource = resource.with_service_name("crowdvision-agent");
    }
    let resource = resource.build();
    exporter.set_resource(&resource);
    let queue = QueueSettings::from_env();
    let processor = QueuedExport::start(exporter, queue);
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(resource)
        .build();
    Ok(provider)
}

/// The standard batch settings: `OTEL_BSP_MAX_QUEUE_SIZE` (2048),
/// `OTEL_BSP_MAX_EXPORT_BATCH_SIZE` (512), `OTEL_BSP_SCHEDULE_DELAY` (milliseconds, 5000).
#[derive(Debug, Clone, Copy)]
struct QueueSettings {
    capacity: usize,
    batch: usize,
    delay: Duration,
}

impl QueueSettings {
    fn from_env() -> QueueSettings {
        let read = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .filter(|v| *v > 0)
                .unwrap_or(default)
        };
        QueueSettings {
            capacity: read("OTEL_BSP_MAX_QUEUE_SIZE", 2048) as usize,
            batch: read("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512) as usize,
            delay: Duration::from_millis(read("OTEL_BSP_SCHEDULE_DELAY", 5000)),
        }
    }
}

/// What the answer path hands the export thread.
#[derive(Default)]
struct Pending {
    spans: Vec<SpanData>,
    /// Flush requests waiting for the next export to finish.
    flushes: Vec<SyncSender<()>>,
    closed: bool,
}

struct Queue {
    pending: Mutex<Pending>,
    /// Wakes the export thread: a full batch, a flush or the end (never each span: a wake-up
    /// is a system call, and a span must cost the answer path next to nothing).
    wake: Condvar,
    settings: QueueSettings,
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A span processor with a bounded queue in front of one export thread. `on_end` never
/// blocks on the collector: a full queue drops the span and counts it
/// (`agent_spans_dropped_total`).
struct QueuedExport {
    queue: Arc<Queue>,
    stopped: Mutex<Option<Receiver<()>>>,
}

impl std::fmt::Debug for QueuedExport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QueuedExport")
            .field("settings", &self.queue.settings)
            .finish_non_exhaustive()
    }
}

impl QueuedExport {
    fn start<E: SpanExporter + 'static>(exporter: E, settings: QueueSettings) -> QueuedExport {
        let queue = Arc::new(Queue {
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            settings,
        });
        let (stopped_tx, stopped_rx) = mpsc::sync_channel(1);
        let worker_queue = queue.clone();
        std::thread::Builder::new()
            .name("otlp-export".into())
            .spawn(move || {
                export_loop(exporter, &worker_queue);
                let _ = stopped_tx.send(());
            })
            .expect("the export thread starts");
        QueuedExport {
            queue,
            stopped: Mutex::new(Some(stopped_rx)),
        }
    }
}

impl SpanProcessor for QueuedExport {
    fn on_start(&self, _span: &mut opentelemetry_sdk::trace::Span, _cx: &opentelemetry::Context) {}

    fn on_end(&self, span: SpanData) {
        let mut pending = self.queue.lock();
        if pending.closed {
            return;
        }
        if pending.spans.len() >= self.queue.settings.capacity {
            drop(pending);
            super::metrics::spans_dropped(1);
            return;
        }
        pending.spans.push(span);
        let full_batch = pending.spans.len() == self.queue.settings.batch;
        drop(pending);
        if full_batch {
            self.queue.wake.notify_one();
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        let (ack, done) = mpsc::sync_channel(1);
        {
            let mut pending = self.queue.lock();
            if pending.closed {
                return Err(OTelSdkError::AlreadyShutdown);
            }
            pending.flushes.push(ack);
        }
        self.queue.wake.notify_one();
        done.recv_timeout(SHUTDOWN_TIMEOUT)
            .map_err(|_| OTelSdkError::Timeout(SHUTDOWN_TIMEOUT))
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.queue.lock().closed = true;
        self.queue.wake.notify_one();
        let stopped = self
            .stopped
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        match stopped {
            Some(stopped) => stopped
                .recv_timeout(timeout)
                .map_err(|_| OTelSdkError::Timeout(timeout)),
            None => Err(OTelSdkError::AlreadyShutdown),
        }
    }
}

/// Spans of a batch whose export failed twice: counted as dropped and said once on stderr
/// (without the error's text, which may quote the collector's response).
fn lost(count: usize, error: &OTelSdkError) {
    super::metrics::spans_dropped(count as u64);
    let why = match error {
        OTelSdkError::Timeout(_) => "timed out",
        _ => "failed",
    };
    eprintln!("otlp export: {count} spans lost: the export {why} twice");
}

/// The export thread: sends a batch when one is full, when the schedule delay has passed, on a
/// flush, and what is left at the end.
fn export_loop<E: SpanExporter>(exporter: E, queue: &Queue) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("otlp export: no runtime ({error}); spans are not exported");
            return;
        }
    };
    let settings = queue.settings;
    loop {
        let (spans, flushes, closed) = {
            let pending = queue.lock();
            let (mut pending, _) = queue
                .wake
                .wait_timeout_while(pending, settings.delay, |p| {
                    p.spans.len() < settings.batch && p.flushes.is_empty() && !p.closed
                })
                .unwrap_or_else(|e| e.into_inner());
            (
                std::mem::take(&mut pending.spans),
                std::mem::take(&mut pending.flushes),
                pending.closed,
            )
        };
        let mut spans = spans;
        while !spans.is_empty() {
            let rest = spans.split_off(spans.len().min(settings.batch));
            // A failed export is tried once more (a pooled connection the collector closed
            // fails the first try); after that it is the collector's problem, and the answer
            // path never hears of it.
            if runtime.block_on(exporter.export(spans.clone())).is_err() {
                let count = spans.len();
                if let Err(error) = runtime.block_on(exporter.export(spans)) {
                    lost(count, &error);
                }
            }
            spans = rest;
        }
        for ack in flushes {
            let _ = ack.send(());
        }
        if closed {
            let _ = exporter.shutdown();
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shows_summaries;

    #[test]
    fn summaries_follow_the_most_specific_directive() {
        assert!(!shows_summaries("warn"));
        assert!(shows_summaries("info"));
        assert!(shows_summaries("debug,sqlx=warn"));
        assert!(shows_summaries("warn,crowdvision_agent::requests=info"));
        assert!(shows_summaries("warn,crowdvision_agent=debug"));
        assert!(!shows_summaries("info,crowdvision_agent::requests=warn"));
        assert!(!shows_summaries("info,crowdvision_agent=error"));
        assert!(shows_summaries("crowdvision_agent"));
        assert!(!shows_summaries("crowdvision_agent::requestsx=info"));
        assert!(!shows_summaries("off"));
        assert!(!shows_summaries(""));
    }
}
