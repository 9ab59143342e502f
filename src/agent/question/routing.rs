//! Routing before the model, by rule. Pure.
//!
//! - A greeting, thanks, or "what can you do" is answered by the library: no model call.
//! - A question about live data (it names a building or room by id, asks how many people, or
//!   asks for the current value) goes to the live-data tools first: the first model call offers
//!   only those tools and requires one of them.
//! - Everything else is a documentation question: the knowledge base is searched before the
//!   first model call and the passages go into the request.
//!
//! Small models follow a forced first step far better than they choose one; a capable model
//! loses nothing, since every tool is offered again after the first hop.

use super::window::{asked_window, AskedWindow};
use super::words::{joined_words, PhraseSet};
use std::sync::LazyLock;

/// Where a question goes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Greeting(GreetingKind),
    Live,
    Documentation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GreetingKind {
    Hello,
    Thanks,
    Capabilities,
}

impl GreetingKind {
    /// The library's reply, in English (greetings are short enough not to need the model).
    pub fn reply(self) -> &'static str {
        match self {
            GreetingKind::Hello | GreetingKind::Capabilities => {
                crate::agent::phrases::ENGLISH.hello
            }
            GreetingKind::Thanks => crate::agent::phrases::ENGLISH.welcome,
        }
    }
}

const HELLO: &[&str] = &[
    "hello",
    "hi",
    "hey",
    "hallo",
    "servus",
    "moin",
    "bonjour",
    "salut",
    "good morning",
    "good afternoon",
    "good evening",
    "guten morgen",
    "guten tag",
    "guten abend",
    "hello there",
    "hi there",
];
const THANKS: &[&str] = &[
    "thanks",
    "thank you",
    "thanks a lot",
    "danke",
    "vielen dank",
    "merci",
    "merci beaucoup",
    "bye",
    "goodbye",
    "tschüss",
    "au revoir",
];
const CAPABILITIES: &[&str] = &[
    "what can you do",
    "what can you help me with",
    "what can you help with",
    "how can you help me",
    "who are you",
    "what are you",
    "help",
    "was kannst du",
    "wer bist du",
    "wobei kannst du mir helfen",
    "que peux-tu faire",
    "que pouvez-vous faire",
    "qui es-tu",
];

/// Words that put a named place right after them (`building acme-hq`, `Raum hq-101`).
pub(super) const PLACE_WORDS: &[&str] = &[
    "building",
    "buildings",
    "room",
    "rooms",
    "gebäude",
    "gebäudes",
    "raum",
    "räume",
    "salle",
    "bâtiment",
    "sala",
    "edificio",
    "stanza",
    "edifício",
    "floor",
];
/// Phrases asking for the current state or for the caller's own buildings.
const LIVE_PHRASES: &[&str] = &[
    "right now",
    "currently",
    "at the moment",
    "how many people",
    "how many persons",
    "wie viele personen",
    "wie viele leute",
    "combien de personnes",
    "gerade",
    "jetzt",
    "actuellement",
    "actuelle",
    "actuel",
    "over the last",
    "during the last",
    "in the last 24 hours",
    "past 24 hours",
    "since yesterday",
    "in den letzten",
    "seit gestern",
    "my buildings",
    "which buildings",
    "buildings i",
    "buildings can i",
    "meine gebäude",
    "mes bâtiments",
    "ahora mismo",
    "en este momento",
    "cuántas personas",
    "actualmente",
    "mis edificios",
    "quante persone",
    "adesso",
    "in questo momento",
    "quantas pessoas",
    "agora",
];

pub fn route(question: &str) -> Route {
    route_words(&joined_words(question))
}

/// [`route`] of a question's words already joined ([`joined_words`]), for a caller that reads
/// them for other rules too.
pub fn route_words(text: &str) -> Route {
    if let Some(kind) = greeting(text) {
        return Route::Greeting(kind);
    }
    if names_a_place(text) || LIVE.any_in(text) || ends_with_now(text) {
        return Route::Live;
    }
    Route::Documentation
}

static LIVE: LazyLock<PhraseSet> = LazyLock::new(|| PhraseSet::new(LIVE_PHRASES));
static HISTORY: LazyLock<PhraseSet> = LazyLock::new(|| PhraseSet::new(HISTORY_PHRASES));

