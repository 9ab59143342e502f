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

use crate::citations;

/// Terms of a sentence a passage must share before it supports the sentence: one number, or
/// this many content words.
const MIN_SHARED_WORDS: usize = 2;

const STOPWORDS: &[&str] = &[
    "about",
    "after",
    "also",
    "another",
    "because",
    "been",
    "before",
    "being",
    "both",
    "could",
    "does",
    "each",
    "from",
    "have",
    "here",
    "into",
    "just",
    "like",
    "more",
    "most",
    "much",
    "only",
    "other",
    "over",
    "same",
    "should",
    "some",
    "such",
    "than",
    "that",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "under",
    "very",
    "what",
    "when",
    "where",
    "which",
    "while",
    "will",
    "with",
    "would",
    "your",
    "yours",
    "answer",
    "passage",
    "passages",
    "crowdvision",
    "oder",
    "eine",
    "einer",
    "einem",
    "einen",
    "sind",
    "wird",
    "werden",
    "nicht",
    "auch",
    "dass",
    "wenn",
    "dans",
    "pour",
    "avec",
    "sont",
    "elle",
    "leur",
    "cette",
];

/// `answer` with a marker after each sentence a passage supports, or `None` when no sentence is
/// supported. `passages` are (chunk id, text), in retrieval order (earlier wins a tie).
pub fn attribute(answer: &str, passages: &[(String, String)]) -> Option<String> {
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

/// The chunk ids of markers in `answer` whose passage does not support the sentence the
/// marker ends (no shared number, fewer than [`MIN_SHARED_WORDS`] shared words). Markers of
/// chunks not in `passages` are not judged here: they are invented, and removed elsewhere.
pub fn unsupported_markers(answer: &str, passages: &[(String, String)]) -> Vec<String> {
    let mut unsupported = Vec::new();
    for sentence in sentences(answer) {
        let wanted = terms(&strip_markers(sentence));
        for (_, id) in citations::markers(sentence) {
            let Some((_, text)) = passages.iter().find(|(chunk, _)| chunk == id) else {
                continue;
            };
            if !wanted.support_in(&terms(text)).is_enough() && !unsupported.iter().any(|u| u == id)
            {
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

/// `402` states the `402.0` of a result, and `20.2` a `20.23` (a figure written shorter).
fn same_figure(stated: &str, known: &str) -> bool {
    let equal_values = matches!(
        (stated.parse::<f64>(), known.parse::<f64>()),
        (Ok(a), Ok(b)) if a == b
    );
    stated == known || equal_values || (stated.contains('.') && known.starts_with(stated))
}

/// A number as written, in one form: commas before groups of three digits are thousands
/// separators (`1,000` → 1000), any other comma is a decimal comma (`20,2` → 20.2).
fn read_number(token: &str) -> String {
    let mut parts = token.split(',');
    let mut number = parts.next().unwrap_or_default().to_string();
    for part in parts {
        let thousands = part.len() >= 3 && part[..3].chars().all(|c| c.is_ascii_digit());
        if !thousands {
            number.push('.');
        }
        number.push_str(part);
    }
    number
}

/// The length of the markers (as [`citations::markers`] reads them) at the very start of `text`.
fn markers_at(text: &str) -> usize {
    let mut length = 0;
    for (range, _) in citations::markers(text) {
        if range.start != length {
            break;
        }
        length = range.end;
    }
    length
}

/// `text` without its markers, whose ids would otherwise count as terms.
fn strip_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut kept_from = 0;
    for (range, _) in citations::markers(text) {
        out.push_str(&text[kept_from..range.start]);
        kept_from = range.end;
    }
    out.push_str(&text[kept_from..]);
    out
}

/// The sentences of `text`, each with its trailing whitespace, covering all of it. A full stop
/// between digits (`20.2`) does not end a sentence.
fn sentences(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let after = i + c.len_utf8();
        // Markers right after the full stop belong to the sentence they end.
        let markers = match c {
            '.' | '!' | '?' => markers_at(&text[after..]),
            _ => 0,
        };
        let next = text[after + markers..].chars().next();
        let ends = match c {
            '\n' => true,
            '.' | '!' | '?' => next.is_none_or(char::is_whitespace),
            _ => false,
        };
        if ends {
            while chars.peek().is_some_and(|&(j, _)| j < after + markers) {
                chars.next();
            }
            let mut end = after + markers;
            while let Some(&(j, n)) = chars.peek() {
                if !n.is_whitespace() {
                    break;
                }
                end = j + n.len_utf8();
                chars.next();
            }
            parts.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        parts.push(&text[start..]);
    }
    parts
}

#[derive(Debug, Default)]
struct Terms {
    numbers: Vec<String>,
    words: Vec<String>,
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

impl Terms {
    fn support_in(&self, passage: &Terms) -> Support {
        Support {
            numbers: self
                .numbers
                .iter()
                .filter(|n| passage.numbers.contains(n))
                .count(),
            words: self
                .words
                .iter()
                .filter(|w| passage.words.contains(w))
                .count(),
        }
    }
}

fn terms(text: &str) -> Terms {
    let mut found = Terms::default();
    for raw in text.split(|c: char| !(c.is_alphanumeric() || c == '.' || c == ',')) {
        let token = raw.trim_matches(|c: char| c == '.' || c == ',');
        if token.is_empty() {
            continue;
        }
        if token.chars().any(|c| c.is_ascii_digit()) {
            let number = read_number(token);
            if !found.numbers.contains(&number) {
                found.numbers.push(number);
            }
            continue;
        }
        for word in token.split([',', '.']) {
            let word = singular(&word.to_lowercase());
            if word.chars().count() >= 4
                && !STOPWORDS.contains(&word.as_str())
                && !found.words.contains(&word)
            {
                found.words.push(word);
            }
        }
    }
    found
}

/// A crude English plural folded to its singular (`zebras` → `zebra`), enough for overlap.
fn singular(word: &str) -> String {
    match word.strip_suffix('s') {
        Some(stem) if stem.chars().count() >= 4 && !stem.ends_with('s') => stem.to_string(),
        _ => word.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
