//! The language of a question and of an answer, detected in code (whatlang trigrams over the
//! languages the agent answers in), so that an answer in another language than its question
//! is caught and asked again, and the library's own sentences (IDK, refusals) are written in
//! the asker's language. Pure.
//!
//! What is measured is the prose: citation markers, footnote lines, identifiers (`hq-201`),
//! numbers and units are removed first, because they look the same in every language and
//! would otherwise outvote a short sentence.

use std::sync::LazyLock;
use whatlang::{Detector, Lang};

/// The languages the agent answers in (and the only ones detection may return).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    English,
    German,
    French,
    Spanish,
    Italian,
    Dutch,
    Portuguese,
}

/// Fewer letters of prose than this, and the language is not judged (a bare "6 people." or
/// "OK" says nothing about it).
const MIN_LETTERS: usize = 12;

/// Below this confidence a detection is not trusted.
const MIN_CONFIDENCE: f64 = 0.25;

static DETECTOR: LazyLock<Detector> = LazyLock::new(|| {
    Detector::with_allowlist(Language::ALL.iter().map(|l| l.whatlang()).collect())
});

impl Language {
    pub const ALL: [Language; 7] = [
        Language::English,
        Language::German,
        Language::French,
        Language::Spanish,
        Language::Italian,
        Language::Dutch,
        Language::Portuguese,
    ];

    /// ISO 639-1: `en`, `de`, `fr`, …
    pub fn code(self) -> &'static str {
        match self {
            Language::English => "en",
            Language::German => "de",
            Language::French => "fr",
            Language::Spanish => "es",
            Language::Italian => "it",
            Language::Dutch => "nl",
            Language::Portuguese => "pt",
        }
    }

    pub fn from_code(code: &str) -> Option<Language> {
        Language::ALL
            .into_iter()
            .find(|l| l.code().eq_ignore_ascii_case(code.trim()))
    }

    /// The language's English name, as a prompt names it.
    pub fn name(self) -> &'static str {
        match self {
            Language::English => "English",
            Language::German => "German",
            Language::French => "French",
            Language::Spanish => "Spanish",
            Language::Italian => "Italian",
            Language::Dutch => "Dutch",
            Language::Portuguese => "Portuguese",
        }
    }

    fn whatlang(self) -> Lang {
        match self {
            Language::English => Lang::Eng,
            Language::German => Lang::Deu,
            Language::French => Lang::Fra,
            Language::Spanish => Lang::Spa,
            Language::Italian => Lang::Ita,
            Language::Dutch => Lang::Nld,
            Language::Portuguese => Lang::Por,
        }
    }

    fn of(lang: Lang) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.whatlang() == lang)
    }
}

/// The language `text` is written in, when its prose is long enough to tell. Short texts
/// (most questions) are told by their function words, which trigrams get wrong on a handful
/// of words (a short German sentence reads as Portuguese to them); trigrams decide when the
/// function words do not.
pub fn detect(text: &str) -> Option<Language> {
    let prose = prose(text);
    if prose.chars().filter(|c| c.is_alphabetic()).count() < MIN_LETTERS {
        return None;
    }
    by_function_words(&prose).or_else(|| {
        let info = DETECTOR.detect(&prose)?;
        (info.confidence() >= MIN_CONFIDENCE)
            .then(|| Language::of(info.lang()))
            .flatten()
    })
}

/// Words frequent in questions and answers of one language and rare in the others.
fn function_words(language: Language) -> &'static [&'static str] {
    match language {
        Language::English => &[
            "the",
            "is",
            "are",
            "what",
            "how",
            "many",
            "which",
            "of",
            "right",
            "now",
            "there",
            "and",
            "at",
            "to",
            "with",
            "people",
            "room",
            "building",
            "level",
            "it",
            "this",
            "does",
            "do",
            "can",
            "when",
            "where",
            "from",
            "has",
            "have",
            "about",
            "currently",
            "for",
            "in",
            "sensors",
            "unit",
        ],
        Language::German => &[
            "der",
            "die",
            "das",
            "ist",
            "sind",
            "es",
            "im",
            "des",
            "wie",
            "viele",
            "gerade",
            "welchem",
            "welcher",
            "welche",
            "man",
            "einen",
            "und",
            "nicht",
            "mit",
            "ein",
            "eine",
            "raum",
            "personen",
            "sollte",
            "ab",
            "wert",
            "warm",
            "gebäudes",
            "gebäude",
            "aktuell",
            "beträgt",
            "liegt",
            "bei",
            "zu",
            "für",
            "wird",
            "derzeit",
            "momentan",
        ],
        Language::French => &[
            "le",
            "les",
            "est",
            "dans",
            "du",
            "des",
            "quelle",
            "quel",
            "quelles",
            "une",
            "et",
            "il",
            "y",
            "salle",
            "actuelle",
            "actuellement",
            "bâtiment",
            "personnes",
            "sont",
            "pour",
            "au",
            "aux",
            "plage",
            "l'air",
            "d'humidité",
            "qu'il",
            "c'est",
            "combien",
        ],
        Language::Spanish => &[
            "el",
            "los",
            "las",
            "hay",
            "qué",
            "cuántas",
            "cuántos",
            "cuál",
            "una",
            "y",
            "sala",
            "edificio",
            "ahora",
            "mismo",
            "personas",
            "está",
            "es",
            "del",
            "humedad",
            "oficina",
            "cómoda",
            "para",
            "actualmente",
            "son",
            "muy",
        ],
        Language::Italian => &[
            "il", "lo", "è", "di", "che", "quanti", "quante", "nella", "della", "stanza", "sono",
            "persone", "adesso", "ora", "qual", "nel", "gli", "edificio", "ci",
        ],
        Language::Dutch => &[
            "het", "zijn", "hoeveel", "van", "een", "er", "nu", "kamer", "gebouw", "mensen", "wat",
            "welke", "niet", "ook", "op", "voor", "dit",
        ],
        Language::Portuguese => &[
            "os",
            "é",
            "em",
            "do",
            "da",
            "quantas",
            "pessoas",
            "edifício",
            "agora",
            "no",
            "na",
            "um",
            "uma",
            "qual",
            "são",
            "está",
            "não",
            "sala",
        ],
    }
}

