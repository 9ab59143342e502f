//! The language of a question and of an answer, detected in code, so that an answer in
//! another language than its question is caught and asked again, and the library's own
//! sentences (IDK, refusals) are written in the asker's language. Pure.
//!
//! Words decide first: each language's lexicon ([`lexicon`]) of the words people use in such
//! questions and answers, a word several languages share counting for each of them in part,
//! and the letters only some languages write. Questions are short ("Write me a poem about
//! autumn", "Bom dia"), and letter trigrams take too many of them for another language; on
//! `datasets/languages.yaml` the words are right on 747 of 748 questions where trigrams alone
//! were right on 567 (QUALITY.md). Whatlang's trigrams decide only when the words leave it open
//! and the text is long enough for them.
//!
//! Trigrams measure prose: citation markers, footnote lines, identifiers (`hq-201`), numbers
//! and units are removed first, because they look the same in every language.

use crate::agent::text::{Fnv, WordHasher};
use std::hash::Hasher;
use std::sync::LazyLock;
use whatlang::{Detector, Lang};

mod lexicon;

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

    /// The language's place in [`Language::ALL`] (declaration order).
    fn index(self) -> usize {
        self as usize
    }

    fn of(lang: Lang) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.whatlang() == lang)
    }
}

/// The language `text` is written in, when it can be told: by the words it shares with each
/// language's lexicon (a word several languages use counts for each, shared), and the letters
/// only some languages write; by whatlang's trigrams when the words leave it open and the text
/// is long enough for them.
pub fn detect(text: &str) -> Option<Language> {
    let scores = scores(text);
    // The best is the first of the highest scores (in `Language::ALL`'s order).
    let best = (1..scores.len()).fold(
        0,
        |best, at| {
            if scores[at] > scores[best] {
                at
            } else {
                best
            }
        },
    );
    let runner_up = (0..scores.len())
        .filter(|at| *at != best)
        .map(|at| scores[at])
        .fold(f32::MIN, f32::max);
    if scores[best] >= MIN_SCORE && scores[best] - runner_up >= MIN_LEAD {
        return Some(Language::ALL[best]);
    }
    by_trigrams(text)
}

/// Whatlang's reading of `text`'s prose, when it holds enough letters and whatlang is sure
/// enough.
fn by_trigrams(text: &str) -> Option<Language> {
    let prose = prose(text);
    if prose.chars().filter(|c| c.is_alphabetic()).count() < MIN_LETTERS {
        return None;
    }
    let info = DETECTOR.detect(&prose)?;
    (info.confidence() >= MIN_CONFIDENCE)
        .then(|| Language::of(info.lang()))
        .flatten()
}

/// Below this a language's words are too few to name it.
const MIN_SCORE: f32 = 0.5;
/// The lead the best language needs over the next.
const MIN_LEAD: f32 = 0.25;

static LEXICON: LazyLock<std::collections::HashMap<&'static str, [f32; 7], WordHasher>> =
    LazyLock::new(|| {
        let mut owners: std::collections::HashMap<&'static str, [bool; 7]> = Default::default();
        for (language, words) in lexicon::WORDS {
            for word in words.split_whitespace() {
                owners.entry(word).or_default()[language.index()] = true;
            }
        }
        owners
            .into_iter()
            .map(|(word, owned)| {
                let share = 1.0 / owned.iter().filter(|o| **o).count() as f32;
                (word, owned.map(|o| if o { share } else { 0.0 }))
            })
            .collect()
    });

/// [`LEXICON`] by the FNV-1a hash of each word's bytes: a word of ASCII text is looked up by
/// the hash worked out as its bytes are read, without a lowered copy of the text or a second
/// pass over the word to hash it.
static BY_HASH: LazyLock<HashedLexicon> = LazyLock::new(|| {
    LEXICON
        .iter()
        .map(|(word, shares)| {
            let mut hash = Fnv::default();
            hash.write(word.as_bytes());
            (hash.finish(), (*word, *shares))
        })
        .collect()
});

