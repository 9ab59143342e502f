//! The machine's transitions as tables: a question, the replies fed in, the steps expected
//! out. No HTTP, no model, no tools.

use super::*;
use crate::agent::llm::FinishReason;
use crate::agent::question::scope::TOPIC_QUESTION;
use crate::agent::verdict::decision::{IDK_MARKER, READ_ONLY_REFUSAL, REFUSAL};
use crate::contract::Usage;
use crate::contract::{HistoryMessage, HistoryRole};
use serde_json::json;

mod answer_loop;
mod outages;
mod routing;
mod written;

/// What is fed to the machine.
enum In {
    /// The model wrote text.
    Text(&'static str),
    /// The model called tools: (name, arguments as JSON text).
    Calls(Vec<(&'static str, &'static str)>),
    /// The model call failed.
    Fails(LlmError),
    /// The tools handed out returned these, in order: (ok, content).
    Results(Vec<(bool, serde_json::Value)>),
}

/// What the machine is expected to answer with.
#[derive(Debug, PartialEq)]
enum Out {
    Topic,
    /// An answer call: offer, tool choice, shape, whether shown text is withdrawn first.
    Answer(Offer, ToolChoice, ReplyShape, bool),
    /// These tools, in order; `refused`: how many at the end are not run.
    Tools(Vec<&'static str>, usize),
    Done(Decision, Expected),
    /// No answer: this service was down.
    Failed(Outage),
}

#[derive(Debug, PartialEq)]
enum Expected {
    Exactly(&'static str),
    Contains(&'static str),
}

struct Case {
    name: &'static str,
    question: &'static str,
    history: Vec<HistoryMessage>,
    tools: &'static [&'static str],
    adjust: fn(&mut LoopSettings),
    start: Out,
    script: Vec<(In, Out)>,
}

const ALL_TOOLS: &[&str] = &crate::agent::tools::STANDARD_TOOL_NAMES;

fn settings() -> LoopSettings {
    LoopSettings {
        temperature: 0.0,
        max_output_tokens: 400,
        max_tool_hops: 3,
        max_tool_calls_per_turn: 2,
        max_question_chars: 4000,
        link_allowed_hosts: Vec::new(),
        max_tokens_per_request: 0,
        require_grounded_answers: true,
        scope_check: true,
        search_first: true,
        // Most rows follow a model that searches again; rows of the default say so.
        search_again: true,
        stable_tool_prefix: true,
    }
}

fn unchanged(_: &mut LoopSettings) {}

fn case(name: &'static str, question: &'static str, start: Out) -> Case {
    Case {
        name,
        question,
        history: Vec::new(),
        tools: ALL_TOOLS,
        adjust: unchanged,
        start,
        script: Vec::new(),
    }
}

impl Case {
    fn then(mut self, input: In, out: Out) -> Case {
        self.script.push((input, out));
        self
    }
    fn with(mut self, adjust: fn(&mut LoopSettings)) -> Case {
        self.adjust = adjust;
        self
    }
    fn tools(mut self, tools: &'static [&'static str]) -> Case {
        self.tools = tools;
        self
    }
    fn after(mut self, user: &str, assistant: &str) -> Case {
        self.history = vec![
            HistoryMessage {
                role: HistoryRole::User,
                content: user.into(),
            },
            HistoryMessage {
                role: HistoryRole::Assistant,
                content: assistant.into(),
            },
        ];
        self
    }
}

fn turn(message: Message, usage: Usage) -> ChatTurn {
    ChatTurn {
        finish: if message.tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        },
        message,
        usage,
        provider_cost: None,
        model: "m".into(),
    }
}

/// Feeds `input`; tool results take the names of the calls of `step` they answer.
fn feed(
    run: &mut AnswerRun<'_>,
    step: &Step,
    input: In,
    call_ids: &mut usize,
) -> Result<Step, LlmError> {
    let names: Vec<String> = match step {
        Step::Tools(batch) => batch.iter().map(|run| run.call().name.clone()).collect(),
        _ => Vec::new(),
    };
    let usage = Usage {
        prompt_tokens: 1000,
        completion_tokens: 50,
        total_tokens: 1050,
        ..Usage::default()
    };
    match input {
        In::Text(text) => run.model_replied(Ok(turn(Message::assistant(text), usage))),
        In::Calls(calls) => {
            let calls = calls
                .into_iter()
                .map(|(name, arguments)| {
                    *call_ids += 1;
                    ToolCall {
                        id: format!("call-{call_ids}"),
                        name: name.into(),
                        arguments: arguments.into(),
                    }
                })
                .collect();
            run.model_replied(Ok(turn(Message::assistant_calls(calls), usage)))
        }
        In::Fails(error) => run.model_replied(Err(error)),
        In::Results(results) => Ok(run.tools_returned(
            results
                .into_iter()
                .zip(names)
                .map(|((ok, content), tool)| ToolOutcome {
                    tool,
                    ok,
                    content,
                    summary: String::new(),
                    ms: 1,
                })
                .collect(),
        )),
    }
}

fn observed(step: &Step) -> Out {
    match step {
        Step::Model(call) if call.purpose == Purpose::Topic => Out::Topic,
        Step::Model(call) => Out::Answer(
            call.offer,
            call.tool_choice,
            call.shape,
            call.withdraw_shown,
        ),
        Step::Tools(batch) => Out::Tools(
            batch
                .iter()
                .map(|run| tool_name(&run.call().name))
                .collect(),
            batch
                .iter()
                .filter(|run| matches!(run, ToolRun::Refused(..)))
                .count(),
        ),
        Step::Done(response) => {
            let expected = Expected::Exactly(Box::leak(response.answer.clone().into_boxed_str()));
            Out::Done(response.decision, expected)
        }
        Step::Failed(outage) => Out::Failed(*outage),
    }
}

fn tool_name(name: &str) -> &'static str {
    ALL_TOOLS
        .iter()
        .find(|known| **known == name)
        .copied()
        .unwrap_or("unknown")
}

