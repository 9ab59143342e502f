//! Feedback on one answer: thumbs up or down, a reason from a fixed list (so the metric's
//! labels stay bounded), an optional comment and the answer the asker expected. One per answer
//! and caller; giving it again replaces it. [`golden_case`] turns a complaint into the
//! skeleton of a golden-set case that runs as XFAIL until the behaviour changes.

use serde::{Deserialize, Serialize};

/// The longest comment or expected answer kept, in characters.
pub const MAX_TEXT_CHARS: usize = 2000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Rating {
    Up,
    Down,
}

impl Rating {
    pub fn as_str(self) -> &'static str {
        match self {
            Rating::Up => "up",
            Rating::Down => "down",
        }
    }

    pub fn parse(text: &str) -> Option<Rating> {
        match text {
            "up" => Some(Rating::Up),
            "down" => Some(Rating::Down),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    WrongFigure,
    WrongBuilding,
    WrongLanguage,
    MissingSource,
    NotHelpful,
    Other,
}

impl Reason {
    pub const ALL: [Reason; 6] = [
        Reason::WrongFigure,
        Reason::WrongBuilding,
        Reason::WrongLanguage,
        Reason::MissingSource,
        Reason::NotHelpful,
        Reason::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Reason::WrongFigure => "wrong_figure",
            Reason::WrongBuilding => "wrong_building",
            Reason::WrongLanguage => "wrong_language",
            Reason::MissingSource => "missing_source",
            Reason::NotHelpful => "not_helpful",
            Reason::Other => "other",
        }
    }

    /// A reason as written in a request or at the chat prompt (`wrong-figure` is accepted too).
    pub fn parse(text: &str) -> Option<Reason> {
        let text = text.trim().to_lowercase().replace('-', "_");
        Reason::ALL
            .into_iter()
            .find(|reason| reason.as_str() == text)
    }
}

/// Feedback as a caller gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Feedback {
    pub conversation_id: String,
    /// The turn's `id`, as `GET /conversations/{id}` and the `done` event show it.
    pub turn_id: i64,
    pub rating: Rating,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<Reason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// The answer the caller expected, when they say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FeedbackRefusal {
    #[error("a comment or expected answer is at most {MAX_TEXT_CHARS} characters")]
    TooLong,
    #[error("a thumbs-up takes no reason")]
    ReasonOnPraise,
}

impl Feedback {
    /// Checks the sizes and trims the texts (an empty one is none).
    pub fn normalised(mut self) -> Result<Feedback, FeedbackRefusal> {
        for text in [&mut self.comment, &mut self.expected] {
            if let Some(value) = text.take() {
                if value.chars().count() > MAX_TEXT_CHARS {
                    return Err(FeedbackRefusal::TooLong);
                }
                let value = value.trim().to_string();
                *text = (!value.is_empty()).then_some(value);
            }
        }
        if self.rating == Rating::Up && self.reason.is_some() {
            return Err(FeedbackRefusal::ReasonOnPraise);
        }
        Ok(self)
    }

    /// The reason label of the `feedback_total` metric: one of six, or `none`.
    pub fn reason_label(&self) -> &'static str {
        self.reason.map_or("none", Reason::as_str)
    }
}

/// Feedback as kept, with the turn it is about and who gave it (roles and domains, never a
/// token).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeedbackRecord {
    pub feedback: Feedback,
    pub roles: Vec<String>,
    pub domains: Vec<String>,
    pub question: String,
    pub answer: String,
    pub language: Option<String>,
    pub at_ms: i64,
}

/// A golden-set case (the dataset's YAML shape) from a complaint: who asked, in which
/// language, what was answered (the case fails while the answer stays the same), tags from the
/// reason, and `xfail` with the asker's words. A maintainer adds the real assertions.
pub fn golden_case(record: &FeedbackRecord) -> serde_json::Value {
    let feedback = &record.feedback;
    let reason = feedback.reason.unwrap_or(Reason::Other);
    let mut expect = serde_json::Map::new();
    expect.insert("differs_from".into(), record.answer.clone().into());
    if let (Reason::WrongLanguage, Some(language)) = (reason, &record.language) {
        expect.insert("language".into(), language.clone().into());
    }
    let mut why = format!("feedback: {}", reason.as_str().replace('_', " "));
    if let Some(comment) = &feedback.comment {
        why.push_str(&format!(" — {comment}"));
    }
    if let Some(expected) = &feedback.expected {
        why.push_str(&format!(" (expected: {expected})"));
    }
    let mut case = serde_json::Map::new();
    case.insert(
        "id".into(),
        format!(
            "feedback-{}-{}",
            feedback.turn_id,
            reason.as_str().replace('_', "-")
        )
        .into(),
    );
    case.insert("question".into(), record.question.clone().into());
    let mut caller = serde_json::Map::new();
    caller.insert("roles".into(), record.roles.clone().into());
    caller.insert("domains".into(), record.domains.clone().into());
    case.insert("as".into(), caller.into());
    case.insert("expect".into(), expect.into());
    case.insert("xfail".into(), why.into());
    let mut tags = vec!["feedback".to_string(), reason.as_str().replace('_', "-")];
    if let Some(language) = &record.language {
        tags.push(format!("lang-{language}"));
    }
    case.insert("tags".into(), tags.into());
    serde_json::Value::Object(case)
}

