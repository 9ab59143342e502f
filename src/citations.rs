//! Citations in an answer: `[^<chunk-id>]` markers checked against the chunks actually returned
//! while producing that answer. Pure: nothing here looks anything up in a store, so an invented
//! marker can never be used to probe for chunks the caller may not see.
//!
//! Known markers become [`Citation`]s (first appearance first, one per chunk); unknown ones are
//! reported as hallucinated and removed from the displayed answer together with the space before
//! them, so that `400 ppm [^bad].` reads `400 ppm.`. Text inside code spans and fenced code
//! blocks is never read as a marker and never changed.

use serde::Serialize;
use std::collections::HashMap;
use std::ops::Range;

/// `answer` followed by its citations as Markdown footnote definitions
/// (`[^id]: source › section`), the form chat clients render under a message.
pub fn with_footnotes(answer: &str, citations: &[Citation]) -> String {
    let mut text = answer.to_string();
    if !citations.is_empty() {
        text.push('\n');
    }
    for citation in citations {
        text.push_str(&format!(
            "\n[^{}]: {} › {}",
            citation.chunk_id, citation.source, citation.section
        ));
    }
    text
}

/// Longest id read as a marker; anything longer is ordinary text.
const MAX_ID_CHARS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Citation {
    pub marker: String,
    pub chunk_id: String,
    pub source: String,
    pub section: String,
    /// Linked to its sentence by the library (the model wrote no marker), not by the model.
    #[serde(default)]
    pub attributed: bool,
    /// The start of the cited passage (at most [`MAX_EXCERPT_BYTES`] bytes, cut at a
    /// character), as the
    /// caller's search returned it: what a reader opens to check the answer.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub excerpt: String,
}

/// The longest excerpt a citation carries, in bytes.
pub const MAX_EXCERPT_BYTES: usize = 600;

/// Where a returned chunk came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkOrigin {
    pub source: String,
    pub section: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckedAnswer {
    /// The answer with hallucinated markers removed.
    pub answer: String,
    pub citations: Vec<Citation>,
    /// Ids of markers that matched no returned chunk, once each, in order.
    pub hallucinated: Vec<String>,
}

/// Checks every marker of `answer` against `returned` (chunk id → origin).
pub fn check(answer: &str, returned: &HashMap<String, ChunkOrigin>) -> CheckedAnswer {
    let mut citations: Vec<Citation> = Vec::new();
    let mut hallucinated: Vec<String> = Vec::new();
    let mut cleaned = String::with_capacity(answer.len());
    let mut copied_to = 0;
    for (range, id) in markers(answer) {
        match returned.get(id) {
            Some(origin) => {
                if !citations.iter().any(|c| c.chunk_id == id) {
                    citations.push(Citation {
                        marker: answer[range].to_string(),
                        chunk_id: id.to_string(),
                        source: origin.source.clone(),
                        section: origin.section.clone(),
                        attributed: false,
                        excerpt: String::new(),
                    });
                }
            }
            None => {
                if !hallucinated.iter().any(|h| h == id) {
                    hallucinated.push(id.to_string());
                }
                cleaned.push_str(&answer[copied_to..range.start]);
                let next = answer[range.end..].chars().next();
                if next.is_none_or(|c| c.is_whitespace() || is_closing_punctuation(c)) {
                    // Drop the blank before the marker too: "ppm [^x]." → "ppm."
                    let trimmed = cleaned.trim_end_matches([' ', '\t']).len();
                    cleaned.truncate(trimmed);
                }
                copied_to = range.end;
            }
        }
    }
    cleaned.push_str(&answer[copied_to..]);
    CheckedAnswer {
        answer: cleaned,
        citations,
        hallucinated,
    }
}

/// Filters streamed text so that no invented marker is ever shown, not even in part: text
/// from a `[^` on is held back until the marker closes, then passed on when `known` accepts its
/// id and dropped when not. What turns out not to be a marker is passed on as text. Markers in
/// code are not told apart from others here (the final answer keeps them; the stream drops an
/// unknown one).
#[derive(Debug, Default)]
pub struct StreamFilter {
    held: String,
}