fn matches(expected: &Out, step: &Step) -> bool {
    match (expected, step) {
        (Out::Done(decision, Expected::Contains(part)), Step::Done(response)) => {
            response.decision == *decision && response.answer.contains(part)
        }
        _ => *expected == observed(step),
    }
}

fn run_case(case: Case) {
    let mut settings = settings();
    (case.adjust)(&mut settings);
    let toolbox = Toolbox::new(case.tools.iter().copied());
    let question = Question {
        text: case.question.into(),
        history: case.history,
        ..Question::default()
    };
    let prices = PriceTable::default();
    let mut run = AnswerRun::new(&question, &settings, &toolbox, "system", "m", &prices);
    let mut step = run.start();
    assert!(
        matches(&case.start, &step),
        "{}: start: expected {:?}, got {:?}",
        case.name,
        case.start,
        observed(&step)
    );
    let mut ids = 0;
    for (i, (input, expected)) in case.script.into_iter().enumerate() {
        step = feed(&mut run, &step, input, &mut ids)
            .unwrap_or_else(|error| panic!("{}: step {i}: the answer failed: {error}", case.name));
        assert!(
            matches(&expected, &step),
            "{}: step {i}: expected {expected:?}, got {:?}",
            case.name,
            observed(&step)
        );
    }
}

fn docs_passage() -> serde_json::Value {
    json!({"results": [{
        "chunk_id": "co2-bands",
        "source": "sensors/co2.md",
        "section": "Bands",
        "text": "From 1000 ppm to 1400 ppm indoor air counts as poor; above 1400 ppm as very poor."
    }]})
}

