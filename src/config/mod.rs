//! Settings: raw key/value sources → one validated, typed [`Config`], loaded once at start-up.
//!
//! Sources, strongest first: the process environment, the `--config FILE` (a YAML mapping of the
//! same variable names), a `.env` file in the working directory, then the defaults. Every bound is
//! checked here, and every error names the variable, so nothing downstream re-validates.
//! This module knows nothing about the adapters that consume its slices.

use std::path::{Path, PathBuf};
use std::time::Duration;
use url::Url;

mod build;
mod reader;
pub mod reference;
pub mod settings;
mod sources;
#[cfg(test)]
mod tests;

pub use settings::{is_secret, API_KEY_VARIABLES, DEFAULT_MAX_QUESTION_CHARS, MAX_TOP_K};
pub use sources::{Origin, RawSettings};

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConfigError {
    #[error("{variable}: {message} (got {value:?})")]
    Invalid {
        variable: &'static str,
        value: String,
        message: String,
    },
    #[error("cannot read config file {path}: {message}")]
    File { path: PathBuf, message: String },
    #[error("no provider key is set: set OPENROUTER_API_KEY (or LLM_API_KEY) for this command")]
    MissingApiKey,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub llm: LlmConfig,
    pub embedding: EmbeddingConfig,
    pub retrieval: RetrievalConfig,
    pub chunking: ChunkingConfig,
    pub store: StoreConfig,
    pub ingest: IngestConfig,
    pub access: AccessConfig,
    pub downstream: DownstreamConfig,
    pub observability: ObservabilityConfig,
    pub server: ServerConfig,
    pub history: HistoryConfig,
}

/// The local answer log of `ask` and `chat`.
#[derive(Debug, Clone)]
pub struct HistoryConfig {
    /// `HISTORY` (default true).
    pub enabled: bool,
    /// `HISTORY_FILE` (default `history.jsonl` in the data directory).
    pub path: PathBuf,
}

#[derive(Debug, Clone)]
pub struct LlmConfig {
    pub api_key: Option<String>,
    pub base_url: Url,
    pub answer_model: String,
    /// The eval judge (`JUDGE_MODEL`); unset = the dataset's, else one of another family.
    pub judge_model: Option<String>,
    /// What one answer's loop runs under.
    pub answering: LoopSettings,
    /// How long one tool call may take before the model is told it timed out.
    pub tool_timeout: Duration,
    /// The whole of one model call, retries and waits included.
    pub timeout: Duration,
    /// Further attempts after a 429, a 5xx or a failed connection.
    pub max_retries: u32,
    /// Price overrides and additions for the cost estimate (`MODEL_PRICES`).
    pub prices: Vec<ModelPrice>,
}

/// The settings an answer's loop runs under: the slice of [`LlmConfig`] the agent borrows.
#[derive(Debug, Clone)]
pub struct LoopSettings {
    pub max_output_tokens: u32,
    pub temperature: f32,
    pub max_tool_hops: u32,
    /// Tool calls run from one model turn; the rest get an error result (`MAX_TOOL_CALLS_PER_TURN`).
    pub max_tool_calls_per_turn: usize,
    /// `MAX_TOKENS_PER_REQUEST`: one answer's model-token budget (0: none).
    pub max_tokens_per_request: u64,
    /// Longest question accepted (`MAX_QUESTION_CHARS`).
    pub max_question_chars: usize,
    /// `REQUIRE_GROUNDED_ANSWERS`: a documentation answer no passage supports becomes `idk`.
    pub require_grounded_answers: bool,
    /// `SCOPE_CHECK`: a documentation question's topic is asked first, as typed JSON, and
    /// an off-topic request is declined by the library.
    pub scope_check: bool,
    /// `SEARCH_FIRST`: a documentation question is searched before the model is called and
    /// the passages go with it (small models rarely call `search_docs` on their own).
    pub search_first: bool,
    /// `SEARCH_AGAIN`: the answer calls after the first search may search again.
    pub search_again: bool,
    /// `STABLE_TOOL_PREFIX`: every model call sends the whole tool list.
    pub stable_tool_prefix: bool,
    /// Hosts answers may link to or show images from (`LINK_ALLOWED_HOSTS`).
    pub link_allowed_hosts: Vec<String>,
}

