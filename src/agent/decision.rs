//! How a turn ended, decided from the model's final text and whether tools ran. Pure.
//!
//! - The exact IDK marker anywhere in the answer → `idk` (the system prompt tells the model to
//!   answer with it alone when tools come up empty).
//! - An answer that opens with the scoped refusal, after no tool call → `declined`.
//! - The loop running out of hops → `tool_loop_exhausted` (decided by the loop, not the text).
//! - Anything else → `answered` (greetings included).

use serde::{Deserialize, Serialize};

/// The exact reply for an in-scope question the available information cannot answer.
pub const IDK_MARKER: &str = "I don't know based on the available CrowdVision information.";

/// How every scoped refusal begins.
pub const REFUSAL_PREFIX: &str = "I can only help with CrowdVision";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Answered,
    Idk,
    Declined,
    ToolLoopExhausted,
}

impl Decision {
    /// The name on the wire (`answered`, `idk`, `declined`, `tool_loop_exhausted`).
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Answered => "answered",
            Decision::Idk => "idk",
            Decision::Declined => "declined",
            Decision::ToolLoopExhausted => "tool_loop_exhausted",
        }
    }
}

/// Classifies a final answer. A refusal only counts when no tool ran: a model that looked data
/// up and then refused has not declined an off-topic request, it has failed to answer.
pub fn classify(answer: &str, tools_called: bool) -> Decision {
    let text = normalise(answer);
    if text.contains(IDK_MARKER) {
        Decision::Idk
    } else if !tools_called && text.starts_with(REFUSAL_PREFIX) {
        Decision::Declined
    } else {
        Decision::Answered
    }
}

/// Straight quotes and single spaces, without surrounding quotes or emphasis, so that
/// typographic variants of the marker are still recognised.
fn normalise(answer: &str) -> String {
    let replaced: String = answer
        .chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' => '\'',
            _ => c,
        })
        .collect();
    replaced
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_matches(|c: char| c == '"' || c == '*' || c == '_' || c == '>' || c == ' ')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Decision::Answered,
            "after tools it is not a scope refusal"
        );
        assert_eq!(classify(&format!("> {refusal}"), false), Decision::Declined);
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
