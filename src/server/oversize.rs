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

/// Part of the request-counting middleware (`server::routes`): see the module's comment.
/// `limit` is the body limit in bytes.
pub async fn drain_oversized(limit: usize, request: Request, next: Next) -> Response {
    let declared = declared_length(&request);
    if declared.is_none_or(|length| length <= limit as u64) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // When the rest was not read, hyper sees the unread body and closes the connection.
    let head = head_of(body, limit + 1).await;
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

/// The first `keep` bytes of the body; the rest is read and dropped, up to [`DRAIN_CAP`]
/// bytes within [`DRAIN_DEADLINE`].
async fn head_of(body: Body, keep: usize) -> Bytes {
    let mut frames = body.into_data_stream();
    let mut head = Vec::with_capacity(keep.min(1 << 20));
    let mut read: u64 = 0;
    let reading = async {
        while let Some(Ok(data)) = frames.next().await {
            read += data.len() as u64;
            let room = keep.saturating_sub(head.len());
            head.extend_from_slice(&data[..data.len().min(room)]);
            if read > DRAIN_CAP {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_DEADLINE, reading).await;
    Bytes::from(head)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A body of `chunks` chunks of 1 MiB, counting how many were read.
    fn counted(chunks: usize) -> (Body, Arc<AtomicUsize>) {
        let pulled = Arc::new(AtomicUsize::new(0));
        let counter = pulled.clone();
        let stream = futures::stream::iter(0..chunks).map(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
            Ok::<_, std::io::Error>(Bytes::from(vec![7u8; 1024 * 1024]))
        });
        (Body::from_stream(stream), pulled)
    }

    #[tokio::test]
    async fn keeps_the_head_and_reads_the_rest() {
        let (body, pulled) = counted(3);
        assert_eq!(head_of(body, 1025).await.len(), 1025);
        assert_eq!(pulled.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_body_past_the_cap_is_not_read_to_its_end() {
        let (body, pulled) = counted(20);
        assert_eq!(head_of(body, 10).await.len(), 10);
        // 16 MiB is reached after the 16th chunk; the 17th passes it and reading stops.
        assert_eq!(pulled.load(Ordering::SeqCst), 17);
    }
}
