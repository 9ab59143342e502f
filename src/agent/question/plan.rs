//! The first live call, chosen by rule when the question leaves no doubt. Pure.
//!
//! "How many people are in room hq-101 of building acme-hq right now?" names one room and asks
//! for its occupancy: the call is `get_occupancy` with those ids, whatever the model would
//! write. Written by the model, such a call costs a small local model 50–100 output tokens
//! (3–7 seconds on two CPU cores), and it sometimes picks the wrong tool or invents an id.
//! The library makes the call instead and the model reads its result, as if it had asked.
//!
//! Only a question about one place (one room, or one building and no room) and one thing
//! (its occupancy, the latest reading of one sensor type, or its sensors) is planned. A
//! question about a past window is planned when it names one room, one sensor type (or
//! occupancy) and a window counted back from now, or none ([`window`]); a question about
//! more than one thing, or about a window the library does not read, is left to the model.

use super::places::NamedPlaces;
use super::routing::asks_for_history;
use super::window::{asked_window, AskedWindow};
use super::words::{contains_phrase, words};
use crate::agent::tools::live::{GetLatestSensorData, GetOccupancy, GetSensorHistory};
use crate::agent::tools::Tool;
use serde_json::{json, Value};

/// A tool call the library makes for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedCall {
    pub tool: &'static str,
    pub arguments: Value,
}

/// Phrases asking how many people are in a place, in the languages the agent answers in.
const OCCUPANCY_PHRASES: &[&str] = &[
    "how many people",
    "how many persons",
    "how full",
    "how busy",
    "occupancy",
    "occupied",
    "wie viele personen",
    "wie viele leute",
    "wie viele menschen",
    "belegung",
    "combien de personnes",
    "cuántas personas",
    "quante persone",
    "quantas pessoas",
    "hoeveel mensen",
    "hoeveel personen",
];

/// Words naming a sensor type, and the type.
const SENSOR_WORDS: &[(&str, &str)] = &[
    ("co2", "co2"),
    ("carbon dioxide", "co2"),
    ("kohlendioxid", "co2"),
    ("temperature", "temperature"),
    ("temperatur", "temperature"),
    ("température", "temperature"),
    ("temperatura", "temperature"),
    ("how warm", "temperature"),
    ("how cold", "temperature"),
    ("wie warm", "temperature"),
    ("humidity", "humidity"),
    ("feuchtigkeit", "humidity"),
    ("luftfeuchtigkeit", "humidity"),
    ("humidité", "humidity"),
    ("humedad", "humidity"),
    ("umidità", "humidity"),
    ("noise", "noise"),
    ("how loud", "noise"),
    ("lärm", "noise"),
    ("lautstärke", "noise"),
    ("bruit", "noise"),
    ("ruido", "noise"),
    ("light level", "light"),
    ("illuminance", "light"),
    ("lux", "light"),
    ("pm25", "pm25"),
    ("pm2 5", "pm25"),
    ("fine dust", "pm25"),
    ("feinstaub", "pm25"),
    ("particulate", "pm25"),
];

/// Phrases asking which sensors a place has.
const SENSORS_PHRASES: &[&str] = &[
    "which sensors",
    "what sensors",
    "sensors are installed",
    "sensors installed",
    "list the sensors",
    "welche sensoren",
    "quels capteurs",
    "qué sensores",
];

/// The call that answers `question` about the places it `named`, when only one does.
pub fn first_live_call(question: &str, named: &NamedPlaces) -> Option<PlannedCall> {
    let place = one_place(named)?;
    let window = asks_for_history(question).then_some(question);
    call_for(&Asked::read(question), place, window)
}

/// The call for a continuation (`followup`) about the places `named`: what `question` asks,
/// or what `previous` asked when it asks nothing itself; over `previous`'s past window when
/// `over_window`.
pub fn continued_call(
    question: &str,
    previous: &str,
    over_window: bool,
    named: &NamedPlaces,
) -> Option<PlannedCall> {
    let place = one_place(named)?;
    let own = Asked::read(question);
    let asked = if own.is_nothing() {
        Asked::read(previous)
    } else {
        own
    };
    call_for(&asked, place, over_window.then_some(previous))
}

/// The one figure a live question asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    Occupancy,
    /// The latest reading of this sensor type.
    Reading(&'static str),
}

