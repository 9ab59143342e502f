//! Reading the rest of a body that is declared larger than the limit, so that its sender
//! receives the 413.
//!
//! A handler refuses such a body after the first `limit + 1` bytes. If the connection then
//! closes while the client is still sending, the kernel resets it and most clients (httpx, the
//! `openai` SDK, curl) report "server disconnected" instead of the 413. So the rest of the body
//! is read and discarded first, up to [`DRAIN_CAP`] bytes and [`DRAIN_DEADLINE`]; past either
//! the connection is simply closed. Bodies without a declared length are left to the handler.

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::header::CONTENT_LENGTH;
use axum::middleware::Next;
use axum::response::Response;
use futures::StreamExt;
use std::time::Duration;

/// The most a refused body is read for its sender's sake.
pub const DRAIN_CAP: u64 = 16 * 1024 * 1024;
/// How long a refused body is read at most.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(5);

/// Middleware: see the module's comment. `limit` is the body limit in bytes.
pub async fn drain_oversized(limit: usize, request: Request, next: Next) -> Response {
    let declared = declared_length(&request);
    if declared.is_none_or(|length| length <= limit as u64) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // When the rest was not read, hyper sees the unread body and closes the connection.
    let (head, _drained) = split_body(body, limit + 1).await;
    next.run(Request::from_parts(parts, Body::from(head))).await
}

fn declared_length(request: &Request) -> Option<u64> {
    request
        .headers()
        .get(CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The first `keep` bytes of the body, and whether all of the rest was read (and dropped)
/// within the cap and the deadline.
async fn split_body(body: Body, keep: usize) -> (Bytes, bool) {
    let mut frames = body.into_data_stream();
    let mut head = Vec::with_capacity(keep.min(1 << 20));
    let mut read: u64 = 0;
    let reading = async {
        while let Some(frame) = frames.next().await {
            let Ok(data) = frame else { return false };
            read += data.len() as u64;
            let room = keep.saturating_sub(head.len());
            head.extend_from_slice(&data[..data.len().min(room)]);
            if read > DRAIN_CAP {
                return false;
            }
        }
        true
    };
    let drained = tokio::time::timeout(DRAIN_DEADLINE, reading)
        .await
        .unwrap_or(false);
    (Bytes::from(head), drained)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_head_and_reads_the_rest() {
        let body = Body::from(vec![7u8; 100_000]);
        let (head, drained) = split_body(body, 1025).await;
        assert_eq!(head.len(), 1025);
        assert!(drained);
    }

    #[tokio::test]
    async fn a_body_past_the_cap_is_not_read_to_its_end() {
        let chunks = futures::stream::iter(
            (0..20).map(|_| Ok::<_, std::io::Error>(Bytes::from(vec![0u8; 1024 * 1024]))),
        );
        let (head, drained) = split_body(Body::from_stream(chunks), 10).await;
        assert_eq!(head.len(), 10);
        assert!(!drained);
    }
}
