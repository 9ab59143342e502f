//! crowdvision-agent: answers questions about buildings, rooms, live occupancy and sensors from a
//! permission-filtered documentation knowledge base and live data.
//!
//! Module map (see `ARCHITECTURE.md` for the invariants):
//! - [`config`]: every setting, validated once at load.
//! - [`agent`]: the answer contract so far (decision, usage and cost, response object).
//! - [`auth`]: the role hierarchy (and, later, the caller's identity).
//! - [`retrieval`]: the chunker, the embedder port, the store port, ingest, hybrid search.
//! - [`citations`]: `[^chunk-id]` markers checked against the chunks an answer was given.
//! - [`eval`]: golden-dataset evaluation (datasets, assertions, judge, runner, reports).
//! - [`history`]: the local log of `ask` and `chat` answers.
//! - [`observe`]: spans (OTLP, Langfuse), the payload gate, metrics, log format.
//!
//! The command-line surface lives in the binary (`src/main.rs`, `src/cli/`): it is the only
//! place that prints.

pub mod agent;
pub mod auth;
pub mod citations;
pub mod client;
pub mod config;
pub mod downstream;
pub mod eval;
pub mod history;
pub mod http;
pub mod observe;
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
