//! Guided answering against the scripted provider: the library's search first, codes, the
//! re-ask, routing, the answer history and the output cap.

use crate::agent::*;
use crate::provider::{answer, streamed_answer, tool_calls, usage, Reply, ScriptedProvider};
use crowdvision_agent::agent::question::scope::TOPIC_QUESTION;
use crowdvision_agent::agent::verdict::decision::{
    IDK_MARKER, READ_ONLY_REFUSAL, REFUSAL, REFUSAL_PREFIX,
};
use crowdvision_agent::contract::Decision;
use serde_json::{json, Value};
use std::time::Duration;

// ---------------------------------------------------------------------------------------------
// Guided answering: search first, codes, re-ask, routing, output cap

#[tokio::test(flavor = "multi_thread")]
async fn the_first_request_carries_only_the_passages_the_caller_may_see() {
    let (dir, url) = crate::search::open_and_staff_pages();
    crate::util::write(
        &dir.path().join("staff.json"),
        r#"{"sub":"s","roles":["business_staff"],"domains":["acme"]}"#,
    );
    for (claims, sees_staff_page) in [(None, false), (Some("staff.json"), true)] {
        let provider = ScriptedProvider::start(vec![answer("Zebras.", usage(5, 1))]).await;
        let mut command = ask_command(dir.path(), &url, &provider);
        command.args(["ask", "What about the zebra?"]);
        if let Some(file) = claims {
            command.args(["--claims", file]);
        }
        let output = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        assert!(output.status.success(), "{}", crate::util::stderr(&output));
        let requests = provider.requests();
        assert_eq!(
            requests.len(),
            1,
            "one model call for a documentation question"
        );
        let question = messages(&requests[0]).last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(question.contains("The lobby zebra display."), "{question}");
        assert_eq!(
            question.contains("zebra key rotation"),
            sees_staff_page,
            "{claims:?}: {question}"
        );
    }
}

#[tokio::test]
async fn a_no_answer_code_becomes_the_library_sentence_and_never_streams() {
    let f = fixture(
        vec![streamed_answer(
            &["NO_", "ANSWER"],
            usage(10, 2),
            Duration::ZERO,
        )],
        &[],
    )
    .await;
    let (response, tokens) = stream_answer(&f).await;
    let response = response.unwrap();
    let streamed = tokens.concat();
    assert_eq!(response.decision, Decision::Idk);
    assert_eq!(response.answer, IDK_MARKER);
    assert_eq!(streamed, IDK_MARKER);
    assert!(response.citations.is_empty());
}

