//! Why an answer was not given: the question was refused before any call, the model override
//! was not allowed, the provider failed, or a service the answer needed (the documentation
//! search, the live building data) was down.

use crate::agent::llm::LlmError;
use crate::agent::model_choice::ModelChoiceError;
use crate::contract::is_blank;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgentError {
    #[error("the question is longer than {limit} characters")]
    QuestionTooLong { limit: usize },
    #[error("the question is empty (nothing visible in it)")]
    QuestionEmpty,
    #[error(transparent)]
    ModelChoice(#[from] ModelChoiceError),
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("{0}")]
    Unavailable(Outage),
}

impl AgentError {
    /// The answer failed because something it depends on was down or slow (the provider, the
    /// documentation search, the live data), not because of the question: `decision`
    /// `unavailable` in logs and metrics, 503/504 with `Retry-After` over HTTP.
    pub fn is_outage(&self) -> bool {
        match self {
            AgentError::Unavailable(_) => true,
            AgentError::Llm(error) => error.is_outage(),
            _ => false,
        }
    }
}

/// A service an answer needed failed for reasons of its own, not the question's: the answer
/// is an error, never "I don't know" (which would tell the user the information does not
/// exist).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outage {
    pub service: Service,
    /// It did not answer in time (rather than refusing or being unreachable).
    pub timed_out: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    DocumentationSearch,
    LiveData,
}

impl Outage {
    /// The error kind of spans and logs: `timeout` or `unavailable`.
    pub fn kind(self) -> &'static str {
        if self.timed_out {
            "timeout"
        } else {
            "unavailable"
        }
    }
}

impl std::fmt::Display for Outage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let service = match self.service {
            Service::DocumentationSearch => "the documentation search",
            Service::LiveData => "the live building data",
        };
        let failure = if self.timed_out {
            "did not answer in time"
        } else {
            "is unavailable"
        };
        write!(f, "{service} {failure}; try again shortly")
    }
}

/// What is wrong with a question before it is answered, if anything: it shows nothing, or it
/// is longer than `limit` characters. The one rule the library, `serve` and every client share.
pub fn question_refusal(text: &str, limit: usize) -> Option<AgentError> {
    if is_blank(text) {
        Some(AgentError::QuestionEmpty)
    } else if text.chars().count() > limit {
        Some(AgentError::QuestionTooLong { limit })
    } else {
        None
    }
}
