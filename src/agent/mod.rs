//! The answering agent: [`answer::Agent`] runs the bounded tool-calling loop.
//!
//! - [`llm`]: the LLM port (`ChatModel`) and its own message types; [`openai`] its adapter.
//! - [`tools`]: the tool port, the registry, and the tools.
//! - [`conversation`]: the turns and totals of a `chat` session.
//! - [`routing`]: where a question goes first (library greeting, live tools, documentation).
//! - [`passages`]: search results read back, and written into a request (tables as rows).
//! - [`places`]: which of the caller's buildings and rooms a question names; [`clarify`] the
//!   question back when a room name is in several of them; [`plan`] the first live call
//!   made by rule when the question names one place and one thing; [`window`] the past
//!   window a history question asks for; [`words`] the words of a text as these rules read
//!   them.
//! - [`scope`]: the typed topic check that declines off-topic requests.
//! - [`grounding`]: citations attributed in code, unsupported markers flagged, live answers
//!   checked against what the tools returned.
//! - [`figures`]: a documentation answer's figures against how the passages state them.
//! - [`run`]: the loop's decisions as a pure step function; [`answer`] drives it.
//! - [`links`]: links, images and tags to hosts not allowed made harmless; [`urls`] the bare
//!   URLs to such hosts taken out, in answers and streams alike.
//! - [`decision`]: how a final answer is classified (answered, idk, declined, exhausted).
//! - [`model_choice`]: the per-request model override gate.
//! - [`usage`]: usage and cost over hops (the response object is [`crate::contract`]).

pub mod answer;
pub mod chart;
pub mod clarify;
pub mod conversation;
pub mod decision;
pub mod figures;
pub mod grounding;
pub mod language;
pub mod links;
pub mod llm;
pub mod model_choice;
pub mod openai;
pub mod padding;
pub mod passages;
pub mod places;
pub mod plan;
pub mod routing;
pub mod run;
pub mod scope;
pub mod staleness;
mod stream;
pub mod tools;
pub mod urls;
pub mod usage;
pub mod window;
pub mod words;
