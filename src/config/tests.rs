use super::*;

#[test]
fn every_setting_of_the_table_is_read_and_nothing_else_is() {
    // With the reranker on, every setting takes effect.
    let raw = RawSettings::from_pairs([("RERANKER", "api"), ("RERANKER_MODEL", "r")]);
    let (_, effective) = Config::read(&raw).unwrap();
    let read: Vec<&str> = effective.keys().copied().collect();
    let table: Vec<&str> = settings::TABLE.iter().map(|s| s.name).collect();
    for name in &read {
        assert!(table.contains(name), "{name} is read but not in the table");
    }
    for name in &table {
        assert!(read.contains(name), "{name} is in the table but never read");
    }
}

#[test]
fn every_choice_of_the_table_is_accepted() {
    for setting in settings::TABLE {
        if let settings::Kind::Choice(words) = setting.kind {
            for word in words {
                let mut pairs = vec![(setting.name, *word)];
                if setting.name == "RERANKER" {
                    pairs.push(("RERANKER_MODEL", "r"));
                }
                if setting.name == "EMBEDDING_PROVIDER" {
                    pairs.push(("OPENROUTER_API_KEY", "k"));
                }
                assert!(load(&pairs).is_ok(), "{}={word}", setting.name);
            }
        }
    }
}

#[test]
fn the_bounds_of_the_table_are_enforced() {
    for setting in settings::TABLE {
        if let settings::Kind::Number { max, .. } = setting.kind {
            let past = format!("{}1", max);
            let mut pairs = vec![(setting.name, past.as_str())];
            if setting.name.starts_with("RERANKER") {
                pairs.extend([("RERANKER", "api"), ("RERANKER_MODEL", "r")]);
            }
            assert_eq!(invalid_variable(&pairs), setting.name);
        }
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
    let local = super::LOCAL_MODEL_NAME;
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
    let oidc_only = [
        ("OIDC_JWKS_URL", "https://login.example/jwks"),
        ("OIDC_ISSUER", "https://login.example"),
        ("OIDC_AUDIENCE", "agent"),
    ];
    assert!(
        !load(&oidc_only).unwrap().access.trust_gateway_header,
        "bearer mode reads no claims header unless told to"
    );
    let mut behind_gateway = oidc_only.to_vec();
    behind_gateway.push(("TRUST_GATEWAY_HEADER", "true"));
    assert!(load(&behind_gateway).unwrap().access.trust_gateway_header);
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
fn the_pages_sign_in_needs_oidc_and_both_endpoints_or_neither() {
    let oidc = [
        ("OIDC_JWKS_URL", "https://login.example/jwks"),
        ("OIDC_ISSUER", "https://login.example"),
        ("OIDC_AUDIENCE", "agent"),
    ];
    assert_eq!(load(&oidc).unwrap().access.sign_in, None);
    let with = |extra: &[(&'static str, &'static str)]| {
        let mut pairs = oidc.to_vec();
        pairs.extend_from_slice(extra);
        pairs
    };
    let discovered = load(&with(&[
        ("OIDC_CLIENT_ID", "page"),
        ("OIDC_SCOPES", " openid   offline_access "),
    ]))
    .unwrap();
    let sign_in = discovered.access.sign_in.unwrap();
    assert_eq!(sign_in.endpoints, None);
    assert_eq!(sign_in.scopes, "openid offline_access");
    let configured = load(&with(&[
        ("OIDC_CLIENT_ID", "page"),
        ("OIDC_AUTHORIZE_URL", "https://login.example/auth"),
        ("OIDC_TOKEN_URL", "https://login.example/token"),
    ]))
    .unwrap();
    let endpoints = configured.access.sign_in.unwrap().endpoints.unwrap();
    assert_eq!(endpoints.token.as_str(), "https://login.example/token");
    assert_eq!(
        invalid_variable(&[("OIDC_CLIENT_ID", "page")]),
        "OIDC_CLIENT_ID",
        "no sign-in without tokens to verify"
    );
    assert_eq!(
        invalid_variable(&with(&[
            ("OIDC_CLIENT_ID", "page"),
            ("OIDC_AUTHORIZE_URL", "https://login.example/auth"),
        ])),
        "OIDC_TOKEN_URL"
    );
    assert_eq!(
        invalid_variable(&with(&[("OIDC_TOKEN_URL", "https://login.example/token")])),
        "OIDC_CLIENT_ID"
    );
    assert_eq!(
        invalid_variable(&with(&[
            ("OIDC_CLIENT_ID", "page"),
            ("OIDC_AUTHORIZE_URL", "javascript:alert(1)"),
            ("OIDC_TOKEN_URL", "https://login.example/token"),
        ])),
        "OIDC_AUTHORIZE_URL"
    );
}

#[test]
fn defaults_load_without_any_variable() {
    let config = load(&[]).unwrap();
    assert_eq!(config.llm.answer_model, "openai/gpt-4o-mini");
    assert_eq!(config.llm.answering.max_tool_hops, 6);
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
        load(&[("MAX_TOOL_HOPS", "20")])
            .unwrap()
            .llm
            .answering
            .max_tool_hops,
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
    merged.fill_from(sources::read_config_file(&path).unwrap());
    let config = Config::from_raw(&merged).unwrap();
    assert_eq!(config.llm.answer_model, "from/env");
    assert_eq!(config.llm.answering.max_tool_hops, 3);
    assert_eq!(config.access.allowed_models, ["a", "b"]);
}

#[test]
fn unreadable_config_file_is_reported() {
    let err = sources::read_config_file(Path::new("/nonexistent/agent.yaml")).unwrap_err();
    assert!(matches!(err, ConfigError::File { .. }));
}

#[test]
fn top_k_final_is_bounded_where_search_clamps() {
    let most = super::MAX_TOP_K.to_string();
    assert_eq!(
        load(&[("TOP_K_FINAL", most.as_str())])
            .unwrap()
            .retrieval
            .top_k_final,
        super::MAX_TOP_K
    );
    let past = (super::MAX_TOP_K + 1).to_string();
    assert_eq!(
        invalid_variable(&[("TOP_K_FINAL", past.as_str())]),
        "TOP_K_FINAL"
    );
}
