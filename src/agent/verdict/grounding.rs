//! Support of an answer by what it was given, measured by shared key terms (numbers and content
//! words). Pure.
//!
//! - [`attribute`]: small models often answer correctly from the passages and cite none of
//!   them. When an answer carries no valid marker, each of its sentences is linked to the
//!   passage that supports it best and the passage's marker is put after the sentence. Such
//!   citations are flagged `attributed`, so a reader can tell them from the model's own. A
//!   sentence no passage supports gets no marker.
//! - [`unsupported_markers`]: the model's own markers whose passage shares nothing with the
//!   sentence they follow.
//! - [`numbers_grounded`]: whether an answer from live data states a number the tools returned.
//! - [`subject_returned`]: whether what a live question asks about ("how many elevators", "what
//!   is the Wi-Fi password") is anywhere in what the tools returned.

use crate::agent::question::words::words;
use crate::agent::text::{is_stopword, lowercase, read_number, sentences, singular, strip_markers};
use crate::citations;
use std::borrow::Cow;
use std::ops::ControlFlow;

/// Terms of a sentence a passage must share before it supports the sentence: one number, or
/// this many content words.
const MIN_SHARED_WORDS: usize = 2;

/// `answer` with a marker after each sentence a passage supports, or `None` when no sentence is
/// supported. `passages` are (chunk id, text), in retrieval order (earlier wins a tie).
pub fn attribute(answer: &str, passages: &[(String, String)]) -> Option<String> {
    if passages.is_empty() {
        return None;
    }
    let passage_terms: Vec<(&str, Terms)> = passages
        .iter()
        .map(|(id, text)| (id.as_str(), terms(text)))
        .collect();
    let mut out = String::with_capacity(answer.len() + 32);
    let mut attributed = false;
    for sentence in sentences(answer) {
        let wanted = terms(sentence);
        let best = passage_terms
            .iter()
            .map(|(id, have)| (*id, wanted.support_in(have)))
            .filter(|(_, support)| support.is_enough())
            .max_by_key(|(_, support)| (support.numbers, support.words))
            .map(|(id, _)| id);
        match best {
            Some(id) => {
                let body = sentence.trim_end();
                out.push_str(body);
                out.push_str(&format!("[^{id}]"));
                out.push_str(&sentence[body.len()..]);
                attributed = true;
            }
            None => out.push_str(sentence),
        }
    }
    attributed.then_some(out)
}

/// Words an answer of a few words may have and still be a fragment ("dB(A)", "every 5 minutes").
const MAX_FRAGMENT_WORDS: usize = 4;

/// `answer` with the marker of the passage it was taken from, when it is a bare fragment
/// ("dB(A)") too short for [`attribute`] to find support for: the passage that best matches
/// `question` (earlier wins a tie), when that passage holds every word and figure of the
/// fragment. Any other passage holding them does not count: "lux" in answer to a question
/// about noise is found in the passage about light.
pub fn attribute_fragment(
    answer: &str,
    question: &str,
    passages: &[(String, String)],
) -> Option<String> {
    if passages.is_empty() {
        return None;
    }
    let tokens = |text: &str| -> Vec<String> {
        text.split(|c: char| !(c.is_alphanumeric() || c == '.' || c == ','))
            .map(|t| t.trim_matches(['.', ',']).to_lowercase())
            .filter(|t| t.chars().count() >= 2)
            .collect()
    };
    let said = tokens(answer);
    if said.is_empty() || said.len() > MAX_FRAGMENT_WORDS || sentences(answer).len() > 1 {
        return None;
    }
    let asked = terms(question);
    let (best, support) = passages
        .iter()
        .map(|(id, text)| ((id, text), asked.support_in(&terms(text))))
        .rev()
        .max_by_key(|(_, support)| (support.numbers, support.words))?;
    let (id, text) = best;
    let held = tokens(text);
    let all_held = said.iter().all(|token| held.contains(token));
    (support.is_enough() && all_held).then(|| format!("{}[^{id}]", answer.trim_end()))
}

