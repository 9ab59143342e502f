//! A service the answer needs is down: every route says so as an error (503, or 504 for a
//! timeout, with `Retry-After`), never as "I don't know". The live-data services are real
//! HTTP addresses nobody listens on; the provider is the scripted one (hanging, or gone).

use crate::provider::{answer, streamed_answer, streamed_tool_calls, tool_calls, usage, Reply};
use crate::server::{client, shown_text, sse_events, start, start_with, STAFF};
use crowdvision_agent::agent::tools::standard_registry;
use serde_json::{json, Value};
use std::time::Duration;

const IDK: &str = "I don't know based on the available CrowdVision information.";
const QUESTION: &str = "How many people are in room hq-101 of building acme-hq right now?";

/// A server whose live-data services refuse every connection, and a model that calls
/// `get_occupancy`, then does not know (streamed when asked to stream).
async fn live_services_down() -> crate::server::Running {
    let nobody = "http://127.0.0.1:9";
    let s = start_with(
        vec![],
        &[
            ("SCOPE_CHECK", "false"),
            ("TWIN_SERVICE_URL", nobody),
            ("SENSOR_SERVICE_URL", nobody),
        ],
        standard_registry,
    )
    .await;
    s.provider.set_rule(|body| {
        let messages = body["messages"].as_array().unwrap();
        let call = [(
            "c1",
            "get_occupancy",
            r#"{"building_id":"acme-hq","room_id":"hq-101"}"#,
        )];
        if !messages.iter().any(|m| m["role"] == "tool") {
            return Some(if body["stream"] == true {
                streamed_tool_calls(&call, 8, usage(10, 5))
            } else {
                tool_calls(&call, usage(10, 5))
            });
        }
        Some(if body["stream"] == true {
            streamed_answer(
                &[
                    "I don't know ",
                    "based on the available ",
                    "CrowdVision information.",
                ],
                usage(10, 5),
                Duration::ZERO,
            )
        } else {
            answer(IDK, usage(10, 5))
        })
    });
    s
}

fn assert_outage(status: reqwest::StatusCode, retry_after: Option<&str>, body: &str) {
    assert_eq!(status, 503, "{body}");
    assert!(
        retry_after.is_some_and(|s| s.parse::<u64>().is_ok()),
        "{retry_after:?}"
    );
    assert!(!body.contains(IDK), "{body}");
    assert!(
        body.contains("the live building data is unavailable"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_live_service_that_is_down_is_an_error_on_every_route() {
    let s = live_services_down().await;

    let response = s
        .ask(Some(STAFF), json!({"question": QUESTION}))
        .send()
        .await
        .unwrap();
    let (status, retry_after) = (response.status(), header(&response, "retry-after"));
    let body = response.text().await.unwrap();
    assert_outage(status, retry_after.as_deref(), &body);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], "unavailable");

    // A stream that showed the model's text withdraws it, then ends in the error.
    let response = s
        .ask(Some(STAFF), json!({"question": QUESTION, "stream": true}))
        .send()
        .await
        .unwrap();
    let events = sse_events(&response.text().await.unwrap());
    let names: Vec<&str> = events.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.last(), Some(&"error"), "{names:?}");
    assert!(!names.contains(&"done"), "{names:?}");
    assert_eq!(shown_text(&events), "", "{events:?}");
    if names.contains(&"token") {
        assert!(names.contains(&"retract"), "{names:?}");
    }
    let error: Value = serde_json::from_str(&events.last().unwrap().1).unwrap();
    assert_eq!(error["error"]["code"], "unavailable");

    let response = client()
        .post(format!("{}/v1/chat/completions", s.url))
        .header("x-gateway-claims", STAFF)
        .json(&json!({"messages": [{"role": "user", "content": QUESTION}]}))
        .send()
        .await
        .unwrap();
    let (status, retry_after) = (response.status(), header(&response, "retry-after"));
    assert_outage(
        status,
        retry_after.as_deref(),
        &response.text().await.unwrap(),
    );

    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                      "params": {"name": "ask", "arguments": {"question": QUESTION}}});
    let response = client()
        .post(format!("{}/mcp", s.url))
        .header("x-gateway-claims", STAFF)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .json(&call)
        .send()
        .await
        .unwrap();
    let text = response.text().await.unwrap();
    assert!(text.contains(r#""isError":true"#), "{text}");
    assert!(
        text.contains("the live building data is unavailable"),
        "{text}"
    );
    assert!(!text.contains(IDK), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_that_hangs_is_a_504_and_one_that_is_gone_a_503() {
    let s = start(
        vec![Reply::Hang(Duration::from_secs(30))],
        &[
            ("SCOPE_CHECK", "false"),
            ("SEARCH_FIRST", "false"),
            ("LLM_TIMEOUT_SECONDS", "1"),
        ],
    )
    .await;
    let response = s
        .ask(Some(STAFF), json!({"question": "Is the lobby open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 504);
    assert!(header(&response, "retry-after").is_some());
    let body = response.text().await.unwrap();
    assert!(body.contains("did not answer in time"), "{body}");

    let gone = start(
        vec![],
        &[
            ("SCOPE_CHECK", "false"),
            ("SEARCH_FIRST", "false"),
            ("LLM_BASE_URL", "http://127.0.0.1:9/v1"),
        ],
    )
    .await;
    for stream in [false, true] {
        let response = gone
            .ask(
                Some(STAFF),
                json!({"question": "Is the lobby open?", "stream": stream}),
            )
            .send()
            .await
            .unwrap();
        let body = response.text().await.unwrap();
        assert!(!body.contains(IDK), "{body}");
        assert!(body.contains("provider_unavailable"), "{body}");
    }
}

fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}
