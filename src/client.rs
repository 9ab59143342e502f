//! ADAPTER for a running `serve`: the CLI (`ask --server`, `eval --server`) as an HTTP client
//! of `POST /ask`, JSON or server-sent events, with the same response object and events as in
//! process. Identity travels the way a gateway would send it: the claims header, or a bearer
//! development token.

use crate::contract::{AgentEvent, AskRequest, AskResponse, Question};
use tokio::sync::mpsc::UnboundedSender;

/// Longest error body read from the server.
const MAX_ERROR_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    #[error("{url} answered {status}{}: {message}", if code.is_empty() { String::new() } else { format!(" {code}") })]
    Status {
        url: String,
        status: u16,
        code: String,
        message: String,
    },
    #[error("{url} answered with an error event {code}: {message}")]
    Event {
        url: String,
        code: String,
        message: String,
    },
    #[error("the server could not be reached: {0}")]
    Transport(String),
    #[error("the server's response is malformed: {0}")]
    Malformed(String),
    #[error("{0} is not an http(s) URL")]
    BadUrl(String),
}

/// How the caller identifies itself to the server.
#[derive(Debug, Clone)]
pub enum RemoteIdentity {
    /// The `x-gateway-claims` value (base64 of the claims JSON).
    Claims(String),
    /// A development token, sent as `Authorization: Bearer`.
    Token(String),
    Anonymous,
}

pub struct RemoteAgent {
    ask_url: String,
    http: reqwest::Client,
}

impl RemoteAgent {
    pub fn new(base_url: &str) -> Result<RemoteAgent, ClientError> {
        let base = url::Url::parse(base_url).map_err(|_| ClientError::BadUrl(base_url.into()))?;
        if !matches!(base.scheme(), "http" | "https") {
            return Err(ClientError::BadUrl(base_url.into()));
        }
        let http = crate::http::client_builder()
            .build()
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        Ok(RemoteAgent {
            ask_url: format!("{}/ask", base.as_str().trim_end_matches('/')),
            http,
        })
    }

    /// One answer; with `events`, streamed and each event passed on as it arrives.
    pub async fn ask(
        &self,
        question: &Question,
        identity: &RemoteIdentity,
        events: Option<&UnboundedSender<AgentEvent>>,
    ) -> Result<AskResponse, ClientError> {
        let body = AskRequest {
            question: question.text.clone(),
            stream: events.is_some(),
            model: question.model.clone(),
            top_k: question.top_k,
            history: question.history.clone(),
            conversation_id: None,
        };
        let mut request = self.http.post(&self.ask_url).json(&body);
        request = match identity {
            RemoteIdentity::Claims(header) => request.header("x-gateway-claims", header),
            RemoteIdentity::Token(token) => request.bearer_auth(token),
            RemoteIdentity::Anonymous => request,
        };
        let response = request.send().await.map_err(|e| {
            ClientError::Transport(format!(
                "{} ({})",
                self.ask_url,
                crate::http::describe_error(&e)
            ))
        })?;
        if !response.status().is_success() {
            return Err(status_error(response, &self.ask_url).await);
        }
        match events {
            None => response
                .json::<AskResponse>()
                .await
                .map_err(|e| ClientError::Malformed(e.without_url().to_string())),
            Some(sender) => read_events(response, sender, &self.ask_url).await,
        }
    }
}

/// The server's own error: its JSON `code` and `message`, or (from a proxy or gateway in
/// between) the first line of its text, or the status's reason.
async fn status_error(response: reqwest::Response, url: &str) -> ClientError {
    let status = response.status();
    let body = crate::http::bounded_body(response, MAX_ERROR_BYTES).await;
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let clean = |text: &str| -> String {
        text.chars()
            .filter(|c| !c.is_control())
            .take(200)
            .collect::<String>()
            .trim()
            .to_string()
    };
    let field = |name: &str| clean(json["error"][name].as_str().unwrap_or_default());
    let mut message = field("message");
    if message.is_empty() && !json.is_object() {
        message = clean(
            String::from_utf8_lossy(&body)
                .lines()
                .next()
                .unwrap_or_default(),
        );
    }
    if message.is_empty() {
        message = status
            .canonical_reason()
            .unwrap_or("no message")
            .to_lowercase();
    }
    if status == reqwest::StatusCode::UNAUTHORIZED {
        message.push_str(
            " (log in: --claims FILE or --token JWT, as the server's identity mode expects)",
        );
    }
    ClientError::Status {
        url: url.to_string(),
        status: status.as_u16(),
        code: field("code"),
        message,
    }
}

/// Reads server-sent events until `done` (the response) or `error`.
async fn read_events(
    mut response: reqwest::Response,
    sender: &UnboundedSender<AgentEvent>,
    url: &str,
) -> Result<AskResponse, ClientError> {
    let mut buffer = String::new();
    loop {
        let chunk = response
            .chunk()
            .await
            .map_err(|e| ClientError::Transport(e.without_url().to_string()))?;
        let Some(chunk) = chunk else {
            return Err(ClientError::Malformed(
                "the stream ended before `done`".into(),
            ));
        };
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            if let Some(done) = handle_event(&block, sender, url)? {
                return Ok(done);
            }
        }
    }
}

fn handle_event(
    block: &str,
    sender: &UnboundedSender<AgentEvent>,
    url: &str,
) -> Result<Option<AskResponse>, ClientError> {
    let mut name = "";
    let mut data = String::new();
    for line in block.lines() {
        if let Some(value) = line.strip_prefix("event:") {
            name = value.trim();
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push_str(value.strip_prefix(' ').unwrap_or(value));
        }
    }
    let malformed = |e: serde_json::Error| ClientError::Malformed(e.to_string());
    match name {
        "done" => Ok(Some(serde_json::from_str(&data).map_err(malformed)?)),
        "error" => {
            let json: serde_json::Value = serde_json::from_str(&data).map_err(malformed)?;
            Err(ClientError::Event {
                url: url.to_string(),
                code: json["error"]["code"].as_str().unwrap_or_default().into(),
                message: json["error"]["message"].as_str().unwrap_or_default().into(),
            })
        }
        "token" | "tool_call" | "tool_result" | "retract" => {
            let event: AgentEvent = serde_json::from_str(&data).map_err(malformed)?;
            let _ = sender.send(event);
            Ok(None)
        }
        _ => Ok(None), // keep-alive comments and unknown events
    }
}
