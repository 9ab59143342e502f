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
use crate::agent::tools::live::{GetLatestSensorData, GetOccupancy, GetRoom, GetSensorHistory};
use crate::agent::tools::Tool;
use serde_json::Value;

/// The asked figure as the library writes it: the sentence, and the values it states (none
/// when it says the room has no such sensor or no recent reading).
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenFigure {
    pub sentence: String,
    pub values: Vec<f64>,
}

impl WrittenFigure {
    fn of(sentence: String, value: Option<f64>) -> WrittenFigure {
        WrittenFigure {
            sentence,
            values: value.into_iter().collect(),
        }
    }
}

/// The sentence stating the figure `asked` that exactly one of `results` ((tool, content) of
/// the calls that returned data) holds; `None` when none or several do.
pub fn asked_figure<'r>(
    asked: Quantity,
    results: impl Iterator<Item = (&'r str, &'r Value)>,
    language: Language,
) -> Option<WrittenFigure> {
    let mut found = results.flat_map(|(tool, content)| match asked {
        // `get_room` gives the room's count too.
        Quantity::Occupancy if tool == GetOccupancy::NAME || tool == GetRoom::NAME => {
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
fn count_of(content: &Value, language: Language) -> Option<WrittenFigure> {
    // One room's count: `occupancy` of a room asked by id, or the one entry of `rooms`.
    let occupancy = content.get("occupancy").or_else(|| {
        match content.get("rooms").and_then(Value::as_array)?.as_slice() {
            [one] => Some(one),
            _ => None,
        }
    })?;
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
    let sentence = phrases
        .people_count
        .replace("{place}", &place(occupancy, content))
        .replace("{count}", &count.to_string())
        .replace("{capacity}", &capacity)
        .replace("{time}", &time(occupancy.get("updated_at"))?);
    Some(WrittenFigure::of(sentence, Some(count as f64)))
}

/// The latest reading of each `kind` sensor in `content`, each as a sentence; without one, that
/// the room has no such sensor, or that its sensor has no recent reading (told apart).
fn readings_of(content: &Value, kind: &str, language: Language) -> Vec<WrittenFigure> {
    let Some(readings) = content.get("readings").and_then(Value::as_array) else {
        return Vec::new();
    };
    let read = latest_of(readings, content, kind, language);
    if !read.is_empty() {
        return read;
    }
    let phrases = phrases(language);
    let sensor = sensor_name(kind, language);
    if let Some(missing) = content.get("not_installed") {
        let asked = missing.get("sensor_type").and_then(Value::as_str);
        if asked.is_some_and(|asked| asked.eq_ignore_ascii_case(kind)) {
            let sentence = phrases
                .no_sensor
                .replace("{place}", &place(missing, missing))
                .replace("{sensor}", sensor);
            return vec![WrittenFigure::of(capitalised(&sentence), None)];
        }
    }
    content
        .get("sensors_without_reading")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|s| s.get("sensor_type").and_then(Value::as_str) == Some(kind))
        .map(|silent| {
            let sentence = phrases
                .no_recent_reading
                .replace("{sensor}", sensor)
                .replace("{place}", &place(silent, content));
            WrittenFigure::of(sentence, None)
        })
        .collect()
}

fn latest_of(
    readings: &[Value],
    content: &Value,
    kind: &str,
    language: Language,
) -> Vec<WrittenFigure> {
    readings
        .iter()
        .filter(|reading| reading.get("sensor_type").and_then(Value::as_str) == Some(kind))
        .filter_map(|reading| {
            let value = reading.get("value")?.as_f64()?;
            let unit = reading.get("unit").and_then(Value::as_str).unwrap_or("");
            let sentence = phrases(language)
                .latest_reading
                .replace("{sensor}", sensor_name(kind, language))
                .replace("{place}", &place(reading, content))
                .replace("{value}", &number(value))
                .replace("{unit}", unit)
                .replace(" ,", ",")
                .replace("{time}", &time(reading.get("ts"))?);
            Some(WrittenFigure::of(sentence, Some(value)))
        })
        .collect()
}

/// A past window summarised from the one history result of `results` that holds readings:
/// its lowest and highest reading with when, its mean (named so) and its latest reading.
#[derive(Debug, Clone, PartialEq)]
pub struct HistorySummary {
    pub sentence: String,
    /// The lowest, the highest and the mean value.
    pub figures: [f64; 3],
}

pub fn history_summary<'r>(
    mut results: impl Iterator<Item = (&'r str, &'r Value)>,
    language: Language,
) -> Option<HistorySummary> {
    let mut held = results
        .by_ref()
        .filter(|(tool, content)| *tool == GetSensorHistory::NAME && stats_of(content).is_some());
    let (_, content) = held.next()?;
    if held.any(|(_, other)| other != content) {
        return None; // two series: which one the question asked about is not known here
    }
    let stats = stats_of(content)?;
    let unit = content.get("unit").and_then(Value::as_str).unwrap_or("");
    let with_unit = |value: f64| format!("{} {unit}", number(value)).trim_end().to_string();
    let point = |name: &str| -> Option<(f64, String)> {
        let point = stats.get(name)?;
        Some((point.get("value")?.as_f64()?, time(point.get("ts"))?))
    };
    let (low, low_at) = point("low")?;
    let (high, high_at) = point("high")?;
    let (latest, latest_at) = point("last")?;
    let mean = stats.get("mean")?.as_f64()?;
    let kind = content.get("sensor_type").and_then(Value::as_str)?;
    let sentence = phrases(language)
        .history_summary
        .replace("{sensor}", &capitalised(sensor_name(kind, language)))
        .replace("{place}", &place(content, content))
        .replace("{from}", &time(content.get("from"))?)
        .replace("{to}", &time(content.get("to"))?)
        .replace("{low_at}", &low_at)
        .replace("{high_at}", &high_at)
        .replace("{latest_at}", &latest_at)
        .replace("{low}", &with_unit(low))
        .replace("{high}", &with_unit(high))
        .replace("{mean}", &with_unit(mean))
        .replace("{latest}", &with_unit(latest));
    Some(HistorySummary {
        sentence,
        figures: [low, high, mean],
    })
}

/// Whether `answer` states each of `figures` (to the precision a person would round to).
pub fn states_each(answer: &str, figures: &[f64]) -> bool {
    let stated = numbers_in(answer);
    figures.iter().all(|figure| stated_among(&stated, *figure))
}

/// Whether `answer` states one of `figures`, as [`states_each`] compares them.
pub fn states_any(answer: &str, figures: &[f64]) -> bool {
    let stated = numbers_in(answer);
    figures.iter().any(|figure| stated_among(&stated, *figure))
}

/// The numbers `answer` states: "1,200" is a thousand two hundred, "21,6" (a decimal comma,
/// as French and German write it) twenty-one point six.
fn numbers_in(answer: &str) -> Vec<f64> {
    answer
        .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .map(|token| {
            let token = token.trim_matches(['.', ',']);
            match token.rsplit_once(',') {
                Some((whole, decimals)) if decimals.len() != 3 && !whole.contains('.') => {
                    format!("{}.{decimals}", whole.replace(',', ""))
                }
                _ => token.replace(',', ""),
            }
        })
        .filter_map(|token| token.parse::<f64>().ok())
        .collect()
}

fn stated_among(stated: &[f64], figure: f64) -> bool {
    let tolerance = (figure.abs() * 0.005).max(0.06);
    stated.iter().any(|s| (s - figure).abs() <= tolerance)
}

/// The overall figures of a history result: `stats` of a short series, `summary` of a long one.
fn stats_of(content: &Value) -> Option<&Value> {
    content
        .get("stats")
        .or_else(|| content.get("summary"))
        .filter(|stats| stats.get("mean").is_some())
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
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
        "occupancy" => names[4],
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn figure_sentence<'r>(
        asked: Quantity,
        results: impl Iterator<Item = (&'r str, &'r Value)>,
        language: Language,
    ) -> Option<String> {
        asked_figure(asked, results, language).map(|figure| figure.sentence)
    }

    #[test]
    fn a_written_figure_carries_the_values_it_states() {
        let occupancy = aurora();
        let latest = readings();
        let results = || {
            [
                ("get_occupancy", &occupancy),
                ("get_latest_sensor_data", &latest),
            ]
        };
        let count = asked_figure(
            Quantity::Occupancy,
            results().into_iter(),
            Language::English,
        );
        assert_eq!(count.unwrap().values, [6.0]);
        let co2 = asked_figure(
            Quantity::Reading("co2"),
            results().into_iter(),
            Language::English,
        );
        assert_eq!(co2.unwrap().values, [641.5]);
    }

    #[test]
    fn an_answer_states_one_of_the_figures_rounded_as_people_round() {
        let rows = [
            ("Meeting Room Aurora has 6 people.", &[6.0][..], true),
            ("The CO2 is 402 ppm.", &[6.0][..], false),
            ("It is 642 ppm.", &[641.5][..], true),
            ("It is 21.5 °C.", &[21.47][..], true),
            ("It is 22 °C.", &[21.47][..], false),
            ("Il fait 21,6 °C.", &[21.6][..], true),
            ("Il fait 21,6 °C.", &[216.0][..], false),
            ("Up to 1,200 ppm.", &[1200.0][..], true),
            ("No number at all.", &[6.0][..], false),
        ];
        for (answer, figures, states) in rows {
            assert_eq!(states_any(answer, figures), states, "{answer}");
        }
    }

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
    fn no_such_sensor_and_no_recent_reading_are_told_apart() {
        let none = json!({"building_id": "acme-hq", "readings": [], "sensors_without_reading": [],
                          "not_installed": {"sensor_type": "pm25", "room_id": "hq-101",
                                            "room_name": "Board Room"},
                          "note": "no pm25 sensor is installed in Board Room"});
        let silent = json!({"building_id": "acme-hq", "readings": [], "sensors_without_reading": [
            {"sensor_id": "s9", "sensor_type": "noise", "room_id": "hq-101", "room_name": "Board Room"}]});
        let rows: &[(&Value, Quantity, Language, &str)] = &[
            (
                &none,
                Quantity::Reading("pm25"),
                Language::English,
                "Board Room (hq-101) has no PM2.5 sensor.",
            ),
            (
                &none,
                Quantity::Reading("pm25"),
                Language::German,
                "In Board Room (hq-101) ist kein Sensor für PM2.5 installiert.",
            ),
            (
                &silent,
                Quantity::Reading("noise"),
                Language::English,
                "The noise sensor in Board Room (hq-101) has no recent reading.",
            ),
            (
                &silent,
                Quantity::Reading("noise"),
                Language::French,
                "Le capteur de bruit dans Board Room (hq-101) n'a pas de mesure récente.",
            ),
        ];
        for (content, asked, language, expected) in rows {
            let results = [("get_latest_sensor_data", *content)];
            assert_eq!(
                figure_sentence(*asked, results.into_iter(), *language).as_deref(),
                Some(*expected)
            );
        }
    }

    #[test]
    fn a_count_is_read_from_a_rooms_list_of_one() {
        let listed = json!({"building_id": "acme-hq", "building_name": "Acme Headquarters",
            "rooms": [{"room_id": "hq-101", "room_name": "Meeting Room Aurora", "count": 6,
                       "capacity": 10, "updated_at": "2026-12-04T18:54:16.415898854Z",
                       "age_minutes": 1}], "total_people": 6});
        assert_eq!(
            figure_sentence(
                Quantity::Occupancy,
                [("get_occupancy", &listed)].into_iter(),
                Language::English
            )
            .as_deref(),
            Some("Meeting Room Aurora (hq-101) has 6 people (capacity 10), as of 2026-12-04 18:54 UTC.")
        );
        let two = json!({"rooms": [{"room_id": "a", "count": 1}, {"room_id": "b", "count": 2}]});
        assert_eq!(
            figure_sentence(
                Quantity::Occupancy,
                [("get_occupancy", &two)].into_iter(),
                Language::English
            ),
            None
        );
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

    fn day_of_co2() -> Value {
        json!({"building_id": "acme-hq", "room_id": "hq-201", "room_name": "Board Room",
               "sensor_type": "co2", "from": "2026-12-03T17:00:00Z", "to": "2026-12-04T17:00:00Z",
               "unit": "ppm",
               "summary": {"count": 288, "min": 391.0, "max": 908.0, "mean": 641.56,
                           "first": {"ts": "2026-12-03T17:05:00Z", "value": 450.0},
                           "last": {"ts": "2026-12-04T16:55:00Z", "value": 702.0},
                           "low": {"ts": "2026-12-04T03:10:00Z", "value": 391.0},
                           "high": {"ts": "2026-12-04T14:20:00Z", "value": 908.0},
                           "buckets": []}})
    }

    #[test]
    fn a_history_is_summarised_by_its_low_high_mean_and_latest() {
        let day = day_of_co2();
        let summary = history_summary(
            [("get_sensor_history", &day)].into_iter(),
            Language::English,
        )
        .unwrap();
        assert_eq!(
            summary.sentence,
            "CO2 in Board Room (hq-201) from 2026-12-03 17:00 UTC to 2026-12-04 17:00 UTC: \
             lowest 391 ppm at 2026-12-04 03:10 UTC, highest 908 ppm at 2026-12-04 14:20 UTC, \
             mean 641.56 ppm; latest 702 ppm at 2026-12-04 16:55 UTC."
        );
        assert_eq!(summary.figures, [391.0, 908.0, 641.56]);
        let german =
            history_summary([("get_sensor_history", &day)].into_iter(), Language::German).unwrap();
        assert!(
            german.sentence.contains("Mittelwert 641.56 ppm"),
            "{}",
            german.sentence
        );
        let empty =
            json!({"sensor_type": "co2", "points": [], "note": "no readings in this window"});
        assert_eq!(
            history_summary(
                [("get_sensor_history", &empty)].into_iter(),
                Language::English
            ),
            None
        );
    }

    #[test]
    fn an_answer_states_the_summary_when_it_gives_low_high_and_mean() {
        let figures = [391.0, 908.0, 641.56];
        let rows = [
            ("It ranged from 391 to 908 ppm, 641.6 ppm on average.", true),
            ("Between 391 ppm and 908 ppm; mean 642 ppm.", true),
            ("The CO2 over the last 24 hours is 641.56 ppm.", false),
            ("Peak 908 ppm, low 391 ppm.", false),
        ];
        for (answer, states) in rows {
            assert_eq!(states_each(answer, &figures), states, "{answer}");
        }
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
