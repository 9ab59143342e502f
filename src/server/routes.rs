//! The routes and their handlers.

use super::answer_json::answer_body;
use super::answering::{self, Streamed};
use super::caller::{caller, CLAIMS_HEADER};
use super::errors::ApiError;
use super::request::{parse_json, question, require_json, TakenHeaders};
use super::AppState;
use crate::contract::{AgentEvent, AskRequest, Question};
use crate::observe::metrics;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use serde::Deserialize;
use std::sync::Arc;

pub fn router(state: Arc<AppState>) -> Router {
    let body_limit = state.settings.max_body_bytes;
    let cors = cors_layer(&state.settings.cors_origins);
    let replica = state.settings.replica_name.clone();
    let router = Router::new()
        .route("/healthz", get(healthz))
        .route("/readyz", get(readyz))
        .route("/ask", post(ask))
        .route("/openapi.json", get(openapi))
        .route("/ingest", post(ingest))
        .route("/metrics", get(metrics_text))
        .merge(super::page::routes())
        .merge(super::compat::routes())
        .merge(super::conversations::routes())
        .merge(super::shares::routes())
        .merge(super::feedback::routes())
        .merge(super::signin::routes())
        .merge(super::mcp::routes(&state))
        .merge(super::resource::routes())
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(body_limit))
        // One middleware for both: each `from_fn` layer costs a boxed service and future per
        // request.
        .layer(axum::middleware::from_fn(move |request, next| {
            count_request(body_limit, request, next)
        }))
        .with_state(state);
    let router = match cors {
        Some(cors) => router.layer(cors),
        None => router,
    };
    match replica_header(replica) {
        Some(value) => router.layer(axum::middleware::map_response(
            move |mut response: Response| {
                let value = value.clone();
                async move {
                    response.headers_mut().insert("x-agent-replica", value);
                    response
                }
            },
        )),
        None => router,
    }
}

fn replica_header(name: Option<String>) -> Option<axum::http::HeaderValue> {
    name.and_then(|n| axum::http::HeaderValue::from_str(&n).ok())
}

fn cors_layer(origins: &[String]) -> Option<tower_http::cors::CorsLayer> {
    if origins.is_empty() {
        return None;
    }
    let origins: Vec<axum::http::HeaderValue> =
        origins.iter().filter_map(|o| o.parse().ok()).collect();
    Some(
        tower_http::cors::CorsLayer::new()
            .allow_origin(origins)
            .allow_methods([axum::http::Method::GET, axum::http::Method::POST])
            .allow_headers([header::CONTENT_TYPE, header::AUTHORIZATION])
            .allow_credentials(true),
    )
}

/// The API description, generated from the request and response types.
#[derive(utoipa::OpenApi)]
#[openapi(
    info(
        title = "crowdvision-agent",
        description = "Answers about buildings, rooms, occupancy and sensors"
    ),
    paths(
        ask,
        ingest,
        healthz,
        readyz,
        openapi,
        metrics_text,
        super::page::whoami,
        super::conversations::list,
        super::conversations::create,
        super::conversations::show,
        super::conversations::rename,
        super::conversations::delete,
        super::shares::make,
        super::shares::list,
        super::shares::view,
        super::shares::revoke,
        super::feedback::give,
        super::signin::config,
        super::signin::token
    ),
    components(schemas(
        AskRequest,
        IngestRequest,
        InlineDocument,
        crate::contract::AskResponse,
        crate::contract::AgentEvent,
        crate::contract::ErrorBody
    ))
)]
pub struct ApiDoc;

