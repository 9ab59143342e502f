//! How a turn ended, decided from the model's final text and whether tools ran. Pure.
//!
//! The model is never asked to write the IDK sentence or the refusal: it answers with a short
//! code ([`NO_ANSWER_CODE`], [`OUT_OF_SCOPE_CODE`]) and the library writes the sentence. Small
//! models copy a sentence the prompt spells out into answers it does not belong to; a code is
//! not a sentence they are tempted to reuse, and the wording stays the library's.
//!
//! - [`NO_ANSWER_CODE`], or the IDK sentence itself (capable models sometimes write it) → `idk`.
//! - [`OUT_OF_SCOPE_CODE`] or an answer opening with the refusal, after no tool call →
//!   `declined`; the same after a tool call → `idk` (a model that looked data up and then
//!   refused has failed to answer, it has not declined an off-topic request).
//! - The loop running out of hops → `tool_loop_exhausted` (decided by the loop, not the text).
//! - Anything else → `answered` (greetings included).

use crate::agent::phrases;
use crate::contract::Decision;

/// The exact reply for an in-scope question the available information cannot answer.
pub const IDK_MARKER: &str = phrases::ENGLISH.idk;

/// How every scoped refusal begins.
pub const REFUSAL_PREFIX: &str = "I can only help with CrowdVision";

/// The refusal the library writes for an off-topic request.
pub const REFUSAL: &str = phrases::ENGLISH.refusal;

/// The refusal the library writes for a request to do something (book, change, switch): the
/// assistant only reads.
pub const READ_ONLY_REFUSAL: &str = phrases::ENGLISH.read_only_refusal;

/// What the model writes when the passages and tool results do not answer the question.
pub const NO_ANSWER_CODE: &str = "NO_ANSWER";

/// What the model writes when a request is not about CrowdVision.
pub const OUT_OF_SCOPE_CODE: &str = "OUT_OF_SCOPE";

/// Classifies a final answer. A refusal only counts when no tool ran: a model that looked data
/// up and then refused has not declined an off-topic request, it has failed to answer.
pub fn classify(answer: &str, tools_called: bool) -> Decision {
    let text = normalise(answer);
    let refused = text.contains(OUT_OF_SCOPE_CODE) || text.starts_with(REFUSAL_PREFIX);
    if text.contains(NO_ANSWER_CODE) || text.contains(IDK_MARKER) || (refused && tools_called) {
        Decision::Idk
    } else if refused {
        Decision::Declined
    } else {
        Decision::Answered
    }
}

/// The sentence the library writes for a decision, in place of whatever the model wrote
/// (a code, a refusal of its own wording): the text always says what the decision says, so a
/// refusal written after tools ran reads as "I don't know", as it is recorded.
pub fn library_text(decision: Decision) -> Option<&'static str> {
    match decision {
        Decision::Idk => Some(IDK_MARKER),
        Decision::Declined => Some(REFUSAL),
        Decision::Answered | Decision::ToolLoopExhausted | Decision::BudgetExhausted => None,
    }
}

/// Holds back the start of a streamed turn while it may still be a code, so that a client sees
/// the library's sentence and never the code. Text that turns out not to be one is passed on.
#[derive(Debug, Default)]
pub struct CodeGate {
    opening: String,
    state: GateState,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum GateState {
    #[default]
    Checking,
    Open,
    Swallowing,
}

impl CodeGate {
    /// The part of `delta` that may be shown now.
    pub fn push(&mut self, delta: &str) -> String {
        match self.state {
            GateState::Open => delta.to_string(),
            GateState::Swallowing => String::new(),
            GateState::Checking => {
                self.opening.push_str(delta);
                let start = self
                    .opening
                    .trim_start_matches(|c: char| c.is_whitespace() || "`*\"'".contains(c));
                let codes = [NO_ANSWER_CODE, OUT_OF_SCOPE_CODE];
                if codes.iter().any(|code| start.starts_with(code)) {
                    self.state = GateState::Swallowing;
                    String::new()
                } else if codes.iter().any(|code| code.starts_with(start)) {
                    String::new()
                } else {
                    self.state = GateState::Open;
                    std::mem::take(&mut self.opening)
                }
            }
        }
    }

