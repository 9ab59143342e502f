//! Settings: raw key/value sources → one validated, typed [`Config`], loaded once at start-up.
//!
//! Sources, strongest first: the process environment, the `--config FILE` (a YAML mapping of the
//! same variable names), a `.env` file in the working directory, then the defaults. Every bound is
//! checked here, and every error names the variable, so nothing downstream re-validates.
//! This module knows nothing about the adapters that consume its slices.

use crate::auth::RoleHierarchy;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use url::Url;

/// Provider key variables, in order of preference (the first one set wins).
pub const API_KEY_VARIABLES: [&str; 4] = [
    "OPENROUTER_API_KEY",
    "LLM_API_KEY",
    "DEEPSEEK_API_KEY",
    "GOOGLE_API_KEY",
];

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
    /// Hosts answers may link to or show images from (`LINK_ALLOWED_HOSTS`).
    pub link_allowed_hosts: Vec<String>,
    /// How long one tool call may take before the model is told it timed out.
    pub tool_timeout: Duration,
    /// The whole of one model call, retries and waits included.
    pub timeout: Duration,
    /// Further attempts after a 429, a 5xx or a failed connection.
    pub max_retries: u32,
    /// Price overrides and additions for the cost estimate (`MODEL_PRICES`).
    pub prices: Vec<ModelPrice>,
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
        if !self.provider_chosen && stored_model == Some(crate::retrieval::embed::LOCAL_MODEL_NAME)
        {
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
            EmbeddingProvider::Local => crate::retrieval::embed::LOCAL_MODEL_NAME.to_string(),
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
    pub oidc: Option<crate::auth::oidc::OidcSettings>,
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
    /// `MAX_IN_FLIGHT_PER_CALLER`: answers one caller may have running on this replica.
    pub max_in_flight_per_caller: usize,
    /// `REQUESTS_PER_MINUTE`: requests one caller may start on this replica per minute.
    pub requests_per_minute: u32,
    /// `TOKENS_PER_HOUR`: model tokens one caller may spend on this replica per hour.
    pub tokens_per_hour: u64,
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Environment,
    File(PathBuf),
    DotEnv,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Environment => write!(f, "environment"),
            Origin::File(path) => write!(f, "{}", path.display()),
            Origin::DotEnv => write!(f, ".env"),
        }
    }
}

/// Raw settings: variable name → value and where it came from, merged from every source.
#[derive(Debug, Default, Clone)]
pub struct RawSettings(HashMap<String, (String, Origin)>);

impl RawSettings {
    /// Settings as if from the environment.
    pub fn from_pairs<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        RawSettings::from_origin(pairs, Origin::Environment)
    }

    fn from_origin<I, K, V>(pairs: I, origin: Origin) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        RawSettings(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into().to_ascii_uppercase(), (v.into(), origin.clone())))
                .collect(),
        )
    }

    /// Merges every source; a key set in a stronger source is never overwritten by a weaker one.
    pub fn gather(config_file: Option<&Path>) -> Result<Self, ConfigError> {
        let mut merged = RawSettings::from_pairs(std::env::vars());
        if let Some(path) = config_file {
            merged.fill_from(read_config_file(path)?);
        }
        let dotenv = Path::new(".env");
        if dotenv.is_file() {
            merged.fill_from(read_dotenv(dotenv)?);
        }
        Ok(merged)
    }

    fn fill_from(&mut self, weaker: RawSettings) {
        for (key, value) in weaker.0 {
            self.0.entry(key).or_insert(value);
        }
    }

    /// A set, non-blank value; blank counts as unset, as most shells' `VAR=` means "no value".
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(|(v, _)| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// Where `key`'s value came from; `None` when it is unset (its default applies).
    pub fn origin(&self, key: &str) -> Option<&Origin> {
        self.get(key)?;
        self.0.get(key).map(|(_, origin)| origin)
    }
}

/// Every setting the agent reads. A `--config` file may name only these.
pub const SETTINGS: &[&str] = &[
    "ALLOWED_MODELS",
    "ANSWER_MODEL",
    "BIND",
    "CHUNK_MAX",
    "CHUNK_SIZE_UNIT",
    "CHUNK_TARGET",
    "CORS_ORIGINS",
    "DATABASE_URL",
    "DEEPSEEK_API_KEY",
    "DOCS_ROOT",
    "EMBEDDING_API_KEY",
    "EMBEDDING_BASE_URL",
    "EMBEDDING_BATCH_SIZE",
    "EMBEDDING_CONCURRENCY",
    "EMBEDDING_DIM",
    "EMBEDDING_MODEL",
    "EMBEDDING_PASSAGE_PREFIX",
    "EMBEDDING_PROVIDER",
    "EMBEDDING_QUERY_PREFIX",
    "EMBEDDING_TIMEOUT_SECONDS",
    "EVAL_JWT_SECRET",
    "GOOGLE_API_KEY",
    "HISTORY",
    "HISTORY_FILE",
    "JUDGE_MODEL",
    "LINK_ALLOWED_HOSTS",
    "LLM_API_KEY",
    "LLM_BASE_URL",
    "LLM_MAX_RETRIES",
    "LLM_TEMPERATURE",
    "LLM_TIMEOUT_SECONDS",
    "LOG_FORMAT",
    "MAX_IN_FLIGHT",
    "MAX_IN_FLIGHT_PER_CALLER",
    "MAX_OUTPUT_TOKENS",
    "MAX_QUESTION_CHARS",
    "MAX_REQUEST_BYTES",
    "MAX_SOURCE_BYTES",
    "MAX_TOKENS_PER_REQUEST",
    "MAX_TOOL_CALLS_PER_TURN",
    "MAX_TOOL_HOPS",
    "MODEL_OVERRIDE_MIN_ROLE",
    "MODEL_PRICES",
    "OBSERVE_PAYLOADS",
    "OIDC_AUDIENCE",
    "OIDC_ISSUER",
    "OIDC_JWKS_URL",
    "OPENROUTER_API_KEY",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "REPLICA_NAME",
    "REQUESTS_PER_MINUTE",
    "REQUEST_TIMEOUT_SECONDS",
    "REQUIRE_AUTH",
    "REQUIRE_GROUNDED_ANSWERS",
    "REQUIRE_PERMISSIONS",
    "RERANKER",
    "RERANKER_API_KEY",
    "RERANKER_MIN_SCORE",
    "RERANKER_MODEL",
    "RERANKER_TIMEOUT_SECONDS",
    "RERANKER_URL",
    "RRF_K",
    "SCOPE_CHECK",
    "SEARCH_FIRST",
    "SENSOR_SERVICE_URL",
    "SHUTDOWN_GRACE_SECONDS",
    "TOKENS_PER_HOUR",
    "TOOL_TIMEOUT_SECONDS",
    "TOP_K_FINAL",
    "TOP_K_KEYWORD",
    "TOP_K_VECTOR",
    "TRUST_GATEWAY_HEADER",
    "TWIN_SERVICE_URL",
    "TWIN_TIMEOUT_SECONDS",
];

