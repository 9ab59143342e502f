//! Text about the answer instead of the answer: sentences on footnotes, passages, "the
//! documentation provided" or the tools, which small models add around a correct answer.
//! A sentence that is only that goes; an opening clause of that kind ("According to the
//! documentation, …") is cut and the rest kept. A sentence with a figure or a citation marker
//! is never dropped whole: it may be the answer. Pure.

/// Phrases that make a sentence talk about the answer's sources instead of the question.
const META_PHRASES: &[&str] = &[
    "footnote",
    "the documentation provided",
    "the provided documentation",
    "the documentation you provided",
    "in the documentation",
    "the passages",
    "the passage ",
    "typical questions",
    "the tool result",
    "the tools",
    "tool call",
    "the information provided",
    "the provided information",
    "the context provided",
    "the provided context",
    "as an ai",
];

/// Opening clauses cut from a sentence that goes on to say something.
const META_OPENINGS: &[&str] = &[
    "according to the documentation,",
    "according to the provided documentation,",
    "according to the documentation provided,",
    "according to the passages,",
    "according to the passage,",
    "based on the documentation,",
    "based on the provided documentation,",
    "based on the documentation provided,",
    "based on the passages,",
    "based on the provided passages,",
    "based on the information provided,",
    "based on the provided information,",
    "based on the tool results,",
    "according to the tool results,",
    "from the documentation,",
];

/// `answer` without meta sentences and meta openings. An answer that would be left empty is
/// returned as it was.
pub fn strip(answer: &str) -> String {
    if !may_hold_padding(answer) {
        // Every sentence stays as it is: only the blank lines are tidied.
        return tidied_or(answer, answer);
    }
    strip_by_sentence(answer)
}

/// [`strip`] read sentence by sentence: each line split, each sentence searched.
fn strip_by_sentence(answer: &str) -> String {
    // An elision mark copied from a prompt's layout ("[...] The rooms are …") says nothing.
    let answer: &str = &if answer.contains("[...]") || answer.contains("[…]") {
        std::borrow::Cow::Owned(answer.replace("[...]", "").replace("[…]", ""))
    } else {
        std::borrow::Cow::Borrowed(answer)
    };
    let kept: Vec<String> = answer
        .split('\n')
        .map(|line| {
            if line.trim_start().starts_with("[^") {
                return line.to_string();
            }
            sentences(line)
                .into_iter()
                .filter(|sentence| !is_meta_only(sentence))
                .map(without_meta_opening)
                .collect::<String>()
        })
        .collect();
    tidied_or(&kept.join("\n"), answer)
}

/// `text` with its blank lines collapsed, or `answer` when nothing would be left.
fn tidied_or(text: &str, answer: &str) -> String {
    let tidy = collapse_blank_lines(text.trim());
    if tidy.trim().is_empty() {
        answer.to_string()
    } else {
        tidy
    }
}

/// Whether `answer` holds an elision mark, a meta phrase or a meta opening anywhere; when it
/// holds none, no sentence of it does (lowercasing maps each character on its own, and the
/// phrases are ASCII), and [`strip`] has nothing to cut. Most answers hold none: one pass
/// over the answer instead of each sentence lowercased and searched for each phrase.
fn may_hold_padding(answer: &str) -> bool {
    // The phrases are lowercase: matched without ASCII case, an ASCII answer needs no lowered
    // copy. Other text is lowered first, since lowering maps some letters outside ASCII to
    // ASCII ones (the Kelvin sign to `k`).
    static PADDING: std::sync::LazyLock<aho_corasick::AhoCorasick> =
        std::sync::LazyLock::new(|| {
            let phrases = META_PHRASES.iter().chain(META_OPENINGS);
            aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(phrases.chain(&["[...]", "[…]"]))
                .expect("a short list of phrases")
        });
    if answer.is_ascii() {
        PADDING.is_match(answer)
    } else {
        PADDING.is_match(&answer.to_lowercase())
    }
}

/// The sentences of a line, each with the spaces after it.
fn sentences(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let ends =
            matches!(c, '.' | '!' | '?') && chars.peek().is_none_or(|&(_, next)| next == ' ');
        if ends {
            let mut end = at + c.len_utf8();
            while line[end..].starts_with(' ') {
                end += 1;
            }
            parts.push(&line[start..end]);
            start = end;
        }
    }
    if start < line.len() {
        parts.push(&line[start..]);
    }
    parts
}