/// The start of a look-back window written as a count and a unit (`90m`, `24h`, `7d`, `2w`),
/// `now_ms` minus it; `None` for anything else.
pub fn since(window: &str, now_ms: i64) -> Option<i64> {
    let window = window.trim();
    let digits = window.chars().take_while(char::is_ascii_digit).count();
    let count: i64 = window[..digits].parse().ok()?;
    let unit_ms: i64 = match &window[digits..] {
        "m" | "min" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        "w" => 7 * 86_400_000,
        _ => return None,
    };
    Some(now_ms - count.checked_mul(unit_ms)?)
}

/// Sends the feedback to the answer's trace as a score ([`crate::observe::record_feedback`])
/// while spans are exported and the answer's turn names its trace; otherwise reads nothing.
pub async fn score_the_answers_trace(
    store: &dyn super::ConversationStore,
    owner: &str,
    feedback: &Feedback,
    since_ms: i64,
) {
    if !crate::observe::telemetry::exporting() {
        return;
    }
    let Ok(Some(conversation)) = store.get(owner, &feedback.conversation_id, since_ms).await else {
        return;
    };
    let trace_id = conversation
        .turns
        .iter()
        .find(|turn| turn.id == feedback.turn_id)
        .and_then(|turn| turn.trace_id.as_deref());
    if let Some(trace_id) = trace_id {
        crate::observe::record_feedback(
            trace_id,
            feedback.rating.as_str(),
            feedback.reason_label(),
            feedback.comment.as_deref(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn complaint(reason: Option<Reason>) -> FeedbackRecord {
        FeedbackRecord {
            feedback: Feedback {
                conversation_id: "c".into(),
                turn_id: 42,
                rating: Rating::Down,
                reason,
                comment: Some("poor is 1,000-1,400".into()),
                expected: Some("1,000 to 1,400 ppm".into()),
            },
            roles: vec!["standard_customer".into()],
            domains: vec!["acme".into()],
            question: "When is CO2 poor?".into(),
            answer: "Above 1,400 ppm.".into(),
            language: Some("en".into()),
            at_ms: 0,
        }
    }

    #[test]
    fn a_complaint_becomes_an_xfail_case_that_fails_while_the_answer_stays() {
        let case = golden_case(&complaint(Some(Reason::WrongFigure)));
        assert_eq!(case["id"], "feedback-42-wrong-figure");
        assert_eq!(case["question"], "When is CO2 poor?");
        assert_eq!(case["as"]["roles"][0], "standard_customer");
        assert_eq!(case["as"]["domains"][0], "acme");
        assert_eq!(case["expect"]["differs_from"], "Above 1,400 ppm.");
        assert!(case["expect"].get("language").is_none());
        assert_eq!(
            case["xfail"],
            "feedback: wrong figure — poor is 1,000-1,400 (expected: 1,000 to 1,400 ppm)"
        );
        assert_eq!(
            case["tags"],
            serde_json::json!(["feedback", "wrong-figure", "lang-en"])
        );
        let language = golden_case(&complaint(Some(Reason::WrongLanguage)));
        assert_eq!(language["expect"]["language"], "en");
        assert_eq!(golden_case(&complaint(None))["id"], "feedback-42-other");
    }

    #[test]
    fn texts_are_bounded_and_praise_takes_no_reason() {
        let mut long = complaint(None).feedback;
        long.comment = Some("x".repeat(MAX_TEXT_CHARS + 1));
        assert_eq!(long.normalised(), Err(FeedbackRefusal::TooLong));
        let mut blank = complaint(None).feedback;
        blank.comment = Some("   ".into());
        assert_eq!(blank.normalised().unwrap().comment, None);
        let mut praise = complaint(Some(Reason::Other)).feedback;
        praise.rating = Rating::Up;
        assert_eq!(praise.normalised(), Err(FeedbackRefusal::ReasonOnPraise));
    }

    #[test]
    fn look_back_windows() {
        let day = 86_400_000;
        assert_eq!(since("7d", 10 * day), Some(3 * day));
        assert_eq!(since("24h", 10 * day), Some(9 * day));
        assert_eq!(since("1w", 10 * day), Some(3 * day));
        assert_eq!(since("30m", 0), Some(-1_800_000));
        for bad in ["", "d", "7", "7 days", "-1d", "99999999999999999999d"] {
            assert_eq!(since(bad, 0), None, "{bad}");
        }
    }

    #[test]
    fn reasons_read_as_written_at_a_prompt() {
        assert_eq!(Reason::parse("wrong-figure"), Some(Reason::WrongFigure));
        assert_eq!(Reason::parse(" Not_Helpful "), Some(Reason::NotHelpful));
        assert_eq!(Reason::parse("rude"), None);
    }
}