/// US dollars per million prompt and completion tokens of one model.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelPrice {
    pub model: String,
    pub prompt_per_million: f64,
    pub completion_per_million: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EmbeddingProvider {
    OpenAi,
    Local,
}

impl EmbeddingProvider {
    pub fn as_str(self) -> &'static str {
        match self {
            EmbeddingProvider::OpenAi => "openai",
            EmbeddingProvider::Local => "local",
        }
    }
}

#[derive(Debug, Clone)]
pub struct EmbeddingConfig {
    pub provider: EmbeddingProvider,
    /// `EMBEDDING_PROVIDER` was set: the store's recorded embedder does not override it.
    pub provider_chosen: bool,
    pub model: String,
    pub dim: usize,
    pub base_url: Url,
    pub api_key: Option<String>,
    pub batch_size: usize,
    pub concurrency: usize,
    pub timeout: Duration,
    /// `EMBEDDING_QUERY_PREFIX`: put before every question embedded (e5: `query: `).
    pub query_prefix: String,
    /// `EMBEDDING_PASSAGE_PREFIX`: put before every passage embedded (e5: `passage: `).
    pub passage_prefix: String,
}

impl EmbeddingConfig {
    /// This configuration for a store built with `stored_model`: with `EMBEDDING_PROVIDER` left
    /// unset, a store built with the local embedder keeps it even when a provider key is set
    /// (setting a key to ask questions must not orphan the knowledge base just built).
    pub fn for_store(&self, stored_model: Option<&str>) -> EmbeddingConfig {
        let mut config = self.clone();
        if !self.provider_chosen && stored_model == Some(LOCAL_MODEL_NAME) {
            config.provider = EmbeddingProvider::Local;
        }
        config
    }

    /// The model name recorded in the store: the local embedder is named after itself so that
    /// switching between providers is caught as a model mismatch; prefixes are part of the
    /// name, since vectors made with and without them do not compare.
    pub fn recorded_model(&self) -> String {
        match self.provider {
            EmbeddingProvider::OpenAi => {
                with_prefixes(&self.model, &self.query_prefix, &self.passage_prefix)
            }
            EmbeddingProvider::Local => LOCAL_MODEL_NAME.to_string(),
        }
    }
}

/// `model`, or `model [query: |passage: ]` when it is used with prefixes.
pub fn with_prefixes(model: &str, query: &str, passage: &str) -> String {
    if query.is_empty() && passage.is_empty() {
        model.to_string()
    } else {
        format!("{model} [{query}|{passage}]")
    }
}

/// The prefixes instruction-tuned embedders expect: e5 models are trained with `query: ` and
/// `passage: `; other models get none unless configured.
fn default_prefixes(model: &str) -> (&'static str, &'static str) {
    let name = model.to_lowercase();
    if name.contains("e5-") || name.contains("/e5") || name.starts_with("e5") {
        ("query: ", "passage: ")
    } else {
        ("", "")
    }
}

#[derive(Debug, Clone)]
pub struct RetrievalConfig {
    pub top_k_vector: usize,
    pub top_k_keyword: usize,
    pub top_k_final: usize,
    pub rrf_k: u32,
    pub reranker: RerankerConfig,
}

