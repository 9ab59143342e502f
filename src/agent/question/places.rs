//! Which of the caller's buildings and rooms a question names. Pure.
//!
//! The runner fetches what the caller may see (`list_buildings`, then `get_building` for the
//! buildings named) and this module matches the question against it: by id (`acme-hq`,
//! `hq-101`) or by name ("Acme Headquarters", "the Board Room"). A small model handed the ids
//! calls the right tool with the right arguments; asked to look them up itself, it invents
//! them.
//!
//! An id the question puts after a place word (`building atlantis-1`, `room gt-2`) that is
//! none of the caller's is *unknown*: whether it does not exist or belongs to someone else
//! looks the same, and the answer is "I don't know" without asking the model.

use super::routing::PLACE_WORDS;
use super::words::{words, PhraseSet};
use serde_json::Value;

/// A building the caller may see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownBuilding {
    pub id: String,
    pub name: String,
    pub address: String,
}

/// A room of a building the question names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownRoom {
    pub building_id: String,
    pub id: String,
    pub name: String,
    pub floor: Option<i64>,
    pub capacity: Option<i64>,
}

/// What a question names, resolved against what the caller may see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamedPlaces {
    pub buildings: Vec<KnownBuilding>,
    pub rooms: Vec<KnownRoom>,
    /// Ids after a place word that are none of the caller's buildings or of their rooms.
    pub unknown: Vec<String>,
    /// The floor the question names ("on floor 3", "3rd floor").
    pub floor: Option<i64>,
}

/// Buildings and rooms listed in the request at most: the rest are left to the tools.
const MAX_LISTED: usize = 40;

/// What the runner looked up, as plain text for the request: the caller's buildings, the
/// rooms of the buildings the question names, and which of them it names. Ids come first,
/// since tools take ids.
pub fn describe(buildings: &[KnownBuilding], rooms: &[KnownRoom], named: &NamedPlaces) -> String {
    let mut text = String::from("Your buildings (from list_buildings):");
    if buildings.is_empty() {
        text.push_str(" none.");
    }
    for building in buildings.iter().take(MAX_LISTED) {
        text.push_str(&format!(
            "\n- {}: {}, {}",
            building.id, building.name, building.address
        ));
    }
    let mut current = "";
    for room in rooms.iter().take(MAX_LISTED) {
        if room.building_id != current {
            current = &room.building_id;
            text.push_str(&format!("\nRooms of {current} (from get_building):"));
        }
        text.push_str(&format!("\n- {}: {}", room.id, room_details(room)));
    }
    let mut mentioned: Vec<String> = named
        .buildings
        .iter()
        .map(|b| format!("building_id {}", b.id))
        .collect();
    mentioned.extend(
        named
            .rooms
            .iter()
            .map(|r| format!("room_id {} (building_id {})", r.id, r.building_id)),
    );
    if let Some(floor) = named.floor.filter(|_| !rooms.is_empty()) {
        // Picking a floor's rooms out of the list is left to the model otherwise; the 1.5B
        // one answered with the first of them.
        let on_floor: Vec<String> = rooms
            .iter()
            .filter(|room| room.floor == Some(floor))
            .map(|room| format!("{} ({})", room.name, room.id))
            .collect();
        if on_floor.is_empty() {
            text.push_str(&format!("\nNone of these rooms is on floor {floor}."));
        } else {
            text.push_str(&format!("\nOn floor {floor}: {}.", on_floor.join(", ")));
        }
    }
    if !mentioned.is_empty() {
        text.push_str(&format!("\nThe question names: {}.", mentioned.join(", ")));
    }
    text
}

/// The floor `question` names: a number after "floor" (or its word in the languages the agent
/// answers in), or an ordinal before it ("3rd floor").
pub fn floor_named(question: &str) -> Option<i64> {
    const FLOOR_WORDS: &[&str] = &[
        "floor",
        "level",
        "etage",
        "stock",
        "stockwerk",
        "geschoss",
        "étage",
        "niveau",
        "piso",
        "planta",
        "piano",
        "verdieping",
        "andar",
    ];
    let words = words(question);
    let number = |word: &str| -> Option<i64> {
        let digits = word.trim_end_matches(|c: char| c.is_alphabetic() || c == '.');
        (!digits.is_empty() && word.starts_with(|c: char| c.is_ascii_digit()))
            .then(|| digits.parse().ok())
            .flatten()
    };
    words.iter().enumerate().find_map(|(at, word)| {
        if !FLOOR_WORDS.contains(&word.as_str()) {
            return None;
        }
        words
            .get(at + 1)
            .and_then(|next| number(next))
            .or_else(|| at.checked_sub(1).and_then(|before| number(&words[before])))
    })
}

