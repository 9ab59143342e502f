//! The metrics, through the `metrics` facade: each function records one thing. Nothing is kept
//! until a recorder is installed ([`install_prometheus`], by `serve` for `GET /metrics`).

use metrics::{counter, gauge, histogram, Counter, Histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;
use std::time::Duration;

/// Latency buckets in seconds, from a cached search to a slow model call.
const SECONDS_BUCKETS: &[f64] = &[
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
    60.0,
];

/// How often recorded histogram samples are folded into their buckets.
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// Installs the Prometheus recorder for this process and returns the handle that renders the
/// text format. Fails if a recorder was installed already. Must run inside the Tokio runtime:
/// it starts the upkeep task that folds histogram samples into buckets (without it they pile
/// up between scrapes: 66 MB more resident after a 90 s load run without a scrape).
pub fn install_prometheus() -> Result<PrometheusHandle, String> {
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS_BUCKETS)
        .map_err(|e| e.to_string())?
        .install_recorder()
        .map_err(|e| e.to_string())?;
    RECORDER_INSTALLED.store(true, Ordering::Release);
    let upkept = handle.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(UPKEEP_EVERY);
        loop {
            every.tick().await;
            upkept.run_upkeep();
        }
    });
    Ok(handle)
}

// Handles bound once. Registering a metric looks its name and labels up in the recorder's map
// (hashing them), a few hundred instructions each, three times per model call and twice per
// request (BENCHMARKS.md); a bound handle records straight into its slot. Handles are bound
// only once the recorder is installed: one bound before would record nothing, ever.

/// Set by [`install_prometheus`].
static RECORDER_INSTALLED: AtomicBool = AtomicBool::new(false);

/// Most (route, status) pairs bound; a status past them is registered per request.
const MAX_BOUND_REQUEST_LABELS: usize = 64;

struct RequestHandles {
    requests: Counter,
    duration: Histogram,
}