/// The chunk ids of markers in `answer` whose passage does not support the sentence the
/// marker ends (no shared number, fewer than [`MIN_SHARED_WORDS`] shared words). Markers of
/// chunks not in `passages` are not judged here: they are invented, and removed elsewhere.
pub fn unsupported_markers(answer: &str, passages: &[(String, String)]) -> Vec<String> {
    let mut unsupported = Vec::new();
    if passages.is_empty() {
        return unsupported;
    }
    for sentence in sentences(answer) {
        let judged: Vec<(&str, &str)> = citations::markers(sentence)
            .into_iter()
            .filter_map(|(_, id)| {
                let (_, text) = passages.iter().find(|(chunk, _)| chunk == id)?;
                Some((id, text.as_str()))
            })
            .collect();
        // A sentence without a marker of a passage here has nothing to judge: its terms are
        // not read.
        if judged.is_empty() {
            continue;
        }
        let unmarked = strip_markers(sentence);
        let wanted = terms(&unmarked);
        for (id, text) in judged {
            if !wanted.supported_by(text) && !unsupported.iter().any(|u| u == id) {
                unsupported.push(id.to_string());
            }
        }
    }
    unsupported
}

/// Whether an answer written from live data is grounded in it: an answer that states figures
/// of its own (numbers the question does not hold, such as the digits of a room id it repeats)
/// must state at least one that the tool results (`sources`) hold. One is enough, so that
/// totals and percentages worked out from returned figures pass; an answer whose every figure
/// is new was invented. A decimal comma reads as a point (`20,2` = `20.2`), and a rounded figure
/// matches the longer one it was rounded from (`20.2` in `20.23`).
pub fn numbers_grounded(answer: &str, question: &str, sources: &[&str]) -> bool {
    let asked = terms(question).numbers;
    let stated: Vec<String> = terms(&strip_markers(answer))
        .numbers
        .into_iter()
        .filter(|n| !asked.contains(n))
        .collect();
    if stated.is_empty() {
        return true;
    }
    // Compact JSON writes lists as `400,410`: a comma there separates numbers.
    let known: Vec<String> = sources
        .iter()
        .flat_map(|s| terms(&s.replace(',', ", ")).numbers)
        .collect();
    stated
        .iter()
        .any(|number| known.iter().any(|k| same_figure(number, k)))
}

/// Words that end the subject of "how many …" / "what is the …".
const SUBJECT_ENDS: &[&str] = &[
    "in", "of", "at", "for", "on", "from", "during", "over", "does", "do", "did", "is", "are",
    "was", "were", "has", "have", "had", "there", "can", "could", "right", "now", "today", "by",
    "with", "inside", "within", "per", "to", "and", "or", "this", "that", "last", "since",
];

/// Words of a subject that any live answer covers: how a value is asked for, not what.
const GENERIC_SUBJECT_WORDS: &[&str] = &[
    "level",
    "value",
    "reading",
    "number",
    "count",
    "amount",
    "current",
    "latest",
    "highest",
    "lowest",
    "average",
    "maximum",
    "max",
    "minimum",
    "min",
    "mean",
    "status",
    "people",
    "person",
    "occupant",
    "visitor",
    "air",
    "quality",
    "indoor",
    "total",
    "overall",
    "room",
    "building",
    "floor",
    "recent",
    "measured",
    "state",
    "situation",
    "condition",
    "climate",
    "data",
    "occupancy",
    "actual",
    "present",
];

/// What the data calls some things a question may ask about under another name.
const SUBJECT_SYNONYMS: &[(&str, &str)] = &[
    ("seat", "capacity"),
    ("place", "capacity"),
    ("carbon", "co2"),
    ("dioxide", "co2"),
    ("temp", "temperature"),
    ("sound", "noise"),
    ("loudness", "noise"),
    ("brightness", "light"),
    ("illuminance", "light"),
    ("particle", "pm25"),
    ("particulate", "pm25"),
    ("pm2", "pm25"),
];

