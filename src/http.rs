//! Shared HTTP plumbing for the outbound adapters (LLM, embeddings, reranker, downstream
//! services): one way to build a client, one backoff rule, one reading of `Retry-After`.

use std::sync::Once;
use std::time::Duration;

/// The longest `Retry-After` honoured; a provider asking for more is treated as down.
pub const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

/// A reqwest client builder with TLS through ring. Every outbound client starts here.
pub fn client_builder() -> reqwest::ClientBuilder {
    static INSTALL_PROVIDER: Once = Once::new();
    INSTALL_PROVIDER.call_once(|| {
        // Fails only when another provider is already installed, which is just as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    reqwest::Client::builder()
}

/// Exponential backoff from `base` for retry number `attempt` (1-based), capped at 8 s, plus up
/// to 25% random jitter so that clients failing together do not retry together.
pub fn backoff(base: Duration, attempt: u32) -> Duration {
    let exponential = base
        .saturating_mul(2u32.saturating_pow(attempt.saturating_sub(1).min(10)))
        .min(Duration::from_secs(8));
    exponential + exponential.mul_f64(rand::random::<f64>() / 4.0)
}

/// `Retry-After` in seconds, capped at [`MAX_RETRY_WAIT`]. The HTTP-date form is rare from these
/// APIs and is ignored (the caller falls back to its backoff).
pub fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let seconds: f64 = headers
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    (seconds.is_finite() && seconds >= 0.0)
        .then(|| Duration::from_secs_f64(seconds).min(MAX_RETRY_WAIT))
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
        assert_eq!(retry_after(&headers), Some(MAX_RETRY_WAIT));
        headers.insert(reqwest::header::RETRY_AFTER, "soon".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
        headers.insert(reqwest::header::RETRY_AFTER, "-3".parse().unwrap());
        assert_eq!(retry_after(&headers), None);
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