impl StreamFilter {
    /// Takes the next delta; returns the text that may be shown now.
    pub fn push(&mut self, delta: &str, known: impl Fn(&str) -> bool) -> String {
        self.held.push_str(delta);
        let text = std::mem::take(&mut self.held);
        let mut shown = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(at) = rest.find('[') {
            shown.push_str(&rest[..at]);
            let candidate = &rest[at..];
            match read_marker(candidate) {
                Marker::Complete(len, id) => {
                    if known(id) {
                        shown.push_str(&candidate[..len]);
                    }
                    rest = &candidate[len..];
                }
                Marker::NotOne => {
                    shown.push('[');
                    rest = &candidate[1..];
                }
                Marker::Unfinished => {
                    self.held.push_str(candidate);
                    return shown;
                }
            }
        }
        shown.push_str(rest);
        shown
    }

    /// The end of the text: whatever is held was not a marker.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.held)
    }
}

enum Marker<'a> {
    /// A whole marker: its length in bytes and its id.
    Complete(usize, &'a str),
    NotOne,
    /// Could still become a marker with more text.
    Unfinished,
}

/// Reads `text`, which starts with `[`, as a marker (the same rule as [`markers`]).
fn read_marker(text: &str) -> Marker<'_> {
    let bytes = text.as_bytes();
    match bytes.get(1) {
        None => return Marker::Unfinished,
        Some(b'^') => {}
        Some(_) => return Marker::NotOne,
    }
    let id_len = bytes[2..]
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'-' || **b == b'_')
        .count();
    if id_len > MAX_ID_CHARS {
        return Marker::NotOne;
    }
    match bytes.get(2 + id_len) {
        None => Marker::Unfinished,
        Some(b']') if id_len > 0 => Marker::Complete(3 + id_len, &text[2..2 + id_len]),
        Some(_) => Marker::NotOne,
    }
}

fn is_closing_punctuation(c: char) -> bool {
    matches!(c, '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']')
}

/// Every marker outside code: its byte range and id.
pub fn markers(text: &str) -> Vec<(Range<usize>, &str)> {
    let mut found = Vec::new();
    let mut offset = 0;
    let mut fence: Option<(u8, usize)> = None;
    for line in text.split_inclusive('\n') {
        let line_start = offset;
        offset += line.len();
        if let Some(run) = fence_run(line) {
            match fence {
                None => fence = Some(run),
                Some((marker, len))
                    if run.0 == marker && run.1 >= len && line.trim()[run.1..].is_empty() =>
                {
                    fence = None
                }
                Some(_) => {}
            }
            continue;
        }
        if fence.is_none() {
            scan_line(line, line_start, &mut found);
        }
    }
    found
}

/// The length of the markers [`markers`] finds one after another from the very start of
/// `text` (0 when it does not start with one). Reads only those markers: the sentence splitter
/// asks this after every full stop, and reading all of the remaining text each time made that
/// quadratic in a passage's length.
pub fn leading_markers(text: &str) -> usize {
    // A marker never spans lines, and one on the next line does not start where this line's
    // last marker ends (the line break is between them).
    let line = text.split_inclusive('\n').next().unwrap_or_default();
    let mut length = 0;
    while line[length..].starts_with('[') {
        match read_marker(&line[length..]) {
            Marker::Complete(len, _) => length += len,
            Marker::NotOne | Marker::Unfinished => break,
        }
    }
    length
}

/// A fence opener or closer: up to three spaces, then three or more backticks or tildes.
fn fence_run(line: &str) -> Option<(u8, usize)> {
    let trimmed = line.trim_start_matches(' ');
    if line.len() - trimmed.len() > 3 {
        return None;
    }
    let marker = *trimmed.as_bytes().first()?;
    if marker != b'`' && marker != b'~' {
        return None;
    }
    let run = trimmed.bytes().take_while(|b| *b == marker).count();
    (run >= 3).then_some((marker, run))
}

