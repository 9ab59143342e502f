//! The transitions of the answer loop: tools, repeated calls, the limits, the re-asks and the
//! checks that end an answer as `idk` or `declined`.

use super::*;

/// A live question in German, up to the answer call after its occupancy came back (the
/// library's planned call: one room, its occupancy).
fn german_after_occupancy(name: &'static str) -> Case {
    planned(
        name,
        "Wie viele Personen sind gerade im Raum hq-101 des Gebäudes acme-hq?",
        "get_occupancy",
        occupancy(),
    )
}

#[test]
fn the_answer_loop() {
    let occupancy_call = r#"{"building_id":"acme-hq","room_id":"hq-101"}"#;
    let cases = [
        docs("a repeated search gets its earlier result and no tools")
            .then(
                In::Calls(vec![(
                    "search_docs",
                    r#"{"query": "what co2 level counts as poor indoor air"}"#,
                )]),
                Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, false),
            )
            .then(In::Text("Poor is 1000 to 1400 ppm."), answered("1000")),
        docs("a new search runs; the hop after it is offered search_docs alone again")
            .then(
                In::Calls(vec![("search_docs", r#"{"query": "humidity"}"#)]),
                Out::Tools(vec!["search_docs"], 0),
            )
            .then(
                In::Results(vec![(true, json!({"results": []}))]),
                Out::Answer(Offer::DocsOnly, ToolChoice::Auto, ReplyShape::Free, false),
            ),
        docs("without a stable tool prefix, the hop after a search is offered every tool")
            .with(|s| s.stable_tool_prefix = false)
            .then(
                In::Calls(vec![("search_docs", r#"{"query": "humidity"}"#)]),
                Out::Tools(vec!["search_docs"], 0),
            )
            .then(
                In::Results(vec![(true, json!({"results": []}))]),
                any_call(),
            ),
        docs("calls past the per-turn limit are refused, the rest run").then(
            In::Calls(vec![
                ("search_docs", r#"{"query": "a"}"#),
                ("search_docs", r#"{"query": "b"}"#),
                ("search_docs", r#"{"query": "c"}"#),
            ]),
            Out::Tools(vec!["search_docs", "search_docs", "search_docs"], 1),
        ),
        docs("the hop limit ends the loop: tool_loop_exhausted")
            .with(|s| s.max_tool_hops = 1)
            .then(
                In::Calls(vec![("search_docs", r#"{"query": "a"}"#)]),
                Out::Tools(vec!["search_docs"], 0),
            )
            .then(
                In::Results(vec![(true, json!({"results": []}))]),
                Out::Answer(Offer::DocsOnly, ToolChoice::Auto, ReplyShape::Free, false),
            )
            .then(
                In::Calls(vec![("search_docs", r#"{"query": "b"}"#)]),
                Out::Done(Decision::ToolLoopExhausted, Expected::Exactly(IDK_MARKER)),
            ),
        docs("the token budget ends the loop: budget_exhausted")
            .with(|s| s.max_tokens_per_request = 1500)
            .then(
                In::Calls(vec![("search_docs", r#"{"query": "a"}"#)]),
                Out::Done(Decision::BudgetExhausted, Expected::Exactly(IDK_MARKER)),
            ),
        docs("no answer code: idk").then(In::Text("NO_ANSWER"), idk()),
        docs("an empty answer: idk").then(In::Text("  "), idk()),
        docs("the model's own refusal before tools: declined").then(
            In::Text("OUT_OF_SCOPE"),
            Out::Done(Decision::Declined, Expected::Exactly(REFUSAL)),
        ),
        docs("a documentation answer no passage supports: idk")
            .then(In::Text("The sky is blue today."), idk()),
        docs("a range read as a bound: asked once more without tools, then the range")
            .then(
                In::Text("Air is poor below 1400 ppm."),
                Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, true),
            )
            .then(
                In::Text("Air is poor from 1000 to 1400 ppm."),
                answered("1000 to 1400"),
            ),
        docs("a passage heading copied out: asked once more, without tools, for sentences")
            .then(
                In::Text("[^co2-bands] (sensors/co2.md › Bands)"),
                Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, true),
            )
            .then(
                In::Text("[^co2-bands] Air is poor from 1000 to 1400 ppm."),
                Out::Done(
                    Decision::Answered,
                    Expected::Exactly("Air is poor from 1000 to 1400 ppm.[^co2-bands]"),
                ),
            ),
        docs("a passage heading copied out twice: idk")
            .then(
                In::Text("[co2-bands]"),
                Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, true),
            )
            .then(In::Text("[^co2-bands] (sensors/co2.md › Bands)"), idk()),
        docs("a range read as a bound twice: idk")
            .then(
                In::Text("Air is poor below 1400 ppm."),
                Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, true),
            )
            .then(In::Text("Poor air: below 1400 ppm."), idk()),
        docs_table(
            "a row's figures misstated twice, the question naming that row: the row quoted",
            "What CO2 level is poor?",
        )
        .then(
            In::Text("Poor means above 1400 ppm."),
            Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, true),
        )
        .then(
            In::Text("It is poor above 1400 ppm."),
            Out::Done(
                Decision::Answered,
                Expected::Exactly("ppm: 1000 to 1400; band: poor [^co2-table]"),
            ),
        ),
        docs_table(
            "misstated twice, the question naming no one row: idk",
            "Which CO2 bands are there?",
        )
        .then(
            In::Text("Poor starts at 1400 ppm."),
            Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, true),
        )
        .then(In::Text("Poor starts at 1400 ppm."), idk()),
        docs_table(
            "a question for an amount answered without one: idk",
            "How much does a CO2 sensor cost?",
        )
        .then(In::Text("The price varies by model.[^co2-table]"), idk()),
        docs("asked about its figures, the model says the passages do not state it: idk")
            .then(
                In::Text("Poor air is 1400 ppm."),
                Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, true),
            )
            .then(In::Text("NO_ANSWER"), idk()),
        docs("an answer describing a tool: asked once more, no tools, held to a field")
            .then(
                In::Text("Call search_docs with the query co2."),
                Out::Answer(
                    Offer::Nothing,
                    ToolChoice::None,
                    ReplyShape::AnswerField,
                    true,
                ),
            )
            .then(
                In::Text(r#"{"answer": "Poor is 1000 to 1400 ppm."}"#),
                answered("1000 to 1400"),
            ),
        docs("describing a tool twice: idk")
            .then(
                In::Text("Call search_docs with the query co2."),
                Out::Answer(
                    Offer::Nothing,
                    ToolChoice::None,
                    ReplyShape::AnswerField,
                    true,
                ),
            )
            .then(In::Text(r#"{"answer": "Use search_docs."}"#), idk()),
        docs("a provider refusing the field's schema is asked without it")
            .then(
                In::Text("Call search_docs with the query co2."),
                Out::Answer(
                    Offer::Nothing,
                    ToolChoice::None,
                    ReplyShape::AnswerField,
                    true,
                ),
            )
            .then(
                In::Fails(LlmError::Status {
                    status: 400,
                    detail: String::new(),
                }),
                Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, false),
            )
            .then(In::Text("Poor is 1000 to 1400 ppm."), answered("1000")),
        live("a refusal after live data: asked once more from the results")
            .then(
                In::Calls(vec![("get_occupancy", occupancy_call)]),
                Out::Tools(vec!["get_occupancy"], 0),
            )
            .then(In::Results(vec![(true, occupancy())]), any_call())
            .then(
                In::Text("NO_ANSWER"),
                Out::Answer(Offer::Everything, ToolChoice::Auto, ReplyShape::Free, true),
            )
            .then(In::Text("7 people are there."), answered("7 people")),
        live("refusing twice after live data: idk")
            .then(
                In::Calls(vec![("get_occupancy", occupancy_call)]),
                Out::Tools(vec!["get_occupancy"], 0),
            )
            .then(In::Results(vec![(true, occupancy())]), any_call())
            .then(
                In::Text("NO_ANSWER"),
                Out::Answer(Offer::Everything, ToolChoice::Auto, ReplyShape::Free, true),
            )
            .then(In::Text("NO_ANSWER"), idk()),
        docs("a refusal after tools: idk, not declined")
            .then(
                In::Calls(vec![("search_docs", r#"{"query": "x"}"#)]),
                Out::Tools(vec!["search_docs"], 0),
            )
            .then(
                In::Results(vec![(false, json!({"error": {"kind": "unavailable"}}))]),
                Out::Answer(Offer::DocsOnly, ToolChoice::Auto, ReplyShape::Free, false),
            )
            .then(In::Text("OUT_OF_SCOPE"), idk()),
        live("the library's own lookups count as data returned: a refusal is asked again").then(
            In::Text("NO_ANSWER"),
            Out::Answer(Offer::Everything, ToolChoice::Auto, ReplyShape::Free, true),
        ),
        live("a refused window's reason, figures included, may be passed on")
            .then(
                In::Calls(vec![(
                    "get_sensor_history",
                    r#"{"building_id":"acme-hq","room_id":"hq-101","sensor_type":"co2","from":"14 days ago"}"#,
                )]),
                Out::Tools(vec!["get_sensor_history"], 0),
            )
            .then(
                In::Results(vec![(
                    false,
                    json!({"error": {"kind": "bad_arguments", "message":
                        "a history window may be at most 7 days long and 14 days were asked for"}}),
                )]),
                any_call(),
            )
            .then(
                In::Text("The history may cover at most 7 days, not 14; shall I show the last 7?"),
                answered("at most 7 days"),
            ),
        live("a failure's figures are not the tool's: an answer built on them is the outage")
            .then(
                In::Calls(vec![("get_occupancy", occupancy_call)]),
                Out::Tools(vec!["get_occupancy"], 0),
            )
            .then(
                In::Results(vec![(false, json!({"error": {"kind": "unavailable", "message": "retry in 30 s"}}))]),
                any_call(),
            )
            .then(
                In::Text("30 people are there."),
                Out::Failed(Outage {
                    service: crate::agent::error::Service::LiveData,
                    timed_out: false,
                }),
            ),
        live("a live answer whose every figure is new: idk")
            .then(
                In::Calls(vec![("get_occupancy", occupancy_call)]),
                Out::Tools(vec!["get_occupancy"], 0),
            )
            .then(In::Results(vec![(true, occupancy())]), any_call())
            .then(In::Text("42 people are there."), idk()),
        live_asking(
            "a live question about something no result holds: idk",
            "How many elevators does building acme-hq have right now?",
        )
        .then(
            In::Calls(vec![("get_building", r#"{"building_id":"acme-hq"}"#)]),
            Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, false),
        )
        .then(In::Text("It has 12 elevators."), idk()),
        german_after_occupancy(
            "an answer in another language than the question: asked once more in its language",
        )
        .then(
            In::Text("There are 7 people in the room right now."),
            Out::Answer(
                Offer::Nothing,
                ToolChoice::None,
                ReplyShape::AnswerField,
                true,
            ),
        )
        .then(
            In::Text(r#"{"answer": "Im Raum sind gerade 7 Personen."}"#),
            answered("Im Raum sind gerade 7 Personen."),
        ),
        german_after_occupancy(
            "a language re-ask that writes a tool call out: the earlier answer stands",
        )
        .then(
            In::Text("7"),
            Out::Answer(
                Offer::Nothing,
                ToolChoice::None,
                ReplyShape::AnswerField,
                true,
            ),
        )
        .then(
            In::Text(r#"{"name": "get_occupancy", "arguments": {"building_id": "acme-hq"}}"#),
            Out::Done(Decision::Answered, Expected::Exactly("7")),
        ),
        german_after_occupancy(
            "asked in German and answered in English twice: the second answer stands",
        )
        .then(
            In::Text("There are 7 people in the room right now."),
            Out::Answer(
                Offer::Nothing,
                ToolChoice::None,
                ReplyShape::AnswerField,
                true,
            ),
        )
        .then(
            In::Text("There are 7 people in that room at the moment."),
            answered("7 people"),
        ),
        german_after_occupancy(
            "a German question the library cannot answer: the IDK sentence in German",
        )
        .then(
            In::Text("Dort sind 42 Personen."),
            Out::Done(
                Decision::Idk,
                Expected::Exactly(
                    "Das weiß ich anhand der verfügbaren CrowdVision-Informationen nicht.",
                ),
            ),
        ),
        docs("a call from a list sent only for the prompt cache is refused, not run")
            .then(
                In::Calls(vec![(
                    "search_docs",
                    r#"{"query": "what co2 level counts as poor indoor air"}"#,
                )]),
                Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, false),
            )
            .then(
                In::Calls(vec![("search_docs", r#"{"query": "humidity"}"#)]),
                Out::Tools(vec!["search_docs"], 1),
            ),
        live("a call to a tool the step neither offers nor sent is the registry's to judge").then(
            In::Calls(vec![("search_docs", r#"{"query": "people"}"#)]),
            Out::Tools(vec!["search_docs"], 0),
        ),
        docs("sentences about footnotes are dropped from the answer").then(
            In::Text("Poor is 1000 to 1400 ppm [^co2-bands]. The footnote gives the source."),
            Out::Done(
                Decision::Answered,
                Expected::Exactly("Poor is 1000 to 1400 ppm [^co2-bands]."),
            ),
        ),
    ];
    for case in cases {
        run_case(case);
    }
}
