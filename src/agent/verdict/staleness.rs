//! An old figure given as if it were current. Pure.
//!
//! The live tools give each reading and each room's count its `age_minutes`. An answer that
//! states such a figure older than [`AGE_SAID_AFTER_MINUTES`] and says nothing about its age
//! reads as the room's condition now; the 1.5B model answered "51.0 %RH" for a three-day-old
//! humidity reading, and gave readings 53–59 minutes old as current. Such an answer gets one
//! sentence added, in the question's language, saying how old the figure is. (The tools' own
//! `stale` flag, a reading over an hour old, is what the user documentation calls stale.)

use crate::agent::question::language::Language;
use crate::agent::text::{read_number, strip_markers};
use serde_json::Value;

/// A live figure older than this many minutes is stated with its age.
pub const AGE_SAID_AFTER_MINUTES: u64 = 15;

/// A live figure older than [`AGE_SAID_AFTER_MINUTES`].
#[derive(Debug, Clone, PartialEq)]
pub struct StaleReading {
    pub value: f64,
    pub age_minutes: u64,
}

/// The old figures of one tool result: `readings[]` (their `value`), a room's `occupancy` and
/// a building's `rooms[]` (their `count`).
pub fn stale_readings(content: &Value) -> Vec<StaleReading> {
    let listed = |key: &str| {
        content
            .get(key)
            .and_then(Value::as_array)
            .map(|items| items.iter().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let readings = listed("readings").into_iter().map(|r| (r, "value"));
    let counts = listed("rooms")
        .into_iter()
        .chain(content.get("occupancy"))
        .map(|o| (o, "count"));
    readings
        .chain(counts)
        .filter_map(|(item, field)| {
            let age_minutes = item.get("age_minutes")?.as_u64()?;
            (age_minutes > AGE_SAID_AFTER_MINUTES).then_some(StaleReading {
                value: item.get(field)?.as_f64()?,
                age_minutes,
            })
        })
        .collect()
}

/// The sentence to add to `answer` when it states the value of one of `stale` and says
/// nothing of its age; about the oldest such reading.
pub fn unsaid_age(answer: &str, stale: &[StaleReading], language: Language) -> Option<String> {
    if stale.is_empty() {
        return None;
    }
    let text = strip_markers(answer);
    let stated = figures_of(&text);
    let oldest = stale
        .iter()
        .filter(|reading| stated.contains(&reading.value))
        .max_by_key(|reading| reading.age_minutes)?;
    if says_age(&text) {
        return None;
    }
    Some(age_sentence(oldest.age_minutes, language))
}

/// The numbers written in `text`, read as values (`51,0` and `51.0` are 51).
fn figures_of(text: &str) -> Vec<f64> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .map(|token| token.trim_matches(|c| c == '.' || c == ','))
        .filter(|token| token.starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|token| read_number(token).parse::<f64>().ok())
        .collect()
}

/// Words by which an answer says a reading is old, in the languages the agent answers in.
const AGE_WORDS: &[&str] = &[
    "stale",
    "old",
    "ago",
    "outdated",
    "days",
    "hours",
    "veraltet",
    "alt",
    "tage",
    "tagen",
    "stunden",
    "jours",
    "heures",
    "ancien",
    "ancienne",
    "périmé",
    "hace",
    "días",
    "horas",
    "antigua",
    "antiguo",
    "desactualizada",
    "fa",
    "giorni",
    "ore",
    "vecchia",
    "oud",
    "dagen",
    "uur",
    "geleden",
    "verouderd",
    "dias",
    "atrás",
    "antiga",
    "desatualizada",
];

fn says_age(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower.contains("il y a")
        || lower
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| AGE_WORDS.contains(&word))
}

/// "This reading is 3 days old …" in `language`; in days from two days up, in hours from two
/// hours up, else in minutes.
fn age_sentence(age_minutes: u64, language: Language) -> String {
    let (count, unit) = match age_minutes {
        m if m >= 2 * 24 * 60 => (m / (24 * 60), 0),
        m if m >= 2 * 60 => (m / 60, 1),
        m => (m, 2),
    };
    let phrases = crate::agent::phrases::phrases(language);
    let (units, sentence) = (phrases.age_units, phrases.reading_age);
    sentence.replace("{age}", &format!("{count} {}", units[unit]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn humidity() -> Vec<StaleReading> {
        stale_readings(&json!({"readings": [
            {"value": 51.0, "unit": "%RH", "age_minutes": 4326, "stale": true},
            {"value": 22.4, "unit": "°C", "age_minutes": 3, "stale": false},
        ]}))
    }

    #[test]
    fn only_figures_older_than_the_threshold_are_read() {
        assert_eq!(
            humidity(),
            vec![StaleReading {
                value: 51.0,
                age_minutes: 4326
            }]
        );
        assert!(stale_readings(&json!({"note": "no sensor"})).is_empty());
        // Readings 53–59 minutes old were given as current: past 15 minutes, the age is said.
        let rows = [
            (
                json!({"readings": [{"value": 641.0, "age_minutes": 53}]}),
                Some(53),
            ),
            (
                json!({"readings": [{"value": 641.0, "age_minutes": 15}]}),
                None,
            ),
            (
                json!({"occupancy": {"count": 6, "age_minutes": 20}}),
                Some(20),
            ),
            (json!({"occupancy": {"count": 6, "age_minutes": 2}}), None),
            (
                json!({"rooms": [{"count": 3, "age_minutes": 2}, {"count": 4, "age_minutes": 40}]}),
                Some(40),
            ),
            (
                json!({"occupancy": {"count": 6, "age_minutes": null}}),
                None,
            ),
        ];
        for (content, age) in rows {
            let old = stale_readings(&content);
            assert_eq!(old.first().map(|r| r.age_minutes), age, "{content}");
            assert!(old.len() <= 1, "{content}");
        }
    }

    #[test]
    fn an_old_count_stated_without_its_age_gets_the_age_added() {
        let old = stale_readings(&json!({"occupancy": {"count": 6, "age_minutes": 53}}));
        assert_eq!(
            unsaid_age("Meeting Room Aurora has 6 people.", &old, Language::English).as_deref(),
            Some("This reading is 53 minutes old and may not be current.")
        );
    }

    #[test]
    fn a_stale_value_stated_without_its_age_gets_the_age_added() {
        let table = [
            (
                "The latest humidity in hq-204 is 51.0%RH.",
                Language::English,
                Some("This reading is 3 days old and may not be current."),
            ),
            (
                "Die Luftfeuchtigkeit in hq-204 beträgt 51 %RH.[^x1]",
                Language::German,
                Some("Dieser Messwert ist 3 Tage alt und womöglich nicht mehr aktuell."),
            ),
            (
                "L'humidité est de 51,0 %RH.",
                Language::French,
                Some("Cette mesure date d'il y a 3 jours et n'est peut-être plus actuelle."),
            ),
            // Its age said already, or the stale value not stated: nothing added.
            ("51 %RH, measured 3 days ago.", Language::English, None),
            ("The reading is stale: 51 %RH.", Language::English, None),
            ("It is 22.4 °C.", Language::English, None),
        ];
        for (answer, language, added) in table {
            assert_eq!(
                unsaid_age(answer, &humidity(), language).as_deref(),
                added,
                "{answer}"
            );
        }
    }

    #[test]
    fn ages_are_told_in_days_hours_or_minutes() {
        assert_eq!(
            age_sentence(150, Language::English),
            "This reading is 2 hours old and may not be current."
        );
        assert_eq!(
            age_sentence(45, Language::Spanish),
            "Esta lectura es de hace 45 minutos y puede no estar actualizada."
        );
    }
}
