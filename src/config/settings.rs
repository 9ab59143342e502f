//! Every setting, once: its name, group, kind, default, bounds, whether it is a secret, and what
//! it does. The reader takes defaults and bounds from here; `doctor` lists these; the help and
//! man pages' ENVIRONMENT section and `documentation/developer/configuration.md` are written
//! from here ([`super::reference`]).

/// Where a setting is documented.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Group {
    Provider,
    Embeddings,
    Chunking,
    Retrieval,
    Store,
    Access,
    Observability,
    Server,
}

impl Group {
    pub const ALL: [Group; 8] = [
        Group::Provider,
        Group::Embeddings,
        Group::Chunking,
        Group::Retrieval,
        Group::Store,
        Group::Access,
        Group::Observability,
        Group::Server,
    ];

    pub fn title(self) -> &'static str {
        match self {
            Group::Provider => "Provider and answering",
            Group::Embeddings => "Embeddings",
            Group::Chunking => "Chunking",
            Group::Retrieval => "Retrieval",
            Group::Store => "Store and ingest",
            Group::Access => "Access and downstream services",
            Group::Observability => "Observability",
            Group::Server => "Server",
        }
    }
}

/// What a value must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// Shown masked by `doctor`.
    Secret,
    /// `true/false`, `1/0`, `yes/no`, `on/off`.
    Bool,
    /// http or https with a host.
    Url,
    /// Comma-separated.
    List,
    /// One of these words (any case).
    Choice(&'static [&'static str]),
    /// A number within these bounds, as written.
    Number {
        min: &'static str,
        max: &'static str,
    },
}