/// Phrases asking how values went over a past window, rather than for the current value.
const HISTORY_PHRASES: &[&str] = &[
    "over the last",
    "during the last",
    "in the last",
    "past 24 hours",
    "last 24 hours",
    "since yesterday",
    "yesterday",
    "highest",
    "lowest",
    "average",
    "develop",
    "developed",
    "trend",
    "history",
    "in den letzten",
    "verlauf",
    "gestern",
    "höchste",
    "niedrigste",
    "durchschnitt",
    "entwickelt",
    "historique",
    "évolué",
    "évolution",
    "moyenne",
    "historial",
    "evolucionado",
    "evolución",
    "promedio",
    "storico",
    "andamento",
];

/// Whether a live question asks about a past window (how a value developed, its highest or
/// average): its first hop offers the history tool alone, since a small model offered every
/// live tool answers "the highest of the last day" with the current reading.
pub fn asks_for_history(question: &str) -> bool {
    HISTORY.any_in(&joined_words(question))
        || matches!(asked_window(question), AskedWindow::Last(_))
}

/// "… what is the level now?": a question ending on "now" asks for the current value ("Now,
/// what does …" at the start does not).
/// `text`: the question's words joined by single spaces.
fn ends_with_now(text: &str) -> bool {
    matches!(
        text.rsplit(' ').next(),
        Some("now" | "jetzt" | "maintenant" | "ahora")
    )
}

fn greeting(text: &str) -> Option<GreetingKind> {
    // "Thanks, that's all for today" is thanks; "Hello, how do I add a sensor?" is a question.
    let first_clause_is = |list: &[&str]| list.contains(&text);
    let starts_with = |list: &[&str]| {
        list.iter().any(|g| {
            text.strip_prefix(g)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
        })
    };
    if first_clause_is(CAPABILITIES) || starts_with(&["what can you help me with"]) {
        return Some(GreetingKind::Capabilities);
    }
    // "Hello! What can you help me with?": a greeting, then the question of what it does.
    let asks_capabilities_after_hello = HELLO.iter().any(|hello| {
        text.strip_prefix(hello)
            .and_then(|rest| rest.strip_prefix(' '))
            .is_some_and(|rest| {
                CAPABILITIES.contains(&rest) || rest.starts_with("what can you help me with")
            })
    });
    if asks_capabilities_after_hello {
        return Some(GreetingKind::Capabilities);
    }
    if first_clause_is(HELLO) {
        return Some(GreetingKind::Hello);
    }
    // At most six words: at most five spaces between them (words are joined by one space).
    if starts_with(THANKS) && text.bytes().filter(|b| *b == b' ').count() <= 5 {
        return Some(GreetingKind::Thanks);
    }
    None
}

