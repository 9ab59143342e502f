//! The transitions up to the first answer call: routing, the topic check, search first, the
//! places lookup, the first hop's offer.

use super::*;

#[test]
fn routing_and_the_steps_before_the_model() {
    let cases = [
        case("greeting", "Hello!", answered("Hello!")),
        docs("documentation: topic, search, search_docs alone")
            .then(In::Text("Poor is 1000 to 1400 ppm."), answered("1000")),
        case(
            "off-topic declined without a search",
            "Write me a poem",
            Out::Topic,
        )
        .then(
            In::Text(r#"{"topic": "poem_story_or_other_writing"}"#),
            Out::Done(Decision::Declined, Expected::Exactly(REFUSAL)),
        ),
        case(
            "a request to act gets the read-only refusal",
            DOCS_QUESTION,
            Out::Topic,
        )
        .then(
            In::Text(r#"{"topic": "booking_or_changing_something"}"#),
            Out::Done(Decision::Declined, Expected::Exactly(READ_ONLY_REFUSAL)),
        ),
        case(
            "a topic reply that is not the JSON decides nothing",
            DOCS_QUESTION,
            Out::Topic,
        )
        .then(In::Text("sensors"), Out::Tools(vec!["search_docs"], 0)),
        case(
            "a failed topic check decides nothing",
            DOCS_QUESTION,
            Out::Topic,
        )
        .then(
            In::Fails(LlmError::Status {
                status: 500,
                detail: String::new(),
            }),
            Out::Tools(vec!["search_docs"], 0),
        ),
        case(
            "without the topic check: searched at once",
            DOCS_QUESTION,
            Out::Tools(vec!["search_docs"], 0),
        )
        .with(|s| s.scope_check = false),
        case(
            "without search first: every tool on the first call",
            DOCS_QUESTION,
            any_call(),
        )
        .with(|s| {
            s.scope_check = false;
            s.search_first = false;
        }),
        case(
            "a failed search: every tool, no passages",
            DOCS_QUESTION,
            Out::Tools(vec!["search_docs"], 0),
        )
        .with(|s| s.scope_check = false)
        .then(
            In::Results(vec![(false, json!({"error": {"kind": "unavailable"}}))]),
            any_call(),
        ),
        live("live: places looked up, a live tool required")
            .then(
                In::Calls(vec![(
                    "get_occupancy",
                    r#"{"building_id":"acme-hq","room_id":"hq-101"}"#,
                )]),
                Out::Tools(vec!["get_occupancy"], 0),
            )
            .then(In::Results(vec![(true, occupancy())]), any_call())
            .then(
                In::Text("7 people are in the Board Room."),
                answered("7 people"),
            ),
        case(
            "live about a past window: the history tool alone",
            "What was the highest CO2 in room hq-101 of building acme-hq over the last 24 hours?",
            Out::Tools(vec!["list_buildings"], 0),
        )
        .then(
            In::Results(vec![(true, buildings())]),
            Out::Tools(vec!["get_building"], 0),
        )
        .then(
            In::Results(vec![(true, hq_rooms())]),
            Out::Answer(
                Offer::HistoryOnly,
                ToolChoice::Required,
                ReplyShape::Free,
                false,
            ),
        ),
        case(
            "live naming a building the caller has none of: idk without a model call",
            "How many people are in building globex-tower right now?",
            Out::Tools(vec!["list_buildings"], 0),
        )
        .then(
            In::Results(vec![(true, buildings())]),
            Out::Tools(vec![], 0),
        )
        .then(In::Results(vec![]), idk()),
        case(
            "live naming in words a building the caller has none of: idk without a model call",
            "How many people are in Globex Tower right now?",
            Out::Tools(vec!["list_buildings"], 0),
        )
        .then(
            In::Results(vec![(true, buildings())]),
            Out::Tools(vec![], 0),
        )
        .then(In::Results(vec![]), idk()),
        case(
            "the same in German: the IDK sentence in German",
            "Wie viele Personen sind gerade im Globex Tower?",
            Out::Tools(vec!["list_buildings"], 0),
        )
        .then(
            In::Results(vec![(true, buildings())]),
            Out::Tools(vec![], 0),
        )
        .then(
            In::Results(vec![]),
            Out::Done(
                Decision::Idk,
                Expected::Exactly(
                    "Das weiß ich anhand der verfügbaren CrowdVision-Informationen nicht.",
                ),
            ),
        ),
        case(
            "\"the first one\" after a list of buildings: that building, without its rooms",
            "How many people are in the first one right now?",
            Out::Tools(vec!["list_buildings"], 0),
        )
        .after(
            "Which buildings can I see?",
            "You can see Acme Headquarters (acme-hq) and Acme Annex (acme-annex).",
        )
        .then(
            In::Results(vec![(true, buildings())]),
            Out::Answer(
                Offer::LiveOnly,
                ToolChoice::Required,
                ReplyShape::Free,
                false,
            ),
        ),
        case(
            "a follow-up finds its building in the turns before",
            "And how many people are there right now?",
            Out::Tools(vec!["list_buildings"], 0),
        )
        .after(
            "Tell me about building acme-hq",
            "Acme Headquarters has one room.",
        )
        .then(
            In::Results(vec![(true, buildings())]),
            Out::Tools(vec!["get_building"], 0),
        ),
        case(
            "a failed listing: the model looks places up itself",
            LIVE_QUESTION,
            Out::Tools(vec!["list_buildings"], 0),
        )
        .then(
            In::Results(vec![(false, json!({"error": {"kind": "unavailable"}}))]),
            Out::Answer(
                Offer::LiveOnly,
                ToolChoice::Required,
                ReplyShape::Free,
                false,
            ),
        ),
        case(
            "live without the place tools: the first call requires a live tool",
            LIVE_QUESTION,
            Out::Answer(
                Offer::LiveOnly,
                ToolChoice::Required,
                ReplyShape::Free,
                false,
            ),
        )
        .tools(&["search_docs", "get_occupancy"]),
        case("documentation without any tool", DOCS_QUESTION, Out::Topic)
            .tools(&[])
            .then(in_scope(), any_call()),
    ];
    for case in cases {
        run_case(case);
    }
}

#[test]
fn the_building_a_follow_up_points_at_is_named_to_the_model_as_a_whole() {
    let settings = settings();
    let toolbox = Toolbox::new(ALL_TOOLS.iter().copied());
    let question = Question {
        text: "How many people are in the second one right now?".into(),
        history: case("", "", Out::Topic)
            .after(
                "Which buildings can I see?",
                "Acme Headquarters (acme-hq) and Acme Annex (acme-annex).",
            )
            .history,
        ..Question::default()
    };
    let prices = PriceTable::default();
    let mut run = AnswerRun::new(&question, &settings, &toolbox, "system", "m", &prices);
    let listing = run.start();
    let mut ids = 0;
    let step = feed(
        &mut run,
        &listing,
        In::Results(vec![(true, buildings())]),
        &mut ids,
    )
    .unwrap();
    assert!(matches!(step, Step::Model(_)));
    let asked = run.messages().last().unwrap().content.clone().unwrap();
    assert!(
        asked.contains("building acme-annex (Acme Annex) of the previous answer"),
        "{asked}"
    );
    assert!(asked.contains("building_id acme-annex"), "{asked}");
    assert!(!asked.contains("Rooms of"), "{asked}");
}
