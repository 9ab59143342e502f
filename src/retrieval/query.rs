//! A user's question turned into keyword-search terms that no search syntax can misread.
//!
//! Only runs of letters and digits survive, lowercased, without common English stop words, at
//! most [`MAX_TERMS`]. They are then stemmed into index terms (`terms.rs`) and bound as
//! values, never written into a query, so quotes, `-`, `OR`, `NEAR(`, `*`, `:`, parentheses or
//! SQL in a question can neither raise an error nor change the meaning.

pub const MAX_TERMS: usize = 32;
const MAX_TERM_CHARS: usize = 64;

const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from",
    "how", "i", "in", "is", "it", "me", "my", "near", "not", "of", "on", "or", "the", "there",
    "this", "to", "was", "what", "when", "where", "which", "who", "why", "will", "with", "you",
];

pub fn keyword_terms(question: &str) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for word in question.split(|c: char| !c.is_alphanumeric()) {
        // Lowercasing can add marks that are not letters (`İ` → `i̇`): keep letters and digits.
        let term: String = word
            .chars()
            .take(MAX_TERM_CHARS)
            .flat_map(char::to_lowercase)
            .filter(|c| c.is_alphanumeric())
            .collect();
        if term.is_empty() || STOP_WORDS.contains(&term.as_str()) || terms.contains(&term) {
            continue;
        }
        terms.push(term);
        if terms.len() == MAX_TERMS {
            break;
        }
    }
    terms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_syntax_becomes_plain_terms() {
        assert_eq!(
            keyword_terms(r#"NEAR("co2" sensor*) OR -room:214 '; DROP TABLE chunks; --"#),
            ["co2", "sensor", "room", "214", "drop", "table", "chunks"]
        );
    }

    #[test]
    fn stop_words_only_give_no_terms() {
        assert!(keyword_terms("what is the and or not of").is_empty());
        assert!(keyword_terms(" \"'()*:- ").is_empty());
    }

    #[test]
    fn unicode_words_are_kept_and_long_input_is_bounded() {
        assert_eq!(
            keyword_terms("Temperatur über 22°C"),
            ["temperatur", "über", "22", "c"]
        );
        let many: String = (0..100).map(|i| format!("w{i} ")).collect();
        assert_eq!(keyword_terms(&many).len(), MAX_TERMS);
    }
}