fn room_details(room: &KnownRoom) -> String {
    let mut details = room.name.clone();
    if let Some(floor) = room.floor {
        details.push_str(&format!(", floor {floor}"));
    }
    if let Some(capacity) = room.capacity {
        details.push_str(&format!(", capacity {capacity}"));
    }
    details
}

/// The buildings of a `list_buildings` result.
pub fn buildings_of(result: &Value) -> Vec<KnownBuilding> {
    result["buildings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| {
            Some(KnownBuilding {
                id: b["id"].as_str()?.to_string(),
                name: b["name"].as_str().unwrap_or_default().to_string(),
                address: b["address"].as_str().unwrap_or_default().to_string(),
            })
        })
        .collect()
}

/// The rooms of a `get_building` result.
pub fn rooms_of(result: &Value) -> Vec<KnownRoom> {
    let Some(building_id) = result["id"].as_str() else {
        return Vec::new();
    };
    result["rooms"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some(KnownRoom {
                building_id: building_id.to_string(),
                id: r["id"].as_str()?.to_string(),
                name: r["name"].as_str().unwrap_or_default().to_string(),
                floor: r["floor"].as_i64(),
                capacity: r["capacity"].as_i64(),
            })
        })
        .collect()
}

/// The caller's buildings the question names, by id or by full name.
pub fn buildings_named(question: &str, buildings: &[KnownBuilding]) -> Vec<KnownBuilding> {
    let words = words(question);
    buildings
        .iter()
        .filter(|b| names(&words, &b.id, &b.name))
        .cloned()
        .collect()
}

/// Resolves the question against the caller's `buildings` and the `rooms` of those named.
/// A room named only by a name shared by several rooms is kept for each: the model (or the
/// reader) sees that the name is ambiguous.
pub fn resolve(question: &str, buildings: &[KnownBuilding], rooms: &[KnownRoom]) -> NamedPlaces {
    let words = words(question);
    let named_buildings = buildings_named(question, buildings);
    let by_id: Vec<KnownRoom> = rooms
        .iter()
        .filter(|r| words.iter().any(|w| *w == r.id.to_lowercase()))
        .cloned()
        .collect();
    let named_rooms = if by_id.is_empty() {
        rooms_by_name(&words, rooms)
    } else {
        by_id
    };
    let mut unknown: Vec<String> = ids_after_place_words(&words)
        .into_iter()
        .filter(|id| {
            !buildings.iter().any(|b| b.id.to_lowercase() == *id)
                && !rooms.iter().any(|r| r.id.to_lowercase() == *id)
        })
        .collect();
    unknown.extend(
        building_names_in(question)
            .into_iter()
            .filter(|name| !known_name(name, buildings, rooms)),
    );
    NamedPlaces {
        buildings: named_buildings,
        rooms: named_rooms,
        unknown,
        floor: floor_named(question),
    }
}

/// Rooms whose full name the question contains; when one name contains another ("Meeting
/// Room Aurora" and "Aurora"), the longer wins.
fn rooms_by_name(words: &[String], rooms: &[KnownRoom]) -> Vec<KnownRoom> {
    let matched: Vec<&KnownRoom> = rooms
        .iter()
        .filter(|r| contains_words(words, &name_words(&r.name)))
        .collect();
    let longest = matched
        .iter()
        .map(|r| name_words(&r.name).len())
        .max()
        .unwrap_or(0);
    matched
        .into_iter()
        .filter(|r| name_words(&r.name).len() == longest)
        .cloned()
        .collect()
}

/// The last word of a capitalised name that makes it a building's ("Acme Headquarters",
/// "Nakatomi Plaza"), and the word that may follow one ("the Nakatomi Plaza building").
const BUILDING_KINDS: &[&str] = &[
    "headquarters",
    "hq",
    "tower",
    "towers",
    "annex",
    "depot",
    "plaza",
    "center",
    "centre",
    "campus",
    "park",
    "complex",
    "building",
    "mall",
    "station",
    "gebäude",
    "turm",
    "zentrale",
    "bâtiment",
    "tour",
    "edificio",
    "torre",
    "sede",
];

