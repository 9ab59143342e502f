//! The figure a live result holds for the question, written by the library. Pure.
//!
//! An answer is never "I don't know" while a result the question asked for holds the figure:
//! asked after a CO2 question, "How many people are in Meeting Room Aurora right now?" got
//! `get_occupancy` → 6 and the page drew "6 of 10" beside the 1.5B model's "I don't know".
//! When the model refuses (or its answer fails the checks) and exactly one result holds the
//! asked figure, the library writes it, in the question's language, with the time it was
//! measured.

use crate::agent::phrases::phrases;
use crate::agent::question::language::Language;
use crate::agent::question::plan::Quantity;
use crate::agent::tools::live::{GetLatestSensorData, GetOccupancy};
use crate::agent::tools::Tool;
use serde_json::Value;

/// The sentence stating the figure `asked` that exactly one of `results` ((tool, content) of
/// the calls that returned data) holds; `None` when none or several do.
pub fn figure_sentence<'r>(
    asked: Quantity,
    results: impl Iterator<Item = (&'r str, &'r Value)>,
    language: Language,
) -> Option<String> {
    let mut found = results.flat_map(|(tool, content)| match asked {
        Quantity::Occupancy if tool == GetOccupancy::NAME => {
            count_of(content, language).into_iter().collect::<Vec<_>>()
        }
        Quantity::Reading(kind) if tool == GetLatestSensorData::NAME => {
            readings_of(content, kind, language)
        }
        _ => Vec::new(),
    });
    let first = found.next()?;
    // Two rooms' figures for a question about one: which one it asked about is not known here.
    found.all(|other| other == first).then_some(first)
}

/// "Meeting Room Aurora has 6 people (capacity 10), as of 2026-12-04 14:05 UTC."
fn count_of(content: &Value, language: Language) -> Option<String> {
    let occupancy = content.get("occupancy")?;
    let count = occupancy.get("count")?.as_u64()?;
    let phrases = phrases(language);
    let capacity = occupancy
        .get("capacity")
        .and_then(Value::as_u64)
        .map(|capacity| {
            phrases
                .capacity
                .replace("{capacity}", &capacity.to_string())
        })
        .unwrap_or_default();
    Some(
        phrases
            .people_count
            .replace("{place}", &place(occupancy, content))
            .replace("{count}", &count.to_string())
            .replace("{capacity}", &capacity)
            .replace("{time}", &time(occupancy.get("updated_at"))?),
    )
}

/// The latest reading of each `kind` sensor in `content`, each as a sentence.
fn readings_of(content: &Value, kind: &str, language: Language) -> Vec<String> {
    let Some(readings) = content.get("readings").and_then(Value::as_array) else {
        return Vec::new();
    };
    readings
        .iter()
        .filter(|reading| reading.get("sensor_type").and_then(Value::as_str) == Some(kind))
        .filter_map(|reading| {
            let value = reading.get("value")?.as_f64()?;
            let unit = reading.get("unit").and_then(Value::as_str).unwrap_or("");
            Some(
                phrases(language)
                    .latest_reading
                    .replace("{sensor}", sensor_name(kind, language))
                    .replace("{place}", &place(reading, content))
                    .replace("{value}", &number(value))
                    .replace("{unit}", unit)
                    .replace(" ,", ",")
                    .replace("{time}", &time(reading.get("ts"))?),
            )
        })
        .collect()
}

/// "Board Room (hq-101)", or the id alone when the room has no name.
fn place(item: &Value, content: &Value) -> String {
    let id = item
        .get("room_id")
        .or_else(|| content.get("room_id"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    match item.get("room_name").and_then(Value::as_str) {
        Some(name) if !name.is_empty() && !id.is_empty() => format!("{name} ({id})"),
        Some(name) if !name.is_empty() => name.to_string(),
        _ => id.to_string(),
    }
}

/// An RFC 3339 time as "2026-12-04 14:05 UTC".
fn time(value: Option<&Value>) -> Option<String> {
    let at = chrono::DateTime::parse_from_rfc3339(value?.as_str()?).ok()?;
    Some(
        at.with_timezone(&chrono::Utc)
            .format("%Y-%m-%d %H:%M UTC")
            .to_string(),
    )
}

/// A value as the tools give it, without a trailing `.0`.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        let text = format!("{value:.2}");
        text.trim_end_matches('0').to_string()
    }
}