/// Whether what a question asks about (the words after "how many", or after "what is the")
/// is anywhere in the tool results: an answer about elevators, an electricity bill or a Wi-Fi
/// password written from occupancy data was invented. A question of another shape, or one
/// asking only for a generic value ("how many people", "what is the level"), passes.
pub fn subject_returned(question: &str, sources: &[&str]) -> bool {
    let subject = asked_subject(question);
    if subject.is_empty() {
        return true;
    }
    let known: std::collections::HashSet<String> = sources.iter().flat_map(|s| words(s)).collect();
    subject.iter().any(|word| known.contains(word))
}

/// The specific words of what the question asks about, singular, synonyms mapped.
fn asked_subject(question: &str) -> Vec<String> {
    let asked = words(question);
    let start = asked
        .windows(2)
        .position(|w| w == ["how", "many"])
        .map(|i| i + 2)
        .or_else(|| {
            asked
                .windows(3)
                .position(|w| {
                    w[0] == "what"
                        && matches!(w[1].as_str(), "is" | "was" | "are" | "were" | "s")
                        && w[2] == "the"
                })
                .map(|i| i + 3)
        });
    let Some(start) = start else {
        return Vec::new();
    };
    asked[start..]
        .iter()
        .take_while(|w| !SUBJECT_ENDS.contains(&w.as_str()))
        .map(|w| singular(w, 3).to_string())
        .filter(|w| !GENERIC_SUBJECT_WORDS.contains(&w.as_str()))
        .map(|w| {
            SUBJECT_SYNONYMS
                .iter()
                .find(|(asked, _)| *asked == w.as_str())
                .map_or(w.clone(), |(_, known)| known.to_string())
        })
        .collect()
}

/// Whether a question asks for an amount: how much, how many, a price, in the languages the
/// agent answers in. Such a question answered without a number was not answered.
pub fn asks_for_amount(question: &str) -> bool {
    const PAIRS: &[[&str; 2]] = &[
        ["how", "much"],
        ["how", "many"],
        ["wie", "viel"],
        ["wie", "viele"],
    ];
    const WORDS: &[&str] = &[
        "cost", "costs", "price", "kostet", "kosten", "preis", "combien", "prix", "coûte",
        "cuánto", "cuánta", "cuántos", "cuántas", "precio", "cuesta", "quanto", "quanti", "quante",
        "prezzo", "hoeveel", "prijs", "kost", "quantos", "quantas", "preço", "custa",
    ];
    let words: Vec<String> = question
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.iter().any(|w| WORDS.contains(&w.as_str()))
        || words
            .windows(2)
            .any(|pair| PAIRS.iter().any(|[a, b]| pair[0] == *a && pair[1] == *b))
}

/// Whether `answer` states a number: a word that starts with a digit (`120`, `1000ppm`, after
/// a currency sign), not one that only holds digits (`CO2`, `hq-201`, a citation marker's id).
pub fn states_a_number(answer: &str) -> bool {
    strip_markers(answer).split_whitespace().any(|word| {
        word.chars()
            .find(|c| c.is_alphanumeric())
            .is_some_and(|c| c.is_ascii_digit())
    })
}

/// `402` states the `402.0` of a result, and `20.2` a `20.23` (a figure written shorter).
fn same_figure(stated: &str, known: &str) -> bool {
    let equal_values = matches!(
        (stated.parse::<f64>(), known.parse::<f64>()),
        (Ok(a), Ok(b)) if a == b
    );
    stated == known || equal_values || (stated.contains('.') && known.starts_with(stated))
}

/// The figures and content words of a text; the words borrowed from it where they need no
/// change.
#[derive(Debug, Default)]
struct Terms<'a> {
    numbers: Vec<String>,
    words: Vec<Cow<'a, str>>,
}

#[derive(Debug, Clone, Copy)]
struct Support {
    numbers: usize,
    words: usize,
}

impl Support {
    fn is_enough(self) -> bool {
        self.numbers >= 1 || self.words >= MIN_SHARED_WORDS
    }
}