/// Whether a setting holds a secret, shown masked.
pub fn is_secret(name: &str) -> bool {
    name.ends_with("_API_KEY") || name.ends_with("_SECRET")
}

/// `.env` as settings; a line that is not `NAME=value` (or a comment) is an error naming it.
fn read_dotenv(path: &Path) -> Result<RawSettings, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut pairs = Vec::new();
    for item in dotenvy::from_read_iter(text.as_bytes()) {
        match item {
            Ok(pair) => pairs.push(pair),
            Err(error) => {
                let line = match &error {
                    dotenvy::Error::LineParse(content, _) => text
                        .lines()
                        .position(|l| l == content)
                        .map(|n| format!("line {}: ", n + 1))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                return Err(ConfigError::File {
                    path: path.to_path_buf(),
                    message: format!("{line}{error}; write NAME=value, or # for a comment"),
                });
            }
        }
    }
    Ok(RawSettings::from_origin(pairs, Origin::DotEnv))
}

fn read_config_file(path: &Path) -> Result<RawSettings, ConfigError> {
    let file_error = |message: String| ConfigError::File {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
    let mapping: HashMap<String, serde_yaml::Value> =
        serde_yaml::from_str(&text).map_err(|e| file_error(e.to_string()))?;
    let mut pairs = Vec::new();
    for (key, value) in mapping {
        if !SETTINGS.contains(&key.to_ascii_uppercase().as_str()) {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with(key.as_str()))
                .map(|n| format!("line {}: ", n + 1))
                .unwrap_or_default();
            return Err(file_error(format!(
                "{line}unknown setting {key} (the settings are listed in `crowdvision-agent \
                 doctor` and documentation/developer/configuration.md)"
            )));
        }
        let text = match value {
            serde_yaml::Value::String(s) => s,
            serde_yaml::Value::Number(n) => n.to_string(),
            serde_yaml::Value::Bool(b) => b.to_string(),
            serde_yaml::Value::Sequence(items) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect::<Vec<_>>()
                .join(","),
            serde_yaml::Value::Null => continue,
            _ => return Err(file_error(format!("{key}: expected a scalar or a list"))),
        };
        pairs.push((key, text));
    }
    Ok(RawSettings::from_origin(
        pairs,
        Origin::File(path.to_path_buf()),
    ))
}

/// Reads one variable with a default, parsing and checking it; errors name the variable. Every
/// value read is noted as it takes effect (given or default), for `doctor`.
struct Reader<'a> {
    raw: &'a RawSettings,
    effective: std::cell::RefCell<std::collections::BTreeMap<&'static str, String>>,
}

impl Reader<'_> {
    fn note(&self, var: &'static str, value: impl Into<String>) {
        self.effective.borrow_mut().insert(var, value.into());
    }

    fn string(&self, var: &'static str, default: &str) -> String {
        let value = self.raw.get(var).unwrap_or(default).to_string();
        self.note(var, value.as_str());
        value
    }

    /// A text put before embedded inputs; `none` turns a default off.
    fn prefix(&self, var: &'static str, default: &str) -> String {
        let value = match self.raw.get(var) {
            Some("none") => String::new(),
            Some(value) => value.to_string(),
            None => default.to_string(),
        };
        self.note(var, format!("{value:?}"));
        value
    }

    fn optional(&self, var: &'static str) -> Option<String> {
        let value = self.raw.get(var).map(str::to_string);
        self.note(var, value.clone().unwrap_or_else(|| "(unset)".to_string()));
        value
    }

    fn number<T>(&self, var: &'static str, default: T, min: T, max: T) -> Result<T, ConfigError>
    where
        T: std::str::FromStr + PartialOrd + Copy + std::fmt::Display,
    {
        let Some(text) = self.raw.get(var) else {
            self.note(var, default.to_string());
            return Ok(default);
        };
        let value: T = text
            .parse()
            .map_err(|_| invalid(var, text, "not a number"))?;
        // Written so that NaN, which compares false with everything, is refused.
        if !(value >= min && value <= max) {
            return Err(invalid(
                var,
                text,
                &format!("must be between {min} and {max}"),
            ));
        }
        self.note(var, value.to_string());
        Ok(value)
    }

    fn boolean(&self, var: &'static str, default: bool) -> Result<bool, ConfigError> {
        let value = match self.raw.get(var).map(str::to_ascii_lowercase).as_deref() {
            None => default,
            Some("1" | "true" | "yes" | "on") => true,
            Some("0" | "false" | "no" | "off") => false,
            Some(other) => return Err(invalid(var, other, "expected true or false")),
        };
        self.note(var, value.to_string());
        Ok(value)
    }

    fn http_url(&self, var: &'static str, default: &str) -> Result<Url, ConfigError> {
        let text = self.raw.get(var).unwrap_or(default);
        let url = parse_http_url(var, text)?;
        self.note(var, url.as_str());
        Ok(url)
    }

    fn list(&self, var: &'static str) -> Vec<String> {
        let values: Vec<String> = self
            .raw
            .get(var)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        self.note(var, values.join(","));
        values
    }
}

