//! Whether a question is for this assistant at all, decided from a typed field rather than from
//! the model's wording.
//!
//! Before a documentation question is answered, the model is asked once which topic the
//! question is about, with the reply held to a JSON schema whose `topic` is one of [`Topic`]'s
//! names. Off-topic requests (general knowledge, maths, code, writing …) are then declined by the
//! library without an answer call. Small models classify far better among named topics than
//! they answer "is this in scope?" with a yes or no, and far better than they follow an
//! instruction to write a refusal code instead of the poem they were asked for.
//!
//! The check sends the system prompt, the conversation and the question alone: no tools and no
//! passages. With the passages in the request the local 1.5B model called 14 of 23
//! documentation questions off-topic; with the question alone it sorted 18 of 18 probe
//! questions (ten off-topic, eight in scope) correctly. It is a short request (about 230
//! prompt tokens) with a reply of a dozen tokens.

use super::words::{contains_phrase, words};
use crate::agent::verdict::decision::{READ_ONLY_REFUSAL, REFUSAL};
use serde::Deserialize;

/// Asked after the conversation; the reply is held to [`response_schema`].
pub const TOPIC_QUESTION: &str = "Which topic is the question above about? Reply in JSON.";

/// The topics a question may be classified under. The names are what the model reads, so they
/// say what they cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Topic {
    IndoorAirOrSensors,
    BuildingsRoomsOrOccupancy,
    #[serde(
        rename = "crowdvision_platform_roles_or_settings",
        alias = "crowdvision_platform"
    )]
    CrowdvisionPlatform,
    #[serde(rename = "booking_or_changing_something")]
    ActionRequest,
    GeneralKnowledge,
    Maths,
    Programming,
    #[serde(rename = "poem_story_or_other_writing")]
    CreativeWriting,
    Translation,
    Cooking,
    OtherProduct,
    PersonalAdvice,
    /// Not "role play": the 1.5B model put "Which role do I need …?" there.
    #[serde(rename = "pretending_to_be_someone", alias = "role_play")]
    RolePlay,
}

impl Topic {
    const ALL: [Topic; 13] = [
        Topic::IndoorAirOrSensors,
        Topic::BuildingsRoomsOrOccupancy,
        Topic::CrowdvisionPlatform,
        Topic::ActionRequest,
        Topic::GeneralKnowledge,
        Topic::Maths,
        Topic::Programming,
        Topic::CreativeWriting,
        Topic::Translation,
        Topic::Cooking,
        Topic::OtherProduct,
        Topic::PersonalAdvice,
        Topic::RolePlay,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Topic::IndoorAirOrSensors => "indoor_air_or_sensors",
            Topic::BuildingsRoomsOrOccupancy => "buildings_rooms_or_occupancy",
            Topic::CrowdvisionPlatform => "crowdvision_platform_roles_or_settings",
            Topic::ActionRequest => "booking_or_changing_something",
            Topic::GeneralKnowledge => "general_knowledge",
            Topic::Maths => "maths",
            Topic::Programming => "programming",
            Topic::CreativeWriting => "poem_story_or_other_writing",
            Topic::Translation => "translation",
            Topic::Cooking => "cooking",
            Topic::OtherProduct => "other_product",
            Topic::PersonalAdvice => "personal_advice",
            Topic::RolePlay => "pretending_to_be_someone",
        }
    }

    /// Whether this assistant answers questions of this topic.
    pub fn is_in_scope(self) -> bool {
        matches!(
            self,
            Topic::IndoorAirOrSensors
                | Topic::BuildingsRoomsOrOccupancy
                | Topic::CrowdvisionPlatform
        )
    }

    /// The library's reply to a request of this topic, `None` when it is answered.
    pub fn refusal(self) -> Option<&'static str> {
        match self {
            _ if self.is_in_scope() => None,
            Topic::ActionRequest => Some(READ_ONLY_REFUSAL),
            _ => Some(REFUSAL),
        }
    }
}

/// The JSON schema the topic reply is held to.
pub fn response_schema() -> serde_json::Value {
    let names: Vec<&str> = Topic::ALL.iter().map(|t| t.name()).collect();
    serde_json::json!({
        "type": "object",
        "properties": {"topic": {"type": "string", "enum": names}},
        "required": ["topic"],
        "additionalProperties": false
    })
}

