//! The builders: each slice of [`Config`] read from the settings through a [`Reader`].

use super::reader::{invalid, parse_http_url, Reader};
use super::settings::API_KEY_VARIABLES;
use super::sources::RawSettings;
use super::*;
use crate::auth::roles::RoleHierarchy;

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
        let r = Reader::new(raw);
        let config = Config::build(&r)?;
        Ok((config, r.effective.into_inner()))
    }

    fn build(r: &Reader<'_>) -> Result<Config, ConfigError> {
        let api_key = API_KEY_VARIABLES.iter().find_map(|v| r.optional(v));
        let llm = LlmConfig {
            api_key: api_key.clone(),
            base_url: r.http_url("LLM_BASE_URL")?,
            answer_model: r.string("ANSWER_MODEL"),
            judge_model: r.optional("JUDGE_MODEL"),
            answering: LoopSettings {
                max_output_tokens: r.number("MAX_OUTPUT_TOKENS")?,
                temperature: r.number("LLM_TEMPERATURE")?,
                max_tool_hops: r.number("MAX_TOOL_HOPS")?,
                max_tool_calls_per_turn: r.number("MAX_TOOL_CALLS_PER_TURN")?,
                max_tokens_per_request: r.number("MAX_TOKENS_PER_REQUEST")?,
                max_question_chars: r.number("MAX_QUESTION_CHARS")?,
                require_grounded_answers: r.boolean("REQUIRE_GROUNDED_ANSWERS")?,
                scope_check: r.boolean("SCOPE_CHECK")?,
                search_first: r.boolean("SEARCH_FIRST")?,
                search_again: r.boolean("SEARCH_AGAIN")?,
                stable_tool_prefix: r.boolean("STABLE_TOOL_PREFIX")?,
                link_allowed_hosts: r.list("LINK_ALLOWED_HOSTS"),
            },
            tool_timeout: Duration::from_secs_f64(r.number("TOOL_TIMEOUT_SECONDS")?),
            timeout: Duration::from_secs_f64(r.number("LLM_TIMEOUT_SECONDS")?),
            max_retries: r.number("LLM_MAX_RETRIES")?,
            prices: Config::prices(r)?,
        };
        let embedding = Config::embedding(r, &llm)?;
        let retrieval = RetrievalConfig {
            top_k_vector: r.number("TOP_K_VECTOR")?,
            top_k_keyword: r.number("TOP_K_KEYWORD")?,
            top_k_final: r.number("TOP_K_FINAL")?,
            rrf_k: r.number("RRF_K")?,
            reranker: Config::reranker(r, &llm)?,
        };
        let chunking = Config::chunking(r)?;
        let access = Config::access(r)?;
        Ok(Config {
            history: HistoryConfig {
                enabled: r.boolean("HISTORY")?,
                path: r
                    .optional("HISTORY_FILE")
                    .map_or_else(super::default_history_path, PathBuf::from),
            },
            llm,
            embedding,
            retrieval,
            chunking,
            store: StoreConfig {
                location: Config::store_location(r)?,
            },
            ingest: IngestConfig {
                require_permissions: r.boolean("REQUIRE_PERMISSIONS")?,
                docs_root: PathBuf::from(r.string("DOCS_ROOT")),
                max_source_bytes: r.number("MAX_SOURCE_BYTES")?,
            },
            access,
            downstream: DownstreamConfig {
                twin_service_url: r.http_url("TWIN_SERVICE_URL")?,
                sensor_service_url: r.http_url("SENSOR_SERVICE_URL")?,
                timeout: Duration::from_secs_f64(r.number("TWIN_TIMEOUT_SECONDS")?),
            },
            observability: Config::observability(r)?,
            server: ServerConfig {
                cors_origins: r.list("CORS_ORIGINS"),
                bind: {
                    let text = r.string("BIND");
                    text.parse().map_err(|_| {
                        invalid("BIND", &text, "expected HOST:PORT, e.g. 127.0.0.1:3000")
                    })?
                },
                max_request_bytes: r.number("MAX_REQUEST_BYTES")?,
                request_timeout: Duration::from_secs_f64(r.number("REQUEST_TIMEOUT_SECONDS")?),
                max_in_flight: r.number("MAX_IN_FLIGHT")?,
                shutdown_grace: Duration::from_secs_f64(r.number("SHUTDOWN_GRACE_SECONDS")?),
                replica_name: r.optional("REPLICA_NAME"),
                public_base_url: r.optional_url("PUBLIC_BASE_URL")?,
                max_in_flight_per_caller: r.number("MAX_IN_FLIGHT_PER_CALLER")?,
                requests_per_minute: r.number("REQUESTS_PER_MINUTE")?,
                tokens_per_hour: r.number("TOKENS_PER_HOUR")?,
                conversations: r.boolean("CONVERSATIONS")?,
                conversation_retention_days: r.number("CONVERSATION_RETENTION_DAYS")?,
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
        let provider_chosen = r.given("EMBEDDING_PROVIDER").is_some();
        let provider_text = r.string_or("EMBEDDING_PROVIDER", default_provider);
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
        let base_url = r
            .optional_url("EMBEDDING_BASE_URL")?
            .unwrap_or_else(|| llm.base_url.clone());
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
        let model = r.string("EMBEDDING_MODEL");
        let (query_prefix, passage_prefix) = default_prefixes(&model);
        Ok(EmbeddingConfig {
            provider,
            provider_chosen,
            query_prefix: r.prefix("EMBEDDING_QUERY_PREFIX", query_prefix),
            passage_prefix: r.prefix("EMBEDDING_PASSAGE_PREFIX", passage_prefix),
            model,
            dim: r.number("EMBEDDING_DIM")?,
            base_url,
            api_key,
            batch_size: r.number("EMBEDDING_BATCH_SIZE")?,
            concurrency: r.number("EMBEDDING_CONCURRENCY")?,
            timeout: Duration::from_secs_f64(r.number("EMBEDDING_TIMEOUT_SECONDS")?),
        })
    }

    fn reranker(r: &Reader, llm: &LlmConfig) -> Result<RerankerConfig, ConfigError> {
        let name = r.string("RERANKER").to_ascii_lowercase();
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
                let url = r
                    .optional_url("RERANKER_URL")?
                    .unwrap_or_else(|| llm.base_url.clone());
                let min_score = r.optional_number("RERANKER_MIN_SCORE")?;
                Ok(RerankerConfig::Api {
                    url,
                    model,
                    api_key: r
                        .optional("RERANKER_API_KEY")
                        .or_else(|| llm.api_key.clone()),
                    timeout: Duration::from_secs_f64(r.number("RERANKER_TIMEOUT_SECONDS")?),
                    min_score,
                })
            }
            _ => Err(invalid("RERANKER", &name, "expected noop or api")),
        }
    }

    fn chunking(r: &Reader) -> Result<ChunkingConfig, ConfigError> {
        let unit_text = r.string("CHUNK_SIZE_UNIT");
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
        let target = r.number_or("CHUNK_TARGET", default_target)?;
        let max = r.number_or("CHUNK_MAX", default_max.max(target))?;
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
        let min_role = r.string("MODEL_OVERRIDE_MIN_ROLE");
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
        let oidc = Config::oidc(r)?;
        // A replica that verifies bearer tokens itself is reachable without a gateway in
        // front: it reads a claims header only when told to.
        let trust_gateway_header = match r.given("TRUST_GATEWAY_HEADER") {
            Some(_) => r.boolean("TRUST_GATEWAY_HEADER")?,
            None => r.boolean_default("TRUST_GATEWAY_HEADER", oidc.is_none()),
        };
        let sign_in = Config::sign_in(r, oidc.is_some())?;
        Ok(AccessConfig {
            require_auth: r.boolean("REQUIRE_AUTH")?,
            eval_jwt_secret,
            trust_gateway_header,
            oidc,
            sign_in,
            model_override_min_role: min_role,
            allowed_models: r.list("ALLOWED_MODELS"),
        })
    }

    /// The three OIDC settings, set together or not at all.
    fn oidc(r: &Reader) -> Result<Option<OidcSettings>, ConfigError> {
        let url = r.optional("OIDC_JWKS_URL");
        let issuer = r.optional("OIDC_ISSUER");
        let audience = r.optional("OIDC_AUDIENCE");
        match (url, issuer, audience) {
            (None, None, None) => Ok(None),
            (Some(url), Some(issuer), Some(audience)) => Ok(Some(OidcSettings {
                jwks_url: parse_http_url("OIDC_JWKS_URL", &url)?,
                issuer,
                audience,
            })),
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

    /// The page's sign-in: a client id, and both endpoints or neither (then discovered).
    fn sign_in(r: &Reader, oidc: bool) -> Result<Option<SignInSettings>, ConfigError> {
        let authorize = r.optional_url("OIDC_AUTHORIZE_URL")?;
        let token = r.optional_url("OIDC_TOKEN_URL")?;
        let scopes = r.string("OIDC_SCOPES");
        let Some(client_id) = r.optional("OIDC_CLIENT_ID") else {
            if authorize.is_some() || token.is_some() {
                return Err(invalid(
                    "OIDC_CLIENT_ID",
                    "(unset)",
                    "the page's sign-in endpoints need the client they sign in as",
                ));
            }
            return Ok(None);
        };
        if !oidc {
            return Err(invalid(
                "OIDC_CLIENT_ID",
                &client_id,
                "sign-in needs OIDC_JWKS_URL, OIDC_ISSUER and OIDC_AUDIENCE to verify its tokens",
            ));
        }
        let endpoints = match (authorize, token) {
            (Some(authorize), Some(token)) => Some(SignInEndpoints { authorize, token }),
            (None, None) => None,
            (authorize, _) => {
                let missing = if authorize.is_none() {
                    "OIDC_AUTHORIZE_URL"
                } else {
                    "OIDC_TOKEN_URL"
                };
                return Err(invalid(
                    missing,
                    "(unset)",
                    "OIDC_AUTHORIZE_URL and OIDC_TOKEN_URL are set together, or neither to discover them from OIDC_ISSUER",
                ));
            }
        };
        let scopes = scopes.split_whitespace().collect::<Vec<_>>().join(" ");
        Ok(Some(SignInSettings {
            client_id,
            endpoints,
            scopes,
        }))
    }

    fn observability(r: &Reader) -> Result<ObservabilityConfig, ConfigError> {
        let format_text = r.string("LOG_FORMAT");
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
        let otlp_endpoint = r.optional_url("OTEL_EXPORTER_OTLP_ENDPOINT")?;
        Ok(ObservabilityConfig {
            observe_payloads: r.boolean("OBSERVE_PAYLOADS")?,
            otlp_endpoint,
            log_format,
        })
    }
}