/// The API description: the generated paths and schemas, plus what the derive cannot say: how
/// a caller identifies itself and the events of a streamed answer.
pub fn openapi_document() -> serde_json::Value {
    let mut doc = serde_json::to_value(<ApiDoc as utoipa::OpenApi>::openapi()).unwrap_or_default();
    doc["components"]["securitySchemes"] = serde_json::json!({
        "gateway_claims": {
            "type": "apiKey", "in": "header", "name": CLAIMS_HEADER,
            "description": "Base64 of the caller's JSON claims ({sub, memberships: [{domain, role}]} or {sub, roles, domains}), set by a trusted gateway (TRUST_GATEWAY_HEADER). A client's own value is removed by the proxy."
        },
        "bearer": {
            "type": "http", "scheme": "bearer", "bearerFormat": "JWT",
            "description": "An OIDC access token (RS256 or ES256, verified against OIDC_JWKS_URL with OIDC_ISSUER and OIDC_AUDIENCE), or a development token (HS256 with EVAL_JWT_SECRET). Claims map as for the gateway header."
        }
    });
    let security = serde_json::json!([{"gateway_claims": []}, {"bearer": []}]);
    let open = [
        "/healthz",
        "/readyz",
        "/openapi.json",
        "/metrics",
        "/whoami",
        "/auth/config",
        "/auth/token",
    ];
    if let Some(paths) = doc["paths"].as_object_mut() {
        for (_, item) in paths
            .iter_mut()
            .filter(|(path, _)| !open.contains(&path.as_str()))
        {
            for operation in item
                .as_object_mut()
                .into_iter()
                .flat_map(|o| o.values_mut())
            {
                operation["security"] = security.clone();
            }
        }
    }
    doc["paths"]["/ask"]["post"]["responses"]["200"]["content"]["text/event-stream"] = serde_json::json!({
        "schema": {
            "description": "With `stream: true`: events `token`, `tool_call`, `tool_result` and `retract` (data: AgentEvent) as they happen, then exactly one of `done` (data: AskResponse) or `error` (data: ErrorBody). `retract` withdraws the text of every `token` since the previous `retract`: a client drops it, and the tokens that follow replace it, so that the joined text ends equal to `done`'s answer. A `tool_result` of `get_sensor_history`, `get_occupancy` or `get_room` carries a `chart` (the series or the bars a page draws from the result).",
            "oneOf": [
                {"$ref": "#/components/schemas/AgentEvent"},
                {"$ref": "#/components/schemas/AskResponse"},
                {"$ref": "#/components/schemas/ErrorBody"}
            ]
        }
    });
    doc
}

/// This document.
#[utoipa::path(get, path = "/openapi.json", responses((status = 200, description = "the OpenAPI document")))]
async fn openapi() -> Json<serde_json::Value> {
    Json(openapi_document())
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", responses((status = 200, description = "up")))]
async fn healthz() -> Json<serde_json::Value> {
    Json(serde_json::json!({"status": "ok"}))
}

/// Ready when the knowledge base is reachable and migrated with the configured embedding, a
/// provider is configured, the embedder embeds and (with OIDC) a key set is held; 503 naming
/// the failing part otherwise.
#[utoipa::path(get, path = "/readyz", responses(
    (status = 200, description = "ready"),
    (status = 503, description = "the store, the provider, the identity provider's keys or the embedder is not ready", body = crate::contract::ErrorBody),
))]
async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    if let Err(error) = state.retriever.check_store().await {
        tracing::warn!(%error, "not ready: store");
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_not_ready",
            "the knowledge base is not reachable or not migrated",
        )
        .into_response();
    }
    if !state.provider_configured {
        return ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "provider_not_configured",
            "no language model provider key is configured",
        )
        .into_response();
    }
    if let Some(error) = identity_not_ready(&state).await {
        return error.into_response();
    }
    if let Some(error) = embedder_not_ready(&state).await {
        return error.into_response();
    }
    Json(serde_json::json!({"status": "ready", "store": "ok", "provider": "configured",
        "embedder": "ok", "identity": if state.jwks.is_some() { "keys held" } else { "no keys needed" }}))
    .into_response()
}

/// How long `/readyz` waits for the embedder to embed one word.
const EMBEDDER_PROBE: std::time::Duration = std::time::Duration::from_secs(3);

/// Not ready while OIDC is configured and no key set has been read (one fetch is tried): every
/// bearer token would be held back with a 503.
async fn identity_not_ready(state: &AppState) -> Option<ApiError> {
    let jwks = state.jwks.as_ref()?;
    if jwks.held_keys().is_some() || jwks.refresh_now().await.is_ok() {
        return None;
    }
    tracing::warn!("not ready: the OIDC key set could not be read");
    Some(ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "identity_not_ready",
        "the identity provider's signing keys could not be read",
    ))
}

/// Not ready while the embedder cannot embed one word: every search would fail.
async fn embedder_not_ready(state: &AppState) -> Option<ApiError> {
    let word = ["readiness".to_string()];
    let probe = state.retriever.embedder.embed(&word);
    let failure = match tokio::time::timeout(EMBEDDER_PROBE, probe).await {
        Ok(Ok(_)) => return None,
        Ok(Err(error)) => error.to_string(),
        Err(_) => format!("no answer within {} s", EMBEDDER_PROBE.as_secs()),
    };
    tracing::warn!(error = %failure, "not ready: embedder");
    Some(ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "embedder_not_ready",
        "the embedding service is not answering",
    ))
}

