//! What is judged on an answer, in code. Pure.
//!
//! - [`decision`]: how a final text is classified (answered, idk, declined, exhausted), and
//!   the gate that keeps a code from being streamed.
//! - [`passages`]: search results read back, and written into a request (tables as rows).
//! - [`grounding`]: citations attributed in code, unsupported markers flagged, live answers
//!   held to what the tools returned.
//! - [`figures`]: a documentation answer's figures against how the passages state them.
//! - [`padding`]: sentences about footnotes, passages or tools dropped.
//! - [`staleness`]: the age of a stale reading said when the answer does not say it.
//! - [`subject`]: a documentation passage about another building than the one asked about.
//! - [`written`]: the asked figure written by the library from the one live result holding
//!   it, instead of "I don't know".
//! - [`links`]: links, images and tags to hosts not allowed made harmless; [`urls`] the bare
//!   URLs to such hosts taken out, in answers and streams alike.

pub mod decision;
pub mod figures;
pub mod grounding;
pub mod links;
pub mod padding;
pub mod passages;
pub mod staleness;
pub mod subject;
pub mod urls;
pub mod written;
