//! Every error a client of the server sees: a status and `{"error": {"code", "message"}}` with a
//! fixed, safe message. Internals (SQL, provider bodies, claims, stack traces) are logged at
//! most, never sent.

use crate::agent::error::AgentError;
use crate::agent::model_choice::ModelChoiceError;
use crate::contract::{ErrorBody, ErrorDetail};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// `Retry-After` of an answer that failed because a service it needs was down.
const OUTAGE_RETRY_AFTER_SECONDS: u64 = 5;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
    /// `Retry-After` seconds (503 when shedding).
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    pub fn unauthenticated() -> ApiError {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            "authentication required",
        )
    }

    pub fn overloaded(retry_after: u64) -> ApiError {
        ApiError {
            retry_after: Some(retry_after),
            ..ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "overloaded",
                "too many answers in flight; retry shortly",
            )
        }
    }

    /// The identity provider's keys could not be read yet: retry, the token may be good.
    pub fn identity_unavailable(retry_after: u64) -> ApiError {
        ApiError {
            retry_after: Some(retry_after),
            ..ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "identity_unavailable",
                "the identity provider's keys could not be read; retry shortly",
            )
        }
    }

    /// One caller is over its own limits (429, distinct from the 503 of a full server).
    pub fn limited(refusal: super::limits::Refusal) -> ApiError {
        use super::limits::Refusal;
        let (code, message) = match refusal {
            Refusal::Busy => (
                "too_many_answers_in_flight",
                "too many of your answers are running; wait for one to finish",
            ),
            Refusal::RateLimited(_) => ("rate_limited", "too many requests; retry later"),
            Refusal::BudgetSpent(_) => (
                "budget_spent",
                "your token budget for this hour is spent; retry later",
            ),
        };
        ApiError {
            retry_after: Some(refusal.retry_after_seconds()),
            ..ApiError::new(StatusCode::TOO_MANY_REQUESTS, code, message)
        }
    }

    /// The server stopped before the answer was done.
    pub fn shutting_down() -> ApiError {
        ApiError {
            retry_after: Some(1),
            ..ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "shutting_down",
                "the server stopped before the answer was done; retry",
            )
        }
    }

    /// A service the answer needed was down (503) or too slow (504): retry shortly.
    pub fn outage(timed_out: bool, code: &'static str, message: impl Into<String>) -> ApiError {
        let status = if timed_out {
            StatusCode::GATEWAY_TIMEOUT
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        ApiError {
            retry_after: Some(OUTAGE_RETRY_AFTER_SECONDS),
            ..ApiError::new(status, code, message)
        }
    }

    pub fn deadline() -> ApiError {
        ApiError::new(
            StatusCode::GATEWAY_TIMEOUT,
            "deadline_exceeded",
            "the answer took longer than the request deadline",
        )
    }

    /// The JSON body alone (also the data of an SSE `error` event).
    pub fn body(&self) -> serde_json::Value {
        serde_json::to_value(ErrorBody {
            error: ErrorDetail {
                code: self.code,
                message: &self.message,
            },
        })
        .unwrap_or_default()
    }
}

impl From<AgentError> for ApiError {
    fn from(error: AgentError) -> ApiError {
        match error {
            AgentError::QuestionEmpty => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "question_empty",
                "the question is empty",
            ),
            AgentError::QuestionTooLong { limit } => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "question_too_long",
                format!("the question is longer than {limit} characters"),
            ),
            AgentError::ModelChoice(ModelChoiceError::Forbidden { min_role }) => ApiError::new(
                StatusCode::FORBIDDEN,
                "model_override_forbidden",
                format!("choosing the answer model needs the role {min_role} or higher"),
            ),
            AgentError::ModelChoice(
                ModelChoiceError::NotAllowed { .. } | ModelChoiceError::InvalidName,
            ) => ApiError::new(
                StatusCode::BAD_REQUEST,
                "model_not_allowed",
                "the requested model is not allowed",
            ),
            AgentError::Llm(error) if error.is_outage() => {
                tracing::warn!(%error, decision = "unavailable", "answer failed at the provider");
                let message = if error.is_timeout() {
                    crate::contract::PROVIDER_TIMED_OUT
                } else {
                    crate::contract::PROVIDER_UNAVAILABLE
                };
                ApiError::outage(error.is_timeout(), "provider_unavailable", message)
            }
            AgentError::Llm(error) => {
                tracing::warn!(%error, "answer failed at the provider");
                ApiError::new(
                    StatusCode::BAD_GATEWAY,
                    "provider_error",
                    crate::contract::PROVIDER_FAILED,
                )
            }
            AgentError::Unavailable(outage) => {
                tracing::warn!(error = %outage, decision = "unavailable", "answer failed: a service it needs is down");
                ApiError::outage(outage.timed_out, "unavailable", outage.to_string())
            }
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if self.status.is_client_error() {
            // Every refusal is diagnosable on the replica; the message is the one sent.
            tracing::info!(status = self.status.as_u16(), code = self.code, message = %self.message, "request refused");
        }
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if let Some(seconds) = self.retry_after {
            if let Ok(value) = HeaderValue::from_str(&seconds.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::error::{Outage, Service};
    use crate::agent::llm::LlmError;

    #[test]
    fn each_failure_kind_has_its_status_and_code() {
        let status = |status| LlmError::Status {
            status,
            detail: String::new(),
        };
        let outage = |service, timed_out| AgentError::Unavailable(Outage { service, timed_out });
        let rows: Vec<(AgentError, u16, &str, Option<u64>)> = vec![
            (
                AgentError::Llm(LlmError::Timeout),
                504,
                "provider_unavailable",
                Some(5),
            ),
            (
                AgentError::Llm(LlmError::Transport("refused".into())),
                503,
                "provider_unavailable",
                Some(5),
            ),
            (
                AgentError::Llm(status(429)),
                503,
                "provider_unavailable",
                Some(5),
            ),
            (
                AgentError::Llm(status(502)),
                503,
                "provider_unavailable",
                Some(5),
            ),
            (
                AgentError::Llm(LlmError::Truncated),
                503,
                "provider_unavailable",
                Some(5),
            ),
            (AgentError::Llm(status(400)), 502, "provider_error", None),
            (
                AgentError::Llm(LlmError::Malformed("x".into())),
                502,
                "provider_error",
                None,
            ),
            (
                outage(Service::DocumentationSearch, false),
                503,
                "unavailable",
                Some(5),
            ),
            (outage(Service::LiveData, true), 504, "unavailable", Some(5)),
        ];
        for (error, code_status, code, retry_after) in rows {
            let described = format!("{error:?}");
            let api = ApiError::from(error);
            assert_eq!(api.status.as_u16(), code_status, "{described}");
            assert_eq!(api.code, code, "{described}");
            assert_eq!(api.retry_after, retry_after, "{described}");
            assert!(
                !api.message.contains("know"),
                "{described}: {}",
                api.message
            );
        }
    }
}
