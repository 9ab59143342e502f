//! The text primitives the question rules and the answer checks share: sentences, plurals,
//! numbers as written, citation markers taken out, stopwords. Pure.

use crate::citations;

/// The sentences of `text`, each with its trailing whitespace, covering all of it. A full stop
/// between digits (`20.2`) does not end a sentence.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let after = i + c.len_utf8();
        let markers = match c {
            '\n' => 0,
            '.' | '!' | '?' => {
                // Markers right after the full stop belong to the sentence they end.
                let markers = citations::leading_markers(&text[after..]);
                let next = text[after + markers..].chars().next();
                if !next.is_none_or(char::is_whitespace) {
                    continue;
                }
                markers
            }
            _ => continue,
        };
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
    if start < text.len() {
        parts.push(&text[start..]);
    }
    parts
}

/// A crude English plural folded to its singular (`zebras` → `zebra`), enough for overlap: the
/// stem must keep `min_stem` letters (`ppm` stays) and not end in `s` itself (`class`).
pub fn singular(word: &str, min_stem: usize) -> &str {
    match word.strip_suffix('s') {
        Some(stem) if stem.chars().count() >= min_stem && !stem.ends_with('s') => stem,
        _ => word,
    }
}

/// A number as written, in one form: commas before groups of three digits are thousands
/// separators (`1,000` → 1000), any other comma is a decimal comma (`20,2` → 20.2).
pub fn read_number(token: &str) -> String {
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

/// `text` without its markers, whose ids would otherwise count as terms.
pub fn strip_markers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut kept_from = 0;
    for (range, _) in citations::markers(text) {
        out.push_str(&text[kept_from..range.start]);
        kept_from = range.end;
    }
    out.push_str(&text[kept_from..]);
    out
}

/// The blocks of `text` between blank lines: `text.split("\n\n")`, found with a vectorised
/// byte search (`str::split` with a two-byte pattern runs the general substring searcher over
/// every byte).
pub fn paragraphs(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        let bytes = current.as_bytes();
        let mut from = 0;
        while let Some(at) = memchr::memchr(b'\n', &bytes[from..]) {
            let at = from + at;
            if bytes.get(at + 1) == Some(&b'\n') {
                rest = Some(&current[at + 2..]);
                return Some(&current[..at]);
            }
            from = at + 1;
        }
        rest = None;
        Some(current)
    })
}

/// `word` in lower case, copied only when it has capitals.
pub fn lowercase(word: &str) -> std::borrow::Cow<'_, str> {
    let changes = |c: char| {
        let mut lower = c.to_lowercase();
        lower.next() != Some(c) || lower.next().is_some()
    };
    let has_capitals = if word.is_ascii() {
        word.bytes().any(|b| b.is_ascii_uppercase())
    } else {
        // Not only `is_uppercase`: title-case letters (`ǅ`) have a lower case too.
        word.chars().any(changes)
    };
    if has_capitals {
        std::borrow::Cow::Owned(word.to_lowercase())
    } else {
        std::borrow::Cow::Borrowed(word)
    }
}

/// The hasher of the fixed word lists.
pub type WordHasher = std::hash::BuildHasherDefault<Fnv>;

/// FNV-1a, for the fixed word lists (units, stopwords, the language lexicon): their keys are a
/// few bytes long and chosen by us, so a hash resistant to chosen keys (the default) only costs
/// time.
pub struct Fnv(u64);

impl Default for Fnv {
    /// FNV-1a's offset basis.
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Words too common to say what a sentence is about (English, and a few German and French).
pub fn is_stopword(word: &str) -> bool {
    static SET: std::sync::LazyLock<std::collections::HashSet<&'static str, WordHasher>> =
        std::sync::LazyLock::new(|| STOPWORDS.iter().copied().collect());
    SET.contains(word)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    const PIECES: &[&str] = &[
        "\n",
        "\n\n",
        "\n\n\n",
        " ",
        "a",
        "Humidity",
        "ǅemal",
        "ΣΊΣΥΦΟΣ",
        "İ",
        "Straße",
        "é\n",
    ];

    /// The sentence splitter as first written (the next character read after every character),
    /// the reference the faster one must agree with.
    fn sentences_as_first_written(text: &str) -> Vec<&str> {
        let mut parts = Vec::new();
        let mut start = 0;
        let mut chars = text.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            let after = i + c.len_utf8();
            let markers = match c {
                '.' | '!' | '?' => citations::leading_markers(&text[after..]),
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

    const SENTENCE_PIECES: &[&str] = &[
        ".",
        "!",
        "?",
        " ",
        "\n",
        "20.2",
        "[^ab12cd34ef56]",
        "[^x]",
        "Rooms",
        "é",
        "\u{3000}",
        ".[^ab12cd34ef56] ",
        "```\n",
    ];

    proptest::proptest! {
        #[test]
        fn sentences_agree_with_the_first_splitter(
            pieces in proptest::collection::vec(proptest::sample::select(SENTENCE_PIECES), 0..25),
            free in "\\PC{0,20}",
        ) {
            let text = format!("{}{free}", pieces.concat());
            proptest::prop_assert_eq!(sentences(&text), sentences_as_first_written(&text));
        }

        #[test]
        fn paragraphs_are_the_blank_line_split(
            pieces in proptest::collection::vec(proptest::sample::select(PIECES), 0..20),
            free in "\\PC{0,20}",
        ) {
            let text = format!("{}{free}", pieces.concat());
            proptest::prop_assert_eq!(
                paragraphs(&text).collect::<Vec<_>>(),
                text.split("\n\n").collect::<Vec<_>>()
            );
        }

        #[test]
        fn lowercase_is_to_lowercase(
            free in "\\PC{0,12}",
            piece in proptest::sample::select(PIECES),
        ) {
            for word in [free.as_str(), piece] {
                proptest::prop_assert_eq!(lowercase(word).into_owned(), word.to_lowercase());
            }
        }
    }
}