/// The one figure `question` asks for (or, for a continuation asking none itself, what
/// `previous` asked for); `None` for several or none, or over a past window (`over_window`).
pub fn asked_quantity(
    question: &str,
    previous: Option<&str>,
    over_window: bool,
) -> Option<Quantity> {
    if over_window {
        return None;
    }
    let own = Asked::read(question);
    let asked = match previous {
        Some(previous) if own.is_nothing() => Asked::read(previous),
        _ => own,
    };
    match (asked.occupancy, asked.types.as_slice(), asked.sensors) {
        (true, [], false) => Some(Quantity::Occupancy),
        (false, [kind], false) => Some(Quantity::Reading(kind)),
        _ => None,
    }
}

/// What a question asks for: occupancy, readings of sensor types, the list of sensors.
struct Asked {
    occupancy: bool,
    types: Vec<&'static str>,
    sensors: bool,
}

impl Asked {
    fn read(question: &str) -> Asked {
        let text = words(question).join(" ");
        let has = |phrase: &str| contains_phrase(&text, phrase);
        let mut types: Vec<&'static str> = SENSOR_WORDS
            .iter()
            .filter(|(word, _)| has(word))
            .map(|(_, kind)| *kind)
            .collect();
        types.sort_unstable();
        types.dedup();
        Asked {
            occupancy: OCCUPANCY_PHRASES.iter().any(|p| has(p)),
            types,
            sensors: SENSORS_PHRASES.iter().any(|p| has(p)),
        }
    }

    fn is_nothing(&self) -> bool {
        !self.occupancy && self.types.is_empty() && !self.sensors
    }
}

/// The one call answering `asked` about `place`; over the window `window` (a question's text)
/// asks for, when given.
fn call_for(asked: &Asked, place: Value, window: Option<&str>) -> Option<PlannedCall> {
    if let Some(question) = window {
        return history_call(
            question,
            place,
            asked.occupancy,
            &asked.types,
            asked.sensors,
        );
    }
    let (tool, arguments) = match (asked.occupancy, asked.types.as_slice(), asked.sensors) {
        (true, [], false) => (GetOccupancy::NAME, place),
        // A building's latest readings of every room are left to the model to narrow down.
        (false, [kind], false) if place.get("room_id").is_some() => {
            let mut arguments = place;
            arguments["sensor_type"] = json!(kind);
            (GetLatestSensorData::NAME, arguments)
        }
        (false, [], true) => ("list_sensors", place),
        _ => return None,
    };
    Some(PlannedCall { tool, arguments })
}

/// The history of one sensor type (or of occupancy) of one room over the window the question
/// asks for; the tool's default window when it asks for none.
fn history_call(
    question: &str,
    mut arguments: Value,
    occupancy: bool,
    types: &[&str],
    sensors: bool,
) -> Option<PlannedCall> {
    arguments.get("room_id")?;
    let kind = match (occupancy, types, sensors) {
        (false, [kind], false) => *kind,
        (true, [], false) => "occupancy",
        _ => return None,
    };
    arguments["sensor_type"] = json!(kind);
    match asked_window(question) {
        AskedWindow::NotSaid => {}
        AskedWindow::Last(span) => arguments["from"] = json!(span.start()),
        AskedWindow::Unclear => return None,
    }
    Some(PlannedCall {
        tool: GetSensorHistory::NAME,
        arguments,
    })
}