/// The CO2 bands as a table, asked about by the label of one row.
fn docs_table(name: &'static str, question: &'static str) -> Case {
    let table = json!({"results": [{
        "chunk_id": "co2-table",
        "source": "sensors/co2.md",
        "section": "Bands",
        "text": "| ppm | band |\n|---|---|\n| 1000 to 1400 | poor |\n| above 1400 | very poor |\n"
    }]});
    case(name, question, Out::Topic)
        .then(in_scope(), Out::Tools(vec!["search_docs"], 0))
        .then(In::Results(vec![(true, table)]), first_docs_call())
}

fn buildings() -> serde_json::Value {
    json!({"buildings": [
        {"id": "acme-hq", "name": "Acme Headquarters", "address": "1 Main St"},
        {"id": "acme-annex", "name": "Acme Annex", "address": "2 Main St"}
    ]})
}

fn hq_rooms() -> serde_json::Value {
    json!({"id": "acme-hq", "rooms": [
        {"id": "hq-101", "name": "Board Room", "floor": 1, "capacity": 12}
    ]})
}

fn occupancy() -> serde_json::Value {
    json!({"room_id": "hq-101", "people": 7, "capacity": 12})
}

const DOCS_QUESTION: &str = "What CO2 level counts as poor indoor air?";
/// A live question the library does not plan a call for (`plan`): the model picks the tool.
const LIVE_QUESTION: &str = "Is room hq-101 of building acme-hq busy right now?";

