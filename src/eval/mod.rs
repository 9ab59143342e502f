//! Golden-dataset evaluation: cases that pin behaviour (tools fired, sources cited,
//! substrings, IDK, decision, a judge's rubric) rather than wording.
//!
//! - [`dataset`]: the YAML schema, loaded from files or folders and checked before any run.
//! - [`check`]: the deterministic assertions (pure).
//! - [`judge`]: the LLM judge and the rule that picks its model.
//! - [`runner`]: jobs with bounded concurrency, timeouts and repeats, over an
//!   [`runner::AnswerTarget`].
//! - [`report`]: statuses, summaries, sweeps and the baseline diff (pure data, the JSON report).
//! - [`formats`]: JUnit XML and Markdown.

pub mod check;
pub mod dataset;
pub mod formats;
pub mod judge;
pub mod report;
pub mod runner;