/// Requests by route and status, and their latency (for a stream: until its headers).
/// Counts the request in the HTTP metrics, by route, around the rest of its handling, where a
/// body declared larger than `body_limit` is drained for its sender's sake first.
async fn count_request(
    body_limit: usize,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let route = match request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|p| p.as_str())
    {
        Some("/ask") => "/ask",
        Some("/ingest") => "/ingest",
        Some("/healthz") => "/healthz",
        Some("/readyz") => "/readyz",
        Some("/openapi.json") => "/openapi.json",
        Some("/metrics") => "/metrics",
        Some("/conversations") => "/conversations",
        Some("/conversations/{id}") => "/conversations/{id}",
        Some("/conversations/{id}/share") => "/conversations/{id}/share",
        Some("/shares") => "/shares",
        Some("/shares/{key}") => "/shares/{key}",
        Some("/feedback") => "/feedback",
        Some("/whoami") => "/whoami",
        Some("/auth/config") => "/auth/config",
        Some("/auth/token") => "/auth/token",
        Some("/") => "/",
        Some("/assets/app.js" | "/assets/signin.js" | "/assets/app.css") => "/assets",
        Some("/v1/models") => "/v1/models",
        Some("/v1/chat/completions") => "/v1/chat/completions",
        _ => "other",
    };
    let started = std::time::Instant::now();
    let response = super::oversize::drain_oversized(body_limit, request, next).await;
    metrics::http_request(route, response.status().as_u16(), started.elapsed());
    response
}

/// Prometheus metrics of this replica (not served through the proxy: scrape each replica).
#[utoipa::path(get, path = "/metrics", responses(
    (status = 200, description = "Prometheus text format", content_type = "text/plain"),
    (status = 404, description = "this process exports no metrics", body = crate::contract::ErrorBody),
))]
async fn metrics_text(State(state): State<Arc<AppState>>) -> Response {
    match &state.metrics {
        Some(handle) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            handle.render(),
        )
            .into_response(),
        None => not_found().await.into_response(),
    }
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

/// One answer: JSON, or server-sent events (`tool_call`, `tool_result`, `token`, then `done`
/// with the response object, or `error`) when `stream` is true.
#[utoipa::path(post, path = "/ask", request_body = AskRequest, responses(
    (status = 200, description = "the answer (or an event stream)", body = crate::contract::AskResponse),
    (status = 400, description = "invalid body, or a model not allowed", body = crate::contract::ErrorBody),
    (status = 401, description = "no usable identity", body = crate::contract::ErrorBody),
    (status = 403, description = "model override below the required role", body = crate::contract::ErrorBody),
    (status = 413, description = "body too large", body = crate::contract::ErrorBody),
    (status = 415, description = "the body is not declared application/json", body = crate::contract::ErrorBody),
    (status = 422, description = "question empty or too long, or top_k outside 1..=50", body = crate::contract::ErrorBody),
    (status = 502, description = "the provider failed", body = crate::contract::ErrorBody),
    (status = 429, description = "this caller is over its own limits: answers in flight, requests per minute or tokens per hour (Retry-After)", body = crate::contract::ErrorBody),
    (status = 503, description = "too many answers in flight on this replica, or the answer was cut at shutdown (Retry-After)", body = crate::contract::ErrorBody),
    (status = 504, description = "the answer missed the deadline", body = crate::contract::ErrorBody),
))]
async fn ask(
    State(state): State<Arc<AppState>>,
    TakenHeaders(headers): TakenHeaders,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    require_json(&headers)?;
    let caller = caller(&headers, &state).await?;
    let request: AskRequest = parse_json(body, "an ask request")?;
    let question = question(request.question.as_str(), &state)?;
    if request
        .top_k
        .is_some_and(|k| !(1..=crate::retrieval::search::MAX_TOP_K).contains(&k))
    {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "top_k_out_of_range",
            format!(
                "top_k must be between 1 and {}",
                crate::retrieval::search::MAX_TOP_K
            ),
        ));
    }
    let (history, keeping) = match &request.conversation_id {
        Some(id) => {
            let (history, keeping) = super::conversations::resume(&state, &caller, id).await?;
            (history, Some(keeping))
        }
        None => (request.history, None),
    };
    let question = Question {
        model: request.model,
        top_k: request.top_k,
        history,
        ..Question::new(question)
    };
    let held = answering::admit(&state, &caller).await?;
    if request.stream {
        let keep_alive = state.settings.keep_alive;
        let events =
            answering::answer_stream(state, question, caller, held, keeping).map(|streamed| {
                Ok::<_, std::convert::Infallible>(match streamed {
                    Streamed::Event(event) => agent_event(&event),
                    Streamed::Done(response, kept) => Event::default().event("done").data(
                        String::from_utf8(answer_body(&response, kept.as_ref()))
                            .expect("the answer's JSON is UTF-8"),
                    ),
                    Streamed::Failed(error) => error_event(&error),
                })
            });
        return Ok(Sse::new(events)
            .keep_alive(KeepAlive::new().interval(keep_alive))
            .into_response());
    }
    let (response, kept) =
        answering::answer_once(&state, &question, &caller, held, keeping).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        answer_body(&response, kept.as_ref()),
    )
        .into_response())
}