/// The topic of a reply, or `None` when the reply is not the JSON asked for (a provider that
/// ignored the schema, a model that called a tool instead): then nothing is decided.
pub fn parse_topic(reply: &str) -> Option<Topic> {
    #[derive(Deserialize)]
    struct Reply {
        topic: Topic,
    }
    let text = reply
        .trim()
        .trim_start_matches("```json")
        .trim_start_matches("```")
        .trim_end_matches("```")
        .trim();
    serde_json::from_str::<Reply>(text).ok().map(|r| r.topic)
}

/// Verbs asking for a piece of writing, in the languages the agent answers in.
const WRITING_VERBS: &[&str] = &[
    "write",
    "compose",
    "make up",
    "tell me",
    "rhyme",
    "schreib",
    "schreibe",
    "erzähl",
    "erzähle",
    "dichte",
    "écris",
    "écrivez",
    "raconte",
    "compose-moi",
    "escribe",
    "escríbeme",
    "cuéntame",
    "compón",
    "scrivi",
    "scrivimi",
    "raccontami",
    "escreva",
];
/// Forms of writing this assistant does not produce.
const WRITING_FORMS: &[&str] = &[
    "poem",
    "poems",
    "limerick",
    "limericks",
    "haiku",
    "sonnet",
    "song",
    "lyrics",
    "rap",
    "joke",
    "jokes",
    "story",
    "fairy tale",
    "essay",
    "gedicht",
    "reim",
    "witz",
    "witze",
    "geschichte",
    "märchen",
    "lied",
    "aufsatz",
    "poème",
    "blague",
    "chanson",
    "conte",
    "histoire",
    "poema",
    "chiste",
    "canción",
    "cuento",
    "historia",
    "poesia",
    "barzelletta",
    "canzone",
    "storia",
    "piada",
    "música",
];

/// Whether `question` asks for a poem, a joke, a story or another piece of writing, alone or
/// beside a question in scope ("List my buildings, then write a limerick about them"). Such a
/// request is declined by rule before any tool is called: a live question skips the topic
/// check, and a refusal written after the tools returned data reads as a failed answer.
pub fn asks_for_writing(question: &str) -> bool {
    let text = words(question).join(" ");
    let has = |list: &[&str]| list.iter().any(|phrase| contains_phrase(&text, phrase));
    has(WRITING_VERBS) && has(WRITING_FORMS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_for_writing_is_told_apart_from_questions_that_mention_writing() {
        for question in [
            "List my buildings, then write a limerick about them.",
            "Write me a poem about CO2.",
            "Tell me a joke about sensors",
            "Schreib ein Gedicht über meine Gebäude.",
            "Écris une chanson sur la salle de réunion.",
            "Escribe un poema sobre el edificio acme-hq.",
        ] {
            assert!(asks_for_writing(question), "{question}");
        }
        for question in [
            "How do I write a sensor's name?",
            "Which floor is the story of room hq-301?",
            "Tell me the CO2 level in room hq-201 right now.",
            "What is the CO2 history of room hq-201?",
            "Which rooms does building acme-hq have on floor 3?",
        ] {
            assert!(!asks_for_writing(question), "{question}");
        }
    }

    #[test]
    fn every_topic_is_in_the_schema_under_the_name_it_parses_from() {
        let schema = response_schema();
        let names = schema["properties"]["topic"]["enum"].as_array().unwrap();
        assert_eq!(names.len(), Topic::ALL.len());
        for topic in Topic::ALL {
            let reply = format!(r#"{{"topic": "{}"}}"#, topic.name());
            assert_eq!(parse_topic(&reply), Some(topic));
        }
        assert_eq!(Topic::ALL.iter().filter(|t| t.is_in_scope()).count(), 3);
        assert_eq!(
            parse_topic(r#"{"topic": "crowdvision_platform"}"#),
            Some(Topic::CrowdvisionPlatform)
        );
    }

    #[test]
    fn requests_to_act_get_the_read_only_refusal() {
        assert_eq!(Topic::ActionRequest.refusal(), Some(READ_ONLY_REFUSAL));
        assert_eq!(Topic::Maths.refusal(), Some(REFUSAL));
        assert_eq!(Topic::CrowdvisionPlatform.refusal(), None);
    }

    #[test]
    fn anything_but_the_asked_json_decides_nothing() {
        assert_eq!(
            parse_topic("```json\n{\"topic\": \"maths\"}\n```"),
            Some(Topic::Maths)
        );
        assert_eq!(parse_topic("maths"), None);
        assert_eq!(parse_topic(r#"{"topic": "weather"}"#), None);
        assert_eq!(parse_topic(""), None);
    }
}
