//! What the library itself writes into a conversation: the system prompt, the two re-asks,
//! and the `answer` field a re-asked reply is held to. Pure.

use crate::agent::verdict::decision::{NO_ANSWER_CODE, OUT_OF_SCOPE_CODE};
use serde::Deserialize;
use std::sync::LazyLock;

/// The system prompt. Without the topic check ([`super::scope`]) it also asks the model to
/// answer an off-topic request with a code the library turns into its refusal; with the check,
/// off-topic requests never reach the answer call, and a small model told about a refusal code
/// uses it for questions it should answer.
pub fn system_prompt(scope_check: bool) -> String {
    let mut prompt = include_str!("../../../prompts/system.md").to_string();
    if !scope_check {
        prompt.push_str(
            &include_str!("../../../prompts/out-of-scope.md")
                .replace("{OUT_OF_SCOPE_CODE}", OUT_OF_SCOPE_CODE),
        );
    }
    prompt
}

/// Asked once, without tools, when an answer describes which tool to call instead of answering.
pub(super) const ANSWER_INSTEAD_OF_DESCRIBING: &str =
    "Do not explain which tool to call or how to look \
     the answer up: answer the question yourself, briefly, from the passages and tool results \
     above, with their numbers and names.";

/// The reply the re-ask after a tool-describing answer is held to: one text field. Small
/// models (qwen2.5-coder-0.5b) write a tool call and its result back as JSON text instead of
/// an answer, and do so again when asked in words; held to this schema they write the answer.
pub static ANSWER_FIELD_SCHEMA: LazyLock<serde_json::Value> = LazyLock::new(|| {
    serde_json::json!({
        "type": "object",
        "properties": { "answer": { "type": "string" } },
        "required": ["answer"],
        "additionalProperties": false
    })
});

/// The `answer` of a reply held to [`ANSWER_FIELD_SCHEMA`]; `None` when the reply is not that
/// JSON (a provider that ignored the schema), and then its text is read as it is.
pub(super) fn read_answer_field(reply: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Reply {
        answer: String,
    }
    let reply = reply.trim();
    match serde_json::from_str::<Reply>(reply) {
        Ok(whole) => Some(whole.answer),
        Err(_) => read_cut_answer_field(reply),
    }
}

/// The text of an `answer` field whose reply was cut off, mostly inside the string, as happens
/// when a small model repeats itself up to `MAX_OUTPUT_TOKENS`: the user gets what was written,
/// not the JSON around it. `None` when the reply does not open with that field.
fn read_cut_answer_field(reply: &str) -> Option<String> {
    let written = reply
        .strip_prefix('{')?
        .trim_start()
        .strip_prefix("\"answer\"")?
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    // The string may be whole, with the cut after it.
    let opened = format!("\"{written}");
    if let Some(Ok(whole)) = serde_json::Deserializer::from_str(&opened)
        .into_iter::<String>()
        .next()
    {
        return Some(whole);
    }
    // The cut may fall inside an escape (`\`, `\u00e`): drop up to its 5 characters.
    let ends = written
        .char_indices()
        .map(|(at, _)| at)
        .chain([written.len()]);
    ends.rev()
        .take(6)
        .find_map(|end| serde_json::from_str::<String>(&format!("\"{}\"", &written[..end])).ok())
}

/// Asked once, without tools, when an answer is in another language than the question.
pub(super) fn answer_in(language: crate::agent::question::language::Language) -> String {
    format!(
        "The question is in {0}. Write your answer again in {0}, in full sentences, with the \
         same facts, numbers and [^chunk_id] markers.",
        language.name()
    )
}

