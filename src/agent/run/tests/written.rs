//! A live result holding the asked figure: the answer is never "I don't know"; the library
//! writes the figure when the model does not.

use super::*;

/// As `get_occupancy` returns one room: the building's list of that one room.
fn aurora_count() -> serde_json::Value {
    json!({"building_id": "acme-hq", "building_name": "Acme Headquarters",
           "rooms": [{"room_id": "hq-101", "room_name": "Board Room", "count": 6,
                      "capacity": 12, "updated_at": "2026-12-04T14:05:00Z", "age_minutes": 3}],
           "total_people": 6})
}

fn co2_reading() -> serde_json::Value {
    json!({"building_id": "acme-hq", "readings": [
        {"room_id": "hq-101", "room_name": "Board Room", "sensor_id": "s1",
         "sensor_type": "co2", "value": 812.0, "unit": "ppm",
         "ts": "2026-12-04T14:00:00Z", "age_minutes": 4, "stale": false}],
        "sensors_without_reading": []})
}

const COUNT: &str = "Board Room (hq-101) has 6 people (capacity 12), as of 2026-12-04 14:05 UTC.";

#[test]
fn a_result_holding_the_asked_figure_is_never_answered_with_i_dont_know() {
    let occupancy_question =
        "How many people are in the Board Room of Acme Headquarters right now?";
    let cases = [
        planned(
            "the model does not know beside the count: the library writes it",
            occupancy_question,
            "get_occupancy",
            aurora_count(),
        )
        .then(In::Text(IDK_MARKER), Out::Done(Decision::Answered, Expected::Exactly(COUNT))),
        planned(
            "the model refuses beside the count: the library writes it",
            occupancy_question,
            "get_occupancy",
            aurora_count(),
        )
        .then(In::Text("NO_ANSWER"), Out::Done(Decision::Answered, Expected::Exactly(COUNT))),
        planned(
            "the model's own figure is invented: the library writes the result's",
            occupancy_question,
            "get_occupancy",
            aurora_count(),
        )
        .then(
            In::Text("There are 42 people."),
            Out::Done(Decision::Answered, Expected::Exactly(COUNT)),
        ),
        planned(
            "the model gives another quantity's figure for the count: the library writes the count",
            occupancy_question,
            "get_occupancy",
            aurora_count(),
        )
        .then(
            In::Calls(vec![(
                "get_latest_sensor_data",
                r#"{"building_id": "acme-hq", "room_id": "hq-101", "sensor_type": "co2"}"#,
            )]),
            Out::Tools(vec!["get_latest_sensor_data"], 0),
        )
        .then(In::Results(vec![(true, co2_reading())]), any_call())
        .then(
            In::Text("The CO2 level in the Board Room is 812 ppm."),
            Out::Done(Decision::Answered, Expected::Exactly(COUNT)),
        ),
        planned(
            "the model gives the count with the room's capacity: its answer stands",
            occupancy_question,
            "get_occupancy",
            aurora_count(),
        )
        .then(
            In::Text("The Board Room has 6 people of a capacity of 12."),
            Out::Done(
                Decision::Answered,
                Expected::Exactly("The Board Room has 6 people of a capacity of 12."),
            ),
        ),
        planned(
            "the model states the count: its answer stands",
            occupancy_question,
            "get_occupancy",
            aurora_count(),
        )
        .then(
            In::Text("6 people are in the Board Room."),
            Out::Done(Decision::Answered, Expected::Exactly("6 people are in the Board Room.")),
        ),
        planned(
            "in German, in German",
            "Wie viele Personen sind gerade im Board Room von Acme Headquarters?",
            "get_occupancy",
            aurora_count(),
        )
        .then(
            In::Text(IDK_MARKER),
            Out::Done(
                Decision::Answered,
                Expected::Exactly(
                    "In Board Room (hq-101) sind 6 Personen (Kapazität 12), Stand 2026-12-04 14:05 UTC.",
                ),
            ),
        ),
        planned(
            "a reading: the library writes it with its time",
            "What is the CO2 level in the Board Room of Acme Headquarters right now?",
            "get_latest_sensor_data",
            co2_reading(),
        )
        .then(
            In::Text(IDK_MARKER),
            Out::Done(
                Decision::Answered,
                Expected::Exactly(
                    "The latest CO2 reading in Board Room (hq-101) is 812 ppm, measured at 2026-12-04 14:00 UTC.",
                ),
            ),
        ),
        planned(
            "a result without the asked figure: asked again, then idk",
            "What is the CO2 level in the Board Room of Acme Headquarters right now?",
            "get_latest_sensor_data",
            json!({"building_id": "acme-hq", "readings": [], "sensors_without_reading": []}),
        )
        .then(
            In::Text(IDK_MARKER),
            Out::Answer(Offer::Everything, ToolChoice::Auto, ReplyShape::Free, true),
        )
        .then(In::Text(IDK_MARKER), idk()),
    ];
    for case in cases {
        run_case(case);
    }
}

fn day_of_co2() -> serde_json::Value {
    json!({"building_id": "acme-hq", "room_id": "hq-101", "room_name": "Board Room",
           "sensor_type": "co2", "from": "2026-12-03T17:00:00Z",
           "to": "2026-12-04T17:00:00Z", "unit": "ppm",
           "summary": {"count": 288, "min": 391.0, "max": 908.0, "mean": 641.56,
                       "first": {"ts": "2026-12-03T17:05:00Z", "value": 450.0},
                       "last": {"ts": "2026-12-04T16:55:00Z", "value": 702.0},
                       "low": {"ts": "2026-12-04T03:10:00Z", "value": 391.0},
                       "high": {"ts": "2026-12-04T14:20:00Z", "value": 908.0},
                       "buckets": []}})
}

const SUMMARY: &str =
    "CO2 in Board Room (hq-101) from 2026-12-03 17:00 UTC to 2026-12-04 17:00 UTC: \
                       lowest 391 ppm at 2026-12-04 03:10 UTC, highest 908 ppm at 2026-12-04 \
                       14:20 UTC, mean 641.56 ppm; latest 702 ppm at 2026-12-04 16:55 UTC.";

#[test]
fn a_history_answer_gives_the_windows_low_high_mean_and_latest() {
    let question = "CO2 in the Board Room of Acme Headquarters over the last 24 hours";
    let history = || planned("", question, "get_sensor_history", day_of_co2());
    let cases = [
        Case {
            name: "the mean alone, unnamed: the summary follows it",
            ..history()
        }
        .then(
            In::Text("The CO2 level over the last 24 hours is 641.56 ppm."),
            Out::Done(
                Decision::Answered,
                Expected::Exactly(Box::leak(
                    format!("The CO2 level over the last 24 hours is 641.56 ppm. {SUMMARY}")
                        .into_boxed_str(),
                )),
            ),
        ),
        Case {
            name: "low, high and mean given: the answer stands",
            ..history()
        }
        .then(
            In::Text("It ranged from 391 to 908 ppm, 641.6 ppm on average."),
            Out::Done(
                Decision::Answered,
                Expected::Exactly("It ranged from 391 to 908 ppm, 641.6 ppm on average."),
            ),
        ),
        Case {
            name: "the model does not know: the summary is the answer",
            ..history()
        }
        .then(
            In::Text(IDK_MARKER),
            Out::Done(Decision::Answered, Expected::Exactly(SUMMARY)),
        ),
    ];
    for case in cases {
        run_case(case);
    }
}