/// The language whose function words `prose` holds clearly more of than any other's.
fn by_function_words(prose: &str) -> Option<Language> {
    let words: Vec<String> = prose
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '?' | '!' | '.' | ',' | ';' | ':' | '¿' | '¡' | '(' | ')' | '"'
                )
        })
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut scores: Vec<(Language, usize)> = Language::ALL
        .into_iter()
        .map(|language| {
            let known = function_words(language);
            let hits = words.iter().filter(|w| known.contains(&w.as_str())).count();
            (language, hits)
        })
        .collect();
    scores.sort_by_key(|&(_, hits)| std::cmp::Reverse(hits));
    let (best, best_hits) = scores[0];
    let runner_up = scores[1].1;
    (best_hits >= 2 && best_hits >= runner_up + 2).then_some(best)
}

/// `asked` (the question's language), when `answer` is not plainly in it: detected in another one, or,
/// for a question in a language other than English, too short to be in any (a bare "6" to a
/// German question). A bare figure to an English question is not held against it.
pub fn answered_in_other_language(asked: Language, answer: &str) -> Option<Language> {
    match detect(answer) {
        Some(answered) => (asked != answered).then_some(asked),
        None => (asked != Language::English).then_some(asked),
    }
}

/// `text` without what reads alike in every language: footnote definitions, citation
/// markers, words holding digits or joined by `-`/`_` (ids, figures, units like `m²`), code.
fn prose(text: &str) -> String {
    text.lines()
        .filter(|line| !line.trim_start().starts_with("[^"))
        .flat_map(|line| line.split_whitespace())
        .filter(|word| {
            !(word.contains("[^")
                || word.contains('`')
                || word.chars().any(|c| c.is_ascii_digit())
                || word.contains('-')
                || word.contains('_'))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_of_the_golden_set_are_told_apart() {
        let table = [
            // The trigrams alone took it for German, and the IDK sentence came out in German.
            ("Which unit do CO2 sensors report in?", Language::English),
            (
                "Wie warm ist es gerade im Raum hq-201 des Gebäudes acme-hq?",
                Language::German,
            ),
            (
                "Ab welchem CO2-Wert sollte man einen Raum lüften?",
                Language::German,
            ),
            (
                "Quelle plage d'humidité relative est confortable dans un bureau ?",
                Language::French,
            ),
            (
                "Quelle est la température actuelle dans la salle hq-lobby du bâtiment acme-hq ?",
                Language::French,
            ),
            (
                "¿Cuántas personas hay ahora mismo en la sala hq-101 del edificio acme-hq?",
                Language::Spanish,
            ),
            (
                "¿Qué humedad relativa es cómoda en una oficina?",
                Language::Spanish,
            ),
            (
                "How many people are in Acme Headquarters right now?",
                Language::English,
            ),
            ("What CO2 level is poor?", Language::English),
        ];
        for (text, want) in table {
            assert_eq!(detect(text), Some(want), "{text}");
        }
    }

    #[test]
    fn answers_are_judged_on_their_prose() {
        let german = "Im Raum hq-201 sind es gerade 21.6 °C [^abc123].\n\n[^abc123]: sensor-temperature.md › Comfort";
        assert_eq!(detect(german), Some(Language::German));
        let english = "Room hq-201 is at 21.6 °C right now [^abc123].";
        assert_eq!(
            answered_in_other_language(
                detect("Wie warm ist es gerade im Raum hq-201 des Gebäudes acme-hq?").unwrap(),
                english
            ),
            Some(Language::German)
        );
        assert_eq!(
            answered_in_other_language(
                detect("Wie warm ist es gerade im Raum hq-201?").unwrap(),
                german
            ),
            None
        );
    }

    #[test]
    fn too_little_prose_is_not_judged() {
        for text in ["6", "21.6 °C", "hq-201: 6 [^a1].", "OK", ""] {
            assert_eq!(detect(text), None, "{text:?}");
        }
        assert_eq!(
            answered_in_other_language(
                detect("How many people are in room hq-101?").unwrap(),
                "6 [^a]."
            ),
            None
        );
        assert_eq!(
            answered_in_other_language(
                detect("Wie viele Personen sind im Raum hq-101?").unwrap(),
                "6 [^a]."
            ),
            Some(Language::German),
            "a bare figure is asked again in the question's language"
        );
    }

    #[test]
    fn codes_round_trip() {
        for language in Language::ALL {
            assert_eq!(Language::from_code(language.code()), Some(language));
        }
        assert_eq!(Language::from_code("DE"), Some(Language::German));
        assert_eq!(Language::from_code("xx"), None);
    }
}