/// The value a setting has when it is not set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultValue {
    Unset,
    Value(&'static str),
    /// Worked out from other settings or the platform, as described.
    Derived(&'static str),
}

#[derive(Debug, Clone, Copy)]
pub struct Setting {
    pub name: &'static str,
    pub group: Group,
    pub kind: Kind,
    pub default: DefaultValue,
    /// What it does, for configuration.md.
    pub doc: &'static str,
    /// Its line in the ENVIRONMENT section of `--help` and the man pages, for the settings a
    /// newcomer needs.
    pub help: Option<&'static str>,
}

impl Setting {
    pub fn is_secret(&self) -> bool {
        self.kind == Kind::Secret
    }
}

const fn setting(name: &'static str, group: Group, kind: Kind, default: DefaultValue) -> Setting {
    Setting {
        name,
        group,
        kind,
        default,
        doc: "",
        help: None,
    }
}

impl Setting {
    const fn doc(self, doc: &'static str) -> Setting {
        Setting { doc, ..self }
    }

    const fn help(self, help: &'static str) -> Setting {
        Setting {
            help: Some(help),
            ..self
        }
    }
}

const fn number(min: &'static str, max: &'static str) -> Kind {
    Kind::Number { min, max }
}

use DefaultValue::{Derived, Unset, Value};
use Group::*;
use Kind::{Bool, List, Secret, Text, Url};

/// The most passages a search returns: the bound of `TOP_K_FINAL` and of a request's `top_k`.
const MAX_TOP_K_TEXT: &str = "50";
pub const MAX_TOP_K: usize = decimal(MAX_TOP_K_TEXT);

/// A decimal number written in a constant, read at compile time.
const fn decimal(text: &str) -> usize {
    let digits = text.as_bytes();
    let mut value = 0;
    let mut at = 0;
    while at < digits.len() {
        value = value * 10 + (digits[at] - b'0') as usize;
        at += 1;
    }
    value
}

/// The provider key variables, in order of preference (the first one set wins).
pub const API_KEY_VARIABLES: [&str; 4] = [
    "OPENROUTER_API_KEY",
    "LLM_API_KEY",
    "DEEPSEEK_API_KEY",
    "GOOGLE_API_KEY",
];

/// Longest question by default (`MAX_QUESTION_CHARS`); the OpenAPI document states it too.
pub const DEFAULT_MAX_QUESTION_CHARS: usize = 4000;

/// Every setting the agent reads, in the order documented. A `--config` file may name only
/// these.
pub const TABLE: &[Setting] = &[
    // Provider and answering
    setting("OPENROUTER_API_KEY", Provider, Secret, Unset)
        .doc("the provider key; the first of `OPENROUTER_API_KEY`, `LLM_API_KEY`, `DEEPSEEK_API_KEY`, `GOOGLE_API_KEY` that is set wins")
        .help("the provider key (or LLM_API_KEY); LLM_BASE_URL for another provider"),
    setting("LLM_API_KEY", Provider, Secret, Unset).doc("the provider key, second choice"),
    setting("DEEPSEEK_API_KEY", Provider, Secret, Unset).doc("the provider key, third choice"),
    setting("GOOGLE_API_KEY", Provider, Secret, Unset).doc("the provider key, fourth choice"),
    setting("LLM_BASE_URL", Provider, Url, Value("https://openrouter.ai/api/v1"))
        .doc("any OpenAI-compatible chat-completions API"),
    setting("ANSWER_MODEL", Provider, Text, Value("openai/gpt-4o-mini"))
        .doc("the model that answers")
        .help("the model that answers (default openai/gpt-4o-mini)"),
    setting("JUDGE_MODEL", Provider, Text, Unset)
        .doc("the `eval` judge; unset = the dataset's `judge_model`, else a model of another family than the answer model"),
    setting("MAX_OUTPUT_TOKENS", Provider, number("1", "1000000"), Value("600"))
        .doc("sent as `max_tokens` with every model call"),
    setting("LLM_TEMPERATURE", Provider, number("0", "2"), Value("0.1")).doc("sampling temperature of the answer calls"),
    setting("LLM_TIMEOUT_SECONDS", Provider, number("0.1", "3600"), Value("120"))
        .doc("one model call, retries and waits included"),
    setting("LLM_MAX_RETRIES", Provider, number("0", "10"), Value("3"))
        .doc("further attempts after a 429, a 5xx or a refused connection"),
    setting("MODEL_PRICES", Provider, Text, Derived("built-in list"))
        .doc("`model=prompt,completion;…` in USD per million tokens; adds to or replaces the built-in prices used for `cost.estimated_usd`"),
    setting("MAX_TOOL_HOPS", Provider, number("1", "20"), Value("6"))
        .doc("rounds of tool calls one answer may make; past them the answer is `tool_loop_exhausted`"),
    setting("MAX_TOOL_CALLS_PER_TURN", Provider, number("1", "64"), Value("8"))
        .doc("tool calls run from one model turn; the rest get a `too_many_calls` result for the model"),
    setting("MAX_TOKENS_PER_REQUEST", Provider, number("0", "9223372036854775807"), Value("100000"))
        .doc("one answer's model tokens: the loop stops with `decision = budget_exhausted` before a model call that would pass it; `0` for none"),
    setting("MAX_QUESTION_CHARS", Provider, number("1", "1000000"), Value("4000"))
        .doc("a longer question is refused before any model call"),
    setting("TOOL_TIMEOUT_SECONDS", Provider, number("0.1", "300"), Value("15")).doc("one tool call"),
    setting("REQUIRE_GROUNDED_ANSWERS", Provider, Bool, Value("true"))
        .doc("a documentation answer no passage supports becomes `idk`, and so does a live answer none of whose own figures a tool returned"),
    setting("SCOPE_CHECK", Provider, Bool, Value("true"))
        .doc("a documentation question's topic is asked first as typed JSON; off-topic requests are declined without an answer call"),
    setting("STABLE_TOOL_PREFIX", Provider, Bool, Value("true"))
        .doc("a model call that may call no tool (the topic check, a re-ask) is still sent the tool list of the call before it, with `tool_choice: none`, so the provider's prompt cache holds the system prompt and the tool schemas; `false` sends such calls no tools"),
    setting("SEARCH_FIRST", Provider, Bool, Value("true"))
        .doc("a documentation question is searched (as the caller) before the first model call and the passages are sent with it; `false` leaves the search to the model's own `search_docs` call"),
    setting("SEARCH_AGAIN", Provider, Bool, Value("false"))
        .doc("the answer calls of a documentation question searched first may call `search_docs` again; `false` offers them no tool, so the answer comes from the passages searched with the question and the request carries no tool schema (175 prompt tokens with the local 1.5B model's template)"),
    setting("LINK_ALLOWED_HOSTS", Provider, List, Unset)
        .doc("hosts (and their subdomains) an answer may link to, show images from or name in a bare URL; other images become `[image: ALT]`, other links keep only their text, other bare URLs become their host with bracketed dots (`other[.]host`)"),
    setting("HISTORY", Provider, Bool, Value("true"))
        .doc("`ask` and `chat` append each answer to the local history (`crowdvision-agent history`)"),
    setting("HISTORY_FILE", Provider, Text, Derived("`history.jsonl` in the data directory"))
        .doc("where the history is kept"),
    // Embeddings
    setting("EMBEDDING_PROVIDER", Embeddings, Kind::Choice(&["openai", "local"]), Derived("`openai` with a key, else `local`"))
        .doc("`openai` needs a key; a store built with `local` keeps it while this is unset")
        .help("local or openai; EMBEDDING_MODEL, EMBEDDING_DIM with it"),
    setting("EMBEDDING_MODEL", Embeddings, Text, Value("openai/text-embedding-3-small")).doc("recorded in the store"),
    setting("EMBEDDING_DIM", Embeddings, number("8", "16000"), Value("768")).doc("recorded in the store"),
    setting("EMBEDDING_QUERY_PREFIX", Embeddings, Text, Derived("`query: ` for e5 models, else none"))
        .doc("put before each question embedded; `none` for no prefix; recorded with the model"),
    setting("EMBEDDING_PASSAGE_PREFIX", Embeddings, Text, Derived("`passage: ` for e5 models, else none"))
        .doc("put before each passage embedded; `none` for no prefix; recorded with the model"),
    setting("EMBEDDING_BASE_URL", Embeddings, Url, Derived("`LLM_BASE_URL`")).doc("the embeddings API"),
    setting("EMBEDDING_API_KEY", Embeddings, Secret, Derived("the provider key")).doc("the embeddings API's key"),
    setting("EMBEDDING_BATCH_SIZE", Embeddings, number("1", "2048"), Value("64")).doc("inputs per request"),
    setting("EMBEDDING_CONCURRENCY", Embeddings, number("1", "64"), Value("4")).doc("requests in flight"),
    setting("EMBEDDING_TIMEOUT_SECONDS", Embeddings, number("0.1", "600"), Value("30")).doc("one embeddings request"),
    // Chunking
    setting("CHUNK_SIZE_UNIT", Chunking, Kind::Choice(&["tokens", "chars", "characters"]), Value("tokens"))
        .doc("how chunk sizes are counted: `tokens` (cl100k) or `chars`"),
    setting("CHUNK_TARGET", Chunking, number("16", "100000"), Derived("350 tokens / 1200 chars"))
        .doc("the size a chunk is packed to"),
    setting("CHUNK_MAX", Chunking, number("16", "100000"), Derived("512 tokens / 1500 chars"))
        .doc("the largest chunk; at least `CHUNK_TARGET`"),
    // Retrieval
    setting("TOP_K_VECTOR", Retrieval, number("1", "1000"), Value("20")).doc("candidates from vector search"),
    setting("TOP_K_KEYWORD", Retrieval, number("1", "1000"), Value("20")).doc("candidates from keyword search"),
    setting("TOP_K_FINAL", Retrieval, number("1", MAX_TOP_K_TEXT), Value("6")).doc("passages `search_docs` returns"),
    setting("RRF_K", Retrieval, number("1", "10000"), Value("60")).doc("the constant of reciprocal rank fusion"),
    setting("RERANKER", Retrieval, Kind::Choice(&["noop", "api"]), Value("noop")).doc("`api` reranks the fused candidates"),
    setting("RERANKER_MODEL", Retrieval, Text, Unset).doc("required with `RERANKER=api`"),
    setting("RERANKER_URL", Retrieval, Url, Derived("`LLM_BASE_URL`")).doc("`/rerank` is appended"),
    setting("RERANKER_API_KEY", Retrieval, Secret, Derived("the provider key")).doc("the reranking API's key"),
    setting("RERANKER_MIN_SCORE", Retrieval, number("-1000", "1000"), Unset).doc("weaker candidates are dropped"),
    setting("RERANKER_TIMEOUT_SECONDS", Retrieval, number("0.1", "300"), Value("10")).doc("one reranking request"),
    // Store and ingest
    setting("DATABASE_URL", Store, Text, Derived("SQLite file in the user's data directory"))
        .doc("`postgres://…`, `postgresql://…` or `sqlite://PATH`; a password never appears in messages")
        .help("sqlite://PATH (default: the data directory) or postgres://…"),
    setting("REQUIRE_PERMISSIONS", Store, Bool, Value("false")).doc("refuse documents whose permissions neither front matter nor a `_permissions.yaml` states (`permissions: []` states public)"),
    setting("DOCS_ROOT", Store, Text, Value("documentation"))
        .doc("the knowledge-base root: a path given to `ingest` that lies inside it is named (and inherits `_permissions.yaml`) by its canonical location under it; a folder given outside every known root becomes a root itself and the store remembers it"),
    setting("MAX_SOURCE_BYTES", Store, number("1", "1073741824"), Value("5242880")).doc("a larger source fails with a clear error"),
    // Access and downstream services
    setting("REQUIRE_AUTH", Access, Bool, Value("true"))
        .doc("`false` means an anonymous caller, for local use only")
        .help("false lets commands act as an anonymous caller"),
    setting("EVAL_JWT_SECRET", Access, Secret, Unset)
        .doc("enables the development token path; at least 32 bytes")
        .help("verifies --token development tokens"),
    setting("TRUST_GATEWAY_HEADER", Access, Bool, Derived("false when OIDC_JWKS_URL is set, else true"))
        .doc("read `x-gateway-claims` from a gateway that verified the caller; `false`: the header is never read, and a request carrying it is refused. With OIDC configured it is off unless set to `true`")
        .help("serve: false ignores (refuses) x-gateway-claims"),
    setting("OIDC_JWKS_URL", Access, Url, Unset)
        .doc("with `OIDC_ISSUER` and `OIDC_AUDIENCE` (set together): `Authorization: Bearer` tokens (RS256, ES256) verified against that JWKS (deployment.md)")
        .help("serve: verify bearer tokens (with OIDC_ISSUER, OIDC_AUDIENCE)"),
    setting("OIDC_ISSUER", Access, Text, Unset).doc("the `iss` an OIDC token must carry"),
    setting("OIDC_AUDIENCE", Access, Text, Unset).doc("the `aud` an OIDC token must carry"),
    setting("OIDC_CLIENT_ID", Access, Text, Unset)
        .doc("with OIDC configured: the page's public client at the identity provider; the page then offers Sign in (authorization code with PKCE, tokens kept in the tab, refreshed before they expire). Endpoints from `OIDC_AUTHORIZE_URL` and `OIDC_TOKEN_URL`, or discovered from `OIDC_ISSUER`")
        .help("serve: the page signs in with this public OIDC client (PKCE)"),
    setting("OIDC_AUTHORIZE_URL", Access, Url, Derived("discovered from `OIDC_ISSUER`"))
        .doc("where the page sends a person to sign in; set together with `OIDC_TOKEN_URL`"),
    setting("OIDC_TOKEN_URL", Access, Url, Derived("discovered from `OIDC_ISSUER`"))
        .doc("where `POST /auth/token` redeems the page's code and refresh token (the page itself talks only to `serve`)"),
    setting("OIDC_SCOPES", Access, Text, Value("openid"))
        .doc("the scopes the page asks for, space-separated (add `offline_access` where the provider gives refresh tokens only then)"),
    setting("MODEL_OVERRIDE_MIN_ROLE", Access, Text, Value("business_admin")).doc("a role from `roles.json`"),
    setting("ALLOWED_MODELS", Access, List, Unset).doc("models a request may choose; empty: any"),
    setting("TWIN_SERVICE_URL", Access, Url, Value("http://localhost:4010"))
        .doc("the digital-twin service (buildings, rooms)")
        .help("buildings and rooms; SENSOR_SERVICE_URL for occupancy and readings"),
    setting("SENSOR_SERVICE_URL", Access, Url, Value("http://localhost:4010")).doc("the sensor service (occupancy, readings)"),
    setting("TWIN_TIMEOUT_SECONDS", Access, number("0.1", "300"), Value("5")).doc("one downstream request"),
    // Observability
    setting("OBSERVE_PAYLOADS", Observability, Bool, Value("false"))
        .doc("question, prompt, reply, tool arguments and results in spans")
        .help("true: prompts, answers and tool data in the traces too"),
    setting("OTEL_EXPORTER_OTLP_ENDPOINT", Observability, Url, Unset)
        .doc("spans go to `<endpoint>/v1/traces` over OTLP/HTTP (observability.md)")
        .help("send traces over OTLP/HTTP (Langfuse, a collector)"),
    setting("LOG_FORMAT", Observability, Kind::Choice(&["pretty", "json"]), Value("pretty"))
        .doc("`json`: one object per line, with the request's `trace_id`"),
    // Server
    setting("BIND", Server, Text, Value("127.0.0.1:3000"))
        .doc("where `serve` listens (`--bind` overrides); loopback unless told, e.g. `0.0.0.0:3000` behind a proxy"),
    setting("CORS_ORIGINS", Server, List, Unset)
        .doc("origins allowed to call `serve` from a browser (GET and POST, credentials)"),
    setting("PUBLIC_BASE_URL", Server, Url, Unset)
        .doc("the address clients reach `serve` at, e.g. `https://agent.example.com/agent` behind the shipped Caddyfile: names the MCP resource (`<it>/mcp`) in its OAuth metadata and in the `WWW-Authenticate` of `/mcp`'s 401s; with OIDC, `/mcp` accepts only tokens whose `aud` holds that resource"),
    setting("REPLICA_NAME", Server, Text, Unset).doc("sent back as `x-agent-replica` so replicas can be told apart"),
    setting("MAX_REQUEST_BYTES", Server, number("1024", "16777216"), Value("65536")).doc("larger request bodies get 413"),
    setting("REQUEST_TIMEOUT_SECONDS", Server, number("0.1", "3600"), Value("120"))
        .doc("one answer's deadline in `serve`: 504, or an SSE `error` event"),
    setting("MAX_IN_FLIGHT", Server, number("1", "100000"), Value("64"))
        .doc("answers `serve` runs at once; more get 503 with `Retry-After: 1`"),
    setting("MAX_IN_FLIGHT_PER_CALLER", Server, number("0", "100000"), Value("4"))
        .doc("answers one caller (`sub`) may have running on a replica; more get 429 `too_many_answers_in_flight`; `0` for none"),
    setting("REQUESTS_PER_MINUTE", Server, number("0", "10000"), Value("60"))
        .doc("requests one caller may start on a replica in any sliding minute; more get 429 `rate_limited` with `Retry-After`; `0` for none"),
    setting("TOKENS_PER_HOUR", Server, number("0", "9223372036854775807"), Value("1000000"))
        .doc("model tokens one caller may spend on a replica per hour; past it 429 `budget_spent` with `Retry-After`; `0` for none"),
    setting("CONVERSATIONS", Server, Bool, Value("true"))
        .doc("keep conversations in the store (`/conversations`, `conversation_id` on `/ask`, `chat --resume`); `false`: nothing is kept and those routes answer 404"),
    setting("CONVERSATION_RETENTION_DAYS", Server, number("0", "36500"), Value("90"))
        .doc("a conversation not added to for this many days is deleted with its turns; `0` keeps them"),
    setting("SHUTDOWN_GRACE_SECONDS", Server, number("0", "3600"), Value("30"))
        .doc("after SIGTERM, how long answers in flight may finish"),
];

/// The setting called `name`.
pub fn find(name: &str) -> Option<&'static Setting> {
    TABLE.iter().find(|setting| setting.name == name)
}

/// Whether a setting holds a secret, shown masked.
pub fn is_secret(name: &str) -> bool {
    find(name).is_some_and(Setting::is_secret)
}
