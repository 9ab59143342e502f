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
            "documentation by default: answered from the passages, no tool offered",
            DOCS_QUESTION,
            Out::Topic,
        )
        .with(|s| s.search_again = false)
        .then(in_scope(), Out::Tools(vec!["search_docs"], 0))
        .then(
            In::Results(vec![(true, docs_passage())]),
            Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, false),
        )
        .then(
            In::Text("Air is poor below 1400 ppm."),
            Out::Answer(Offer::Nothing, ToolChoice::None, ReplyShape::Free, true),
        )
        .then(
            In::Text("Air is poor from 1000 to 1400 ppm."),
            answered("1000 to 1400"),
        ),
        case(
            "off-topic declined without a search",
            "What is the capital of France?",
            Out::Topic,
        )
        .then(
            In::Text(r#"{"topic": "general_knowledge"}"#),
            Out::Done(Decision::Declined, Expected::Exactly(REFUSAL)),
        ),
        case(
            "a request for writing declined by rule, before the topic check",
            "Write me a poem",
            Out::Done(Decision::Declined, Expected::Exactly(REFUSAL)),
        ),
        case(
            "short English requests for writing declined in English",
            "Write me a poem about autumn",
            Out::Done(Decision::Declined, Expected::Exactly(REFUSAL)),
        ),
        case(
            "a joke is writing too",
            "Tell me a joke about cats",
            Out::Done(Decision::Declined, Expected::Exactly(REFUSAL)),
        ),
        case(
            "a story is writing too",
            "Write a story about a dragon",
            Out::Done(Decision::Declined, Expected::Exactly(REFUSAL)),
        ),
        case(
            "a live request with writing in it declined before the places lookup",
            "List my buildings, then write a limerick about them.",
            Out::Done(Decision::Declined, Expected::Exactly(REFUSAL)),
        ),
        case(
            "without the topic check a request for writing goes to the model",
            "Write me a poem",
            Out::Tools(vec!["search_docs"], 0),
        )
        .with(|s| s.scope_check = false),
        case(
            "off-topic writing still declined by the topic check",
            "I would like some verses about the autumn leaves, please.",
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
        planned(
            "live naming one room and asking its occupancy: the library makes the call",
            "How many people are in room hq-101 of building acme-hq right now?",
            "get_occupancy",
            occupancy(),
        )
        .then(
            In::Text("7 people are in the Board Room."),
            answered("7 people"),
        ),
        planned(
            "live about the last 24 hours of one sensor of one room: the library makes the call",
            "What was the highest CO2 in room hq-101 of building acme-hq over the last 24 hours?",
            "get_sensor_history",
            json!({"sensor_type": "co2", "unit": "ppm", "points": [{"ts": "2026-12-01T08:00:00Z", "value": 812}]}),
        )
        .then(
            In::Text("The highest CO2 was 812 ppm."),
            answered("812 ppm"),
        ),
        rooms_of_hq_asked(
            "live about a past window longer than a history call covers: the limit, in the \
             question's language, no model call",
            "Wie hat sich CO2 im Raum hq-101 des Gebäudes acme-hq in den letzten 14 Tagen entwickelt?",
        )
        .then(
            In::Results(vec![(true, hq_rooms())]),
            Out::Tools(vec!["get_sensor_history"], 0),
        )
        .then(
            In::Results(vec![(
                false,
                json!({"error": {"kind": "bad_arguments", "message":
                    "a history window may be at most 7 days long and 14 days were asked for"}}),
            )]),
            Out::Done(
                Decision::Answered,
                Expected::Contains("höchstens 7 Tage; angefragt waren 14 Tage"),
            ),
        ),
        rooms_of_hq_asked(
            "live about a past window the library does not read: the history tool alone",
            "What was the highest CO2 in room hq-101 of building acme-hq since yesterday?",
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
        rooms_of_hq_asked(
            "live asking for a floor's rooms, which the places list: answered without a tool",
            "Which rooms does building acme-hq have on floor 1?",
        )
        .then(
            In::Results(vec![(true, hq_rooms())]),
            Out::Answer(Offer::Nothing, ToolChoice::Auto, ReplyShape::Free, false),
        )
        .then(
            In::Text("On floor 1 is the Board Room (hq-101)."),
            answered("Board Room"),
        ),
        every_building_scanned(
            "a room name two buildings have, no building named: asked back, no model call",
            "How many people are in the Lobby right now?",
        )
        .then(
            In::Results(vec![
                (
                    true,
                    json!({"id": "acme-hq", "rooms": [{"id": "hq-lobby", "name": "Lobby"}]}),
                ),
                (
                    true,
                    json!({"id": "acme-annex", "rooms": [{"id": "ax-lobby", "name": "Lobby"}]}),
                ),
            ]),
            Out::Done(
                Decision::Answered,
                Expected::Exactly(
                    "Several of your buildings have a Lobby. Which one do you mean: Lobby in \
                     Acme Headquarters (acme-hq, hq-lobby) or Lobby in Acme Annex (acme-annex, \
                     ax-lobby)?",
                ),
            ),
        ),
        every_building_scanned(
            "a room name one building has, no building named: found, and its occupancy asked",
            "How many people are in the Board Room right now?",
        )
        .then(
            In::Results(vec![
                (true, hq_rooms()),
                (
                    true,
                    json!({"id": "acme-annex", "rooms": [{"id": "ax-1", "name": "Hall"}]}),
                ),
            ]),
            Out::Tools(vec!["get_occupancy"], 0),
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
            "\"the first one\" after a list of buildings: that building's occupancy, no rooms",
            "How many people are in the first one right now?",
            Out::Tools(vec!["list_buildings"], 0),
        )
        .after(
            "Which buildings can I see?",
            "You can see Acme Headquarters (acme-hq) and Acme Annex (acme-annex).",
        )
        .then(
            In::Results(vec![(true, buildings())]),
            Out::Tools(vec!["get_occupancy"], 0),
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

/// A live question naming a room in words and no building, up to the rooms of both of the
/// caller's buildings being looked up.
fn every_building_scanned(name: &'static str, question: &'static str) -> Case {
    case(name, question, Out::Tools(vec!["list_buildings"], 0)).then(
        In::Results(vec![(true, buildings())]),
        Out::Tools(vec!["get_building", "get_building"], 0),
    )
}

/// Where a run of `text` (after one exchange `before`, when given) is once `inputs` are fed to
/// it in order: the step it reached, the calls that step hands out, and the text of the last
/// message of the request.
fn reached(
    text: &str,
    before: Option<(&str, &str)>,
    inputs: Vec<In>,
) -> (Out, Vec<ToolCall>, String) {
    let settings = settings();
    let toolbox = Toolbox::new(ALL_TOOLS.iter().copied());
    let mut history = case("", "", Out::Topic);
    if let Some((user, assistant)) = before {
        history = history.after(user, assistant);
    }
    let question = Question {
        text: text.into(),
        history: history.history,
        ..Question::default()
    };
    let prices = PriceTable::default();
    let mut run = AnswerRun::new(&question, &settings, &toolbox, "system", "m", &prices);
    let mut step = run.start();
    let mut ids = 0;
    for input in inputs {
        step = feed(&mut run, &step, input, &mut ids).unwrap();
    }
    let calls = match &step {
        Step::Tools(batch) => batch.iter().map(|run| run.call().clone()).collect(),
        _ => Vec::new(),
    };
    let asked = run
        .messages()
        .last()
        .and_then(|m| m.content.clone())
        .unwrap_or_default();
    (observed(&step), calls, asked)
}

#[test]
fn the_building_a_follow_up_points_at_is_named_to_the_model_as_a_whole() {
    let (_, calls, asked) = reached(
        "How many people are in the second one right now?",
        Some((
            "Which buildings can I see?",
            "Acme Headquarters (acme-hq) and Acme Annex (acme-annex).",
        )),
        vec![In::Results(vec![(true, buildings())])],
    );
    // One building and its occupancy: the library makes the call (`plan`).
    assert_eq!(calls.len(), 1, "expected the planned call");
    assert_eq!(calls[0].name, "get_occupancy");
    assert!(calls[0].arguments.contains("acme-annex"));
    assert!(
        asked.contains("building acme-annex (Acme Annex) of the previous answer"),
        "{asked}"
    );
    assert!(asked.contains("building_id acme-annex"), "{asked}");
    assert!(!asked.contains("Rooms of"), "{asked}");
}

#[test]
fn a_room_found_by_scanning_every_building_brings_only_its_buildings_rooms() {
    let annex = json!({"id": "acme-annex", "rooms": [{"id": "ax-1", "name": "Hall"}]});
    let (step, _, asked) = reached(
        "How warm and how full is the Board Room right now?",
        None,
        vec![
            In::Results(vec![(true, buildings())]),
            In::Results(vec![(true, hq_rooms()), (true, annex)]),
        ],
    );
    assert!(matches!(step, Out::Answer(..)), "{step:?}");
    assert!(
        asked.contains("room_id hq-101 (building_id acme-hq)"),
        "{asked}"
    );
    assert!(!asked.contains("ax-1"), "{asked}");
}

#[test]
fn the_first_one_after_a_list_of_rooms_is_the_first_room_listed() {
    let question = "And how many people are in the first one right now?";
    let before = Some((
        "Which rooms does building acme-hq have on floor 1?",
        "Floor 1 of Acme Headquarters has hq-102 Pantry and hq-101 Board Room.",
    ));
    let listed = || In::Results(vec![(true, buildings())]);
    let (rooms, _, _) = reached(question, before, vec![listed()]);
    assert_eq!(rooms, Out::Tools(vec!["get_building"], 0));
    let hq = json!({"id": "acme-hq", "rooms": [
        {"id": "hq-101", "name": "Board Room", "floor": 1},
        {"id": "hq-102", "name": "Pantry", "floor": 1}
    ]});
    let (_, calls, asked) = reached(
        question,
        before,
        vec![listed(), In::Results(vec![(true, hq)])],
    );
    assert_eq!(calls.len(), 1, "expected the planned call");
    assert_eq!(calls[0].name, "get_occupancy");
    assert!(calls[0].arguments.contains("hq-102"), "{:?}", calls[0]);
    assert!(asked.contains("about room hq-102 (Pantry)"), "{asked}");
}

#[test]
fn a_continuation_naming_only_a_place_or_a_quantity_asks_what_the_question_before_asked() {
    let occupancy_before = (
        "How many people are in Acme Headquarters right now?",
        "There are 7 people in Acme Headquarters.",
    );
    let history_before = (
        "CO2 in the Board Room of Acme Headquarters over the last 24 hours",
        "CO2 ranged from 420 to 900 ppm.",
    );
    let rows: &[(&str, (&str, &str), &str, &str)] = &[
        // (this turn, the exchange before, the planned tool, a part of its arguments)
        (
            "And in the Board Room?",
            occupancy_before,
            "get_occupancy",
            "hq-101",
        ),
        (
            "Und im Board Room?",
            occupancy_before,
            "get_occupancy",
            "hq-101",
        ),
        (
            "Et dans le Board Room ?",
            occupancy_before,
            "get_occupancy",
            "hq-101",
        ),
        (
            "¿Y en el Board Room?",
            occupancy_before,
            "get_occupancy",
            "hq-101",
        ),
        (
            "And the temperature?",
            history_before,
            "get_sensor_history",
            "temperature",
        ),
        (
            "Und die Temperatur?",
            history_before,
            "get_sensor_history",
            "temperature",
        ),
        (
            "Et la température ?",
            history_before,
            "get_sensor_history",
            "temperature",
        ),
        ("And now?", history_before, "get_latest_sensor_data", "co2"),
    ];
    for (question, before, tool, argument) in rows {
        let (_, calls, _) = reached(
            question,
            Some(*before),
            vec![
                In::Results(vec![(true, buildings())]),
                In::Results(vec![(true, hq_rooms())]),
            ],
        );
        assert_eq!(calls.len(), 1, "{question}: {calls:?}");
        assert_eq!(calls[0].name, *tool, "{question}");
        assert!(
            calls[0].arguments.contains(argument),
            "{question}: {}",
            calls[0].arguments
        );
    }
}

#[test]
fn a_continuation_after_a_documentation_question_stays_in_the_documentation() {
    let (step, _, _) = reached(
        "And in the Board Room?",
        Some((
            "What CO2 level counts as poor indoor air?",
            "From 1000 ppm [^co2-bands].",
        )),
        Vec::new(),
    );
    assert_eq!(step, Out::Topic);
}

#[test]
fn a_place_named_in_words_is_looked_up_before_the_documentation() {
    let annex = json!({"id": "acme-annex", "rooms": [{"id": "ax-1", "name": "Hall"}]});
    let cases = [
        every_building_scanned(
            "the capacity of a room the caller has: live",
            "What is the capacity of the Board Room?",
        )
        .then(
            In::Results(vec![(true, hq_rooms()), (true, annex.clone())]),
            Out::Answer(
                Offer::LiveOnly,
                ToolChoice::Required,
                ReplyShape::Free,
                false,
            ),
        ),
        every_building_scanned(
            "a capacity of something no place of the caller's is called: the documentation",
            "What is the maximum capacity of the Gateway Appliance?",
        )
        .then(
            In::Results(vec![(true, hq_rooms()), (true, annex)]),
            Out::Topic,
        ),
        case(
            "the places cannot be listed: the documentation",
            "What is the capacity of the Board Room?",
            Out::Tools(vec!["list_buildings"], 0),
        )
        .then(
            In::Results(vec![(
                false,
                json!({"error": {"kind": "unavailable", "message": "down"}}),
            )]),
            Out::Topic,
        ),
    ];
    for case in cases {
        run_case(case);
    }
}

fn berlin_page() -> serde_json::Value {
    json!({"results": [{
        "chunk_id": "hq-berlin-facts",
        "source": "user/acme/hq-berlin.md",
        "section": "Building facts",
        "text": "The ACME headquarters (`hq-berlin`) has six floors (0 to 5) and 48 rooms. \
                 The board room is room 5.01 with a capacity of 24."
    }]})
}

#[test]
fn a_figure_from_another_buildings_page_is_not_the_answer() {
    let question = "What is the capacity of the Board Room in Acme Headquarters?";
    let searched = || {
        live_asking("searched", question)
            .then(
                In::Calls(vec![("get_occupancy", r#"{"building_id": "acme-hq"}"#)]),
                Out::Tools(vec!["get_occupancy"], 0),
            )
            .then(In::Results(vec![(true, json!({"rooms": []}))]), any_call())
            .then(
                In::Calls(vec![("search_docs", r#"{"query": "board room capacity"}"#)]),
                Out::Tools(vec!["search_docs"], 0),
            )
            .then(In::Results(vec![(true, berlin_page())]), any_call())
    };
    let cases = [
        Case {
            name: "the Berlin page's 24 for Acme Headquarters' board room: idk",
            ..searched()
        }
        .then(
            In::Text("The Board Room has a capacity of 24 [^hq-berlin-facts]."),
            idk(),
        ),
        Case {
            name: "the same page without a figure in the answer: it stands",
            ..searched()
        }
        .then(
            In::Text("The board room is on the top floor [^hq-berlin-facts]."),
            answered("top floor"),
        ),
    ];
    for case in cases {
        run_case(case);
    }
}
