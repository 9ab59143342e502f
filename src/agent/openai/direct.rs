//! The one-response call (`stream: false`) posted without async-openai's client: the URL and
//! headers are built once per adapter instead of formatted, parsed and merged per call (7 of
//! the 87 µs of CPU a served one-call answer cost, BENCHMARKS.md). Same request on the wire as async-openai
//! sends for a streamed call (a test holds the two together), same retries ([`RetryingHttp`]),
//! same error mapping.

use super::retry::RetryingHttp;
use super::wire::WireResponse;
use async_openai::error::OpenAIError;
use async_openai::middleware::HttpRequestFactory;
use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use std::sync::Arc;

/// Where every chat-completions call goes and what it says about itself.
pub(super) struct Endpoint {
    url: reqwest::Url,
    headers: HeaderMap,
}

impl Endpoint {
    /// `{base_url}/chat/completions` with the bearer key, the attribution header and the JSON
    /// content type; an API key that is not a valid header value is a transport error at call
    /// time, not a panic.
    pub(super) fn new(base_url: &reqwest::Url, api_key: &str) -> Result<Endpoint, String> {
        let mut url = base_url.clone();
        let path = format!("{}/chat/completions", url.path().trim_end_matches('/'));
        url.set_path(&path);
        let mut authorization = HeaderValue::from_str(&format!("Bearer {api_key}"))
            .map_err(|_| "the API key holds characters an HTTP header cannot carry".to_string())?;
        authorization.set_sensitive(true);
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, authorization);
        headers.insert("x-title", HeaderValue::from_static(super::TITLE));
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        Ok(Endpoint { url, headers })
    }

    fn request(&self, body: Bytes) -> reqwest::Request {
        let mut request = reqwest::Request::new(reqwest::Method::POST, self.url.clone());
        *request.headers_mut() = self.headers.clone();
        *request.body_mut() = Some(body.into());
        request
    }
}

/// Posts `body` to `endpoint` through `http` (retries included) and reads the one response.
pub(super) async fn complete(
    http: &RetryingHttp,
    endpoint: &Arc<Endpoint>,
    body: Vec<u8>,
) -> Result<WireResponse, OpenAIError> {
    let body = Bytes::from(body);
    let endpoint = endpoint.clone();
    let factory = HttpRequestFactory::new(move || {
        let request = endpoint.request(body.clone());
        async move { Ok(request) }
    });
    let response = http.clone().send(factory).await?;
    let bytes = response.bytes().await.map_err(OpenAIError::Reqwest)?;
    // The body is not quoted onward: `from_openai` keeps only the position.
    serde_json::from_slice(&bytes)
        .map_err(|error| OpenAIError::JSONDeserialize(error, String::new()))
}

#[cfg(test)]
mod tests {
    use super::super::OpenAiChat;
    use crate::agent::llm::{ChatModel, ChatRequest, Message, ToolChoice};
    use crate::config::{Config, RawSettings};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Serves one request on `listener` with `reply` and returns its request line and headers,
    /// lowercased and sorted, without those that depend on the connection or the body.
    async fn one_request_head(listener: &tokio::net::TcpListener, reply: &str) -> Vec<String> {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut seen = Vec::new();
        let mut buffer = [0u8; 4096];
        let head_end = loop {
            let read = socket.read(&mut buffer).await.unwrap();
            seen.extend_from_slice(&buffer[..read]);
            if let Some(end) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                break end;
            }
        };
        let head = String::from_utf8(seen[..head_end].to_vec()).unwrap();
        socket.write_all(reply.as_bytes()).await.unwrap();
        let mut lines: Vec<String> = head
            .lines()
            .map(str::to_ascii_lowercase)
            .filter(|line| {
                !["content-length:", "host:", "accept:", "transfer-encoding:"]
                    .iter()
                    .any(|skip| line.starts_with(skip))
            })
            .collect();
        lines.sort();
        lines
    }

    fn reply(content_type: &str, body: &str) -> String {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
    }

    #[tokio::test]
    async fn a_one_response_call_sends_the_head_async_openai_sends_for_a_stream() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/api/v1/", listener.local_addr().unwrap());
        let config = Config::from_raw(&RawSettings::from_pairs([
            ("LLM_BASE_URL", base.as_str()),
            ("OPENROUTER_API_KEY", "sk-test"),
        ]))
        .unwrap();
        let chat = OpenAiChat::new(&config.llm);
        let messages = [Message::user("hi")];
        let request = || ChatRequest {
            model: "m",
            messages: &messages,
            tools: &[],
            temperature: 0.0,
            max_output_tokens: 10,
            response_schema: None,
            tool_choice: ToolChoice::Auto,
        };
        let answered = r#"{"choices":[{"message":{"content":"hello"},"finish_reason":"stop"}]}"#;
        let one = reply("application/json", answered);
        let (direct, turn) = tokio::join!(
            one_request_head(&listener, &one),
            chat.chat(request(), None)
        );
        assert_eq!(turn.unwrap().message.content.as_deref(), Some("hello"));
        let streamed = "data: {\"choices\":[{\"delta\":{\"content\":\"hello\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
        let sink = |_: &str| {};
        let stream = reply("text/event-stream", streamed);
        let (through_async_openai, turn) = tokio::join!(
            one_request_head(&listener, &stream),
            chat.chat(request(), Some(&sink))
        );
        assert_eq!(turn.unwrap().message.content.as_deref(), Some("hello"));
        assert!(direct.contains(&"post /api/v1/chat/completions http/1.1".to_string()));
        assert!(direct.contains(&"authorization: bearer sk-test".to_string()));
        assert_eq!(direct, through_async_openai);
    }
}