impl Terms<'_> {
    /// Whether `text` shares enough of these terms, read until it does.
    fn supported_by(&self, text: &str) -> bool {
        let mut numbers = Vec::new();
        let mut words: Vec<Cow<'_, str>> = Vec::new();
        let read = visit_terms(text, |term| {
            match term {
                Term::Number(number) => {
                    if self.numbers.binary_search(&number).is_ok() {
                        numbers.push(number);
                    }
                }
                Term::Word(word) => {
                    if self
                        .words
                        .binary_search_by(|w| w.as_ref().cmp(word.as_ref()))
                        .is_ok()
                        && !words.contains(&word)
                    {
                        words.push(word);
                    }
                }
            }
            let support = Support {
                numbers: numbers.len(),
                words: words.len(),
            };
            if support.is_enough() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
        read.is_break()
    }

    fn support_in(&self, passage: &Terms<'_>) -> Support {
        Support {
            numbers: self
                .numbers
                .iter()
                .filter(|n| passage.numbers.binary_search(n).is_ok())
                .count(),
            words: self
                .words
                .iter()
                .filter(|w| passage.words.binary_search(w).is_ok())
                .count(),
        }
    }
}

/// One term of a text: a figure in one form, or a content word lowercased and singular.
enum Term<'a> {
    Number(String),
    Word(Cow<'a, str>),
}

/// Hands `found` each term of `text` in order, repeats included, until it breaks. A plain
/// loop rather than an iterator chain: this reads every passage a marker points at.
fn visit_terms<'a>(
    text: &'a str,
    mut found: impl FnMut(Term<'a>) -> ControlFlow<()>,
) -> ControlFlow<()> {
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '.' || c == ',')) {
        let token = raw.trim_matches(|c: char| c == '.' || c == ',');
        if token.is_empty() {
            continue;
        }
        let has_digit = token.bytes().any(|b| b.is_ascii_digit());
        if has_digit && token.starts_with(char::is_alphabetic) {
            // A name with digits (CO2, PM2.5, AA3): a word of any length, never a figure.
            found(Term::Word(Cow::Owned(
                token.to_lowercase().replace('.', ""),
            )))?;
        } else if has_digit {
            // A figure, with a unit written onto it or not (`402ppm`, `20.5`).
            let end = token
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
                .unwrap_or(token.len());
            found(Term::Number(read_number(
                token[..end].trim_end_matches(['.', ',']),
            )))?;
        } else {
            for word in token.split([',', '.']) {
                if let Some(term) = content_word(word) {
                    found(term)?;
                }
            }
        }
    }
    ControlFlow::Continue(())
}

/// `word` as a term, or `None` when it is too short or a stopword.
fn content_word(word: &str) -> Option<Term<'_>> {
    // Words under four letters never count, whatever their plural.
    if word.len() < 4 {
        return None;
    }
    let singular_form = match lowercase(word) {
        Cow::Borrowed(lower) => Cow::Borrowed(singular(lower, 4)),
        Cow::Owned(lower) => Cow::Owned(singular(&lower, 4).to_string()),
    };
    (singular_form.chars().count() >= 4 && !is_stopword(&singular_form))
        .then_some(Term::Word(singular_form))
}