fn sensor_name(kind: &str, language: Language) -> &'static str {
    let names = phrases(language).sensor_names;
    match kind {
        "co2" => "CO2",
        "pm25" => "PM2.5",
        "temperature" => names[0],
        "humidity" => names[1],
        "noise" => names[2],
        "light" => names[3],
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn aurora() -> Value {
        json!({"building_id": "acme-hq", "building_name": "Acme Headquarters",
               "room": {"id": "hq-103"},
               "occupancy": {"room_id": "hq-103", "room_name": "Meeting Room Aurora",
                             "count": 6, "capacity": 10,
                             "updated_at": "2026-12-04T14:05:31Z"}})
    }

    fn readings() -> Value {
        json!({"building_id": "acme-hq", "readings": [
            {"room_id": "hq-101", "room_name": "Board Room", "sensor_type": "co2",
             "value": 641.5, "unit": "ppm", "ts": "2026-12-04T14:00:00+00:00"},
            {"room_id": "hq-101", "room_name": "Board Room", "sensor_type": "temperature",
             "value": 21.0, "unit": "°C", "ts": "2026-12-04T14:01:00Z"}
        ], "sensors_without_reading": []})
    }

    #[test]
    fn the_asked_figure_is_written_from_the_one_result_holding_it() {
        let occupancy = aurora();
        let latest = readings();
        let rows: &[(Quantity, Language, Option<&str>)] = &[
            (
                Quantity::Occupancy,
                Language::English,
                Some("Meeting Room Aurora (hq-103) has 6 people (capacity 10), as of 2026-12-04 14:05 UTC."),
            ),
            (
                Quantity::Occupancy,
                Language::German,
                Some("In Meeting Room Aurora (hq-103) sind 6 Personen (Kapazität 10), Stand 2026-12-04 14:05 UTC."),
            ),
            (
                Quantity::Reading("co2"),
                Language::English,
                Some("The latest CO2 reading in Board Room (hq-101) is 641.5 ppm, measured at 2026-12-04 14:00 UTC."),
            ),
            (
                Quantity::Reading("temperature"),
                Language::French,
                Some("La dernière mesure de température dans Board Room (hq-101) est de 21 °C, relevée à 2026-12-04 14:01 UTC."),
            ),
            // Nothing of the asked kind was returned.
            (Quantity::Reading("humidity"), Language::English, None),
        ];
        for (asked, language, expected) in rows {
            let results = [
                ("get_occupancy", &occupancy),
                ("get_latest_sensor_data", &latest),
            ];
            let written = figure_sentence(*asked, results.into_iter(), *language);
            assert_eq!(written.as_deref(), *expected, "{asked:?} {language:?}");
        }
    }

    #[test]
    fn two_rooms_figures_for_one_question_write_nothing() {
        let mut other = aurora();
        other["occupancy"]["room_id"] = json!("hq-104");
        other["occupancy"]["count"] = json!(2);
        let first = aurora();
        let results = [("get_occupancy", &first), ("get_occupancy", &other)];
        assert_eq!(
            figure_sentence(Quantity::Occupancy, results.into_iter(), Language::English),
            None
        );
        // The same result twice (the model repeated the library's call) is one figure.
        let results = [("get_occupancy", &first), ("get_occupancy", &first)];
        assert!(
            figure_sentence(Quantity::Occupancy, results.into_iter(), Language::English).is_some()
        );
    }

    #[test]
    fn a_room_without_a_count_writes_nothing() {
        let unavailable = json!({"building_id": "acme-hq", "room": {"id": "hq-103"},
                                 "occupancy": {"unavailable": "the counter is offline"}});
        let results = [("get_occupancy", &unavailable)];
        assert_eq!(
            figure_sentence(Quantity::Occupancy, results.into_iter(), Language::English),
            None
        );
    }
}