/// Longest question by default (`MAX_QUESTION_CHARS`); the OpenAPI document states it too.
pub const DEFAULT_MAX_QUESTION_CHARS: usize = 4000;

/// Shortest development-token secret accepted: 256 bits, the size of the HMAC-SHA256 key.
pub const MIN_JWT_SECRET_BYTES: usize = 32;

fn invalid(variable: &'static str, value: &str, message: &str) -> ConfigError {
    ConfigError::Invalid {
        variable,
        value: value.to_string(),
        message: message.to_string(),
    }
}

fn parse_http_url(var: &'static str, text: &str) -> Result<Url, ConfigError> {
    let url = Url::parse(text).map_err(|e| invalid(var, text, &format!("not a URL: {e}")))?;
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(url),
        "http" | "https" => Err(invalid(var, text, "the URL has no host")),
        _ => Err(invalid(var, text, "the scheme must be http or https")),
    }
}

impl Config {
    /// Loads from the process environment, the optional config file and `.env`.
    pub fn load(config_file: Option<&Path>) -> Result<Config, ConfigError> {
        Config::from_raw(&RawSettings::gather(config_file)?)
    }

    pub fn from_raw(raw: &RawSettings) -> Result<Config, ConfigError> {
        Config::read(raw).map(|(config, _)| config)
    }

    /// The configuration and the effective value of every setting it read (given or default),
    /// by name, as text.
    pub fn read(
        raw: &RawSettings,
    ) -> Result<(Config, std::collections::BTreeMap<&'static str, String>), ConfigError> {
        let r = Reader {
            raw,
            effective: Default::default(),
        };
        let config = Config::build(&r)?;
        Ok((config, r.effective.into_inner()))
    }

    fn build(r: &Reader<'_>) -> Result<Config, ConfigError> {
        let api_key = API_KEY_VARIABLES.iter().find_map(|v| r.optional(v));
        let llm = LlmConfig {
            api_key: api_key.clone(),
            base_url: r.http_url("LLM_BASE_URL", "https://openrouter.ai/api/v1")?,
            answer_model: r.string("ANSWER_MODEL", "openai/gpt-4o-mini"),
            judge_model: r.optional("JUDGE_MODEL"),
            max_output_tokens: r.number("MAX_OUTPUT_TOKENS", 600, 1, 1_000_000)?,
            temperature: r.number("LLM_TEMPERATURE", 0.1, 0.0, 2.0)?,
            max_tool_hops: r.number("MAX_TOOL_HOPS", 6, 1, 20)?,
            max_tool_calls_per_turn: r.number("MAX_TOOL_CALLS_PER_TURN", 8, 1, 64)?,
            max_tokens_per_request: r.number("MAX_TOKENS_PER_REQUEST", 100_000, 0, u64::MAX / 2)?,
            max_question_chars: r.number(
                "MAX_QUESTION_CHARS",
                DEFAULT_MAX_QUESTION_CHARS,
                1,
                1_000_000,
            )?,
            require_grounded_answers: r.boolean("REQUIRE_GROUNDED_ANSWERS", true)?,
            scope_check: r.boolean("SCOPE_CHECK", true)?,
            search_first: r.boolean("SEARCH_FIRST", true)?,
            link_allowed_hosts: r.list("LINK_ALLOWED_HOSTS"),
            tool_timeout: Duration::from_secs_f64(r.number(
                "TOOL_TIMEOUT_SECONDS",
                15.0,
                0.1,
                300.0,
            )?),
            timeout: Duration::from_secs_f64(r.number(
                "LLM_TIMEOUT_SECONDS",
                120.0,
                0.1,
                3600.0,
            )?),
            max_retries: r.number("LLM_MAX_RETRIES", 3, 0, 10)?,
            prices: Config::prices(r)?,
        };
        let embedding = Config::embedding(r, &llm)?;
        let retrieval = RetrievalConfig {
            top_k_vector: r.number("TOP_K_VECTOR", 20, 1, 1000)?,
            top_k_keyword: r.number("TOP_K_KEYWORD", 20, 1, 1000)?,
            top_k_final: r.number("TOP_K_FINAL", 6, 1, 100)?,
            rrf_k: r.number("RRF_K", 60, 1, 10_000)?,
            reranker: Config::reranker(r, &llm)?,
        };
        let chunking = Config::chunking(r)?;
        let access = Config::access(r)?;
        Ok(Config {
            history: HistoryConfig {
                enabled: r.boolean("HISTORY", true)?,
                path: r
                    .optional("HISTORY_FILE")
                    .map_or_else(crate::history::default_path, PathBuf::from),
            },
            llm,
            embedding,
            retrieval,
            chunking,
            store: StoreConfig {
                location: Config::store_location(r)?,
            },
            ingest: IngestConfig {
                require_permissions: r.boolean("REQUIRE_PERMISSIONS", false)?,
                docs_root: PathBuf::from(r.string("DOCS_ROOT", "documentation")),
                max_source_bytes: r.number("MAX_SOURCE_BYTES", 5 * 1024 * 1024, 1, 1 << 30)?,
            },
            access,
            downstream: DownstreamConfig {
                twin_service_url: r.http_url("TWIN_SERVICE_URL", "http://localhost:4010")?,
                sensor_service_url: r.http_url("SENSOR_SERVICE_URL", "http://localhost:4010")?,
                timeout: Duration::from_secs_f64(r.number(
                    "TWIN_TIMEOUT_SECONDS",
                    5.0,
                    0.1,
                    300.0,
                )?),
            },
            observability: Config::observability(r)?,
            server: ServerConfig {
                cors_origins: r.list("CORS_ORIGINS"),
                bind: {
                    let text = r.string("BIND", "127.0.0.1:3000");
                    text.parse().map_err(|_| {
                        invalid("BIND", &text, "expected HOST:PORT, e.g. 127.0.0.1:3000")
                    })?
                },
                max_request_bytes: r.number(
                    "MAX_REQUEST_BYTES",
                    64 * 1024,
                    1024,
                    16 * 1024 * 1024,
                )?,
                request_timeout: Duration::from_secs_f64(r.number(
                    "REQUEST_TIMEOUT_SECONDS",
                    120.0,
                    0.1,
                    3600.0,
                )?),
                max_in_flight: r.number("MAX_IN_FLIGHT", 64, 1, 100_000)?,
                shutdown_grace: Duration::from_secs_f64(r.number(
                    "SHUTDOWN_GRACE_SECONDS",
                    30.0,
                    0.0,
                    3600.0,
                )?),
                replica_name: r.optional("REPLICA_NAME"),
                max_in_flight_per_caller: r.number("MAX_IN_FLIGHT_PER_CALLER", 4, 0, 100_000)?,
                requests_per_minute: r.number("REQUESTS_PER_MINUTE", 60, 0, 10_000)?,
                tokens_per_hour: r.number("TOKENS_PER_HOUR", 1_000_000, 0, u64::MAX / 2)?,
            },
        })
    }