/// Asked once, without tools, when a documentation answer gives figures otherwise than the
/// passages state them; each with the passage lines that hold it (a few, cut short).
pub(super) fn state_figures_as_passages(
    misstated: &[crate::agent::verdict::figures::Misstated],
    asked_in: Option<crate::agent::question::language::Language>,
) -> String {
    const LINES_PER_FIGURE: usize = 3;
    const LINE_CHARS: usize = 200;
    let quoted = |lines: &[String]| {
        lines
            .iter()
            .take(LINES_PER_FIGURE)
            .map(|line| format!("\"{}\"", line.chars().take(LINE_CHARS).collect::<String>()))
            .collect::<Vec<_>>()
            .join("; ")
    };
    // Sent after the question without the draft it corrects (see `final_text`).
    let mut note = String::from("A first answer gave figures otherwise than the passages do.");
    // Told which line the question is about, a small model answers from it; told to choose,
    // the 1.5B model gave up on a plain table row.
    let plain = misstated
        .iter()
        .all(|figure| !figure.asked_about.is_empty());
    for figure in misstated {
        if figure.stated_as.is_empty() {
            note.push_str(&format!(
                " It gave {}, which is in no passage.",
                figure.figure
            ));
        } else if plain {
            note.push_str(&format!(
                " The line the question is about: {}.",
                quoted(&figure.asked_about)
            ));
        } else {
            note.push_str(&format!(
                " The passages give {} only in these lines: {}.",
                figure.figure,
                quoted(&figure.stated_as)
            ));
        }
    }
    if plain {
        note.push_str(
            " Answer the question again from that line, each figure as it states it: a range \
             with both its ends, a limit with its \"above\" or \"below\".",
        );
    } else {
        note.push_str(
            " Answer the question again from the line that is about what it asks, each figure \
             as that line states it: a range with both its ends, a limit with its \"above\" or \
             \"below\".",
        );
    }
    if misstated.iter().any(|figure| figure.stated_as.is_empty()) {
        // Offered whenever, the 1.5B model took it for lines that did answer the question.
        note.push_str(&format!(
            " If the passages do not state what the question asks, write only {NO_ANSWER_CODE}."
        ));
    }
    if let Some(language) = asked_in {
        note.push_str(&format!(" Write it in {}.", language.name()));
    }
    note
}

/// Asked once when a model refuses or finds nothing although live tools returned data.
/// Asked once, without tools and without the draft, when a documentation answer was a
/// passage's heading copied out (`decision::copies_a_passage_heading`). Told this after the
/// question, the 0.5B model wrote an answer for 19 of 25 documentation questions it had
/// answered with a heading; shown its draft, small models copy it again.
pub(super) fn answer_in_sentences(
    asked_in: Option<crate::agent::question::language::Language>,
) -> String {
    let mut note = String::from("Answer the question from the passages, in full sentences.");
    if let Some(language) =
        asked_in.filter(|l| *l != crate::agent::question::language::Language::English)
    {
        note.push_str(&format!(" Write it in {}.", language.name()));
    }
    note
}

pub(super) const REASK_FROM_RESULTS: &str =
    "The tool results above hold data for this question. Answer \
     the question from them, briefly, with their numbers and names.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_system_prompt_asks_for_codes_never_for_the_library_sentences() {
        let prompt = system_prompt(false);
        assert!(prompt.contains(OUT_OF_SCOPE_CODE));
        let checked = system_prompt(true);
        assert!(
            !checked.contains(OUT_OF_SCOPE_CODE),
            "the topic check declines instead"
        );
        assert!(prompt.starts_with(&checked));
        assert!(
            !prompt.contains(crate::agent::verdict::decision::NO_ANSWER_CODE),
            "no answer is decided in code"
        );
        assert!(!prompt.contains(crate::agent::verdict::decision::IDK_MARKER));
        assert!(!prompt.contains(crate::agent::verdict::decision::REFUSAL_PREFIX));
        assert!(!prompt.contains('{'));
        assert!(prompt.contains("[^chunk_id]"));
    }

    #[test]
    fn the_answer_field_is_read_and_anything_else_is_not() {
        assert_eq!(
            read_answer_field(" {\"answer\": \"6 people.\"}\n").as_deref(),
            Some("6 people.")
        );
        assert_eq!(read_answer_field("6 people."), None);
        assert_eq!(read_answer_field(r#"{"name": "get_occupancy"}"#), None);
        assert_eq!(read_answer_field(r#"{"answer": 6}"#), None);
    }

    #[test]
    fn an_answer_field_cut_off_inside_its_string_gives_the_text_written() {
        assert_eq!(
            read_answer_field(r#"{"answer": "globex-tower has 3 rooms, globex-tower"#).as_deref(),
            Some("globex-tower has 3 rooms, globex-tower")
        );
        assert_eq!(
            read_answer_field(r#"{ "answer" : "line\none \u00e9t\u00"#).as_deref(),
            Some("line\none ét")
        );
        assert_eq!(
            read_answer_field(r#"{"answer": "ends in a backslash \"#).as_deref(),
            Some("ends in a backslash ")
        );
        assert_eq!(
            read_answer_field(r#"{"answer": "6 people.", "source": "get_ro"#).as_deref(),
            Some("6 people.")
        );
        // Not an answer field: read as text.
        assert_eq!(read_answer_field(r#"{"name": "get_room"#), None);
        assert_eq!(read_answer_field(r#"The answer is "6"#), None);
    }
}