    /// The turn ended: what was held back and is not a code; ready for the next turn.
    pub fn finish(&mut self) -> String {
        let rest = match self.state {
            GateState::Checking => std::mem::take(&mut self.opening),
            _ => String::new(),
        };
        *self = CodeGate::default();
        rest
    }
}

/// Whether an answer tells the reader how to look the answer up instead of giving it: it
/// names one of the tools ("call `get_occupancy` with the building id …"), a function of its
/// own making (`get_sensor_reading`), writes a call out as JSON, or sends the reader to search.
/// Small models write such text when they should call the tool or read its result; no answer
/// needs any of it.
pub fn describes_tools<'a>(answer: &str, tool_names: impl IntoIterator<Item = &'a str>) -> bool {
    // A tool's name and a function of the model's making hold an underscore: most answers
    // hold none, and are not searched for either.
    let underscore = answer.contains('_');
    let names_a_tool = tool_names
        .into_iter()
        .any(|name| (underscore || !name.contains('_')) && answer.contains(name));
    if names_a_tool {
        return true;
    }
    let lower = answer.to_lowercase();
    (underscore && names_a_function(&lower))
        || lower.contains("\"arguments\"")
        || LOOK_IT_UP.iter().any(|phrase| lower.contains(phrase))
}

/// Whether an answer is a passage's heading copied out instead of an answer: it opens with the
/// marker of a passage it was given (`[^ca31ef8dfcd2]`, or the id bare in brackets) before
/// any word, or holds a passage's source line (`(user/sensor-co2.md › CO2 sensors)`). The
/// 0.5B model answered most documentation questions of the golden set with the first
/// passage's heading line.
pub fn copies_a_passage_heading(answer: &str, is_passage: impl Fn(&str) -> bool) -> bool {
    let text = answer.trim_start();
    let opens_with_marker = text
        .strip_prefix('[')
        .map(|rest| rest.strip_prefix('^').unwrap_or(rest))
        .and_then(|rest| rest.split_once(']'))
        .is_some_and(|(id, _)| is_passage(id));
    let holds_source_line = text.split('(').skip(1).any(|after| {
        after
            .split_once(')')
            .is_some_and(|(inside, _)| inside.contains(".md › "))
    });
    opens_with_marker || holds_source_line
}

/// `answer` without the passage heading it opens with (a marker, a source line, in either
/// order), when what is left is prose; `None` when nothing is, or when what is left is a
/// passage copied out from its heading on (`# CO2 sensors …`).
pub fn without_copied_heading(answer: &str) -> Option<String> {
    let mut rest = answer.trim_start();
    loop {
        let before = rest;
        if let Some((_, after)) = rest
            .strip_prefix('[')
            .and_then(|inside| inside.split_once(']'))
        {
            rest = after.trim_start();
        }
        if let Some((inside, after)) = rest.strip_prefix('(').and_then(|r| r.split_once(')')) {
            if inside.contains(".md › ") {
                rest = after.trim_start();
            }
        }
        if rest == before {
            break;
        }
    }
    let prose = !rest.is_empty() && !rest.starts_with('#') && rest.split_whitespace().count() >= 3;
    prose.then(|| rest.to_string())
}

/// How a small model sends the reader to look an answer up.
const LOOK_IT_UP: &[&str] = &[
    "you can search",
    "search the documentation",
    "search for \"",
    "use the function",
    "call the function",
];

/// Whether `text` holds a word like `get_sensor_reading`: a verb a tool starts with, an
/// underscore, more.
fn names_a_function(text: &str) -> bool {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|word| {
            ["get_", "list_", "search_", "fetch_", "query_"]
                .iter()
                .any(|verb| word.starts_with(verb) && word.len() > verb.len())
        })
}