    /// For commands that talk to the provider: fails at start when no key is set.
    pub fn require_api_key(&self) -> Result<&str, ConfigError> {
        self.llm
            .api_key
            .as_deref()
            .ok_or(ConfigError::MissingApiKey)
    }

    fn embedding(r: &Reader, llm: &LlmConfig) -> Result<EmbeddingConfig, ConfigError> {
        let default_provider = if llm.api_key.is_some() {
            "openai"
        } else {
            "local"
        };
        let provider_chosen = r.raw.get("EMBEDDING_PROVIDER").is_some();
        let provider_text = r.string("EMBEDDING_PROVIDER", default_provider);
        let provider = match provider_text.to_ascii_lowercase().as_str() {
            "openai" => EmbeddingProvider::OpenAi,
            "local" => EmbeddingProvider::Local,
            _ => {
                return Err(invalid(
                    "EMBEDDING_PROVIDER",
                    &provider_text,
                    "expected openai or local",
                ))
            }
        };
        let base_url = match r.optional("EMBEDDING_BASE_URL") {
            Some(text) => parse_http_url("EMBEDDING_BASE_URL", &text)?,
            None => llm.base_url.clone(),
        };
        let api_key = r
            .optional("EMBEDDING_API_KEY")
            .or_else(|| llm.api_key.clone());
        if provider == EmbeddingProvider::OpenAi && api_key.is_none() {
            return Err(invalid(
                "EMBEDDING_PROVIDER",
                &provider_text,
                "openai embeddings need a provider key (OPENROUTER_API_KEY); use local to run offline",
            ));
        }
        let model = r.string("EMBEDDING_MODEL", "openai/text-embedding-3-small");
        let (query_prefix, passage_prefix) = default_prefixes(&model);
        Ok(EmbeddingConfig {
            provider,
            provider_chosen,
            query_prefix: r.prefix("EMBEDDING_QUERY_PREFIX", query_prefix),
            passage_prefix: r.prefix("EMBEDDING_PASSAGE_PREFIX", passage_prefix),
            model,
            dim: r.number("EMBEDDING_DIM", 768, 8, 16_000)?,
            base_url,
            api_key,
            batch_size: r.number("EMBEDDING_BATCH_SIZE", 64, 1, 2048)?,
            concurrency: r.number("EMBEDDING_CONCURRENCY", 4, 1, 64)?,
            timeout: Duration::from_secs_f64(r.number(
                "EMBEDDING_TIMEOUT_SECONDS",
                30.0,
                0.1,
                600.0,
            )?),
        })
    }

    fn reranker(r: &Reader, llm: &LlmConfig) -> Result<RerankerConfig, ConfigError> {
        let name = r.string("RERANKER", "noop").to_ascii_lowercase();
        match name.as_str() {
            "noop" => Ok(RerankerConfig::Noop),
            "api" => {
                let model = r.optional("RERANKER_MODEL").ok_or_else(|| {
                    invalid(
                        "RERANKER_MODEL",
                        "",
                        "RERANKER=api needs the reranking model's name",
                    )
                })?;
                let url = match r.optional("RERANKER_URL") {
                    Some(text) => parse_http_url("RERANKER_URL", &text)?,
                    None => llm.base_url.clone(),
                };
                let min_score = match r.optional("RERANKER_MIN_SCORE") {
                    Some(_) => Some(r.number("RERANKER_MIN_SCORE", 0.0, -1000.0, 1000.0)?),
                    None => None,
                };
                Ok(RerankerConfig::Api {
                    url,
                    model,
                    api_key: r
                        .optional("RERANKER_API_KEY")
                        .or_else(|| llm.api_key.clone()),
                    timeout: Duration::from_secs_f64(r.number(
                        "RERANKER_TIMEOUT_SECONDS",
                        10.0,
                        0.1,
                        300.0,
                    )?),
                    min_score,
                })
            }
            _ => Err(invalid("RERANKER", &name, "expected noop or api")),
        }
    }

