//! Words of a text as the rules read them (routing, places, the planner, the windows, the
//! scope and grounding checks). Pure.

/// Lowercase words; hyphens stay inside ids (`hq-101`), other punctuation separates.
pub fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .map(|w| w.trim_matches('-'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether `phrase` is in `text` (words joined by single spaces) as whole words.
pub fn contains_phrase(text: &str, phrase: &str) -> bool {
    // `contains` first: most phrases are not there, and it is far cheaper than setting up
    // the searcher `match_indices` needs.
    text.contains(phrase)
        && text.match_indices(phrase).any(|(at, _)| {
            let starts_a_word = at == 0 || text.as_bytes()[at - 1] == b' ';
            let end = at + phrase.len();
            let ends_a_word = end == text.len() || text.as_bytes()[end] == b' ';
            starts_a_word && ends_a_word
        })
}