fn is_meta_only(sentence: &str) -> bool {
    let holds_answer = sentence.chars().any(|c| c.is_ascii_digit()) || sentence.contains("[^");
    !holds_answer && {
        let lower = sentence.to_lowercase();
        META_PHRASES.iter().any(|phrase| lower.contains(phrase))
    }
}

fn without_meta_opening(sentence: &str) -> String {
    let lead = sentence.len() - sentence.trim_start().len();
    let body = &sentence[lead..];
    let lower = body.to_lowercase();
    for opening in META_OPENINGS {
        if lower.starts_with(opening) && body.is_char_boundary(opening.len()) {
            let rest = body[opening.len()..].trim_start();
            let mut chars = rest.chars();
            return match chars.next() {
                Some(first) => format!("{}{}", first.to_uppercase(), chars.as_str()),
                None => sentence.to_string(),
            };
        }
    }
    sentence.to_string()
}

fn collapse_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.split('\n') {
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line.trim_end());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn answer() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("Based on the documentation, "),
            Just("According to the PASSAGES, "),
            Just("The tools"),
            Just(" show it."),
            Just("Room hq-101 has 6 people."),
            Just(" [^a]"),
            Just("[...]"),
            Just("[…]"),
            Just("\n"),
            Just("\n\n\n"),
            Just("  "),
            Just("foot"),
            Just("note"),
            Just("KELVIN \u{212A}"),
            Just("ΣΑΣ."),
            Just("? "),
        ];
        prop_oneof![
            proptest::collection::vec(piece, 0..10).prop_map(|pieces| pieces.concat()),
            ".{0,40}",
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(512)))]

        #[test]
        fn answers_are_stripped_as_sentence_by_sentence(answer in answer()) {
            prop_assert_eq!(strip(&answer), strip_by_sentence(&answer));
        }

        #[test]
        fn padding_is_found_as_in_the_lowered_answer(answer in answer()) {
            let lowered = answer.to_lowercase();
            let in_lowered = META_PHRASES
                .iter()
                .chain(META_OPENINGS)
                .chain(&["[...]", "[…]"])
                .any(|phrase| lowered.contains(phrase));
            prop_assert_eq!(may_hold_padding(&answer), in_lowered);
        }
    }

    #[test]
    fn the_padding_phrases_are_lowercase() {
        for phrase in META_PHRASES.iter().chain(META_OPENINGS) {
            assert_eq!(*phrase, phrase.to_lowercase(), "{phrase}");
        }
    }

    #[test]
    fn meta_sentences_go_and_the_answer_stays() {
        let table = [
            (
                "[...] The rooms on floor 3 are Server Room (hq-301) and Storage (hq-302).",
                "The rooms on floor 3 are Server Room (hq-301) and Storage (hq-302).",
            ),
            (
                "Poor is 1000 to 1400 ppm [^a]. The footnote above points to the source.",
                "Poor is 1000 to 1400 ppm [^a].",
            ),
            (
                "According to the documentation, poor is 1000 to 1400 ppm [^a].",
                "Poor is 1000 to 1400 ppm [^a].",
            ),
            (
                "Counters reset at 03:00 [^b]. This is one of the typical questions provided in the documentation.",
                "Counters reset at 03:00 [^b].",
            ),
            (
                "Based on the tool results, room hq-101 has 6 people.",
                "Room hq-101 has 6 people.",
            ),
            // Nothing meta: unchanged.
            (
                "Room hq-101 has 6 people right now.",
                "Room hq-101 has 6 people right now.",
            ),
            // A figure keeps a sentence even when it names the documentation.
            (
                "The documentation provided says 420 ppm outdoors [^c].",
                "The documentation provided says 420 ppm outdoors [^c].",
            ),
        ];
        for (answer, want) in table {
            assert_eq!(strip(answer), want, "{answer}");
        }
    }

    #[test]
    fn footnote_definitions_and_line_breaks_survive() {
        let answer =
            "Poor is 1000 to 1400 ppm [^a].\n\n- fair: 800 to 1000\n\n[^a]: sensor-co2.md › Bands";
        assert_eq!(strip(answer), answer);
    }

    #[test]
    fn an_answer_that_is_all_meta_is_left_alone() {
        let answer = "See the footnote.";
        assert_eq!(strip(answer), answer);
    }
}