    fn chunking(r: &Reader) -> Result<ChunkingConfig, ConfigError> {
        let unit_text = r.string("CHUNK_SIZE_UNIT", "tokens");
        let unit = match unit_text.to_ascii_lowercase().as_str() {
            "tokens" => SizeUnit::Tokens,
            "chars" | "characters" => SizeUnit::Chars,
            _ => {
                return Err(invalid(
                    "CHUNK_SIZE_UNIT",
                    &unit_text,
                    "expected tokens or chars",
                ))
            }
        };
        let defaults = ChunkingConfig::default();
        let (default_target, default_max) = match unit {
            SizeUnit::Tokens => (defaults.target, defaults.max),
            SizeUnit::Chars => (1200, 1500),
        };
        let target = r.number("CHUNK_TARGET", default_target, 16, 100_000)?;
        let max = r.number("CHUNK_MAX", default_max.max(target), 16, 100_000)?;
        if max < target {
            return Err(invalid(
                "CHUNK_MAX",
                &max.to_string(),
                &format!("must be at least CHUNK_TARGET ({target})"),
            ));
        }
        Ok(ChunkingConfig { unit, target, max })
    }

    fn store_location(r: &Reader) -> Result<StoreLocation, ConfigError> {
        let Some(url) = r.optional("DATABASE_URL") else {
            return Ok(StoreLocation::Sqlite(default_sqlite_path()));
        };
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Url::parse(&url).map_err(|e| invalid("DATABASE_URL", &redact(&url), &e.to_string()))?;
            return Ok(StoreLocation::Postgres(url));
        }
        if let Some(path) = url
            .strip_prefix("sqlite://")
            .or(url.strip_prefix("sqlite:"))
        {
            if path.is_empty() {
                return Err(invalid("DATABASE_URL", &url, "the sqlite URL has no path"));
            }
            return Ok(StoreLocation::Sqlite(PathBuf::from(path)));
        }
        Err(invalid(
            "DATABASE_URL",
            &redact(&url),
            "expected postgres://… or sqlite://PATH",
        ))
    }

    /// `MODEL_PRICES`: `model=prompt,completion` entries separated by `;`, in US dollars per
    /// million tokens (model names may hold `/` and `:`, never `=` or `;`).
    fn prices(r: &Reader) -> Result<Vec<ModelPrice>, ConfigError> {
        let Some(text) = r.optional("MODEL_PRICES") else {
            return Ok(Vec::new());
        };
        let expected =
            "expected model=prompt,completion entries separated by ; (USD per million tokens)";
        text.split(';')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                let (model, figures) = entry
                    .split_once('=')
                    .ok_or_else(|| invalid("MODEL_PRICES", &text, expected))?;
                let (prompt, completion) = figures
                    .split_once(',')
                    .ok_or_else(|| invalid("MODEL_PRICES", &text, expected))?;
                let figure = |t: &str| {
                    t.trim()
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite() && *v >= 0.0)
                        .ok_or_else(|| invalid("MODEL_PRICES", &text, expected))
                };
                Ok(ModelPrice {
                    model: model.trim().to_string(),
                    prompt_per_million: figure(prompt)?,
                    completion_per_million: figure(completion)?,
                })
            })
            .collect()
    }

    fn access(r: &Reader) -> Result<AccessConfig, ConfigError> {
        let min_role = r.string("MODEL_OVERRIDE_MIN_ROLE", "business_admin");
        let roles = RoleHierarchy::shipped();
        if !roles.is_known(&min_role) {
            let known: Vec<&str> = roles.names().collect();
            return Err(invalid(
                "MODEL_OVERRIDE_MIN_ROLE",
                &min_role,
                &format!("unknown role; known roles: {}", known.join(", ")),
            ));
        }
        let eval_jwt_secret = r.optional("EVAL_JWT_SECRET");
        if eval_jwt_secret
            .as_ref()
            .is_some_and(|s| s.len() < MIN_JWT_SECRET_BYTES)
        {
            return Err(invalid(
                "EVAL_JWT_SECRET",
                "(hidden)",
                &format!(
                    "must be at least {MIN_JWT_SECRET_BYTES} bytes (for example `openssl rand -hex 32`)"
                ),
            ));
        }
        Ok(AccessConfig {
            require_auth: r.boolean("REQUIRE_AUTH", true)?,
            eval_jwt_secret,
            trust_gateway_header: r.boolean("TRUST_GATEWAY_HEADER", true)?,
            oidc: Config::oidc(r)?,
            model_override_min_role: min_role,
            allowed_models: r.list("ALLOWED_MODELS"),
        })
    }

    /// The three OIDC settings, set together or not at all.
    fn oidc(r: &Reader) -> Result<Option<crate::auth::oidc::OidcSettings>, ConfigError> {
        let url = r.optional("OIDC_JWKS_URL");
        let issuer = r.optional("OIDC_ISSUER");
        let audience = r.optional("OIDC_AUDIENCE");
        match (url, issuer, audience) {
            (None, None, None) => Ok(None),
            (Some(url), Some(issuer), Some(audience)) => {
                Ok(Some(crate::auth::oidc::OidcSettings {
                    jwks_url: parse_http_url("OIDC_JWKS_URL", &url)?,
                    issuer,
                    audience,
                }))
            }
            (url, issuer, _) => {
                let missing = if url.is_none() {
                    "OIDC_JWKS_URL"
                } else if issuer.is_none() {
                    "OIDC_ISSUER"
                } else {
                    "OIDC_AUDIENCE"
                };
                Err(invalid(
                    missing,
                    "(unset)",
                    "OIDC_JWKS_URL, OIDC_ISSUER and OIDC_AUDIENCE are set together",
                ))
            }
        }
    }

    fn observability(r: &Reader) -> Result<ObservabilityConfig, ConfigError> {
        let format_text = r.string("LOG_FORMAT", "pretty");
        let log_format = match format_text.to_ascii_lowercase().as_str() {
            "pretty" => LogFormat::Pretty,
            "json" => LogFormat::Json,
            _ => {
                return Err(invalid(
                    "LOG_FORMAT",
                    &format_text,
                    "expected pretty or json",
                ))
            }
        };
        let otlp_endpoint = match r.optional("OTEL_EXPORTER_OTLP_ENDPOINT") {
            Some(text) => Some(parse_http_url("OTEL_EXPORTER_OTLP_ENDPOINT", &text)?),
            None => None,
        };
        Ok(ObservabilityConfig {
            observe_payloads: r.boolean("OBSERVE_PAYLOADS", false)?,
            otlp_endpoint,
            log_format,
        })
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_setting_read_is_listed_and_every_listed_one_is_read_somewhere() {
        let (_, effective) = Config::read(&RawSettings::default()).unwrap();
        for name in effective.keys() {
            assert!(
                SETTINGS.contains(name),
                "{name} is read but not in SETTINGS"
            );
        }
        let source = include_str!("config.rs");
        for name in SETTINGS {
            let quoted = format!("\"{name}\"");
            assert!(
                source.matches(&quoted).count() >= 2,
                "{name} is listed but never read"
            );
        }
    }

    fn load(pairs: &[(&str, &str)]) -> Result<Config, ConfigError> {
        Config::from_raw(&RawSettings::from_pairs(pairs.iter().copied()))
    }

    fn invalid_variable(pairs: &[(&str, &str)]) -> &'static str {
        match load(pairs) {
            Err(ConfigError::Invalid { variable, .. }) => variable,
            other => panic!("expected an invalid-variable error, got {other:?}"),
        }
    }

    #[test]
    fn e5_models_get_their_prefixes_and_the_store_records_them() {
        let openai = [
            ("EMBEDDING_PROVIDER", "openai"),
            ("OPENROUTER_API_KEY", "k"),
        ];
        let e5 = load(&[
            openai[0],
            openai[1],
            ("EMBEDDING_MODEL", "multilingual-e5-small-q4"),
        ])
        .unwrap()
        .embedding;
        assert_eq!(
            (e5.query_prefix.as_str(), e5.passage_prefix.as_str()),
            ("query: ", "passage: ")
        );
        assert_eq!(
            e5.recorded_model(),
            "multilingual-e5-small-q4 [query: |passage: ]"
        );
        let plain = load(&[openai[0], openai[1]]).unwrap().embedding;
        assert_eq!(plain.query_prefix, "");
        assert_eq!(plain.recorded_model(), "openai/text-embedding-3-small");
        let off = load(&[
            openai[0],
            openai[1],
            ("EMBEDDING_MODEL", "intfloat/e5-base"),
            ("EMBEDDING_QUERY_PREFIX", "none"),
            ("EMBEDDING_PASSAGE_PREFIX", "none"),
        ])
        .unwrap()
        .embedding;
        assert_eq!(off.recorded_model(), "intfloat/e5-base");
    }

    #[test]
    fn a_key_alone_keeps_the_local_embedder_of_a_store_built_with_it() {
        let local = crate::retrieval::embed::LOCAL_MODEL_NAME;
        let keyed = load(&[("LLM_API_KEY", "k")]).unwrap().embedding;
        assert_eq!(keyed.provider, EmbeddingProvider::OpenAi);
        assert_eq!(
            keyed.for_store(Some(local)).provider,
            EmbeddingProvider::Local
        );
        // A new store, or one built with a named model, gets the configured embedder.
        assert_eq!(keyed.for_store(None).provider, EmbeddingProvider::OpenAi);
        assert_eq!(
            keyed
                .for_store(Some("openai/text-embedding-3-small"))
                .provider,
            EmbeddingProvider::OpenAi
        );
        // Chosen explicitly, the provider is never overridden (the mismatch is then reported).
        let chosen = load(&[("LLM_API_KEY", "k"), ("EMBEDDING_PROVIDER", "openai")])
            .unwrap()
            .embedding;
        assert_eq!(
            chosen.for_store(Some(local)).provider,
            EmbeddingProvider::OpenAi
        );
    }

    #[test]
    fn oidc_settings_come_together_and_serve_binds_loopback() {
        let config = load(&[]).unwrap();
        assert_eq!(config.server.bind.to_string(), "127.0.0.1:3000");
        assert!(config.access.trust_gateway_header && config.access.oidc.is_none());
        let all = load(&[
            ("OIDC_JWKS_URL", "https://login.example/jwks"),
            ("OIDC_ISSUER", "https://login.example"),
            ("OIDC_AUDIENCE", "agent"),
            ("TRUST_GATEWAY_HEADER", "false"),
        ])
        .unwrap();
        assert_eq!(all.access.oidc.unwrap().audience, "agent");
        assert!(!all.access.trust_gateway_header);
        let error = load(&[("OIDC_JWKS_URL", "https://login.example/jwks")])
            .unwrap_err()
            .to_string();
        assert!(error.contains("OIDC_ISSUER"), "{error}");
        let error = load(&[
            ("OIDC_JWKS_URL", "ftp://x"),
            ("OIDC_ISSUER", "i"),
            ("OIDC_AUDIENCE", "a"),
        ])
        .unwrap_err()
        .to_string();
        assert!(error.contains("OIDC_JWKS_URL"), "{error}");
    }

    #[test]
    fn defaults_load_without_any_variable() {
        let config = load(&[]).unwrap();
        assert_eq!(config.llm.answer_model, "openai/gpt-4o-mini");
        assert_eq!(config.llm.max_tool_hops, 6);
        assert_eq!(config.embedding.dim, 768);
        assert_eq!(config.embedding.provider, EmbeddingProvider::Local);
        assert_eq!(config.retrieval.top_k_final, 6);
        assert_eq!(config.retrieval.rrf_k, 60);
        assert!(config.access.require_auth);
        assert!(matches!(config.store.location, StoreLocation::Sqlite(_)));
        assert_eq!(config.downstream.timeout, Duration::from_secs(5));
    }

    #[test]
    fn key_aliases_apply_in_order() {
        let config = load(&[("GOOGLE_API_KEY", "g"), ("LLM_API_KEY", "l")]).unwrap();
        assert_eq!(config.llm.api_key.as_deref(), Some("l"));
        assert_eq!(config.embedding.provider, EmbeddingProvider::OpenAi);
        let config = load(&[("DEEPSEEK_API_KEY", "d"), ("OPENROUTER_API_KEY", "o")]).unwrap();
        assert_eq!(config.llm.api_key.as_deref(), Some("o"));
    }

    #[test]
    fn missing_key_is_an_error_only_when_asked_for() {
        let config = load(&[]).unwrap();
        assert_eq!(config.require_api_key(), Err(ConfigError::MissingApiKey));
    }

    #[test]
    fn temperature_out_of_bounds() {
        assert_eq!(
            invalid_variable(&[("LLM_TEMPERATURE", "2.5")]),
            "LLM_TEMPERATURE"
        );
        assert_eq!(
            invalid_variable(&[("LLM_TEMPERATURE", "-0.1")]),
            "LLM_TEMPERATURE"
        );
        assert_eq!(
            invalid_variable(&[("LLM_TEMPERATURE", "warm")]),
            "LLM_TEMPERATURE"
        );
    }

    #[test]
    fn a_short_token_secret_is_refused_without_echoing_it() {
        let error = load(&[("EVAL_JWT_SECRET", "abc")]).unwrap_err().to_string();
        assert!(error.contains("EVAL_JWT_SECRET"), "{error}");
        assert!(error.contains("at least 32 bytes"), "{error}");
        assert!(!error.contains("abc"), "{error}");
        assert!(load(&[("EVAL_JWT_SECRET", &"k".repeat(32))]).is_ok());
    }

    #[test]
    fn not_a_number_is_refused() {
        for value in ["NaN", "nan", "inf", "-inf"] {
            assert_eq!(
                invalid_variable(&[("LLM_TEMPERATURE", value)]),
                "LLM_TEMPERATURE",
                "{value}"
            );
        }
        assert_eq!(
            invalid_variable(&[("TOOL_TIMEOUT_SECONDS", "NaN")]),
            "TOOL_TIMEOUT_SECONDS"
        );
    }

    #[test]
    fn tool_hops_out_of_bounds() {
        assert_eq!(invalid_variable(&[("MAX_TOOL_HOPS", "0")]), "MAX_TOOL_HOPS");
        assert_eq!(
            invalid_variable(&[("MAX_TOOL_HOPS", "21")]),
            "MAX_TOOL_HOPS"
        );
        assert_eq!(
            load(&[("MAX_TOOL_HOPS", "20")]).unwrap().llm.max_tool_hops,
            20
        );
    }

    #[test]
    fn retrieval_sizes_must_be_positive() {
        for var in ["TOP_K_VECTOR", "TOP_K_KEYWORD", "TOP_K_FINAL", "RRF_K"] {
            assert_eq!(invalid_variable(&[(var, "0")]), var);
            assert_eq!(invalid_variable(&[(var, "many")]), var);
        }
    }

    #[test]
    fn output_tokens_and_dimension_bounds() {
        assert_eq!(
            invalid_variable(&[("MAX_OUTPUT_TOKENS", "0")]),
            "MAX_OUTPUT_TOKENS"
        );
        assert_eq!(invalid_variable(&[("EMBEDDING_DIM", "3")]), "EMBEDDING_DIM");
        assert_eq!(
            invalid_variable(&[("EMBEDDING_DIM", "1.5")]),
            "EMBEDDING_DIM"
        );
    }

    #[test]
    fn unknown_override_role_is_refused() {
        assert_eq!(
            invalid_variable(&[("MODEL_OVERRIDE_MIN_ROLE", "root")]),
            "MODEL_OVERRIDE_MIN_ROLE"
        );
        let config = load(&[("MODEL_OVERRIDE_MIN_ROLE", "admin")]).unwrap();
        assert_eq!(config.access.model_override_min_role, "admin");
    }

    #[test]
    fn service_urls_need_http_scheme() {
        assert_eq!(
            invalid_variable(&[("TWIN_SERVICE_URL", "ftp://x")]),
            "TWIN_SERVICE_URL"
        );
        assert_eq!(
            invalid_variable(&[("SENSOR_SERVICE_URL", "nonsense")]),
            "SENSOR_SERVICE_URL"
        );
        assert_eq!(
            invalid_variable(&[("LLM_BASE_URL", "file:///etc")]),
            "LLM_BASE_URL"
        );
        assert_eq!(
            invalid_variable(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "grpc://x")]),
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        );
    }

    #[test]
    fn timeout_bounds() {
        assert_eq!(
            invalid_variable(&[("TWIN_TIMEOUT_SECONDS", "0")]),
            "TWIN_TIMEOUT_SECONDS"
        );
        let config = load(&[("TWIN_TIMEOUT_SECONDS", "2.5")]).unwrap();
        assert_eq!(config.downstream.timeout, Duration::from_millis(2500));
    }

    #[test]
    fn enumerations_are_checked() {
        assert_eq!(invalid_variable(&[("LOG_FORMAT", "xml")]), "LOG_FORMAT");
        assert_eq!(invalid_variable(&[("RERANKER", "magic")]), "RERANKER");
        assert_eq!(
            invalid_variable(&[("EMBEDDING_PROVIDER", "magic")]),
            "EMBEDDING_PROVIDER"
        );
        assert_eq!(
            invalid_variable(&[("CHUNK_SIZE_UNIT", "words")]),
            "CHUNK_SIZE_UNIT"
        );
        assert_eq!(
            invalid_variable(&[("REQUIRE_AUTH", "maybe")]),
            "REQUIRE_AUTH"
        );
        assert_eq!(
            invalid_variable(&[("OBSERVE_PAYLOADS", "2")]),
            "OBSERVE_PAYLOADS"
        );
    }

    #[test]
    fn api_reranker_needs_a_model_and_checks_its_bounds() {
        assert_eq!(invalid_variable(&[("RERANKER", "api")]), "RERANKER_MODEL");
        assert_eq!(
            invalid_variable(&[
                ("RERANKER", "api"),
                ("RERANKER_MODEL", "m"),
                ("RERANKER_URL", "x")
            ]),
            "RERANKER_URL"
        );
        assert_eq!(
            invalid_variable(&[
                ("RERANKER", "api"),
                ("RERANKER_MODEL", "m"),
                ("RERANKER_MIN_SCORE", "high")
            ]),
            "RERANKER_MIN_SCORE"
        );
        let config = load(&[
            ("RERANKER", "api"),
            ("RERANKER_MODEL", "m"),
            ("RERANKER_MIN_SCORE", "0.2"),
        ])
        .unwrap();
        assert!(
            matches!(config.retrieval.reranker, RerankerConfig::Api { min_score: Some(s), .. } if s == 0.2)
        );
    }

    #[test]
    fn openai_embeddings_without_key_are_refused() {
        assert_eq!(
            invalid_variable(&[("EMBEDDING_PROVIDER", "openai")]),
            "EMBEDDING_PROVIDER"
        );
    }

    #[test]
    fn chunk_max_below_target_is_refused() {
        assert_eq!(
            invalid_variable(&[("CHUNK_TARGET", "400"), ("CHUNK_MAX", "300")]),
            "CHUNK_MAX"
        );
        assert_eq!(invalid_variable(&[("CHUNK_TARGET", "2")]), "CHUNK_TARGET");
    }

    #[test]
    fn database_url_selects_the_store() {
        let config = load(&[("DATABASE_URL", "postgres://u:p@localhost/db")]).unwrap();
        assert!(matches!(config.store.location, StoreLocation::Postgres(_)));
        let config = load(&[("DATABASE_URL", "sqlite:///tmp/kb.sqlite")]).unwrap();
        assert_eq!(
            config.store.location,
            StoreLocation::Sqlite(PathBuf::from("/tmp/kb.sqlite"))
        );
        assert_eq!(
            invalid_variable(&[("DATABASE_URL", "mysql://x")]),
            "DATABASE_URL"
        );
    }

    #[test]
    fn invalid_database_url_message_hides_the_password() {
        let err = load(&[("DATABASE_URL", "mongodb://user:secret@host/db")]).unwrap_err();
        assert!(!err.to_string().contains("secret"), "{err}");
    }

    #[test]
    fn model_prices_are_parsed_and_checked() {
        let config = Config::from_raw(&RawSettings::from_pairs([(
            "MODEL_PRICES",
            "local/qwen:free=0,0; openai/gpt-4o-mini = 0.2 , 0.7",
        )]))
        .unwrap();
        assert_eq!(config.llm.prices.len(), 2);
        assert_eq!(config.llm.prices[0].model, "local/qwen:free");
        assert_eq!(config.llm.prices[1].completion_per_million, 0.7);
        for bad in ["gpt=1", "gpt=a,b", "gpt=-1,2", "1,2"] {
            let error =
                Config::from_raw(&RawSettings::from_pairs([("MODEL_PRICES", bad)])).unwrap_err();
            assert!(error.to_string().contains("MODEL_PRICES"), "{bad}");
        }
    }

    #[test]
    fn lists_are_split_on_commas() {
        let config = load(&[
            ("ALLOWED_MODELS", " a/b , c/d,,"),
            ("CORS_ORIGINS", "http://x"),
        ])
        .unwrap();
        assert_eq!(config.access.allowed_models, ["a/b", "c/d"]);
        assert_eq!(config.server.cors_origins, ["http://x"]);
    }

    #[test]
    fn blank_values_count_as_unset() {
        let config = load(&[("ANSWER_MODEL", "  "), ("OPENROUTER_API_KEY", "")]).unwrap();
        assert_eq!(config.llm.answer_model, "openai/gpt-4o-mini");
        assert!(config.llm.api_key.is_none());
    }

    #[test]
    fn config_file_is_weaker_than_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.yaml");
        std::fs::write(
            &path,
            "ANSWER_MODEL: from/file\nmax_tool_hops: 3\nallowed_models: [a, b]\n",
        )
        .unwrap();
        let mut merged = RawSettings::from_pairs([("ANSWER_MODEL", "from/env")]);
        merged.fill_from(read_config_file(&path).unwrap());
        let config = Config::from_raw(&merged).unwrap();
        assert_eq!(config.llm.answer_model, "from/env");
        assert_eq!(config.llm.max_tool_hops, 3);
        assert_eq!(config.access.allowed_models, ["a", "b"]);
    }

    #[test]
    fn unreadable_config_file_is_reported() {
        let err = read_config_file(Path::new("/nonexistent/agent.yaml")).unwrap_err();
        assert!(matches!(err, ConfigError::File { .. }));
    }
}