/// The ids of the one room the question names, or of the one building when it names no room.
fn one_place(named: &NamedPlaces) -> Option<Value> {
    match (named.rooms.as_slice(), named.buildings.as_slice()) {
        ([room], buildings)
            if buildings.is_empty() || buildings.iter().all(|b| b.id == room.building_id) =>
        {
            Some(json!({"building_id": room.building_id, "room_id": room.id}))
        }
        ([], [building]) => Some(json!({"building_id": building.id})),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::question::places::{KnownBuilding, KnownRoom};

    fn hq() -> KnownBuilding {
        KnownBuilding {
            id: "acme-hq".into(),
            name: "Acme Headquarters".into(),
            address: String::new(),
        }
    }

    fn room(id: &str) -> KnownRoom {
        KnownRoom {
            building_id: "acme-hq".into(),
            id: id.into(),
            name: String::new(),
            floor: None,
            capacity: None,
        }
    }

    fn in_room(id: &str) -> NamedPlaces {
        NamedPlaces {
            buildings: vec![hq()],
            rooms: vec![room(id)],
            ..NamedPlaces::default()
        }
    }

    fn in_building() -> NamedPlaces {
        NamedPlaces {
            buildings: vec![hq()],
            ..NamedPlaces::default()
        }
    }

    #[test]
    fn one_place_and_one_thing_asked_make_the_call() {
        let table: [(&str, NamedPlaces, &str, Value); 11] = [
            (
                "How many people are in room hq-101 of building acme-hq right now?",
                in_room("hq-101"),
                "get_occupancy",
                json!({"building_id": "acme-hq", "room_id": "hq-101"}),
            ),
            (
                "How many people are in building acme-hq right now?",
                in_building(),
                "get_occupancy",
                json!({"building_id": "acme-hq"}),
            ),
            (
                "What is the CO2 level in room hq-201 of building acme-hq right now?",
                in_room("hq-201"),
                "get_latest_sensor_data",
                json!({"building_id": "acme-hq", "room_id": "hq-201", "sensor_type": "co2"}),
            ),
            (
                "Wie warm ist es gerade im Raum hq-201?",
                in_room("hq-201"),
                "get_latest_sensor_data",
                json!({"building_id": "acme-hq", "room_id": "hq-201", "sensor_type": "temperature"}),
            ),
            (
                "What is the PM2.5 level in room hq-102 now?",
                in_room("hq-102"),
                "get_latest_sensor_data",
                json!({"building_id": "acme-hq", "room_id": "hq-102", "sensor_type": "pm25"}),
            ),
            (
                "Which sensors are installed in room hq-102 of building acme-hq?",
                in_room("hq-102"),
                "list_sensors",
                json!({"building_id": "acme-hq", "room_id": "hq-102"}),
            ),
            (
                "Combien de personnes sont dans la salle hq-101 en ce moment ?",
                in_room("hq-101"),
                "get_occupancy",
                json!({"building_id": "acme-hq", "room_id": "hq-101"}),
            ),
            (
                "How did CO2 develop in room hq-201 over the last 24 hours?",
                in_room("hq-201"),
                "get_sensor_history",
                json!({"building_id": "acme-hq", "room_id": "hq-201", "sensor_type": "co2",
                       "from": "24 hours ago"}),
            ),
            (
                "What was the highest temperature in room hq-101?",
                in_room("hq-101"),
                "get_sensor_history",
                json!({"building_id": "acme-hq", "room_id": "hq-101",
                       "sensor_type": "temperature"}),
            ),
            (
                "Show me the CO2 history of room hq-201 over the last 14 days.",
                in_room("hq-201"),
                "get_sensor_history",
                json!({"building_id": "acme-hq", "room_id": "hq-201", "sensor_type": "co2",
                       "from": "14 days ago"}),
            ),
            (
                "How did occupancy develop in room hq-101 over the past week?",
                in_room("hq-101"),
                "get_sensor_history",
                json!({"building_id": "acme-hq", "room_id": "hq-101",
                       "sensor_type": "occupancy", "from": "1 week ago"}),
            ),
        ];
        for (question, named, tool, arguments) in table {
            let planned = first_live_call(question, &named);
            assert_eq!(planned, Some(PlannedCall { tool, arguments }), "{question}");
        }
    }

    #[test]
    fn anything_less_clear_is_left_to_the_model() {
        let two_rooms = NamedPlaces {
            buildings: vec![hq()],
            rooms: vec![room("hq-101"), room("hq-102")],
            ..NamedPlaces::default()
        };
        let table: [(&str, NamedPlaces); 8] = [
            (
                "How did CO2 develop in room hq-201 since yesterday?",
                in_room("hq-201"),
            ),
            (
                "How did CO2 develop in building acme-hq over the last 24 hours?",
                in_building(),
            ),
            (
                "How did CO2 and humidity develop in room hq-201 over the last day?",
                in_room("hq-201"),
            ),
            ("How many people are in the rooms right now?", two_rooms),
            (
                "What are CO2 and temperature in room hq-201 right now?",
                in_room("hq-201"),
            ),
            (
                "What is the CO2 level in building acme-hq right now?",
                in_building(),
            ),
            ("What is the capacity of room hq-201?", in_room("hq-201")),
            (
                "How many people are there right now?",
                NamedPlaces::default(),
            ),
        ];
        for (question, named) in table {
            assert_eq!(first_live_call(question, &named), None, "{question}");
        }
    }
}
