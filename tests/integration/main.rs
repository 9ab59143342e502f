//! One integration-test binary: the CLI as a user runs it, both stores through one conformance
//! suite, ingest end to end, the OpenAI-compatible embedder against a scripted HTTP server, and
//! the chunker over the shared corpus.
//!
//! Postgres tests need a server with pgvector (`scripts/provision-postgres`). Outside CI they
//! skip loudly when none answers; under `CI=true` a missing server fails the test.

mod abuse;
mod agent;
mod agent_cli;
mod agent_guided;
mod architecture;
mod cli;
mod conversations;
mod corpus;
mod embed;
mod eval;
mod hardening;
mod ingest;
mod language;
mod live;
mod mcp;
mod observe;
mod oidc;
mod oidc_login;
mod outages;
mod page;
mod parity;
mod provider;
mod proxy;
mod readme;
mod replicas;
mod rerank;
mod sdk;
mod search;
mod server;
mod sharing;
mod signin;
mod store;
mod util;
mod webdriver;