/// Handles by (route, status).
static REQUEST_HANDLES: RwLock<Vec<((&'static str, u16), RequestHandles)>> =
    RwLock::new(Vec::new());

pub fn http_request(route: &'static str, status: u16, took: Duration) {
    with_bound(
        &REQUEST_HANDLES,
        MAX_BOUND_REQUEST_LABELS,
        |key| *key == (route, status),
        || (Some((route, status)), request_handles(route, status)),
        |handles| {
            handles.requests.increment(1);
            handles.duration.record(took);
        },
    );
}

/// Records with the handle `table` holds for the key `is_key` picks, or else with `make`'s,
/// which is bound there under the key `make` names, if any, once the recorder is installed
/// (at most `limit` keys; past them, handles are registered per call).
fn with_bound<K, H>(
    table: &RwLock<Vec<(K, H)>>,
    limit: usize,
    is_key: impl Fn(&K) -> bool,
    make: impl FnOnce() -> (Option<K>, H),
    record: impl FnOnce(&H),
) {
    if !RECORDER_INSTALLED.load(Ordering::Acquire) {
        return record(&make().1);
    }
    let bound = table.read().unwrap_or_else(|e| e.into_inner());
    if let Some((_, handle)) = bound.iter().find(|(key, _)| is_key(key)) {
        return record(handle);
    }
    drop(bound);
    let (key, handle) = make();
    record(&handle);
    let Some(key) = key else { return };
    let mut bound = table.write().unwrap_or_else(|e| e.into_inner());
    if bound.len() < limit && !bound.iter().any(|(k, _)| is_key(k)) {
        bound.push((key, handle));
    }
}

fn request_handles(route: &'static str, status: u16) -> RequestHandles {
    RequestHandles {
        requests: counter!("agent_http_requests_total", "route" => route, "status" => status_label(status)),
        duration: histogram!("agent_http_request_duration_seconds", "route" => route),
    }
}

/// The statuses this API answers with as static labels (no allocation per request).
fn status_label(status: u16) -> metrics::SharedString {
    let known = match status {
        200 => "200",
        400 => "400",
        401 => "401",
        403 => "403",
        404 => "404",
        405 => "405",
        413 => "413",
        415 => "415",
        422 => "422",
        500 => "500",
        502 => "502",
        503 => "503",
        504 => "504",
        _ => return status.to_string().into(),
    };
    known.into()
}

/// A request refused by its caller's own limits (429).
pub fn request_limited() {
    counter!("agent_http_requests_limited_total").increment(1);
}

pub fn request_shed() {
    counter!("agent_http_requests_shed_total").increment(1);
}

/// A streamed answer opened (+1) or ended (-1).
pub fn streams_in_flight(change: f64) {
    gauge!("agent_sse_streams_in_flight").increment(change);
}

/// Models that may name a metric label: the configured ones (answer, judge, allowed). Any
/// other name a caller or a provider brings is counted as `other`, so that the label set stays
/// as small as the configuration however many names arrive.
static KNOWN_MODELS: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Longest list of known models kept (a configuration never comes near it).
const MAX_KNOWN_MODELS: usize = 256;

/// Adds configured model names to those that label metrics.
pub fn know_models<'a>(models: impl IntoIterator<Item = &'a str>) {
    let mut known = KNOWN_MODELS.write().unwrap_or_else(|e| e.into_inner());
    for model in models {
        if !model.is_empty() && known.len() < MAX_KNOWN_MODELS && !known.iter().any(|k| k == model)
        {
            known.push(model.to_string());
        }
    }
}

/// Tools that may name a metric label: the registered ones (a model may call any name).
static KNOWN_TOOLS: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Adds a registered tool's name to those that label metrics.
pub fn know_tool(tool: &str) {
    let mut known = KNOWN_TOOLS.write().unwrap_or_else(|e| e.into_inner());
    if known.len() < MAX_KNOWN_MODELS && !known.iter().any(|k| k == tool) {
        known.push(tool.to_string());
    }
}

fn tool_label(tool: &str) -> String {
    let known = KNOWN_TOOLS.read().unwrap_or_else(|e| e.into_inner());
    if known.iter().any(|k| k == tool) {
        tool.to_string()
    } else {
        "other".to_string()
    }
}

/// `model` when it is configured, `other` otherwise.
pub fn model_label(model: &str) -> String {
    let known = KNOWN_MODELS.read().unwrap_or_else(|e| e.into_inner());
    if known.iter().any(|k| k == model) {
        model.to_string()
    } else {
        "other".to_string()
    }
}

struct ModelCallHandles {
    duration: Histogram,
    input_tokens: Counter,
    output_tokens: Counter,
}

/// The known models' handles by the model's name (its label), bound on their first call.
static MODEL_CALL_HANDLES: RwLock<Vec<(String, ModelCallHandles)>> = RwLock::new(Vec::new());

pub fn model_call(model: &str, took: Duration, input_tokens: u64, output_tokens: u64) {
    with_bound(
        &MODEL_CALL_HANDLES,
        MAX_KNOWN_MODELS,
        |name| name == model,
        || {
            let label = model_label(model);
            let handles = model_call_handles(&label);
            // Unknown names share `other`, registered per call: only configured models are bound.
            ((label == model).then_some(label), handles)
        },
        |handles| {
            handles.duration.record(took);
            handles.input_tokens.increment(input_tokens);
            handles.output_tokens.increment(output_tokens);
        },
    );
}

fn model_call_handles(label: &str) -> ModelCallHandles {
    let label = label.to_string();
    ModelCallHandles {
        duration: histogram!("agent_llm_call_duration_seconds", "model" => label.clone()),
        input_tokens: counter!("agent_llm_tokens_total", "model" => label.clone(), "kind" => "input"),
        output_tokens: counter!("agent_llm_tokens_total", "model" => label, "kind" => "output"),
    }
}

/// The provider's (or the price table's) cost of an answer, in millionths of a US dollar so
/// that it adds up as an integer counter.
pub fn model_cost(model: &str, usd: f64) {
    if usd.is_finite() && usd > 0.0 {
        counter!("agent_llm_cost_microdollars_total", "model" => model_label(model))
            .increment((usd * 1e6).round() as u64);
    }
}

pub fn model_error(model: &str, kind: &'static str) {
    counter!("agent_llm_errors_total", "model" => model_label(model), "kind" => kind).increment(1);
}

/// Tools' call counters and duration histograms, bound on a known tool's first call.
static TOOL_HANDLES: RwLock<Vec<(String, (Counter, Histogram))>> = RwLock::new(Vec::new());
/// Retrieval stages' histograms, bound on each stage's first search.
static STAGE_HANDLES: RwLock<Vec<(&'static str, Histogram)>> = RwLock::new(Vec::new());

pub fn tool_call(tool: &str, took: Duration, error_kind: Option<&str>) {
    with_bound(
        &TOOL_HANDLES,
        MAX_BOUND_REQUEST_LABELS,
        |name| name == tool,
        || {
            let label = tool_label(tool);
            let calls = counter!("agent_tool_calls_total", "tool" => label.clone());
            let duration = histogram!("agent_tool_duration_seconds", "tool" => label.clone());
            // Unknown names share `other`, registered per call: only registered tools are bound.
            ((label == tool).then_some(label), (calls, duration))
        },
        |(calls, duration)| {
            calls.increment(1);
            duration.record(took);
        },
    );
    if let Some(kind) = error_kind {
        counter!("agent_tool_errors_total", "tool" => tool_label(tool), "kind" => kind.to_string())
            .increment(1);
    }
}

pub fn retrieval_stage(stage: &'static str, took: Duration) {
    with_bound(
        &STAGE_HANDLES,
        MAX_BOUND_REQUEST_LABELS,
        |name| *name == stage,
        || {
            let histogram = histogram!("agent_retrieval_stage_duration_seconds", "stage" => stage);
            (Some(stage), histogram)
        },
        |histogram| histogram.record(took),
    );
}

/// Decisions' counters, bound on each decision's first answer.
static DECISION_HANDLES: RwLock<Vec<(&'static str, Counter)>> = RwLock::new(Vec::new());

pub fn decision(decision: &'static str) {
    with_bound(
        &DECISION_HANDLES,
        MAX_BOUND_REQUEST_LABELS,
        |name| *name == decision,
        || {
            let counter = counter!("agent_decisions_total", "decision" => decision);
            (Some(decision), counter)
        },
        |counter| counter.increment(1),
    );
}

/// Feedback given on an answer: `rating` is `up` or `down`, `reason` one of six or `none`.
pub fn feedback(rating: &'static str, reason: &'static str) {
    counter!("agent_feedback_total", "rating" => rating, "reason" => reason).increment(1);
}

pub fn spans_dropped(count: u64) {
    counter!("agent_spans_dropped_total").increment(count);
}