/// A place word followed by an id with a hyphen (`building acme-hq`, `room lab-104`).
/// `text`: the question's words joined by single spaces.
fn names_a_place(text: &str) -> bool {
    if !text.contains('-') {
        return false; // no id in the question
    }
    let mut words = text.split(' ').peekable();
    while let Some(word) = words.next() {
        let next = words.peek().copied().unwrap_or_default();
        if PLACE_WORDS.contains(&word)
            && next.contains('-')
            && next.chars().any(|c| c.is_ascii_alphanumeric())
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::question::words::{contains_phrase, words};
    use proptest::prelude::*;

    /// Routing as first written: one search per phrase over the words joined.
    fn route_one_phrase_at_a_time(question: &str) -> Route {
        let words = words(question);
        let text = words.join(" ");
        if let Some(kind) = greeting(&text) {
            return Route::Greeting(kind);
        }
        let names_a_place = words.windows(2).any(|pair| {
            PLACE_WORDS.contains(&pair[0].as_str())
                && pair[1].contains('-')
                && pair[1].chars().any(|c| c.is_ascii_alphanumeric())
        });
        let ends_with_now = matches!(
            words.last().map(String::as_str),
            Some("now" | "jetzt" | "maintenant" | "ahora")
        );
        if names_a_place || LIVE_PHRASES.iter().any(|p| contains_phrase(&text, p)) || ends_with_now
        {
            return Route::Live;
        }
        Route::Documentation
    }

    /// Questions made of the rules' own words, punctuation and ids.
    fn question() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            proptest::sample::select(LIVE_PHRASES).prop_map(String::from),
            proptest::sample::select(HISTORY_PHRASES).prop_map(String::from),
            proptest::sample::select(PLACE_WORDS).prop_map(String::from),
            proptest::sample::select(HELLO).prop_map(String::from),
            proptest::sample::select(
                &[
                    "now", "Jetzt", "hq-101", "-", "?", "!", ",", "the", "CO2", "Lobby", "right",
                    "last"
                ][..]
            )
            .prop_map(String::from),
            "[a-zA-Zé -]{0,8}",
        ];
        proptest::collection::vec(piece, 0..7).prop_map(|pieces| pieces.join(" "))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(512)))]

        #[test]
        fn routing_in_one_pass_routes_as_one_phrase_at_a_time(question in question()) {
            prop_assert_eq!(route(&question), route_one_phrase_at_a_time(&question));
            let text = words(&question).join(" ");
            prop_assert_eq!(
                asks_for_history(&question),
                HISTORY_PHRASES.iter().any(|p| contains_phrase(&text, p))
                    || matches!(asked_window(&question), AskedWindow::Last(_))
            );
        }
    }

    #[test]
    fn greetings_thanks_and_capabilities_are_answered_by_rule() {
        assert_eq!(route("Hello!"), Route::Greeting(GreetingKind::Hello));
        assert_eq!(route("  hi there "), Route::Greeting(GreetingKind::Hello));
        assert_eq!(
            route("What can you help me with?"),
            Route::Greeting(GreetingKind::Capabilities)
        );
        assert_eq!(
            route("Thanks, that's all for today."),
            Route::Greeting(GreetingKind::Thanks)
        );
        assert_eq!(route("Danke!"), Route::Greeting(GreetingKind::Thanks));
    }

    #[test]
    fn a_greeting_before_what_it_can_do_asks_what_it_can_do() {
        for question in [
            "Hello! What can you help me with?",
            "Hi, what can you do?",
            "Good morning! Who are you?",
            "Hallo! Was kannst du?",
            "Bonjour, que peux-tu faire ?",
        ] {
            assert_eq!(
                route(question),
                Route::Greeting(GreetingKind::Capabilities),
                "{question}"
            );
        }
        // A greeting before a question about the platform is still that question.
        assert_eq!(
            route("Hello! What can you tell me about CO2 sensors?"),
            Route::Documentation
        );
    }

    #[test]
    fn a_question_that_greets_first_is_still_a_question() {
        assert_eq!(
            route("Hello, how do I calibrate a CO2 sensor?"),
            Route::Documentation
        );
        assert_eq!(
            route("Thanks. Now, what does the occupancy colour red mean for a sensor installed in a room?"),
            Route::Documentation
        );
    }

    #[test]
    fn named_places_and_current_values_go_to_the_live_tools() {
        for question in [
            "How many people are in room hq-101 of building acme-hq right now?",
            "What is the noise level in room lab-104 of building acme-lab?",
            "Which buildings can I see?",
            "List the buildings I have access to.",
            "Wie viele Personen sind gerade im Raum hq-101 des Gebäudes acme-hq?",
            "Quelle est la température actuelle dans la salle hq-lobby du bâtiment acme-hq ?",
            "How many people are in the Warehouse Hall of the Acme Depot?",
            "Does the Seminar Room of the Acme Research Lab measure noise, and what is it now?",
            "How did the temperature develop in Meeting Room Aurora over the last day?",
        ] {
            assert_eq!(route(question), Route::Live, "{question}");
        }
    }

    #[test]
    fn questions_about_a_past_window_ask_for_history() {
        for question in [
            "How did CO2 develop in room hq-201 of building acme-hq over the last 24 hours?",
            "What was the highest temperature in room hq-101 during the last 24 hours?",
            "Wie war der CO2-Verlauf gestern im Raum hq-201?",
            "¿Cuál fue la temperatura en la sala hq-101 en las últimas 12 horas?",
            "Quel était le niveau de CO2 dans la salle hq-201 au cours des 24 dernières heures ?",
        ] {
            assert!(asks_for_history(question), "{question}");
        }
        for question in [
            "What is the CO2 level in room hq-201 of building acme-hq right now?",
            "How many people are in room hq-101?",
            "What was the last reading of the CO2 sensor in room hq-201?",
        ] {
            assert!(!asks_for_history(question), "{question}");
        }
    }

    #[test]
    fn documentation_questions_stay_with_the_documentation() {
        for question in [
            "From which CO2 level is indoor air considered poor?",
            "How do I add a room to a building?",
            "What does the wi-fi setup of a sensor need?",
            "Which roles can see every building?",
            "Write a short poem about autumn leaves.",
            "Which time window is used for a sensor history when I do not give one?",
            "Is there a way to know now which sensor is offline in general?",
        ] {
            assert_eq!(route(question), Route::Documentation, "{question}");
        }
    }
}