/// Kinds that rooms are named with too ("Training Lab", "Warehouse Hall"): they make a
/// building name only in a run of three words or more ("Acme Research Lab").
const WEAK_BUILDING_KINDS: &[&str] =
    &["lab", "laboratory", "hall", "house", "warehouse", "factory"];

/// Capitalised words that open a sentence or a question and name nothing.
const NOT_NAMES: &[&str] = &[
    "how", "what", "which", "who", "where", "when", "is", "are", "does", "do", "can", "in", "at",
    "the", "and", "show", "list", "tell", "wie", "was", "welche", "welcher", "im", "ist", "sind",
    "quelle", "quel", "combien", "dans", "le", "la", "cuántas", "cuántos", "qué", "en", "el",
    "los", "las", "i", "my", "and",
];

/// Building names a question gives in words: a run of capitalised words ending in a building
/// kind ("Acme Headquarters"), or followed by the word "building" ("the Nakatomi Plaza
/// building"). Lowercase, for matching.
pub fn building_names_in(question: &str) -> Vec<String> {
    let tokens: Vec<&str> = question
        .split_whitespace()
        .map(|t| t.trim_matches(|c: char| !(c.is_alphanumeric() || c == '-')))
        .collect();
    let capitalised = |t: &str| t.chars().next().is_some_and(char::is_uppercase);
    let mut names = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if !capitalised(tokens[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < tokens.len() && capitalised(tokens[i]) {
            i += 1;
        }
        let run: Vec<String> = tokens[start..i]
            .iter()
            .map(|t| t.to_lowercase())
            .skip_while(|t| NOT_NAMES.contains(&t.as_str()))
            .collect();
        let Some(last) = run.last() else { continue };
        let ends_in_kind = (run.len() >= 2 && BUILDING_KINDS.contains(&last.as_str()))
            || (run.len() >= 3 && WEAK_BUILDING_KINDS.contains(&last.as_str()));
        let followed_by_building = tokens
            .get(i)
            .is_some_and(|next| BUILDING_KINDS.contains(&next.to_lowercase().as_str()));
        if ends_in_kind || followed_by_building {
            names.push(run.join(" "));
        }
    }
    names
}

/// Words for rooms in the plural, in the languages the agent answers in.
const ROOMS_WORDS: &[&str] = &[
    "rooms",
    "räume",
    "zimmer",
    "salles",
    "pièces",
    "salas",
    "habitaciones",
    "stanze",
    "ruimtes",
    "kamers",
];
/// Words that ask for something measured in rooms rather than for the rooms themselves.
const MEASURE_WORDS: &[&str] = &[
    "co2",
    "temperature",
    "warm",
    "cold",
    "humidity",
    "noise",
    "loud",
    "light",
    "pm25",
    "people",
    "occupancy",
    "occupied",
    "busy",
    "full",
    "sensor",
    "sensors",
    "reading",
    "readings",
    "temperatur",
    "feuchtigkeit",
    "personen",
    "belegung",
    "température",
    "humidité",
    "personnes",
    "temperatura",
    "humedad",
    "personas",
    "persone",
];

/// Whether `question` asks which rooms are on the floor it names ("Which rooms does building
/// acme-hq have on floor 3?"), which the rooms listed for it answer, rather than for something
/// measured in them.
pub fn asks_for_rooms_on_floor(question: &str) -> bool {
    let words = words(question);
    let has = |list: &[&str]| words.iter().any(|w| list.contains(&w.as_str()));
    floor_named(question).is_some() && has(ROOMS_WORDS) && !has(MEASURE_WORDS)
}

/// Phrases asking about a place itself: its size, its seats, the rooms of it or of a floor.
const PLACE_PROPERTY_PHRASES: &[&str] = &[
    "capacity",
    "how many seats",
    "how many people fit",
    "how big",
    "which floor",
    "what floor",
    "which rooms",
    "what rooms",
    "rooms on",
    "rooms are on",
    "kapazität",
    "wie viele plätze",
    "wie groß",
    "welches stockwerk",
    "welche räume",
    "capacité",
    "combien de places",
    "quel étage",
    "quelles salles",
    "capacidad",
    "qué salas",
    "capienza",
    "capaciteit",
    "capacidade",
];

/// Whether a question the rules would send to the documentation may be about one of the
/// caller's own places named in words ("What is the capacity of the Board Room?", "Which rooms
/// are on floor 2 of Acme Headquarters?"): such a question is resolved against the caller's
/// live places before any documentation search, and goes to the documentation only when it
/// names none of them. `joined`: the question's words joined
/// ([`super::words::joined_words`]), which routing reads too.
pub fn may_ask_about_a_named_place(question: &str, joined: &str) -> bool {
    may_name_a_place(question) && PLACE_PROPERTY.any_in(joined)
}

static PLACE_PROPERTY: std::sync::LazyLock<PhraseSet> =
    std::sync::LazyLock::new(|| PhraseSet::new(PLACE_PROPERTY_PHRASES));

/// Whether `question` may name a place in words: a capitalised word past its first that is
/// neither a question word nor a code like "CO2" ("How many people are in the Lobby?").
pub fn may_name_a_place(question: &str) -> bool {
    question
        .split_whitespace()
        .skip(1)
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
        .filter(|t| t.chars().next().is_some_and(char::is_uppercase))
        .filter(|t| !t.chars().any(|c| c.is_ascii_digit()))
        .any(|t| !NOT_NAMES.contains(&t.to_lowercase().as_str()))
}

/// Whether a building name from the question is one of the caller's buildings or rooms.
fn known_name(name: &str, buildings: &[KnownBuilding], rooms: &[KnownRoom]) -> bool {
    let words = name_words(name);
    let matches = |other: &str| {
        let other = name_words(other);
        contains_words(&other, &words) || contains_words(&words, &other)
    };
    buildings.iter().any(|b| {
        matches(&b.name)
            || b.id.eq_ignore_ascii_case(name)
            || b.id.replace('-', " ").eq_ignore_ascii_case(name)
    }) || rooms.iter().any(|r| matches(&r.name))
}

/// Which one of a list a follow-up points at: "the first one", "der zweite", "le dernier".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordinal {
    Nth(usize),
    Last,
}