fn terms(text: &str) -> Terms<'_> {
    let mut found = Terms::default();
    let _ = visit_terms(text, |term| {
        match term {
            Term::Number(number) => found.numbers.push(number),
            Term::Word(word) => found.words.push(word),
        }
        ControlFlow::Continue(())
    });
    // Sorted and without repeats, for the binary searches of `support_in`.
    found.numbers.sort_unstable();
    found.numbers.dedup();
    found.words.sort_unstable();
    found.words.dedup();
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_for_an_amount_are_told_apart() {
        for question in [
            "How much does a CrowdVision CO2 sensor cost to buy?",
            "How many sensors may a room have?",
            "Wie viel kostet ein Sensor?",
            "Combien coûte un capteur ?",
            "¿Cuánto cuesta un sensor?",
            "What is the price of a sensor?",
        ] {
            assert!(asks_for_amount(question), "{question}");
        }
        for question in [
            "What CO2 level is poor?",
            "How do I convert Celsius to Fahrenheit?",
        ] {
            assert!(!asks_for_amount(question), "{question}");
        }
        assert!(!states_a_number(
            "The CO2 sensor cost varies by model.[^ab12cd34ef56]"
        ));
        assert!(!states_a_number("Room hq-201 does not say."));
        assert!(states_a_number("About €120."));
        assert!(states_a_number("It costs 120 EUR.[^ab12cd34ef56]"));
    }

    #[test]
    fn a_bare_fragment_is_attributed_to_the_passage_about_the_question_only() {
        let passages = vec![
            (
                "noise".to_string(),
                "Noise sensors report the A-weighted sound level in dB(A), averaged over one \
                 minute."
                    .to_string(),
            ),
            (
                "light".to_string(),
                "Light sensors report illuminance in lux at desk height.".to_string(),
            ),
        ];
        let question = "In which unit do noise sensors report?";
        assert_eq!(
            attribute_fragment("dB(A)", question, &passages).as_deref(),
            Some("dB(A)[^noise]")
        );
        // Held by a passage, but not by the one about what was asked.
        assert_eq!(attribute_fragment("lux", question, &passages), None);
        // A sentence is not a fragment; a passage about something else supports nothing.
        assert_eq!(
            attribute_fragment("It is dB(A). Always.", question, &passages),
            None
        );
        assert_eq!(
            attribute_fragment("dB(A)", "How do I reset my password?", &passages),
            None
        );
    }

    fn passages() -> Vec<(String, String)> {
        vec![
            (
                "co2-bands".into(),
                "Below 800 ppm the air is good; from 1000 ppm indoor air counts as poor.".into(),
            ),
            (
                "roles-admin".into(),
                "Business admins can invite users and manage every building of their domain."
                    .into(),
            ),
        ]
    }

    #[test]
    fn each_supported_sentence_gets_its_passage() {
        let answer = "Indoor air is poor from 1000 ppm. Business admins manage every building.";
        assert_eq!(
            attribute(answer, &passages()).unwrap(),
            "Indoor air is poor from 1000 ppm.[^co2-bands] Business admins manage every \
             building.[^roles-admin]"
        );
    }

    #[test]
    fn unsupported_sentences_stay_unmarked() {
        let answer = "The sky is blue today. Poor air starts at 1000 ppm.";
        assert_eq!(
            attribute(answer, &passages()).unwrap(),
            "The sky is blue today. Poor air starts at 1000 ppm.[^co2-bands]"
        );
        assert_eq!(attribute("Bananas are yellow.", &passages()), None);
        assert_eq!(attribute("Anything at all.", &[]), None);
    }

    #[test]
    fn a_model_marker_on_a_sentence_its_passage_does_not_support_is_flagged() {
        let answer = "Indoor air is poor from 1000 ppm.[^co2-bands] Admins can delete \
                      the moon.[^co2-bands] Business admins manage every building.[^roles-admin] \
                      Invented.[^nowhere]";
        assert_eq!(unsupported_markers(answer, &passages()), vec!["co2-bands"]);
        assert!(unsupported_markers("Poor from 1000 ppm.[^co2-bands]", &passages()).is_empty());
    }

    #[test]
    fn a_live_answer_needs_one_number_the_tools_returned() {
        let sources =
            [r#"{"rooms":[{"id":"hq-101","people":6,"capacity":12}],"co2":20.23,"v":[3,4]}"#];
        let question = "How many people are in hq-101?";
        assert!(numbers_grounded(
            "Room hq-101 has 6 people.",
            question,
            &sources
        ));
        assert!(numbers_grounded(
            "6 of 12 seats, 50% full.",
            question,
            &sources
        ));
        assert!(numbers_grounded("Es sind 20,2 ppm.", question, &sources));
        assert!(numbers_grounded("Then 4.", question, &sources));
        let reading = [r#"{"value":402.0,"unit":"ppm"}"#];
        assert!(
            numbers_grounded("It is 402 ppm.", question, &reading),
            "402 states 402.0"
        );
        assert!(!numbers_grounded("It is 40 ppm.", question, &reading));
        assert!(!numbers_grounded("It is 40ppm.", question, &reading));
        assert!(numbers_grounded("It is 402ppm.", question, &reading));
        let inventory = [r#"{"sensors":[{"sensor_type":"pm25"},{"sensor_type":"co2"}]}"#];
        assert!(
            numbers_grounded("It has CO2 and PM2.5 sensors.", question, &inventory),
            "names with digits are not figures"
        );
        assert!(numbers_grounded(
            "No one is counted there.",
            question,
            &sources
        ));
        assert!(!numbers_grounded(
            "The building has 5 elevators.",
            question,
            &sources
        ));
        assert!(!numbers_grounded(
            "It reads 7 people.[^hq-101]",
            question,
            &sources
        ));
        assert!(!numbers_grounded(
            "Room hq-101 has 9 people.",
            question,
            &sources
        ));
    }

    #[test]
    fn a_live_question_about_something_the_data_lacks_is_not_answered_from_it() {
        let building = [
            r#"{"id":"acme-hq","rooms":[{"id":"hq-lobby","name":"Lobby","floor":0,"capacity":60}]}"#,
        ];
        let readings = [
            r#"{"readings":[{"room_id":"hq-201","sensor_type":"co2","value":402.0,"unit":"ppm"}],"total_people":8}"#,
        ];
        for question in [
            "How many elevators does building acme-hq have?",
            "What was the electricity consumption of building acme-hq last month?",
            "What is the Wi-Fi password in the lobby of building acme-hq?",
        ] {
            assert!(!subject_returned(question, &building), "{question}");
            assert!(!subject_returned(question, &readings), "{question}");
        }
        for (question, sources) in [
            ("How many people are in room hq-201 right now?", &readings),
            (
                "What is the CO2 level in the Board Room right now?",
                &readings,
            ),
            (
                "What's the current carbon dioxide reading in hq-201?",
                &readings,
            ),
            ("How many seats does the lobby have?", &building),
            (
                "How many rooms does building acme-hq have on floor 0?",
                &building,
            ),
            ("Is the lobby of building acme-hq busy?", &building),
            ("Wie viele Aufzüge hat das Gebäude acme-hq?", &building),
        ] {
            assert!(subject_returned(question, sources), "{question}");
        }
    }

    #[test]
    fn decimals_do_not_split_sentences() {
        assert_eq!(
            sentences("It reads 20.2 °C. Fine!\nNext"),
            vec!["It reads 20.2 °C. ", "Fine!\n", "Next"]
        );
        assert_eq!(
            sentences("Poor.[^a][^b] Good.[^c]"),
            vec!["Poor.[^a][^b] ", "Good.[^c]"]
        );
    }

    proptest::proptest! {
        /// The streaming check that stops at enough support judges as the full comparison.
        #[test]
        fn the_early_check_agrees_with_the_full_comparison(
            sentence in proptest::collection::vec(word(), 0..12),
            passage in proptest::collection::vec(word(), 0..40),
        ) {
            let sentence = sentence.join(" ");
            let wanted = terms(&sentence);
            let text = passage.join(" ");
            proptest::prop_assert_eq!(
                wanted.supported_by(&text),
                wanted.support_in(&terms(&text)).is_enough()
            );
        }
    }

    /// The terms of `text` as first read (an iterator chain), the reference of `visit_terms`.
    fn terms_as_first_read(text: &str) -> (Vec<String>, Vec<String>) {
        let each = text
            .split(|c: char| !(c.is_alphanumeric() || c == '.' || c == ','))
            .map(|raw| raw.trim_matches(|c: char| c == '.' || c == ','))
            .filter(|token| !token.is_empty())
            .flat_map(|token| {
                let has_digit = token.bytes().any(|b| b.is_ascii_digit());
                let single = if has_digit && token.starts_with(char::is_alphabetic) {
                    Some(Term::Word(Cow::Owned(
                        token.to_lowercase().replace('.', ""),
                    )))
                } else if has_digit {
                    let end = token
                        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
                        .unwrap_or(token.len());
                    Some(Term::Number(read_number(
                        token[..end].trim_end_matches(['.', ',']),
                    )))
                } else {
                    None
                };
                let words = single
                    .is_none()
                    .then(|| token.split([',', '.']).filter_map(content_word))
                    .into_iter()
                    .flatten();
                single.into_iter().chain(words)
            });
        let (mut numbers, mut words) = (Vec::new(), Vec::new());
        for term in each {
            match term {
                Term::Number(number) => numbers.push(number),
                Term::Word(word) => words.push(word.into_owned()),
            }
        }
        numbers.sort_unstable();
        numbers.dedup();
        words.sort_unstable();
        words.dedup();
        (numbers, words)
    }

    proptest::proptest! {
        #[test]
        fn terms_are_read_as_first_read(
            listed in proptest::collection::vec(word(), 0..20),
            free in "\\PC{0,40}",
        ) {
            let text = format!("{} {free}", listed.join(" "));
            let read = terms(&text);
            let words: Vec<String> = read.words.iter().map(|w| w.to_string()).collect();
            proptest::prop_assert_eq!((read.numbers, words), terms_as_first_read(&text));
        }
    }

    /// The marker check as first written (terms read for every sentence), the reference of
    /// [`unsupported_markers`].
    fn unsupported_markers_as_first_read(
        answer: &str,
        passages: &[(String, String)],
    ) -> Vec<String> {
        let mut unsupported = Vec::new();
        for sentence in sentences(answer) {
            let unmarked = strip_markers(sentence);
            let wanted = terms(&unmarked);
            for (_, id) in citations::markers(sentence) {
                let Some((_, text)) = passages.iter().find(|(chunk, _)| chunk == id) else {
                    continue;
                };
                if !wanted.supported_by(text) && !unsupported.iter().any(|u| u == id) {
                    unsupported.push(id.to_string());
                }
            }
        }
        unsupported
    }

    /// Words, markers of the passages `a`, `b` and `c`, and sentence ends.
    const ANSWER_PIECES: &[&str] = &[
        "Sensors", "CO2", "1,000", "20.5", "ppm.", "room", "the", "humidity", "PM2.5", "alarm",
        "[^a]", "[^b]", "[^c]", "[^d]", ".", "!", "\n",
    ];

    proptest::proptest! {
        #[test]
        fn markers_are_judged_as_first_read(
            pieces in proptest::collection::vec(proptest::sample::select(ANSWER_PIECES), 0..30),
            held in proptest::collection::vec(proptest::collection::vec(word(), 0..12), 0..3),
        ) {
            let answer = pieces.join(" ").replace(" .", ".");
            let passages: Vec<(String, String)> = held
                .iter()
                .zip(["a", "b", "c"])
                .map(|(text, id)| (id.to_string(), text.join(" ")))
                .collect();
            proptest::prop_assert_eq!(
                unsupported_markers(&answer, &passages),
                unsupported_markers_as_first_read(&answer, &passages)
            );
            proptest::prop_assert_eq!(attribute(&answer, &[]), None);
            proptest::prop_assert_eq!(attribute_fragment(&answer, "co2", &[]), None);
        }
    }

    const WORD_LIST: &[&str] = &[
        "Sensors", "sensor", "CO2", "co2", "1,000", "1000", "20.5", "ppm.", "Rooms,", "room",
        "the", "about", "humidity", "Humidity", "PM2.5", "classes", "class", "alarm", "402ppm",
    ];

    fn word() -> proptest::sample::Select<&'static str> {
        proptest::sample::select(WORD_LIST)
    }
}
