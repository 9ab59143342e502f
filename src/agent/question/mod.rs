//! What is read from the question before any model call, in code. Pure.
//!
//! - [`followup`]: a turn naming only a place or only a quantity, continuing the question
//!   before it.
//! - [`routing`]: where a question goes first (a library reply to a greeting, the live tools,
//!   the documentation).
//! - [`scope`]: the typed topic check, and the requests for writing declined by rule.
//! - [`language`]: the language a question (or an answer) is written in.
//! - [`places`]: which of the caller's buildings and rooms a question names; [`clarify`] the
//!   question back when a room name is in several of them.
//! - [`plan`]: the first live call made by rule when the question names one place and one
//!   thing.
//! - [`window`]: the past window a history question asks for.
//! - [`words`]: the words of a text as these rules read them.

pub mod clarify;
pub mod followup;
pub mod language;
pub mod places;
pub mod plan;
pub mod routing;
pub mod scope;
pub mod window;
pub mod words;