/// Each word's hash, the word, and its languages' shares.
type HashedLexicon = std::collections::HashMap<u64, (&'static str, [f32; 7]), AlreadyHashed>;

/// The table of [`BY_HASH`] takes its keys, hashes already, as they are.
type AlreadyHashed = std::hash::BuildHasherDefault<KeyIsHash>;

#[derive(Default)]
struct KeyIsHash(u64);

impl Hasher for KeyIsHash {
    /// Not reached by `u64` keys, which come through `write_u64`; FNV-1a all the same.
    fn write(&mut self, bytes: &[u8]) {
        let mut fnv = Fnv::default();
        fnv.write(bytes);
        self.0 = fnv.finish();
    }

    fn write_u64(&mut self, hash: u64) {
        self.0 = hash;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Letters only some of the languages write, and who writes them.
const LETTERS: &[(char, &[Language])] = {
    use Language::*;
    &[
        ('ß', &[German]),
        ('ä', &[German]),
        ('ö', &[German]),
        ('ü', &[German]),
        ('ñ', &[Spanish]),
        ('¿', &[Spanish]),
        ('¡', &[Spanish]),
        ('ã', &[Portuguese]),
        ('õ', &[Portuguese]),
        ('ç', &[French, Portuguese]),
        ('œ', &[French]),
        ('è', &[French, Italian]),
        ('ê', &[French, Portuguese]),
        ('â', &[French, Portuguese]),
        ('ô', &[French, Portuguese]),
        ('î', &[French]),
        ('û', &[French]),
        ('ì', &[Italian]),
        ('ò', &[Italian]),
        ('ù', &[Italian, French]),
        ('ë', &[Dutch, French]),
        ('ï', &[Dutch, French]),
    ]
};

/// Each language's score for `text`: its words (shared words split between their languages)
/// and its letters (each marked letter once).
fn scores(text: &str) -> [f32; 7] {
    let mut scores = [0.0f32; 7];
    // Every marked letter is outside ASCII: most English text needs neither the search for
    // them nor a lowered copy of itself.
    if text.is_ascii() {
        visit_ascii_words(text, &mut |shares| {
            for (score, share) in scores.iter_mut().zip(shares) {
                *score += share;
            }
        });
        return scores;
    }
    let mut add = |word: &str| {
        if let Some(shares) = LEXICON.get(word) {
            for (score, share) in scores.iter_mut().zip(shares) {
                *score += share;
            }
        }
    };
    let lower = text.to_lowercase();
    visit_words(&lower, &mut add);
    for (letter, writers) in LETTERS {
        if lower.contains(*letter) {
            let share = 1.0 / writers.len() as f32;
            for writer in *writers {
                scores[writer.index()] += share;
            }
        }
    }
    scores
}

/// Hands `found` the words of lowercase `text` as the lexicon lists them: split at anything but
/// letters and apostrophes; an elided article or pronoun (`l'`, `qu'`, `dov'`) kept as its own word with
/// its apostrophe; words holding digits dropped.
fn visit_words(text: &str, mut found: impl FnMut(&str)) {
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '’')) {
        if !word.is_empty() && !word.bytes().any(|b| b.is_ascii_digit()) {
            visit_word(word, &mut found);
        }
    }
}

/// The lexicon's shares of each word of ASCII `text`, the words as [`visit_words`] reads them
/// in `text` lowered: for ASCII, a letter or digit is `is_ascii_alphanumeric`, and lowering
/// maps bytes one to one. A word without an apostrophe is found by the hash of its lowered
/// bytes, worked out as they are read ([`BY_HASH`]); one with an apostrophe goes through
/// [`visit_word`].
fn visit_ascii_words(text: &str, found: &mut impl FnMut(&[f32; 7])) {
    let bytes = text.as_bytes();
    let in_word = |b: u8| b.is_ascii_alphanumeric() || b == b'\'';
    let mut at = 0;
    while at < bytes.len() {
        if !in_word(bytes[at]) {
            at += 1;
            continue;
        }
        let (start, mut digits, mut quoted, mut hash) = (at, false, false, Fnv::default());
        while at < bytes.len() && in_word(bytes[at]) {
            let byte = bytes[at].to_ascii_lowercase();
            digits |= byte.is_ascii_digit();
            quoted |= byte == b'\'';
            hash.write_u8(byte);
            at += 1;
        }
        let word = &text[start..at];
        match (digits, quoted) {
            (true, _) => {}
            (false, false) => {
                // The lexicon's words are lowercase: equal without ASCII case is equal lowered.
                let entry = BY_HASH.get(&hash.finish());
                if let Some((_, shares)) = entry.filter(|(key, _)| key.eq_ignore_ascii_case(word)) {
                    found(shares);
                }
            }
            (false, true) => visit_word(&word.to_ascii_lowercase(), &mut |word| {
                if let Some(shares) = LEXICON.get(word) {
                    found(shares);
                }
            }),
        }
    }
}

/// One word of [`visit_words`]: its quotes trimmed, an elision split off.
fn visit_word(word: &str, found: &mut impl FnMut(&str)) {
    let word = word.trim_matches(|c| c == '\'' || c == '’');
    if word.is_empty() {
        return;
    }
    let elided = word
        .find(['\'', '’'])
        .filter(|at| *at <= 4 && !word.ends_with("'s") && !word.ends_with("'t"));
    match elided {
        Some(at) => {
            let quote = word[at..].chars().next().map_or(1, char::len_utf8);
            found(&word[..at + 1]);
            if at + quote < word.len() {
                found(&word[at + quote..]);
            }
        }
        None => found(word),
    }
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
    use proptest::prelude::*;

    /// Detection as first written: the seven languages sorted, best first.
    fn detect_as_written(text: &str) -> Option<Language> {
        let mut ranked: Vec<(Language, f32)> =
            Language::ALL.into_iter().zip(scores(text)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1));
        if ranked[0].1 >= MIN_SCORE && ranked[0].1 - ranked[1].1 >= MIN_LEAD {
            return Some(ranked[0].0);
        }
        by_trigrams(text)
    }

    /// The scores as first written: the whole text lowered, then its words.
    fn scores_as_written(text: &str) -> [f32; 7] {
        let mut scores = [0.0f32; 7];
        let lower = text.to_lowercase();
        visit_words(&lower, |word| {
            if let Some(shares) = LEXICON.get(word) {
                for (score, share) in scores.iter_mut().zip(shares) {
                    *score += share;
                }
            }
        });
        for (letter, writers) in LETTERS {
            if lower.contains(*letter) {
                for writer in *writers {
                    scores[writer.index()] += 1.0 / writers.len() as f32;
                }
            }
        }
        scores
    }

    /// Questions and answers made of the lexicon's words, apostrophes, digits and punctuation.
    fn sentence() -> impl Strategy<Value = String> {
        let word = prop_oneof![
            Just("the"),
            Just("is"),
            Just("der"),
            Just("ist"),
            Just("la"),
            Just("est"),
            Just("el"),
            Just("es"),
            Just("het"),
            Just("il"),
            Just("o"),
            Just("é"),
            Just("l'"),
            Just("qu'il"),
            Just("don't"),
            Just("room's"),
            Just("'quoted'"),
            Just("hq-101"),
            Just("7"),
            Just("?"),
            Just(","),
            Just("Open"),
            Just("WHEN"),
        ];
        proptest::collection::vec(word, 0..10).prop_map(|words| words.join(" "))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(512)))]

        #[test]
        fn scores_are_what_they_were_as_first_written(
            text in prop_oneof![sentence(), ".{0,40}", "[ -~]{0,60}", "[A-Za-z' ]{40,120}"]
        ) {
            let as_written = scores_as_written(&text);
            prop_assert_eq!(scores(&text), as_written);
            prop_assert_eq!(scores(&text.to_uppercase()), scores_as_written(&text.to_uppercase()));
        }

        #[test]
        fn detection_is_what_it_was_as_first_written(text in prop_oneof![sentence(), ".{0,40}", "[ -~]{0,60}"]) {
            prop_assert_eq!(detect(&text), detect_as_written(&text));
        }
    }

    #[test]
    fn marked_letters_are_outside_ascii_so_ascii_text_skips_them() {
        assert!(LETTERS.iter().all(|(letter, _)| !letter.is_ascii()));
    }

    #[test]
    fn ascii_words_are_read_as_in_the_lowered_text() {
        let long = format!("l'{} the room is free", "a".repeat(70));
        assert_eq!(scores(&long), scores_as_written(&long));
        assert_eq!(
            scores(&long.to_uppercase()),
            scores_as_written(&long.to_uppercase())
        );
        let mut found = 0;
        visit_ascii_words("THE Room IS free", &mut |_| found += 1);
        assert_eq!(found, 4);
    }

    #[test]
    fn every_lexicon_word_is_found_by_its_hash() {
        // No two words share a hash (one would hide the other), and none holds an ASCII
        // capital (found without ASCII case, it would match a word it is not, lowered).
        assert_eq!(BY_HASH.len(), LEXICON.len());
        for word in LEXICON.keys() {
            assert_eq!(*word, word.to_lowercase(), "{word}");
            let mut hash = Fnv::default();
            hash.write(word.as_bytes());
            assert_eq!(BY_HASH[&hash.finish()].0, *word);
        }
    }

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