/// Nouns that may follow an ordinal in a referent ("the first one", "the second building").
const REFERENT_NOUNS: &[&str] = &[
    "one",
    "building",
    "gebäude",
    "bâtiment",
    "edificio",
    "eins",
    "davon",
    "of",
];

/// The ordinal a question refers back with, if any.
pub fn ordinal_referent(question: &str) -> Option<Ordinal> {
    let words = words(question);
    for (i, word) in words.iter().enumerate() {
        let ordinal = match word.as_str() {
            "first" | "erste" | "ersten" | "erstes" | "premier" | "première" | "primero"
            | "primera" | "primer" => Ordinal::Nth(0),
            "second" | "zweite" | "zweiten" | "deuxième" | "segundo" | "segunda" => {
                Ordinal::Nth(1)
            }
            "third" | "dritte" | "dritten" | "troisième" | "tercero" | "tercera" => {
                Ordinal::Nth(2)
            }
            "last" | "letzte" | "letzten" | "dernier" | "dernière" | "último" | "última" => {
                Ordinal::Last
            }
            _ => continue,
        };
        let next = words.get(i + 1).map(String::as_str);
        let referent = next.is_some_and(|n| REFERENT_NOUNS.contains(&n))
            || (next.is_none() && ordinal != Ordinal::Last);
        if referent {
            return Some(ordinal);
        }
    }
    None
}

/// The building `ordinal` points at among those `text` lists, in the order it mentions them
/// (by id or by name); `None` when it mentions fewer than two (then it lists no buildings:
/// "Floor 1 of Acme Headquarters has hq-101 …, hq-102 …" lists rooms).
pub fn referred_building(
    text: &str,
    buildings: &[KnownBuilding],
    ordinal: Ordinal,
) -> Option<KnownBuilding> {
    let places = buildings.iter().map(|b| (b.id.as_str(), b.name.as_str()));
    let at = referred_index(text, places, ordinal)?;
    Some(buildings[at].clone())
}

/// The room `ordinal` points at among those `text` lists, as [`referred_building`] does.
pub fn referred_room(text: &str, rooms: &[KnownRoom], ordinal: Ordinal) -> Option<KnownRoom> {
    let places = rooms.iter().map(|r| (r.id.as_str(), r.name.as_str()));
    let at = referred_index(text, places, ordinal)?;
    Some(rooms[at].clone())
}

