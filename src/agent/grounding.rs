//! Citations attributed in code. Pure.
//!
//! Small models often answer correctly from the passages and cite none of them. When an answer
//! carries no valid marker, each of its sentences is linked to the passage that supports it
//! best, by the overlap of key terms (numbers and content words), and the passage's marker is
//! put after the sentence. Such citations are flagged `attributed`, so a reader can tell them
//! from the model's own. A sentence no passage supports gets no marker.

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

/// The sentences of `text`, each with its trailing whitespace, covering all of it. A full stop
/// between digits (`20.2`) does not end a sentence.
fn sentences(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let next = chars.peek().map(|&(_, n)| n);
        let ends = match c {
            '\n' => true,
            '.' | '!' | '?' => next.is_none_or(char::is_whitespace),
            _ => false,
        };
        if ends {
            let mut end = i + c.len_utf8();
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
            let number = token.replace(',', "");
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
                "co2#bands".into(),
                "Below 800 ppm the air is good; from 1000 ppm indoor air counts as poor.".into(),
            ),
            (
                "roles#admin".into(),
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
            "Indoor air is poor from 1000 ppm.[^co2#bands] Business admins manage every \
             building.[^roles#admin]"
        );
    }

    #[test]
    fn unsupported_sentences_stay_unmarked() {
        let answer = "The sky is blue today. Poor air starts at 1000 ppm.";
        assert_eq!(
            attribute(answer, &passages()).unwrap(),
            "The sky is blue today. Poor air starts at 1000 ppm.[^co2#bands]"
        );
        assert_eq!(attribute("Bananas are yellow.", &passages()), None);
        assert_eq!(attribute("Anything at all.", &[]), None);
    }

    #[test]
    fn decimals_do_not_split_sentences() {
        assert_eq!(
            sentences("It reads 20.2 °C. Fine!\nNext"),
            vec!["It reads 20.2 °C. ", "Fine!\n", "Next"]
        );
    }
}
