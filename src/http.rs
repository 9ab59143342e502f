//! Shared HTTP plumbing for the outbound adapters (LLM, embeddings, reranker, downstream
//! services): one way to build a client, one backoff rule, one reading of `Retry-After`.

use std::sync::Once;
use std::time::Duration;

/// The longest `Retry-After` honoured; a provider asking for more is treated as down, and
/// the call fails at once naming the wait it asked for.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// Longest error summary kept from a response body.
const MAX_SUMMARY_CHARS: usize = 160;

/// A reqwest client builder with TLS through ring. Every outbound client starts here.
pub fn client_builder() -> reqwest::ClientBuilder {
    static INSTALL_PROVIDER: Once = Once::new();
    INSTALL_PROVIDER.call_once(|| {
        // Fails only when another provider is already installed, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
}

/// A transport error in a few words, without the URL (callers name it once themselves).
pub fn describe_error(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        "timed out".to_string()
    } else if error.is_connect() {
        "could not connect".to_string()
    } else if error.is_body() || error.is_decode() {
        "the response body could not be read".to_string()
    } else {
        let mut text = error.to_string();
        if let Some(url) = error.url() {
            text = text
                .replace(&format!(" ({url})"), "")
                .replace(url.as_str(), "");
        }
        text
    }
}

/// Why a body was not read whole by [`read_capped`].
#[derive(Debug)]
pub enum CappedBody {
    /// Larger than the cap (declared, or found while reading).
    TooLarge,
    /// The transfer failed.
    Transport(reqwest::Error),
}

/// The whole body of `response`, refused as soon as it is known to pass `max_bytes`: from its
/// declared length before anything is read, else while it is read.
pub async fn read_capped(
    mut response: reqwest::Response,
    max_bytes: usize,
) -> Result<Vec<u8>, CappedBody> {
    if response
        .content_length()
        .is_some_and(|length| length > max_bytes as u64)
    {
        return Err(CappedBody::TooLarge);
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(CappedBody::Transport)? {
        if body.len() + chunk.len() > max_bytes {
            return Err(CappedBody::TooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// Exponential backoff from `base` for retry number `attempt` (1-based), capped at 8 s, plus up
/// to 25% random jitter so that clients failing together do not retry together.
pub fn backoff(base: Duration, attempt: u32) -> Duration {
    let exponential = base
        .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1).min(10)))
        .min(Duration::from_secs(8));
    exponential + exponential.mul_f64(rand::random::<f64>() / 4.0)
}

/// `Retry-After` in seconds, as requested (callers compare it with [`MAX_RETRY_WAIT`] and their
/// deadline). The HTTP-date form is rare from these APIs and is ignored (the caller falls back
/// to its backoff).
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let seconds: f64 = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(1e9)))
}

/// What an operator may see of an error body: the `code` and `message` of a JSON error object
/// (`{"error": {"code", "message"}}`, `{"error": "…"}` or `{"message": "…"}`), without control
/// characters and cut short. Anything else (an HTML page, a stack trace) gives nothing.
pub fn error_summary(body: &[u8]) -> String {
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) else {
        return String::new();
    };
    let error = json.get("error").unwrap_or(&json);
    let text = |v: Option<&serde_json::Value>| match v {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let (code, message) = match error {
        serde_json::Value::String(message) => (None, Some(message.clone())),
        _ => (
            text(error.get("code")).or_else(|| text(error.get("type"))),
            text(error.get("message")),
        ),
    };
    let joined = match (code, message) {
        (Some(code), Some(message)) => format!("{code}: {message}"),
        (Some(only), None) | (None, Some(only)) => only,
        (None, None) => return String::new(),
    };
    let clean: String = joined
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .filter(|c| !crate::text::is_invisible(*c))
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if clean.chars().count() > MAX_SUMMARY_CHARS {
        let cut: String = clean.chars().take(MAX_SUMMARY_CHARS).collect();
        format!("{cut}…")
    } else {
        clean
    }
}

/// At most `max_bytes` of a response's body (for error summaries: the rest is not read).
pub async fn bounded_body(mut response: reqwest::Response, max_bytes: usize) -> Vec<u8> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= max_bytes {
            break;
        }
    }
    body
}

/// Whether a response status is worth another attempt.
pub fn is_retryable(status: reqwest::StatusCode) -> bool {
    status.as_u16() == 429 || status.is_server_error()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_reads_seconds_and_caps_them() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert(reqwest::header::RETRY_AFTER, "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert(reqwest::header::RETRY_AFTER, "0.5".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(500)));
        headers.insert(reqwest::header::RETRY_AFTER, "9999".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(9999)));
        headers.insert(reqwest::header::RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
        headers.insert(reqwest::header::RETRY_AFTER, "-3".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
    }

    #[test]
    fn error_summaries_keep_code_and_message_only() {
        assert_eq!(
            error_summary(br#"{"error":{"code":"rate_limited","message":"Slow\ndown\u0007 please","type":"x"}}"#),
            "rate_limited: Slow down please"
        );
        assert_eq!(
            error_summary(br#"{"error":"model not found"}"#),
            "model not found"
        );
        assert_eq!(
            error_summary(
                b"<html><body>Traceback (most recent call last) SELECT * FROM users</body></html>"
            ),
            ""
        );
        assert_eq!(error_summary(br#"{"detail":"internal"}"#), "");
        let long = format!(r#"{{"message":"{}"}}"#, "x".repeat(1000));
        assert!(error_summary(long.as_bytes()).chars().count() <= MAX_SUMMARY_CHARS + 1);
    }

    #[test]
    fn backoff_grows_with_jitter_and_is_capped() {
        let base = Duration::from_millis(100);
        for attempt in 1..=3 {
            let wait = backoff(base, attempt);
            let floor = base * 2u32.pow(attempt - 1);
            assert!(wait >= floor && wait <= floor.mul_f64(1.25), "{wait:?}");
        }
        assert!(backoff(base, 30) <= Duration::from_secs(10));
    }
}