/// Straight quotes and single spaces, without surrounding quotes or emphasis, so that
/// typographic variants of the marker are still recognised.
fn normalise(answer: &str) -> String {
    let mut spaced = String::with_capacity(answer.len());
    for word in answer.split_whitespace() {
        if !spaced.is_empty() {
            spaced.push(' ');
        }
        if word.contains(['\u{2018}', '\u{2019}']) {
            spaced.extend(word.chars().map(|c| match c {
                '\u{2018}' | '\u{2019}' => '\'',
                _ => c,
            }));
        } else {
            spaced.push_str(word);
        }
    }
    spaced
        .trim_matches(|c: char| c == '"' || c == '*' || c == '_' || c == '>' || c == ' ')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copied_passage_heading_is_told_from_an_answer() {
        let given = |id: &str| ["ca31ef8dfcd2", "86284428d0ed", "329d53d0214f"].contains(&id);
        for copied in [
            "[^ca31ef8dfcd2] (user/sensor-co2.md › CO2 sensors)",
            "[86284428d0ed]",
            "[329d53d0214f] Office work needs about 500 lux.",
            "See (user/faq.md › Frequently asked questions) for this.",
        ] {
            assert!(copies_a_passage_heading(copied, given), "{copied}");
        }
        for answer in [
            "Outdoor air has about 420 ppm.[^ca31ef8dfcd2]",
            "dB(A)",
            "[Link](https://example.org) explains it.",
            "[abcdefabcdef] is not a passage given.",
            "Between 40 and 60 %RH (relative humidity) is comfortable.",
        ] {
            assert!(!copies_a_passage_heading(answer, given), "{answer}");
        }
        assert_eq!(
            without_copied_heading("[329d53d0214f] Office work needs about 500 lux.").as_deref(),
            Some("Office work needs about 500 lux.")
        );
        assert_eq!(
            without_copied_heading("[^ca31ef8dfcd2] (user/sensor-co2.md › CO2 sensors)"),
            None
        );
        assert_eq!(
            without_copied_heading("[^ca31ef8dfcd2] (user/sensor-co2.md › CO2 sensors) # CO2 sensors CO2 sensors measure …"),
            None
        );
    }

    #[test]
    fn an_answer_naming_a_tool_describes_instead_of_answering() {
        let tools = ["get_occupancy", "search_docs"];
        assert!(describes_tools(
            "To find it, call `get_occupancy` with the building id.",
            tools
        ));
        assert!(!describes_tools("Room hq-101 has 6 people.", tools));
        for described in [
            "Dies kann durch die `get_sensor_reading` Funktion gemacht werden.",
            r#"Call it as {"name": "x", "arguments": {"room_id": "hq-101"}}."#,
            "To find the cost, you can search the documentation for \"CO2 sensor cost\".",
        ] {
            assert!(describes_tools(described, tools), "{described}");
        }
        for answered in [
            "The sensor sensor_type co2 reads 812 ppm.",
            "Open the windows above 1000 ppm.",
            "Room get-well-soon is free.",
        ] {
            assert!(!describes_tools(answered, tools), "{answered}");
        }
    }

    /// The rule as first written: every tool name searched for in every answer.
    fn describes_tools_as_written(answer: &str, tool_names: &[&str]) -> bool {
        let lower = answer.to_lowercase();
        tool_names.iter().any(|name| answer.contains(name))
            || names_a_function(&lower)
            || lower.contains("\"arguments\"")
            || LOOK_IT_UP.iter().any(|phrase| lower.contains(phrase))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(crate::fuzz_cases(256)))]

        #[test]
        fn skipping_answers_without_underscores_changes_no_verdict(
            pieces in proptest::collection::vec(proptest::prop_oneof![
                proptest::prelude::Just("get_occupancy".to_string()),
                proptest::prelude::Just("ask".to_string()),
                proptest::prelude::Just("_".to_string()),
                proptest::prelude::Just("\"arguments\"".to_string()),
                proptest::prelude::Just("You can Search".to_string()),
                "[a-zA-Z_ ]{0,12}",
                ".{0,12}",
            ], 0..8),
        ) {
            let answer = pieces.concat();
            let tools = ["get_occupancy", "search_docs", "ask"];
            proptest::prop_assert_eq!(
                describes_tools(&answer, tools),
                describes_tools_as_written(&answer, &tools)
            );
        }
    }

    #[test]
    fn the_idk_marker_decides_idk_in_any_typography() {
        assert_eq!(classify(IDK_MARKER, true), Decision::Idk);
        assert_eq!(
            classify(
                "I don’t know based on the available CrowdVision information.",
                true
            ),
            Decision::Idk
        );
        assert_eq!(
            classify(
                "**I don't know based on the available\nCrowdVision information.**",
                false
            ),
            Decision::Idk
        );
    }

    #[test]
    fn a_refusal_without_tools_is_declined() {
        let refusal = "I can only help with CrowdVision buildings, rooms, occupancy and sensors.";
        assert_eq!(classify(refusal, false), Decision::Declined);
        assert_eq!(
            classify(refusal, true),
            Decision::Idk,
            "after tools it is not a scope refusal, and not an answer"
        );
        assert_eq!(classify(&format!("> {refusal}"), false), Decision::Declined);
    }

    #[test]
    fn codes_decide_and_the_library_writes_the_sentence() {
        assert_eq!(classify("NO_ANSWER", true), Decision::Idk);
        assert_eq!(classify("`NO_ANSWER`", false), Decision::Idk);
        assert_eq!(classify("OUT_OF_SCOPE", false), Decision::Declined);
        assert_eq!(classify("OUT_OF_SCOPE", true), Decision::Idk);
        assert_eq!(
            library_text(classify(" NO_ANSWER\n", false)),
            Some(IDK_MARKER)
        );
        assert_eq!(
            library_text(classify("OUT_OF_SCOPE.", false)),
            Some(REFUSAL)
        );
        assert!(REFUSAL.starts_with(REFUSAL_PREFIX));
        assert!(READ_ONLY_REFUSAL.starts_with(REFUSAL_PREFIX));
        let refused_after_tools = classify(REFUSAL, true);
        assert_eq!(library_text(refused_after_tools), Some(IDK_MARKER));
        assert_eq!(
            library_text(classify("Room 2.14 reads 612 ppm.", true)),
            None
        );
    }

    #[test]
    fn the_gate_never_shows_a_code_and_passes_everything_else() {
        let mut gate = CodeGate::default();
        let shown: String = ["NO_", "ANS", "WER", " sorry"]
            .iter()
            .map(|d| gate.push(d))
            .collect();
        assert_eq!(shown + &gate.finish(), "");
        let shown: String = ["N", "ote: 5 ", "ppm"]
            .iter()
            .map(|d| gate.push(d))
            .collect();
        assert_eq!(shown + &gate.finish(), "Note: 5 ppm");
        assert_eq!(gate.push("OUT_OF"), "");
        assert_eq!(
            gate.finish(),
            "OUT_OF",
            "a turn that ends early was not a code"
        );
    }

    #[test]
    fn everything_else_is_answered() {
        assert_eq!(
            classify("Hello! Ask me about your buildings.", false),
            Decision::Answered
        );
        assert_eq!(
            classify("Room 2.14 reads 612 ppm.", true),
            Decision::Answered
        );
        assert_eq!(
            classify("Note: I can only help with CrowdVision.", false),
            Decision::Answered
        );
    }

    #[test]
    fn decisions_serialise_as_the_contract_names_them() {
        let names: Vec<String> = [
            Decision::Answered,
            Decision::Idk,
            Decision::Declined,
            Decision::ToolLoopExhausted,
        ]
        .iter()
        .map(|d| serde_json::to_string(d).unwrap())
        .collect();
        assert_eq!(
            names,
            [
                "\"answered\"",
                "\"idk\"",
                "\"declined\"",
                "\"tool_loop_exhausted\""
            ]
        );
    }
}