/// The index, among `places` (id, name), of the one `ordinal` points at in the order `text`
/// mentions them, when it mentions two or more.
fn referred_index<'a>(
    text: &str,
    places: impl Iterator<Item = (&'a str, &'a str)>,
    ordinal: Ordinal,
) -> Option<usize> {
    let lower = text.to_lowercase();
    let mut mentioned: Vec<(usize, usize)> = places
        .enumerate()
        .filter_map(|(index, (id, name))| {
            let by_id = lower.find(&id.to_lowercase());
            let by_name = (!name.is_empty())
                .then(|| lower.find(&name.to_lowercase()))
                .flatten();
            by_id.into_iter().chain(by_name).min().map(|at| (at, index))
        })
        .collect();
    if mentioned.len() < 2 {
        return None;
    }
    mentioned.sort_by_key(|(at, _)| *at);
    let picked = match ordinal {
        Ordinal::Nth(n) => mentioned.get(n),
        Ordinal::Last => mentioned.last(),
    };
    picked.map(|(_, index)| *index)
}

fn names(words: &[String], id: &str, name: &str) -> bool {
    let id = id.to_lowercase();
    words.contains(&id) || contains_words(words, &name_words(name))
}

/// Ids (words with a hyphen and a letter or digit) right after a place word: "room 3" may be
/// a floor or a count, `room gt-2` is an id.
fn ids_after_place_words(words: &[String]) -> Vec<String> {
    words
        .windows(2)
        .filter(|pair| PLACE_WORDS.contains(&pair[0].as_str()))
        .map(|pair| &pair[1])
        .filter(|w| w.contains('-') && w.chars().any(char::is_alphanumeric))
        .cloned()
        .collect()
}

fn name_words(name: &str) -> Vec<String> {
    words(name)
}

