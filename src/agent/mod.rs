//! The answering agent: [`answer::Agent`] runs the bounded tool-calling loop.
//!
//! - [`answer`]: the driver: makes the calls [`run`] asks for, runs tools, streams.
//! - [`run`]: every decision of an answer as a pure state machine, by phase.
//! - [`question`]: what is read from the question (route, topic, language, places, the first
//!   planned call, a history window).
//! - [`verdict`]: what is judged on the answer (decision, grounding, figures, padding, stale
//!   readings, links).
//! - [`text`]: the text primitives both use (sentences, numbers, markers, stopwords).
//! - [`phrases`]: every sentence the library writes itself, in every language.
//! - [`llm`]: the LLM port (`ChatModel`) and its message types; [`openai`] its adapter.
//! - [`tools`]: the tool port, the registry, and the tools.
//! - [`stream`]: what a streaming client is shown of the model's tokens.
//! - [`chart`]: the chart data a live answer carries.
//! - [`conversation`]: the turns and totals of a `chat` session.
//! - [`error`]: why an answer was not given ([`error::AgentError`]).
//! - [`model_choice`]: the per-request model override gate.
//! - [`usage`]: usage and cost summed over hops.

pub mod answer;
pub mod chart;
pub mod conversation;
pub mod error;
pub mod llm;
pub mod model_choice;
pub mod openai;
pub mod phrases;
pub mod question;
pub mod run;
mod stream;
pub mod text;
pub mod tools;
pub mod usage;
pub mod verdict;