/// Markers in one line, skipping inline code spans (a run of backticks up to the next run of
/// the same length).
fn scan_line<'a>(line: &'a str, line_start: usize, found: &mut Vec<(Range<usize>, &'a str)>) {
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            let closing = find_backtick_run(&bytes[i + run..], run);
            i += run + closing.map_or(0, |at| at + run);
            continue;
        }
        if bytes[i] == b'[' {
            // The line is whole: a marker still unfinished at its end is none.
            if let Marker::Complete(len, id) = read_marker(&line[i..]) {
                found.push((line_start + i..line_start + i + len, id));
                i += len;
                continue;
            }
        }
        i += 1;
    }
}

/// Offset of the next run of exactly `len` backticks.
fn find_backtick_run(bytes: &[u8], len: usize) -> Option<usize> {
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            if run == len {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn returned(ids: &[&str]) -> HashMap<String, ChunkOrigin> {
        ids.iter()
            .map(|id| {
                (
                    id.to_string(),
                    ChunkOrigin {
                        source: format!("user/{id}.md"),
                        section: "Sensors > CO2".into(),
                    },
                )
            })
            .collect()
    }

    /// Streams `deltas` through a filter that knows `ids`; every piece shown, in order.
    fn stream(deltas: &[&str], ids: &[&str]) -> Vec<String> {
        let mut filter = StreamFilter::default();
        let mut shown: Vec<String> = deltas
            .iter()
            .map(|d| filter.push(d, |id| ids.contains(&id)))
            .collect();
        shown.push(filter.finish());
        shown
    }

    #[test]
    fn an_invented_marker_split_over_deltas_is_never_shown() {
        let shown = stream(
            &["CO2 is fine ", "[^zz-inv", "ented]", ". Done [^ok1]"],
            &["ok1"],
        );
        assert_eq!(shown, vec!["CO2 is fine ", "", "", ". Done [^ok1]", ""]);
        assert!(shown
            .iter()
            .all(|s| !s.contains("zz") && !s.contains("[^z")));
    }

    #[test]
    fn text_that_is_not_a_marker_is_released() {
        assert_eq!(stream(&["a [", "b] c"], &[]).concat(), "a [b] c");
        assert_eq!(stream(&["x [^", "ab c"], &[]).concat(), "x [^ab c");
        assert_eq!(stream(&["tail [^ab"], &[]), vec!["tail ", "[^ab"]);
        let long = format!("[^{}]", "a".repeat(MAX_ID_CHARS + 1));
        assert_eq!(stream(&[&long], &[]).concat(), long);
        assert_eq!(
            stream(&["[^]", "[", "^", "k", "]"], &["k"]).concat(),
            "[^][^k]"
        );
    }

    #[test]
    fn valid_markers_are_kept_and_resolved() {
        let answer = "CO2 is measured in ppm [^a1b2c3d4e5f6]. Rooms have sensors[^0000aaaa1111] [^a1b2c3d4e5f6].";
        let checked = check(answer, &returned(&["a1b2c3d4e5f6", "0000aaaa1111"]));
        assert_eq!(checked.answer, answer);
        assert!(checked.hallucinated.is_empty());
        assert_eq!(checked.citations.len(), 2);
        assert_eq!(checked.citations[0].marker, "[^a1b2c3d4e5f6]");
        assert_eq!(checked.citations[0].source, "user/a1b2c3d4e5f6.md");
    }

    #[test]
    fn invented_markers_are_listed_and_stripped_cleanly() {
        let cases = [
            ("400 ppm [^fake].", "400 ppm."),
            ("400 ppm[^fake], then", "400 ppm, then"),
            ("A [^fake] b", "A b"),
            ("A[^fake]b", "Ab"),
            ("End [^fake]", "End"),
            ("(see [^fake])", "(see)"),
            ("x [^fake] [^fake2].", "x."),
        ];
        for (answer, expected) in cases {
            let checked = check(answer, &returned(&[]));
            assert_eq!(checked.answer, expected, "{answer}");
            assert!(!checked.hallucinated.is_empty());
        }
        let checked = check("a [^x] b [^x] c [^y]", &returned(&[]));
        assert_eq!(checked.hallucinated, ["x", "y"]);
    }

    #[test]
    fn code_that_looks_like_markers_is_left_alone() {
        let answer = "Use `[^abc]` in a regex.\n\n```\nlet re = \"[^abc]\";\n```\nDone [^abc].";
        let checked = check(answer, &returned(&[]));
        assert_eq!(
            checked.answer,
            "Use `[^abc]` in a regex.\n\n```\nlet re = \"[^abc]\";\n```\nDone."
        );
        assert_eq!(checked.hallucinated, ["abc"]);
    }

    #[test]
    fn things_that_are_not_markers() {
        for text in ["[^]", "[^ a]", "[^a b]", "[ ^a]", "x^[a]", "[^ünïcode]"] {
            assert!(markers(text).is_empty(), "{text}");
        }
        assert!(markers(&format!("[^{}]", "a".repeat(65))).is_empty());
    }

    fn word() -> impl Strategy<Value = String> {
        "[a-zA-Z0-9]{1,8}"
    }

    fn piece() -> impl Strategy<Value = (String, Option<bool>)> {
        prop_oneof![
            word().prop_map(|w| (w, None)),
            Just((".".to_string(), None)),
            Just((",".to_string(), None)),
            Just(("`[^zz]`".to_string(), None)),
            "[a-f0-9]{12}".prop_map(|id| (format!("[^{id}]"), Some(true))),
            "[g-z]{4,12}".prop_map(|id| (format!("[^{id}]"), Some(false))),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(256)))]

        /// `leading_markers` reads what chaining `markers` from the start read.
        #[test]
        fn leading_markers_agree_with_markers(text in "([\\[\\]^`~ \n.a-z0-9_-]|\\[\\^[a-z0-9]{1,4}\\]){0,24}") {
            let mut chained = 0;
            for (range, _) in markers(&text) {
                if range.start != chained {
                    break;
                }
                chained = range.end;
            }
            prop_assert_eq!(leading_markers(&text), chained, "{:?}", text);
        }

        #[test]
        fn markers_are_kept_or_stripped_and_words_survive(pieces in prop::collection::vec(piece(), 0..30)) {
            let answer = pieces.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>().join(" ");
            let valid: Vec<String> = pieces.iter().filter(|(_, v)| *v == Some(true)).map(|(p, _)| p[2..p.len() - 1].to_string()).collect();
            let refs: Vec<&str> = valid.iter().map(String::as_str).collect();
            let checked = check(&answer, &returned(&refs));
            // every valid marker is still there, every invented one is gone
            for (p, v) in &pieces {
                match v {
                    Some(true) => prop_assert!(checked.answer.contains(p.as_str())),
                    Some(false) => prop_assert!(!checked.answer.replace("`[^zz]`", "").contains(p.as_str())),
                    None => {}
                }
            }
            // the words, punctuation and code spans keep their order
            let tokens = |text: &str| -> Vec<String> {
                let mut out = Vec::new();
                for token in text.split_whitespace() {
                    let core = token.trim_end_matches(['.', ',']);
                    if !core.is_empty() {
                        out.push(core.to_string());
                    }
                    out.extend(token[core.len()..].chars().map(|c| c.to_string()));
                }
                out
            };
            let mut without_valid = checked.answer.clone();
            for id in &valid {
                without_valid = without_valid.replace(&format!("[^{id}]"), " ");
            }
            let expected: Vec<String> = pieces.iter().filter(|(_, v)| v.is_none()).map(|(p, _)| p.clone()).collect();
            prop_assert_eq!(tokens(&without_valid), expected);
            prop_assert_eq!(checked.citations.len(), { let mut v = valid.clone(); v.sort(); v.dedup(); v.len() });
        }

        #[test]
        fn an_answer_without_invented_markers_is_unchanged(text in "[a-zA-Z .,`\\n]{0,200}") {
            prop_assert_eq!(check(&text, &returned(&[])).answer, text);
        }
    }
}