fn in_scope() -> In {
    In::Text(r#"{"topic": "indoor_air_or_sensors"}"#)
}

fn first_docs_call() -> Out {
    Out::Answer(Offer::DocsOnly, ToolChoice::Auto, ReplyShape::Free, false)
}

fn any_call() -> Out {
    Out::Answer(Offer::Everything, ToolChoice::Auto, ReplyShape::Free, false)
}

/// A documentation question up to its first answer call.
fn docs(name: &'static str) -> Case {
    case(name, DOCS_QUESTION, Out::Topic)
        .then(in_scope(), Out::Tools(vec!["search_docs"], 0))
        .then(In::Results(vec![(true, docs_passage())]), first_docs_call())
}

/// A live question up to its first answer call.
fn live(name: &'static str) -> Case {
    live_asking(name, LIVE_QUESTION)
}

/// A live question about one room of acme-hq and one thing in it, up to the answer call after
/// the call the library made for it (`plan`) returned `result`.
fn planned(
    name: &'static str,
    question: &'static str,
    tool: &'static str,
    result: serde_json::Value,
) -> Case {
    rooms_of_hq_asked(name, question)
        .then(
            In::Results(vec![(true, hq_rooms())]),
            Out::Tools(vec![tool], 0),
        )
        .then(In::Results(vec![(true, result)]), any_call())
}

/// A live question naming building acme-hq, up to the library's `get_building` for it.
fn rooms_of_hq_asked(name: &'static str, question: &'static str) -> Case {
    case(name, question, Out::Tools(vec!["list_buildings"], 0)).then(
        In::Results(vec![(true, buildings())]),
        Out::Tools(vec!["get_building"], 0),
    )
}

/// A live question about building acme-hq up to its first answer call.
fn live_asking(name: &'static str, question: &'static str) -> Case {
    rooms_of_hq_asked(name, question).then(
        In::Results(vec![(true, hq_rooms())]),
        Out::Answer(
            Offer::LiveOnly,
            ToolChoice::Required,
            ReplyShape::Free,
            false,
        ),
    )
}

fn answered(text: &'static str) -> Out {
    Out::Done(Decision::Answered, Expected::Contains(text))
}

fn idk() -> Out {
    Out::Done(Decision::Idk, Expected::Exactly(IDK_MARKER))
}

#[test]
fn a_provider_that_cannot_be_reached_fails_the_topic_check() {
    let settings = settings();
    let toolbox = Toolbox::new(ALL_TOOLS.iter().copied());
    let question = Question::new(DOCS_QUESTION);
    let prices = PriceTable::default();
    let mut run = AnswerRun::new(&question, &settings, &toolbox, "system", "m", &prices);
    assert!(matches!(run.start(), Step::Model(_)));
    assert_eq!(
        run.messages().last().map(|m| m.content.as_deref()),
        Some(Some(TOPIC_QUESTION))
    );
    let failed = run.model_replied(Err(LlmError::Timeout));
    assert_eq!(failed, Err(LlmError::Timeout));
}

#[test]
fn an_answer_call_that_fails_fails_the_answer() {
    let mut settings = settings();
    settings.scope_check = false;
    settings.search_first = false;
    let toolbox = Toolbox::new(ALL_TOOLS.iter().copied());
    let question = Question::new(DOCS_QUESTION);
    let prices = PriceTable::default();
    let mut run = AnswerRun::new(&question, &settings, &toolbox, "system", "m", &prices);
    run.start();
    let error = LlmError::Status {
        status: 400,
        detail: String::new(),
    };
    assert_eq!(run.model_replied(Err(error.clone())), Err(error));
}

/// `question` run up to its first answer call, `docs_passage` returned by the library's search;
/// `then` goes on from there.
fn after_the_search(question: Question, then: impl FnOnce(&mut AnswerRun<'_>)) {
    let mut settings = settings();
    settings.scope_check = false;
    let toolbox = Toolbox::new(ALL_TOOLS.iter().copied());
    let prices = PriceTable::default();
    let mut run = AnswerRun::new(&question, &settings, &toolbox, "system", "m", &prices);
    run.start();
    run.tools_returned(vec![ToolOutcome {
        tool: "search_docs".into(),
        ok: true,
        content: docs_passage(),
        summary: String::new(),
        ms: 1,
    }]);
    then(&mut run);
}

#[test]
fn the_passages_go_into_the_question_and_the_history_before_it() {
    let question = Question {
        text: format!("{DOCS_QUESTION}\u{200b}"),
        history: vec![HistoryMessage {
            role: HistoryRole::User,
            content: "earlier".into(),
        }],
        ..Question::default()
    };
    after_the_search(question, |run| {
        let messages = run.messages();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[0].content.as_deref(), Some("system"));
        assert_eq!(messages[1].content.as_deref(), Some("earlier"));
        let last = messages[2].content.as_deref().unwrap_or_default();
        assert!(last.contains("[^co2-bands]"), "{last}");
        assert!(
            last.ends_with(&format!("Question: {DOCS_QUESTION}")),
            "{last}"
        );
        assert_eq!(run.citable().count(), 1);
    });
}

#[test]
fn a_misstated_figure_is_asked_again_without_the_draft() {
    let question = Question {
        text: DOCS_QUESTION.into(),
        ..Question::default()
    };
    after_the_search(question, |run| {
        let draft = "Air is poor below 1400 ppm.";
        let step = run
            .model_replied(Ok(turn(Message::assistant(draft), Usage::default())))
            .unwrap();
        assert!(matches!(step, Step::Model(_)));
        let messages = run.messages();
        assert_eq!(messages.len(), 3, "system, question, note");
        assert!(messages.iter().all(|m| m.content.as_deref() != Some(draft)));
        let note = messages[2].content.as_deref().unwrap_or_default();
        assert!(note.contains("From 1000 ppm to 1400 ppm"), "{note}");
    });
}

#[test]
fn the_search_first_sends_the_question_as_serde_json_writes_it() {
    let mut settings = settings();
    settings.scope_check = false;
    let toolbox = Toolbox::new(ALL_TOOLS.iter().copied());
    let asked = "How is \"CO2\" shown\tin the app?\u{1} Ünïcode \\ too";
    let question = Question::new(asked);
    let prices = PriceTable::default();
    let mut run = AnswerRun::new(&question, &settings, &toolbox, "system", "m", &prices);
    let Step::Tools(batch) = run.start() else {
        panic!("a documentation question is searched first");
    };
    assert_eq!(batch[0].call().name, "search_docs");
    assert_eq!(
        batch[0].call().arguments,
        json!({ "query": asked }).to_string()
    );
}
