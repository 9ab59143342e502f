//! crowdvision-agent: answers questions about buildings, rooms, live occupancy and sensors from a
//! permission-filtered documentation knowledge base and live data.
//!
//! Module map (see `ARCHITECTURE.md` for the code map and the invariants):
//! - [`config`]: every setting, from one table, validated once at load.
//! - [`contract`]: what crosses the library's boundary (question, events, response, errors,
//!   HTTP bodies).
//! - [`compose`]: the composition root that wires the adapters for every subcommand.
//! - [`agent`]: the answer's decisions as a pure state machine ([`agent::run`]) and its driver,
//!   the ports (model, tools) and adapters, the checks on answers (grounding, citations,
//!   links).
//! - [`auth`]: the caller (gateway claims, OIDC and dev tokens), roles, Cedar policies.
//! - [`retrieval`]: the chunker, the embedder port, the store port, ingest, hybrid search.
//! - [`downstream`]: twin-service and sensor-service behind ports, their HTTP adapters.
//! - [`server`]: the HTTP API (`serve`), the chat page at `/`, the OpenAI-compatible
//!   `/v1` routes, `/mcp`, per-caller limits; [`client`]: a client of it.
//! - [`conversations`]: conversations kept per caller in the store (port and both adapters).
//! - [`quota`]: per-caller limits as data, and the port of limits shared by all replicas.
//! - [`mcp`]: the MCP server (the tools and `ask` for MCP hosts), over stdio or `/mcp`.
//! - [`citations`]: `[^chunk-id]` markers checked against the chunks an answer was given.
//! - [`eval`]: golden-dataset evaluation (datasets, assertions, judge, runner, reports).
//! - [`history`]: the local log of `ask` and `chat` answers.
//! - [`observe`]: spans (OTLP, Langfuse), the payload gate, metrics, log format.
//! - [`sim`]: the simulator of both downstream services; [`http`], [`text`], [`clock`], [`json_out`]: shared
//!   helpers.
//!
//! The command-line surface lives in the binary (`src/main.rs`, `src/cli/`): it is the only
//! place that prints.

pub mod agent;
pub mod auth;
pub mod citations;
pub mod client;
pub mod clock;
pub mod compose;
pub mod config;
pub mod contract;
pub mod conversations;
pub mod downstream;
pub mod eval;
pub mod history;
pub mod http;
pub mod json_out;
pub mod mcp;
pub mod observe;
pub mod quota;
pub mod retrieval;
pub mod server;
pub mod sim;
pub mod text;

#[cfg(test)]
mod fuzz;

/// Cases per property test: `FUZZ_CASES` when set (the fuzz script runs thousands), else
/// `default` (what the test suite runs).
#[cfg(test)]
pub(crate) fn fuzz_cases(default: u32) -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