/// The body of `POST /ingest`: inline documents, and/or `roots: true` for the configured
/// knowledge-base root. A path never comes from the request.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct IngestRequest {
    #[serde(default)]
    pub documents: Vec<InlineDocument>,
    /// Ingest the server's configured root (`DOCS_ROOT`) too.
    #[serde(default)]
    pub roots: bool,
}

#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InlineDocument {
    /// The name it is stored and cited under, e.g. `user/rooms.md`.
    pub source: String,
    /// Markdown, without `permissions` in its front matter.
    pub content: String,
    /// Roles or `domain:NAME`; `[]` for a public page. Required: public is never implied.
    pub permissions: Vec<String>,
}

/// Ingests inline documents and/or the configured root, as an admin (Cedar `IngestDocuments`).
#[utoipa::path(post, path = "/ingest", request_body = IngestRequest, responses(
    (status = 200, description = "the ingest summary, per source"),
    (status = 400, description = "invalid body or document name", body = crate::contract::ErrorBody),
    (status = 401, description = "no usable identity", body = crate::contract::ErrorBody),
    (status = 403, description = "not an admin", body = crate::contract::ErrorBody),
    (status = 415, description = "the body is not declared application/json", body = crate::contract::ErrorBody),
))]
async fn ingest(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    use crate::retrieval::ingest::{IngestOptions, Ingestor, NoProgress};
    use crate::retrieval::source::SourceFile;
    require_json(&headers)?;
    let caller = caller(&headers, &state).await?;
    if !state.authz.can_ingest_documents(&caller.user) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "ingesting documents needs the admin role",
        ));
    }
    let request: IngestRequest = parse_json(body, "an ingest request")?;
    if request.documents.is_empty() && !request.roots {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "nothing_to_ingest",
            "give documents, or roots: true",
        ));
    }
    let inline = request
        .documents
        .into_iter()
        .map(|d| SourceFile::inline(&d.source, d.content, d.permissions))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|message| ApiError::new(StatusCode::BAD_REQUEST, "invalid_document", message))?;
    let settings = &state.ingest;
    let ingestor = Ingestor {
        store: state.retriever.store.clone(),
        embedder: state.retriever.embedder.clone(),
        chunker: crate::retrieval::chunk::Chunker::new(settings.chunking),
    };
    let options = IngestOptions {
        roots: if request.roots {
            vec![settings.docs_root.clone()]
        } else {
            Vec::new()
        },
        prune: false,
        dry_run: false,
        require_permissions: settings.require_permissions,
        docs_root: Some(settings.docs_root.clone()),
        max_source_bytes: settings.max_source_bytes,
    };
    let written = async {
        ingestor.store.migrate(settings.embedding_dim).await?;
        ingestor
            .run_with(&options, inline, &NoProgress)
            .await
            .map_err(|e| match e {
                crate::retrieval::ingest::IngestError::Store(store) => store,
                other => crate::retrieval::store::StoreError::Query(other.to_string()),
            })
    };
    match written.await {
        Ok(summary) => Ok(Json(summary).into_response()),
        Err(error) => {
            tracing::warn!(%error, "ingest over HTTP failed");
            Err(ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "ingest_failed",
                "the knowledge base could not be written; see the server log",
            ))
        }
    }
}

fn agent_event(event: &AgentEvent) -> Event {
    let name = match event {
        AgentEvent::Token { .. } => "token",
        AgentEvent::ToolCall { .. } => "tool_call",
        AgentEvent::ToolResult { .. } => "tool_result",
        AgentEvent::Retract => "retract",
    };
    Event::default()
        .event(name)
        .data(serde_json::to_string(event).unwrap_or_default())
}

fn error_event(error: &ApiError) -> Event {
    Event::default()
        .event("error")
        .data(error.body().to_string())
}
