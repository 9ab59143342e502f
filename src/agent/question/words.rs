//! Words of a text as the rules read them (routing, places, the planner, the windows, the
//! scope and grounding checks). Pure.

/// Lowercase words; hyphens stay inside ids (`hq-101`), other punctuation separates.
pub fn words(text: &str) -> Vec<String> {
    pieces(&text.to_lowercase()).map(str::to_string).collect()
}

/// The words of an already lowercased text.
fn pieces(lower: &str) -> impl Iterator<Item = &str> {
    lower
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .map(|w| w.trim_matches('-'))
        .filter(|w| !w.is_empty())
}

/// [`words`] joined by single spaces (the text [`contains_phrase`] and [`PhraseSet`] read),
/// written into one string instead of one per word.
pub fn joined_words(text: &str) -> String {
    if text.is_ascii() {
        return joined_ascii_words(text);
    }
    let lower = text.to_lowercase();
    let mut joined = String::with_capacity(lower.len());
    for word in pieces(&lower) {
        if !joined.is_empty() {
            joined.push(' ');
        }
        joined.push_str(word);
    }
    joined
}

/// [`joined_words`] of ASCII text (most questions), split and lowercased byte by byte: for
/// ASCII, a letter or digit is `is_ascii_alphanumeric` and lowercasing maps bytes one to one.
fn joined_ascii_words(text: &str) -> String {
    let mut joined = Vec::with_capacity(text.len());
    let separates = |byte: &u8| !(byte.is_ascii_alphanumeric() || *byte == b'-');
    for piece in text.as_bytes().split(separates) {
        let start = piece.iter().position(|b| *b != b'-').unwrap_or(piece.len());
        let end = piece
            .iter()
            .rposition(|b| *b != b'-')
            .map_or(start, |at| at + 1);
        if start == end {
            continue;
        }
        if !joined.is_empty() {
            joined.push(b' ');
        }
        joined.extend(piece[start..end].iter().map(u8::to_ascii_lowercase));
    }
    String::from_utf8(joined).expect("ASCII in, ASCII out")
}

/// Whether `phrase` is in `text` (words joined by single spaces) as whole words.
pub fn contains_phrase(text: &str, phrase: &str) -> bool {
    // `contains` first: most phrases are not there, and it is far cheaper than setting up
    // the searcher `match_indices` needs.
    text.contains(phrase)
        && text
            .match_indices(phrase)
            .any(|(at, _)| is_whole_words(text, at, at + phrase.len()))
}

/// Whether `text[start..end]` begins and ends at word boundaries of `text` (words joined by
/// single spaces).
fn is_whole_words(text: &str, start: usize, end: usize) -> bool {
    let bytes = text.as_bytes();
    let starts_a_word = start == 0 || bytes[start - 1] == b' ';
    let ends_a_word = end == bytes.len() || bytes[end] == b' ';
    starts_a_word && ends_a_word
}

/// A fixed list of phrases looked for in one pass over a text (words joined by single spaces):
/// the same answer as [`contains_phrase`] for each phrase in turn, without one search per
/// phrase (routing looked for 36 phrases one by one in every question).
pub struct PhraseSet(aho_corasick::AhoCorasick);

impl PhraseSet {
    pub fn new(phrases: &[&str]) -> PhraseSet {
        PhraseSet(aho_corasick::AhoCorasick::new(phrases).expect("a short list of phrases"))
    }

    /// Whether any of the phrases is in `text` as whole words.
    pub fn any_in(&self, text: &str) -> bool {
        self.0
            .find_overlapping_iter(text)
            .any(|found| is_whole_words(text, found.start(), found.end()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const PHRASES: &[&str] = &[
        "right now",
        "now",
        "in the last",
        "last",
        "höchste",
        "a b",
        "b",
    ];

    /// Texts made of the phrases' own words, so that whole-word and part-word matches occur.
    fn text() -> impl Strategy<Value = String> {
        let word = prop_oneof![
            Just("right"),
            Just("now"),
            Just("nowhere"),
            Just("in"),
            Just("the"),
            Just("last"),
            Just("lastly"),
            Just("höchste"),
            Just("a"),
            Just("b"),
            Just("ab"),
        ];
        proptest::collection::vec(word, 0..8).prop_map(|words| words.join(" "))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(512)))]

        #[test]
        fn joined_words_are_the_words_joined(text in prop_oneof![".{0,60}", "[ -~]{0,60}", "[a-zA-Z0-9 -]{0,60}"]) {
            prop_assert_eq!(joined_words(&text), words(&text).join(" "));
        }

        #[test]
        fn a_phrase_set_finds_what_the_phrases_one_by_one_find(text in text(), take in 1..=PHRASES.len()) {
            let phrases = &PHRASES[PHRASES.len() - take..];
            let one_by_one = phrases.iter().any(|p| contains_phrase(&text, p));
            prop_assert_eq!(PhraseSet::new(phrases).any_in(&text), one_by_one);
        }
    }
}