#[tokio::test]
async fn a_refusal_after_tool_data_is_asked_once_more_from_the_results() {
    let f = fixture(
        vec![
            tool_calls(&[("c1", "echo", r#"{"text":"6 people"}"#)], usage(10, 2)),
            answer("OUT_OF_SCOPE", usage(10, 2)),
            answer("There are 6 people.", usage(10, 2)),
        ],
        &[],
    )
    .await;
    let response = ask(
        &f,
        "How many people are in room hq-101 of building acme-hq?",
    )
    .await
    .unwrap();
    assert_eq!(response.decision, Decision::Answered);
    assert_eq!(response.answer, "There are 6 people.");
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 3);
    let last = messages(&requests[2]).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(last.contains("tool results above"), "{last}");

    // Refusing again is not an answer: it is recorded as idk, and there is no third ask.
    let f = fixture(
        vec![
            tool_calls(&[("c1", "echo", r#"{"text":"6 people"}"#)], usage(10, 2)),
            answer("OUT_OF_SCOPE", usage(10, 2)),
            answer("OUT_OF_SCOPE", usage(10, 2)),
        ],
        &[],
    )
    .await;
    let response = ask(
        &f,
        "How many people are in room hq-101 of building acme-hq?",
    )
    .await
    .unwrap();
    assert_eq!(response.decision, Decision::Idk);
    assert_eq!(f.provider.requests().len(), 3);
}

#[tokio::test]
async fn an_answer_that_describes_tools_is_asked_again_without_tools_then_is_idk() {
    let describing = "To find it, call `search_docs` with the query \"co2\".";
    let f = fixture(
        vec![
            answer(describing, usage(10, 2)),
            answer("The CO2 alarm is at 1000 ppm.", usage(10, 2)),
            answer(describing, usage(10, 2)),
            answer("Call `echo` to learn it.", usage(10, 2)),
        ],
        &[],
    )
    .await;
    let response = ask(&f, "What is the CO2 alarm threshold?").await.unwrap();
    assert_eq!(response.decision, Decision::Answered);
    assert!(response.answer.starts_with("The CO2 alarm is at 1000 ppm."));
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 2);
    assert!(offers_no_tool(&requests[1]), "the re-ask offers no tool");
    // The list of the call before it, kept for the provider's prompt cache.
    assert_eq!(requests[1]["tool_choice"], "none");
    assert_eq!(requests[1]["tools"], requests[0]["tools"]);
    let last = messages(&requests[1]).last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(last.contains("Do not explain which tool to call"), "{last}");
    // Held to an answer field; a reply that ignores it is read as it is.
    assert_eq!(
        requests[1]["response_format"]["json_schema"]["name"],
        "answer"
    );

    // Describing tools twice is no answer: idk, and no third call.
    let again = ask(&f, "What is the CO2 alarm threshold?").await.unwrap();
    assert_eq!(again.decision, Decision::Idk);
    assert_eq!(again.answer, IDK_MARKER);
    assert_eq!(f.provider.requests().len(), 4);
}

#[tokio::test]
async fn without_a_stable_tool_prefix_a_re_ask_is_sent_no_tools() {
    let describing = "To find it, call `search_docs` with the query \"co2\".";
    let f = fixture(
        vec![
            answer(describing, usage(10, 2)),
            answer("The CO2 alarm is at 1000 ppm.", usage(10, 2)),
        ],
        &[("STABLE_TOOL_PREFIX", "false")],
    )
    .await;
    let response = ask(&f, "What is the CO2 alarm threshold?").await.unwrap();
    assert_eq!(response.decision, Decision::Answered);
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].get("tools").is_some());
    assert!(requests[1].get("tools").is_none());
    assert!(requests[1].get("tool_choice").is_none());
}

/// How qwen2.5-coder-0.5b answers after a tool result: its call written back as JSON text.
const ECHOED_CALL: &str = r#"{"name": "echo", "arguments": {"text": "hi"}}"#;

#[tokio::test]
async fn the_re_ask_after_a_tool_describing_answer_is_held_to_an_answer_field() {
    let f = fixture(
        vec![
            streamed_answer(&[ECHOED_CALL], usage(10, 2), Duration::ZERO),
            answer(
                r#"{"answer": "Humidity is reported in percent."}"#,
                usage(10, 4),
            ),
        ],
        &[],
    )
    .await;
    let (result, tokens) = stream_answer(&f).await;
    let response = result.unwrap();
    assert_eq!(response.decision, Decision::Answered);
    assert!(
        response
            .answer
            .starts_with("Humidity is reported in percent."),
        "{}",
        response.answer
    );
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].get("response_format").is_none());
    let format = &requests[1]["response_format"];
    assert_eq!(format["type"], "json_schema", "{format}");
    assert_eq!(format["json_schema"]["name"], "answer");
    assert_eq!(
        format["json_schema"]["schema"]["required"],
        json!(["answer"])
    );
    assert!(offers_no_tool(&requests[1]), "the re-ask offers no tool");
    // The reader is shown the answer (with its attributed marker), not the JSON it came in.
    let shown = tokens.concat();
    assert!(shown.ends_with(&response.answer), "{shown}");
    assert!(!shown.contains(r#""answer""#), "{shown}");
}

#[tokio::test]
async fn a_provider_that_refuses_the_answer_field_is_asked_the_same_without_it() {
    let f = fixture(
        vec![
            answer(ECHOED_CALL, usage(10, 2)),
            Reply::Status {
                status: 400,
                retry_after: None,
            },
            answer("Humidity is reported in percent.", usage(10, 4)),
        ],
        &[],
    )
    .await;
    let response = ask(&f, "How is humidity reported?").await.unwrap();
    assert_eq!(response.decision, Decision::Answered);
    assert!(response
        .answer
        .starts_with("Humidity is reported in percent."));
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[1].get("response_format").is_some());
    assert!(requests[2].get("response_format").is_none());
    assert!(offers_no_tool(&requests[2]));
}

#[tokio::test]
async fn a_search_the_library_already_ran_is_not_run_again_and_the_model_answers_without_tools() {
    let question = "What is the CO2 alarm threshold?";
    let f = fixture(
        vec![
            tool_calls(
                &[(
                    "c1",
                    "search_docs",
                    r#"{"query":"what is the  CO2 alarm threshold "}"#,
                )],
                usage(10, 2),
            ),
            answer("The CO2 alarm is at 1000 ppm.", usage(10, 2)),
        ],
        &[],
    )
    .await;
    let response = ask(&f, question).await.unwrap();
    assert_eq!(response.decision, Decision::Answered, "{}", response.answer);
    assert!(response.answer.starts_with("The CO2 alarm is at 1000 ppm."));
    let searches = response
        .trace
        .iter()
        .filter(|t| t.tool == "search_docs")
        .count();
    assert_eq!(
        searches, 1,
        "only the library's search before the first call"
    );
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(offered_tools(&requests[0]), ["search_docs"]);
    assert!(offers_no_tool(&requests[1]), "asked again without tools");
    // The repeated call is answered with what the library's search returned, without running
    // it again.
    let first = messages(&requests[0]);
    let second = messages(&requests[1]);
    assert_eq!(second.len(), first.len() + 2);
    assert_eq!(
        second[first.len()]["tool_calls"][0]["function"]["name"],
        "search_docs"
    );
    let repeated = second.last().unwrap();
    assert_eq!(repeated["role"], "tool");
    assert!(
        repeated["content"].as_str().unwrap().contains("1000 ppm"),
        "{repeated}"
    );

    // A search with other words is a new search: it runs.
    let f2 = fixture(
        vec![
            tool_calls(
                &[("c1", "search_docs", r#"{"query":"humidity sensors"}"#)],
                usage(10, 2),
            ),
            answer("Relative humidity in percent.", usage(10, 2)),
        ],
        &[],
    )
    .await;
    let other = ask(&f2, question).await.unwrap();
    let searches = other
        .trace
        .iter()
        .filter(|t| t.tool == "search_docs")
        .count();
    assert_eq!(searches, 2);
}

#[tokio::test]
async fn a_request_to_book_or_change_something_gets_the_read_only_refusal() {
    let f = fixture(vec![answer("Booked!", usage(10, 2))], &[]).await;
    f.provider.set_topic("booking_or_changing_something");
    let declined = ask(&f, "Can you book the board room for me tomorrow at 10?")
        .await
        .unwrap();
    assert_eq!(declined.decision, Decision::Declined);
    assert_eq!(declined.answer, READ_ONLY_REFUSAL);
    assert!(declined.answer.starts_with(REFUSAL_PREFIX));
    assert!(f.provider.requests().is_empty(), "no answer call");
}

#[tokio::test]
async fn a_named_room_offers_only_live_tools_first_and_requires_one() {
    let f = fixture(
        vec![
            tool_calls(&[("c1", "echo", r#"{"text":"6"}"#)], usage(10, 2)),
            answer("6 people.", usage(10, 2)),
            answer("Poor from 1000 ppm.", usage(10, 2)),
        ],
        &[("MAX_OUTPUT_TOKENS", "321")],
    )
    .await;
    let live = ask(
        &f,
        "How many people are in room hq-101 of building acme-hq right now?",
    )
    .await
    .unwrap();
    assert!(
        live.trace.iter().all(|t| t.tool != "search_docs"),
        "no search first"
    );
    let requests = f.provider.requests();
    assert_eq!(offered_tools(&requests[0]), ["echo"]);
    assert_eq!(requests[0]["tool_choice"], "required");
    // After the first hop every tool is offered again and the model chooses.
    assert_eq!(offered_tools(&requests[1]), ["search_docs", "echo"]);
    assert!(requests[1].get("tool_choice").is_none());

    // A documentation question: searched first, its passages in the request, only a further
    // search offered on the first call, nothing required.
    ask(&f, "From which CO2 level is the air poor?")
        .await
        .unwrap();
    let docs = &f.provider.requests()[2];
    assert_eq!(offered_tools(docs), ["search_docs"]);
    assert!(docs.get("tool_choice").is_none());
    // The output cap is sent with every request.
    assert!(f.provider.requests().iter().all(|r| r["max_tokens"] == 321));
}

#[tokio::test]
async fn a_documentation_answer_no_passage_supports_is_idk() {
    let f = fixture(
        vec![
            answer("Bananas are yellow and sweet.", usage(10, 2)),
            answer("The alarm is at 1000 ppm.", usage(10, 2)),
        ],
        &[("REQUIRE_GROUNDED_ANSWERS", "true")],
    )
    .await;
    let invented = ask(&f, "What colour are the meeting room walls?")
        .await
        .unwrap();
    assert_eq!(invented.decision, Decision::Idk);
    assert_eq!(invented.answer, IDK_MARKER);
    assert!(invented.citations.is_empty());
    let grounded = ask(&f, "What is the CO2 alarm threshold?").await.unwrap();
    assert_eq!(grounded.decision, Decision::Answered);
    assert_eq!(grounded.citations[0].source, "co2.md");
    assert!(grounded.citations[0].attributed);
}

#[tokio::test]
async fn a_live_answer_whose_every_figure_is_new_is_idk() {
    let f = fixture(
        vec![
            tool_calls(&[("c1", "echo", r#"{"text":"6 people"}"#)], usage(10, 2)),
            answer("Room hq-101 has 9 people.", usage(10, 2)),
            tool_calls(&[("c2", "echo", r#"{"text":"6 people"}"#)], usage(10, 2)),
            answer(
                "Room hq-101 has 6 people, half of its 12 seats.",
                usage(10, 2),
            ),
        ],
        &[("REQUIRE_GROUNDED_ANSWERS", "true")],
    )
    .await;
    let question = "How many people are in room hq-101 of building acme-hq?";
    let invented = ask(&f, question).await.unwrap();
    assert_eq!(invented.decision, Decision::Idk, "{}", invented.answer);
    assert_eq!(invented.answer, IDK_MARKER);
    let grounded = ask(&f, question).await.unwrap();
    assert_eq!(grounded.decision, Decision::Answered);
    assert!(grounded.answer.contains("6 people"));
}

#[tokio::test]
async fn a_model_marker_its_passage_does_not_support_is_flagged_and_kept() {
    let f = fixture(Vec::new(), &[]).await;
    let co2 = first_chunk_id(&f.retriever, "CO2 alarm threshold").await;
    f.provider.then_forever(answer(
        &format!("Bananas are yellow.[^{co2}] The CO2 alarm is at 1000 ppm.[^{co2}]"),
        usage(10, 2),
    ));
    let response = ask(&f, "What is the CO2 alarm threshold?").await.unwrap();
    assert_eq!(response.decision, Decision::Answered);
    assert_eq!(response.retrieval.unsupported_citations, vec![co2.clone()]);
    assert!(!response.citations[0].attributed);
    assert!(response.answer.contains(&format!("yellow.[^{co2}]")));

    f.provider.then_forever(answer(
        &format!("The CO2 alarm is at 1000 ppm.[^{co2}]"),
        usage(10, 2),
    ));
    let supported = ask(&f, "What is the CO2 alarm threshold?").await.unwrap();
    assert!(supported.retrieval.unsupported_citations.is_empty());
}

#[tokio::test]
async fn an_off_topic_request_is_declined_by_its_typed_topic_without_an_answer_call() {
    let f = fixture(vec![answer("Roses are red.", usage(10, 2))], &[]).await;
    f.provider.set_topic("poem_story_or_other_writing");
    // Not "write me a poem": a request for writing with a writing verb is declined by rule,
    // before the topic check (below).
    let declined = ask(&f, "I would like some verses about the sea")
        .await
        .unwrap();
    assert_eq!(declined.decision, Decision::Declined);
    assert_eq!(declined.answer, REFUSAL);
    assert!(f.provider.requests().is_empty(), "no answer call");
    assert!(
        declined.trace.is_empty(),
        "no search for an off-topic request"
    );

    // The check is the question alone (no passages), held to the topic schema; it is sent the
    // tool list of the answer call after it, for the prompt cache, with `tool_choice: none`.
    let checks = f.provider.topic_checks();
    assert_eq!(checks.len(), 1);
    let sent = messages(&checks[0]);
    assert_eq!(sent.len(), 3);
    assert_eq!(sent[0]["role"], "system");
    assert_eq!(
        sent[1]["content"],
        "Question: I would like some verses about the sea"
    );
    assert_eq!(sent[2]["content"], TOPIC_QUESTION);
    assert_eq!(offered_tools(&checks[0]), vec!["search_docs"]);
    assert_eq!(checks[0]["tool_choice"], "none");
    let topics = &checks[0]["response_format"]["json_schema"]["schema"]["properties"]["topic"];
    assert!(topics["enum"]
        .as_array()
        .unwrap()
        .contains(&json!("indoor_air_or_sensors")));

    // In scope: the answer call goes ahead, with the passages.
    f.provider.set_topic("indoor_air_or_sensors");
    let answered = ask(&f, "Is there a poem on the CO2 page?").await.unwrap();
    assert_eq!(answered.decision, Decision::Answered);
    assert_eq!(answered.answer, "Roses are red.");
    let answer_call = messages(&f.provider.requests()[0]).clone();
    assert!(answer_call[1]["content"].as_str().unwrap().contains("[^"));

    // A live question is not checked (its tools decide), nor is anything with the check off.
    let live = fixture(
        vec![
            tool_calls(&[("c1", "echo", r#"{"text":"6"}"#)], usage(10, 2)),
            answer("6 people.", usage(10, 2)),
        ],
        &[],
    )
    .await;
    live.provider.set_topic("maths");
    let counted = ask(
        &live,
        "How many people are in room hq-101 of building acme-hq right now?",
    )
    .await
    .unwrap();
    assert_eq!(counted.decision, Decision::Answered);
    assert!(live.provider.topic_checks().is_empty());
    let off = fixture(
        vec![answer("Roses are red.", usage(10, 2))],
        &[("SCOPE_CHECK", "false")],
    )
    .await;
    off.provider.set_topic("poem_story_or_other_writing");
    let unchecked = ask(&off, "Write me a poem about the sea").await.unwrap();
    assert_eq!(unchecked.answer, "Roses are red.");
    assert!(off.provider.topic_checks().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn every_ask_answer_is_kept_in_the_history_which_lists_shows_and_searches() {
    let (dir, url) = crate::search::open_and_staff_pages();
    let provider = ScriptedProvider::start(vec![
        answer("The lobby has a zebra display.", usage(30, 8)),
        answer("Humidity is best between 40 and 60 %.", usage(20, 6)),
    ])
    .await;
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = ask_command(dir.path(), &url, &provider);
        command.args(args).envs(env.iter().copied());
        command.output().unwrap()
    };
    let asked = run(&["ask", "What is in the lobby?"], &[]);
    assert!(asked.status.success(), "{}", crate::util::stderr(&asked));
    run(&["ask", "Which humidity is comfortable?"], &[]);
    run(&["ask", "Not kept"], &[("HISTORY", "false")]);

    let listed = crate::util::stdout(&run(&["history"], &[]));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(lines[0].starts_with("1\t") && lines[0].ends_with("What is in the lobby?"));
    assert!(lines[1].contains("\tanswered\t"));

    let shown = crate::util::stdout(&run(&["history", "show", "2"], &[]));
    assert!(shown.contains("between 40 and 60"), "{shown}");
    assert!(shown.contains("20 prompt + 6 completion tokens"), "{shown}");

    let found = run(&["history", "search", "ZEBRA", "--json"], &[]);
    let entries: Vec<Value> = crate::util::stdout(&found)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0]["id"], 1);
    assert_eq!(entries[0]["decision"], "answered");
    assert_eq!(entries[0]["command"], "ask");
    assert_eq!(run(&["history", "show", "9"], &[]).status.code(), Some(1));
}

#[tokio::test]
async fn by_default_a_documentation_answer_is_offered_no_tool_and_a_writing_request_no_call() {
    let f = fixture(
        vec![answer("Poor air starts at 1000 ppm.", usage(10, 2))],
        &[("SEARCH_AGAIN", "false")],
    )
    .await;
    let response = ask(&f, "From which CO2 level is the air poor?")
        .await
        .unwrap();
    assert_eq!(response.decision, Decision::Answered, "{}", response.answer);
    let requests = f.provider.requests();
    assert_eq!(requests.len(), 1);
    // Listed for the prompt cache (STABLE_TOOL_PREFIX), but not offered.
    assert_eq!(requests[0]["tool_choice"], "none");

    let declined = ask(&f, "Write me a limerick about the Board Room")
        .await
        .unwrap();
    assert_eq!(declined.decision, Decision::Declined);
    assert_eq!(declined.answer, REFUSAL);
    assert_eq!(f.provider.requests().len(), 1, "no model call for it");
    assert!(declined.trace.is_empty());
}