fn contains_words(words: &[String], phrase: &[String]) -> bool {
    !phrase.is_empty() && words.windows(phrase.len()).any(|window| window == phrase)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::question::words::{contains_phrase, joined_words};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(512)))]

        #[test]
        fn property_phrases_in_one_pass_are_found_as_one_at_a_time(
            pieces in proptest::collection::vec(prop_oneof![
                proptest::sample::select(PLACE_PROPERTY_PHRASES).prop_map(String::from),
                proptest::sample::select(&["Board", "Room", "the", "of", "?", "How", "Acme", "capacities", "floor"][..]).prop_map(String::from),
                "[a-zA-Z -]{0,8}",
            ], 0..7),
        ) {
            let question = format!("What {}", pieces.join(" "));
            let text = words(&question).join(" ");
            let one_at_a_time = may_name_a_place(&question)
                && PLACE_PROPERTY_PHRASES.iter().any(|p| contains_phrase(&text, p));
            prop_assert_eq!(may_ask_about_a_named_place(&question, &joined_words(&question)), one_at_a_time);
        }
    }

    #[test]
    fn a_property_of_a_place_named_in_words_is_looked_up_first() {
        let rows = [
            ("What is the capacity of the Board Room?", true),
            ("Which rooms are on floor 2 of Acme Headquarters?", true),
            ("Wie groß ist die Kapazität des Board Room?", true),
            ("Quelle est la capacité de la salle Aurora ?", true),
            // Nothing named, or nothing asked about a place.
            ("What is the capacity of a meeting room sensor?", false),
            ("How do I add a sensor to the Board Room?", false),
            ("What does stale mean?", false),
        ];
        for (question, looked_up) in rows {
            assert_eq!(
                may_ask_about_a_named_place(question, &joined_words(question)),
                looked_up,
                "{question}"
            );
        }
    }

    #[test]
    fn building_names_are_read_from_capitalised_words() {
        let table: [(&str, &[&str]); 7] = [
            (
                "How many people are in Acme Headquarters right now?",
                &["acme headquarters"],
            ),
            (
                "How many people are in the Nakatomi Plaza building right now?",
                &["nakatomi plaza"],
            ),
            (
                "Is the Seminar Room of the Acme Research Lab warm?",
                &["acme research lab"],
            ),
            ("How many people are in the Training Lab right now?", &[]),
            ("How many people are in Meeting Room Aurora?", &[]),
            ("What CO2 level is poor?", &[]),
            ("Wie viele Personen sind im Gebäude acme-hq?", &[]),
        ];
        for (question, want) in table {
            assert_eq!(building_names_in(question), want, "{question}");
        }
    }

    #[test]
    fn a_question_for_the_rooms_on_a_floor_is_told_from_one_about_what_they_measure() {
        assert!(asks_for_rooms_on_floor(
            "Which rooms does building acme-hq have on floor 3?"
        ));
        assert!(asks_for_rooms_on_floor(
            "Welche Räume hat acme-hq im 2. Stock?"
        ));
        for question in [
            "What is the CO2 level in the rooms on floor 3?",
            "Which rooms does building acme-hq have?",
            "How many people are on floor 2 of acme-hq?",
        ] {
            assert!(!asks_for_rooms_on_floor(question), "{question}");
        }
    }

    #[test]
    fn a_place_may_be_named_by_a_capitalised_word_past_the_first() {
        for question in [
            "How many people are in the Lobby right now?",
            "Is the Board Room full?",
        ] {
            assert!(may_name_a_place(question), "{question}");
        }
        for question in [
            "How many people are in my buildings right now?",
            "What is the CO2 level right now?",
            "Which buildings can I see?",
        ] {
            assert!(!may_name_a_place(question), "{question}");
        }
    }

    #[test]
    fn a_building_named_in_words_that_the_caller_cannot_see_is_unknown() {
        let mine = [building("globex-annex", "Globex Annex")];
        let asked = "How many people are in Acme Headquarters right now?";
        assert_eq!(resolve(asked, &mine, &[]).unknown, ["acme headquarters"]);
        let acme = [building("acme-hq", "Acme Headquarters")];
        assert!(resolve(asked, &acme, &[]).unknown.is_empty());
        assert!(resolve("How full is Acme HQ right now?", &acme, &[])
            .unknown
            .is_empty());
    }

    #[test]
    fn a_follow_up_points_at_the_building_listed_at_its_place() {
        let mine = [
            building("acme-hq", "Acme Headquarters"),
            building("acme-lab", "Acme Research Lab"),
            building("acme-depot", "Acme Depot"),
        ];
        let listed = "You can see Acme Research Lab (acme-lab), Acme Headquarters (acme-hq) and \
                      Acme Depot (acme-depot).";
        let table = [
            (
                "How many people are in the first one right now?",
                Some("acme-lab"),
            ),
            ("And the second building?", Some("acme-hq")),
            (
                "Wie viele Personen sind im letzten davon?",
                Some("acme-depot"),
            ),
            ("How did CO2 develop over the last 24 hours?", None),
            ("How many people are in room hq-101?", None),
        ];
        for (question, want) in table {
            let got = ordinal_referent(question)
                .and_then(|o| referred_building(listed, &mine, o))
                .map(|b| b.id);
            assert_eq!(got.as_deref(), want, "{question}");
        }
        let rooms_listed = "Floor 1 of Acme Headquarters has hq-101 Meeting Room Aurora and \
                            hq-102 Meeting Room Borealis.";
        assert_eq!(
            referred_building(rooms_listed, &mine, Ordinal::Nth(0)),
            None,
            "one building mentioned is no list of buildings"
        );
        let rooms = [
            KnownRoom {
                building_id: "acme-hq".into(),
                id: "hq-102".into(),
                name: "Meeting Room Borealis".into(),
                floor: Some(1),
                capacity: None,
            },
            KnownRoom {
                building_id: "acme-hq".into(),
                id: "hq-101".into(),
                name: "Meeting Room Aurora".into(),
                floor: Some(1),
                capacity: None,
            },
        ];
        let first = referred_room(rooms_listed, &rooms, Ordinal::Nth(0)).map(|r| r.id);
        assert_eq!(first.as_deref(), Some("hq-101"));
        let last = referred_room(rooms_listed, &rooms, Ordinal::Last).map(|r| r.id);
        assert_eq!(last.as_deref(), Some("hq-102"));
    }

    fn building(id: &str, name: &str) -> KnownBuilding {
        KnownBuilding {
            id: id.into(),
            name: name.into(),
            address: "1 Main St".into(),
        }
    }

    fn room(building_id: &str, id: &str, name: &str, floor: i64) -> KnownRoom {
        KnownRoom {
            building_id: building_id.into(),
            id: id.into(),
            name: name.into(),
            floor: Some(floor),
            capacity: Some(4),
        }
    }

    fn campus() -> (Vec<KnownBuilding>, Vec<KnownRoom>) {
        (
            vec![
                building("north-1", "North Campus"),
                building("depot", "City Depot"),
            ],
            vec![
                room("north-1", "n-101", "Meeting Room Aurora", 1),
                room("north-1", "n-lobby", "Lobby", 0),
                room("north-1", "n-201", "Board Room", 2),
                room("depot", "d-lobby", "Lobby", 0),
            ],
        )
    }

    #[test]
    fn ids_and_names_are_both_recognised() {
        let (buildings, rooms) = campus();
        let by_id = resolve("CO2 in room n-201 of building north-1?", &buildings, &rooms);
        assert_eq!(by_id.buildings, vec![buildings[0].clone()]);
        assert_eq!(by_id.rooms, vec![rooms[2].clone()]);
        assert!(by_id.unknown.is_empty());

        let by_name = resolve(
            "How warm is the Board Room of the North Campus?",
            &buildings,
            &rooms,
        );
        assert_eq!(by_name.buildings, vec![buildings[0].clone()]);
        assert_eq!(by_name.rooms, vec![rooms[2].clone()]);
    }

    #[test]
    fn a_shared_room_name_keeps_every_room_of_that_name() {
        let (buildings, rooms) = campus();
        let named = resolve("How many people are in the lobby?", &buildings, &rooms);
        assert_eq!(named.rooms.len(), 2);
        assert!(named.buildings.is_empty());
    }

    #[test]
    fn an_id_that_is_not_the_callers_is_unknown() {
        let (buildings, rooms) = campus();
        let named = resolve(
            "How many people are in building atlantis-1?",
            &buildings,
            &rooms,
        );
        assert_eq!(named.unknown, vec!["atlantis-1".to_string()]);
        let wrong_room = resolve(
            "Temperature in room z-9 of building north-1",
            &buildings,
            &rooms,
        );
        assert_eq!(wrong_room.unknown, vec!["z-9".to_string()]);
        assert_eq!(wrong_room.buildings.len(), 1);
    }

    #[test]
    fn the_description_lists_what_was_looked_up_and_what_is_named() {
        let (buildings, rooms) = campus();
        let north: Vec<KnownRoom> = rooms[..3].to_vec();
        let named = resolve("Board Room of North Campus", &buildings, &north);
        let text = describe(&buildings, &north, &named);
        assert!(
            text.contains("- north-1: North Campus, 1 Main St"),
            "{text}"
        );
        assert!(text.contains("Rooms of north-1 (from get_building):\n- n-101: Meeting Room Aurora, floor 1, capacity 4"));
        assert!(text.ends_with(
            "The question names: building_id north-1, room_id n-201 (building_id north-1)."
        ));
        assert!(describe(&[], &[], &NamedPlaces::default()).ends_with("none."));
    }

    #[test]
    fn a_floor_named_lists_its_rooms() {
        for (question, floor) in [
            (
                "Which rooms does building north-1 have on floor 2?",
                Some(2),
            ),
            ("What is on the 2nd floor of north-1?", Some(2)),
            ("Welche Räume hat north-1 auf Etage 2?", Some(2)),
            ("Quelles salles au étage 1 ?", Some(1)),
            ("What is the CO2 level in room n-201?", None),
            ("Which floor is the Board Room on?", None),
        ] {
            assert_eq!(floor_named(question), floor, "{question}");
        }
        let (buildings, rooms) = campus();
        let north: Vec<KnownRoom> = rooms[..3].to_vec();
        let named = resolve(
            "Which rooms does north-1 have on floor 2?",
            &buildings,
            &north,
        );
        let text = describe(&buildings, &north, &named);
        assert!(
            text.contains("\nOn floor 2: Board Room (n-201).\n"),
            "{text}"
        );
        let named = resolve(
            "Which rooms does north-1 have on floor 9?",
            &buildings,
            &north,
        );
        let text = describe(&buildings, &north, &named);
        assert!(
            text.contains("\nNone of these rooms is on floor 9.\n"),
            "{text}"
        );
    }

    #[test]
    fn results_are_read_from_tool_json() {
        let listed =
            serde_json::json!({"buildings": [{"id": "a", "name": "A"}, {"name": "no id"}]});
        let read = buildings_of(&listed);
        assert_eq!(read.len(), 1);
        assert_eq!((read[0].id.as_str(), read[0].name.as_str()), ("a", "A"));
        let one = serde_json::json!({"id": "a", "rooms": [{"id": "r", "name": "R", "floor": 2, "capacity": 4}]});
        assert_eq!(rooms_of(&one), vec![room("a", "r", "R", 2)]);
        assert!(rooms_of(&serde_json::json!({"error": {}})).is_empty());
    }
}