#[derive(Debug, Clone)]
pub enum RerankerConfig {
    Noop,
    /// A `/rerank` endpoint (Cohere/Jina shape).
    Api {
        url: Url,
        model: String,
        api_key: Option<String>,
        timeout: Duration,
        /// Candidates scored below this are dropped.
        min_score: Option<f64>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeUnit {
    Tokens,
    Chars,
}

#[derive(Debug, Clone, Copy)]
pub struct ChunkingConfig {
    pub unit: SizeUnit,
    pub target: usize,
    pub max: usize,
}

impl Default for ChunkingConfig {
    fn default() -> Self {
        ChunkingConfig {
            unit: SizeUnit::Tokens,
            target: 350,
            max: 512,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreLocation {
    Postgres(String),
    Sqlite(PathBuf),
}

#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub location: StoreLocation,
}

#[derive(Debug, Clone)]
pub struct IngestConfig {
    pub require_permissions: bool,
    /// The knowledge-base root (`DOCS_ROOT`): source names and inherited permissions are
    /// taken from a file's canonical location under it.
    pub docs_root: PathBuf,
    /// Largest source file ingested (`MAX_SOURCE_BYTES`).
    pub max_source_bytes: u64,
}

#[derive(Debug, Clone)]
pub struct AccessConfig {
    pub require_auth: bool,
    pub eval_jwt_secret: Option<String>,
    /// `TRUST_GATEWAY_HEADER`: read `x-gateway-claims` (behind a gateway that sets it).
    pub trust_gateway_header: bool,
    /// `OIDC_JWKS_URL`, `OIDC_ISSUER`, `OIDC_AUDIENCE`: bearer tokens of an identity provider.
    pub oidc: Option<OidcSettings>,
    /// `OIDC_CLIENT_ID` and friends: the page's sign-in, only with `oidc`.
    pub sign_in: Option<SignInSettings>,
    pub model_override_min_role: String,
    pub allowed_models: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct DownstreamConfig {
    pub twin_service_url: Url,
    pub sensor_service_url: Url,
    pub timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Pretty,
    Json,
}

#[derive(Debug, Clone)]
pub struct ObservabilityConfig {
    pub observe_payloads: bool,
    pub otlp_endpoint: Option<Url>,
    pub log_format: LogFormat,
}

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub cors_origins: Vec<String>,
    /// `BIND`: where `serve` listens.
    pub bind: std::net::SocketAddr,
    /// `MAX_REQUEST_BYTES`: larger request bodies are refused with 413.
    pub max_request_bytes: usize,
    /// `REQUEST_TIMEOUT_SECONDS`: one answer's deadline (504 or an SSE `error`).
    pub request_timeout: Duration,
    /// `MAX_IN_FLIGHT`: answers at once; more are shed with 503.
    pub max_in_flight: usize,
    /// `SHUTDOWN_GRACE_SECONDS`: how long answers in flight may finish after SIGTERM.
    pub shutdown_grace: Duration,
    /// `REPLICA_NAME`: names this replica in an `x-agent-replica` response header.
    pub replica_name: Option<String>,
    /// `PUBLIC_BASE_URL`: where clients reach this service (names the MCP resource).
    pub public_base_url: Option<Url>,
    /// `MAX_IN_FLIGHT_PER_CALLER`: answers one caller may have running on this replica.
    pub max_in_flight_per_caller: usize,
    /// `REQUESTS_PER_MINUTE`: requests one caller may start on this replica per minute.
    pub requests_per_minute: u32,
    /// `TOKENS_PER_HOUR`: model tokens one caller may spend on this replica per hour.
    pub tokens_per_hour: u64,
    /// `CONVERSATIONS`: keep conversations in the store.
    pub conversations: bool,
    /// `CONVERSATION_RETENTION_DAYS`: days a conversation is kept after its last turn; 0: ever.
    pub conversation_retention_days: u32,
}

/// Shortest development-token secret accepted: 256 bits, the size of the HMAC-SHA256 key.
pub const MIN_JWT_SECRET_BYTES: usize = 32;

/// A database URL with any password replaced, safe for messages.
pub fn redact(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

/// `$XDG_DATA_HOME/crowdvision-agent/knowledge.sqlite` (or the platform's equivalent).
pub fn default_sqlite_path() -> PathBuf {
    directories::ProjectDirs::from("", "", "crowdvision-agent")
        .map(|dirs| dirs.data_dir().join("knowledge.sqlite"))
        .unwrap_or_else(|| PathBuf::from("crowdvision-agent.sqlite"))
}

/// Where tokens come from and whom they must be for (`OIDC_JWKS_URL`, `OIDC_ISSUER`,
/// `OIDC_AUDIENCE`, set together).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OidcSettings {
    pub jwks_url: url::Url,
    pub issuer: String,
    pub audience: String,
}

/// How the page signs a person in at the identity provider: a public client, authorization
/// code with PKCE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInSettings {
    pub client_id: String,
    /// `OIDC_AUTHORIZE_URL` and `OIDC_TOKEN_URL`; `None`: read from the issuer's metadata.
    pub endpoints: Option<SignInEndpoints>,
    /// Space-separated, as the authorize request carries them.
    pub scopes: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignInEndpoints {
    pub authorize: url::Url,
    pub token: url::Url,
}

/// The name the local embedder is recorded under in the store.
pub const LOCAL_MODEL_NAME: &str = "local-hash-v1";

/// `history.jsonl` in the platform's data directory, beside the default knowledge base.
pub fn default_history_path() -> PathBuf {
    default_sqlite_path().with_file_name("history.jsonl")
}
