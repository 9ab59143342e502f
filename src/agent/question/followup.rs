//! A turn that continues the previous question: it names only a place ("and in the Board
//! Room?", "und im Raum 201?", "et dans la salle 201 ?") or only a quantity ("and the CO2?",
//! "what about the one before?"). Such a turn inherits the other half from the previous
//! question and goes where it went (the live tools, a past window). Pure.
//!
//! Read alone, "And in the Board Room?" asks for nothing live, and the routing sent it to the
//! documentation search.

use super::routing::{asks_for_history, route, Route};
use super::words::words;
use crate::contract::{HistoryMessage, HistoryRole};

/// Words a continuation starts with, longest first within a language.
const OPENERS: &[&[&str]] = &[
    &["and", "what", "about"],
    &["and", "how", "about"],
    &["what", "about"],
    &["how", "about"],
    &["same", "for"],
    &["and"],
    &["und", "was", "ist", "mit"],
    &["was", "ist", "mit"],
    &["wie", "ist", "es", "mit"],
    &["und", "wie", "ist", "es", "mit"],
    &["und"],
    &["et", "pour"],
    &["et"],
    &["qu", "en", "est-il", "de"],
    &["y"],
    &["e"],
];

/// Words that make the rest of a turn a question of its own ("and how do I add a sensor?").
const QUESTION_WORDS: &[&str] = &[
    "what", "how", "why", "when", "which", "who", "where", "does", "do", "is", "are", "can",
    "should", "explain", "mean", "means", "was", "wie", "warum", "wann", "welche", "welcher",
    "wer", "wo", "kann", "bedeutet", "quoi", "comment", "pourquoi", "quand", "quel", "quelle",
    "qui", "où", "est-ce", "signifie", "qué", "cómo", "por", "cosa", "come",
];

/// The most words a continuation has after its opener.
const MAX_REST_WORDS: usize = 6;

/// Whether `question` is a continuation: an opener, then a few words that ask nothing of their
/// own.
pub fn is_continuation(question: &str) -> bool {
    let words = words(question);
    let Some(rest) = OPENERS.iter().find_map(|opener| {
        let n = opener.len();
        (words.len() > n && words[..n].iter().zip(opener.iter()).all(|(w, o)| w == o))
            .then(|| &words[n..])
    }) else {
        return false;
    };
    rest.len() <= MAX_REST_WORDS && !rest.iter().any(|w| QUESTION_WORDS.contains(&w.as_str()))
}

/// What a question inherits from the conversation before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Inherited {
    /// Where the question goes.
    pub route: Route,
    /// It asks about a past window, as the previous question did.
    pub history: bool,
    /// The previous question, whose quantity (or place) the continuation leaves unsaid.
    pub previous: String,
}

/// What a continuation inherits from the last question of `history` when that one went to the
/// live tools; `None` for a question that is no continuation or follows no live question.
pub fn inherit(question: &str, history: &[HistoryMessage]) -> Option<Inherited> {
    // Without an earlier question there is nothing to inherit: the continuation scan is skipped.
    let previous = history
        .iter()
        .rev()
        .find(|m| m.role == HistoryRole::User)?
        .content
        .as_str();
    if !is_continuation(question) {
        return None;
    }
    (route(previous) == Route::Live).then(|| Inherited {
        route: Route::Live,
        history: asks_for_history(previous) && !asks_for_now(question),
        previous: previous.to_string(),
    })
}

/// "… and now?": the continuation asks for the current value, not the previous window.
fn asks_for_now(question: &str) -> bool {
    words(question).iter().any(|w| {
        matches!(
            w.as_str(),
            "now" | "currently" | "jetzt" | "gerade" | "maintenant" | "actuellement" | "ahora"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn after(question: &str) -> Vec<HistoryMessage> {
        vec![
            HistoryMessage {
                role: HistoryRole::User,
                content: question.into(),
            },
            HistoryMessage {
                role: HistoryRole::Assistant,
                content: "6 people.".into(),
            },
        ]
    }

    const OCCUPANCY: &str = "How many people are in Meeting Room Aurora in Acme HQ right now?";
    const HISTORY: &str = "CO2 in the Board Room hq-201 over the last 24 hours";

    #[test]
    fn a_place_or_a_quantity_alone_continues_the_live_question_before_it() {
        let cases: &[(&str, &str, Option<bool>)] = &[
            // (previous question, this turn, Some(past window) when it inherits the route)
            (OCCUPANCY, "And in the Board Room?", Some(false)),
            (OCCUPANCY, "and the one before?", Some(false)),
            (OCCUPANCY, "What about the Lobby?", Some(false)),
            (OCCUPANCY, "Und im Raum 201?", Some(false)),
            (OCCUPANCY, "Und die Temperatur?", Some(false)),
            (OCCUPANCY, "Et dans la salle 201 ?", Some(false)),
            (OCCUPANCY, "Et le CO2 ?", Some(false)),
            (OCCUPANCY, "¿Y en la sala de juntas?", Some(false)),
            (HISTORY, "And in the Lobby?", Some(true)),
            (HISTORY, "Und die Temperatur?", Some(true)),
            (HISTORY, "And now?", Some(false)),
            (HISTORY, "Und jetzt?", Some(false)),
            // A question of its own, or no live question before it: routed as it is.
            (OCCUPANCY, "And how do I add a sensor?", None),
            (OCCUPANCY, "Und was bedeutet stale?", None),
            (OCCUPANCY, "Et comment ajouter un capteur ?", None),
            (
                OCCUPANCY,
                "What is a good CO2 level for a meeting room?",
                None,
            ),
            ("What does stale mean?", "And in the Board Room?", None),
        ];
        for (previous, question, expected) in cases {
            let inherited = inherit(question, &after(previous));
            assert_eq!(
                inherited.as_ref().map(|i| i.history),
                *expected,
                "{question:?} after {previous:?}"
            );
            if let Some(inherited) = inherited {
                assert_eq!(inherited.route, Route::Live);
                assert_eq!(inherited.previous, *previous);
            }
        }
    }

    #[test]
    fn a_question_of_its_own_or_the_first_of_a_conversation_inherits_nothing() {
        let question = "And how many people are in room hq-102 of building acme-hq right now?";
        assert_eq!(inherit(question, &after(OCCUPANCY)), None);
        assert_eq!(inherit("And in the Board Room?", &[]), None);
    }
}
