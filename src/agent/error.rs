//! Why an answer was not given: the question was refused before any call, the model override
//! was not allowed, or the provider failed.

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
