//! Retries under async-openai: a tower service that sees every response's status and headers
//! and retries 429, 5xx and refused connections with jittered backoff or after `Retry-After`,
//! never past the call's deadline; errors mapped onto the port's without provider bodies.

use super::BACKOFF_BASE;
use crate::agent::llm::LlmError;
use crate::http::{backoff, is_retryable, retry_after, MAX_RETRY_WAIT};
use async_openai::error::OpenAIError;
use async_openai::middleware::{HttpRequestFactory, ReqwestService};
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

/// The final status of a request that did not succeed, carried through async-openai so that
/// the status survives whatever the error body holds; `detail` is the bounded summary.
#[derive(Debug, thiserror::Error)]
#[error("HTTP {status}")]
pub(super) struct ProviderStatus {
    pub(super) status: u16,
    pub(super) detail: String,
}

/// Most of an error body read for its summary.
pub(super) const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// A tower service under async-openai that retries 429, 5xx and refused connections.
#[derive(Clone)]
pub(super) struct RetryingHttp {
    pub(super) inner: ReqwestService,
    pub(super) max_retries: u32,
    pub(super) deadline: Duration,
    pub(super) base_url: std::sync::Arc<str>,
}

impl tower::Service<HttpRequestFactory> for RetryingHttp {
    type Response = reqwest::Response;
    type Error = OpenAIError;
    type Future = Pin<Box<dyn Future<Output = Result<reqwest::Response, OpenAIError>> + Send>>;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), OpenAIError>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: HttpRequestFactory) -> Self::Future {
        Box::pin(self.clone().send(request))
    }
}

impl RetryingHttp {
    pub(super) async fn send(
        mut self,
        request: HttpRequestFactory,
    ) -> Result<reqwest::Response, OpenAIError> {
        use tower::Service;
        let give_up_at = Instant::now() + self.deadline;
        let mut retries = 0;
        loop {
            let result = self.inner.call(request.clone()).await;
            let (wait, requested) = match &result {
                Ok(response) if response.status().is_success() => return result,
                Ok(response) if is_retryable(response.status()) => {
                    match retry_after(response.headers()) {
                        Some(wait) => (wait, true),
                        None => (backoff(BACKOFF_BASE, retries + 1), false),
                    }
                }
                Err(OpenAIError::Reqwest(e)) if e.is_connect() => {
                    (backoff(BACKOFF_BASE, retries + 1), false)
                }
                _ => return final_result(result).await,
            };
            let left = give_up_at.saturating_duration_since(Instant::now());
            if requested && (wait > MAX_RETRY_WAIT || wait > left) {
                // Waiting less than asked would only be refused again: fail now, saying why.
                let status = result.as_ref().map_or(503, |r| r.status().as_u16());
                return Err(OpenAIError::Boxed(Box::new(ProviderStatus {
                    status,
                    detail: format!(
                        "asked to retry after {} s, more than the {} s this call may still wait",
                        wait.as_secs(),
                        left.min(MAX_RETRY_WAIT).as_secs()
                    ),
                })));
            }
            if retries >= self.max_retries || wait > left {
                // One warning per call that failed for good, naming where it went.
                let failure = match &result {
                    Ok(response) => format!("HTTP {}", response.status().as_u16()),
                    Err(OpenAIError::Reqwest(e)) => crate::http::describe_error(e),
                    Err(other) => other.to_string().chars().take(160).collect(),
                };
                tracing::warn!(
                    url = %self.base_url,
                    attempts = retries + 1,
                    %failure,
                    "provider call failed"
                );
                return final_result(result).await;
            }
            retries += 1;
            tracing::debug!(
                retry = retries,
                wait_ms = wait.as_millis() as u64,
                "provider call failed; retrying"
            );
            tokio::time::sleep(wait).await;
        }
    }
}

/// An unsuccessful response becomes its status and a bounded summary of its body; the body
/// itself goes no further.
pub(super) async fn final_result(
    result: Result<reqwest::Response, OpenAIError>,
) -> Result<reqwest::Response, OpenAIError> {
    match result {
        Ok(response) if !response.status().is_success() => {
            let status = response.status().as_u16();
            let body = crate::http::bounded_body(response, MAX_ERROR_BODY_BYTES).await;
            Err(OpenAIError::Boxed(Box::new(ProviderStatus {
                status,
                detail: crate::http::error_summary(&body),
            })))
        }
        other => other,
    }
}

/// Maps async-openai's errors onto the port's, without the provider's response bodies.
pub(super) fn from_openai(error: OpenAIError) -> LlmError {
    match error {
        OpenAIError::Boxed(boxed) => match boxed.downcast::<ProviderStatus>() {
            Ok(status) => LlmError::Status {
                status: status.status,
                detail: status.detail,
            },
            Err(other) => LlmError::Transport(other.to_string()),
        },
        OpenAIError::ApiError(api) => LlmError::Status {
            status: api.status_code.as_u16(),
            detail: String::new(),
        },
        OpenAIError::Reqwest(e) if e.is_timeout() => LlmError::Timeout,
        OpenAIError::Reqwest(e) if e.is_decode() => {
            LlmError::Malformed("the body could not be decoded".to_string())
        }
        OpenAIError::Reqwest(e) if e.is_body() => LlmError::Truncated,
        OpenAIError::Reqwest(e) => LlmError::Transport(crate::http::describe_error(&e)),
        // serde's message quotes the body it choked on: say where only.
        OpenAIError::JSONDeserialize(e, _) => LlmError::Malformed(format!(
            "not the expected JSON (line {}, column {})",
            e.line(),
            e.column()
        )),
        // Stream errors may quote the event they choked on: say what kind of failure only.
        OpenAIError::StreamError(_) => LlmError::Transport("the event stream broke".to_string()),
        other => LlmError::Malformed(format!("unexpected response ({})", error_kind(&other))),
    }
}

/// The kind of an async-openai error, without its text (which may quote the provider).
pub(super) fn error_kind(error: &OpenAIError) -> &'static str {
    match error {
        OpenAIError::InvalidArgument(_) => "invalid argument",
        OpenAIError::FileSaveError(_) | OpenAIError::FileReadError(_) => "file",
        _ => "other",
    }
}
