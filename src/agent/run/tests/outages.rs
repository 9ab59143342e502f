//! A service the answer needed was down: the answer is an error of that service, never
//! "I don't know" (which would tell the user the information does not exist).

use super::*;
use crate::agent::error::Service;

fn failure(kind: &str, message: &str) -> (bool, serde_json::Value) {
    (false, json!({"error": {"kind": kind, "message": message}}))
}

fn down(service: Service) -> Out {
    Out::Failed(Outage {
        service,
        timed_out: false,
    })
}

fn slow(service: Service) -> Out {
    Out::Failed(Outage {
        service,
        timed_out: true,
    })
}

/// A documentation question whose search by the library returned `result`, up to the first
/// answer call (every tool offered when the search failed).
fn searched(name: &'static str, result: (bool, serde_json::Value)) -> Case {
    let first_call = if result.0 {
        first_docs_call()
    } else {
        any_call()
    };
    case(name, DOCS_QUESTION, Out::Topic)
        .then(in_scope(), Out::Tools(vec!["search_docs"], 0))
        .then(In::Results(vec![result]), first_call)
}

#[test]
fn an_outage_ends_the_answer_as_an_error_of_its_service() {
    let search_down = || failure("unavailable", "the documentation search is unavailable");
    let cases = [
        searched(
            "the search is down and the model does not know",
            search_down(),
        )
        .then(In::Text(IDK_MARKER), down(Service::DocumentationSearch)),
        searched(
            "the search timed out and the model does not know",
            failure("timeout", "search_docs did not answer within 10 s"),
        )
        .then(In::Text(IDK_MARKER), slow(Service::DocumentationSearch)),
        searched(
            "the search is down and the model answers from nowhere",
            search_down(),
        )
        .then(
            In::Text("Poor air starts at 800 ppm."),
            down(Service::DocumentationSearch),
        ),
        searched(
            "the search is down, and so is the model's own search",
            search_down(),
        )
        .then(
            In::Calls(vec![("search_docs", r#"{"query": "co2 poor"}"#)]),
            Out::Tools(vec!["search_docs"], 0),
        )
        .then(In::Results(vec![search_down()]), any_call())
        .then(In::Text(IDK_MARKER), down(Service::DocumentationSearch)),
        docs("the model's own search fails after the library's found passages: idk")
            .then(
                In::Calls(vec![("search_docs", r#"{"query": "co2 poor"}"#)]),
                Out::Tools(vec!["search_docs"], 0),
            )
            .then(
                In::Results(vec![search_down()]),
                Out::Answer(Offer::DocsOnly, ToolChoice::Auto, ReplyShape::Free, false),
            )
            .then(In::Text(IDK_MARKER), idk()),
        searched(
            "a search that found nothing is no outage: idk",
            (true, json!({"results": []})),
        )
        .then(In::Text(IDK_MARKER), idk()),
        live("the live data timed out and the model does not know")
            .then(
                In::Calls(vec![(
                    "get_occupancy",
                    r#"{"building_id":"acme-hq","room_id":"hq-101"}"#,
                )]),
                Out::Tools(vec!["get_occupancy"], 0),
            )
            .then(
                In::Results(vec![failure(
                    "timeout",
                    "the occupancy service did not answer in time",
                )]),
                any_call(),
            )
            .then(In::Text(IDK_MARKER), slow(Service::LiveData)),
        case(
            "the buildings could not be listed and the model does not know",
            LIVE_QUESTION,
            Out::Tools(vec!["list_buildings"], 0),
        )
        .then(
            In::Results(vec![failure(
                "unavailable",
                "the building service is unavailable",
            )]),
            Out::Answer(
                Offer::LiveOnly,
                ToolChoice::Required,
                ReplyShape::Free,
                false,
            ),
        )
        .then(In::Text(IDK_MARKER), down(Service::LiveData)),
        live("a room the service does not know is no outage: idk")
            .then(
                In::Calls(vec![(
                    "get_occupancy",
                    r#"{"building_id":"acme-hq","room_id":"hq-999"}"#,
                )]),
                Out::Tools(vec!["get_occupancy"], 0),
            )
            .then(
                In::Results(vec![failure("not_found", "no room hq-999")]),
                any_call(),
            )
            .then(
                In::Text(IDK_MARKER),
                Out::Answer(Offer::Everything, ToolChoice::Auto, ReplyShape::Free, true),
            )
            .then(In::Text(IDK_MARKER), idk()),
        live("an outage the answer did not need leaves the answer as it is")
            .then(
                In::Calls(vec![
                    (
                        "get_occupancy",
                        r#"{"building_id":"acme-hq","room_id":"hq-101"}"#,
                    ),
                    (
                        "list_sensors",
                        r#"{"building_id":"acme-hq","room_id":"hq-101"}"#,
                    ),
                ]),
                Out::Tools(vec!["get_occupancy", "list_sensors"], 0),
            )
            .then(
                In::Results(vec![
                    (true, occupancy()),
                    failure("unavailable", "the sensor service is unavailable"),
                ]),
                any_call(),
            )
            .then(
                In::Text("Seven people are in the Board Room (capacity 12)."),
                answered("Seven"),
            ),
    ];
    for case in cases {
        run_case(case);
    }
}
