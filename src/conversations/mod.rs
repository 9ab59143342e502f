//! Conversations that outlast a request: each belongs to one caller (`sub`) and keeps its
//! turns (question, answer, citations, decision, model, usage, trace id, language, time).
//!
//! [`ConversationStore`] is the port; its adapters live with the stores
//! (`retrieval/store/conversations_{sqlite,postgres}.rs`), on the same database as the
//! knowledge base, so that every replica of `serve` sees the same
//! conversations. Everything here is asked for by owner: another caller's conversation is
//! `None`, exactly like one that does not exist. The decisions (ids, titles, the retention
//! cutoff, the words of a search, page sizes) are pure functions below.

use crate::auth::AuthUser;
use crate::citations::Citation;
use crate::contract::{AskResponse, Decision, HistoryMessage, HistoryRole, TraceEntry, Usage};
use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub mod feedback;
pub mod sharing;

pub use feedback::{score_the_answers_trace, Feedback, FeedbackRecord, Rating, Reason};
pub use sharing::{NewShare, Share, Shared};

/// The longest title kept, in characters.
pub const MAX_TITLE_CHARS: usize = 120;
/// The most conversations one page of a list holds, and the default.
pub const MAX_PAGE: u32 = 100;
pub const DEFAULT_PAGE: u32 = 20;
/// The most words of a search that are matched (each must appear in the conversation).
pub const MAX_SEARCH_WORDS: usize = 8;
/// The turns sent back to the model as history, newest last.
pub const HISTORY_TURNS: usize = 10;

#[derive(Debug, thiserror::Error)]
#[error("the conversation store failed: {0}")]
pub struct ConversationError(pub String);

/// One question and its answer, as kept.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Turn {
    /// Assigned by the store when the turn is kept; what feedback names.
    #[serde(default)]
    pub id: i64,
    pub question: String,
    pub answer: String,
    pub citations: Vec<Citation>,
    pub decision: Decision,
    pub model: String,
    pub usage: Usage,
    /// The request's trace id, when the answer was traced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// The question's language (ISO 639-1), when it could be told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// When the answer was given, milliseconds since the epoch.
    pub at_ms: i64,
    /// Whose live data the answer read: building ids, and `domain:NAME` for a tool that read
    /// every building of one of the asker's domains (`list_buildings`; `*` when the asker sees
    /// every domain); `None` when no live-data tool ran. A share withholds the answer from a
    /// viewer who may not see one of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<Vec<String>>,
}

impl Turn {
    /// The turn of `asker` (whose domains a building list read) for `response`.
    pub fn of(
        question: &str,
        response: &AskResponse,
        asker: &AuthUser,
        language: Option<String>,
        at_ms: i64,
    ) -> Turn {
        Turn {
            id: 0,
            question: question.to_string(),
            answer: response.answer.clone(),
            citations: response.citations.clone(),
            decision: response.decision,
            model: response.model.clone(),
            usage: response.usage,
            trace_id: response.trace_id.clone(),
            language,
            at_ms,
            live: live_reads(&response.trace, &asker.domains),
        }
    }
}

/// Whose live data a trace read (see [`Turn::live`]), in first-read order; `None` when only
/// the documentation was searched. `asker_domains` are what a tool without a building read.
pub fn live_reads(trace: &[TraceEntry], asker_domains: &[String]) -> Option<Vec<String>> {
    let mut read: Vec<String> = Vec::new();
    let mut any = false;
    let mut add = |what: String| {
        if !read.contains(&what) {
            read.push(what);
        }
    };
    for entry in trace.iter().filter(|entry| entry.tool != SEARCH_DOCS) {
        any = true;
        match entry
            .arguments
            .get("building_id")
            .and_then(|id| id.as_str())
        {
            Some(building) => add(building.to_string()),
            None if asker_domains.is_empty() => add(ALL_BUILDINGS.to_string()),
            None => asker_domains
                .iter()
                .for_each(|domain| add(format!("{DOMAIN_PREFIX}{domain}"))),
        }
    }
    any.then_some(read)
}

/// In [`Turn::live`]: every building of the named domain was read.
pub const DOMAIN_PREFIX: &str = "domain:";

/// In [`Turn::live`]: the answer read every building of an asker who sees every domain.
pub const ALL_BUILDINGS: &str = "*";
/// The documentation search's tool name: the one tool that reads no live data. Written out
/// (the tools depend on the store, which depends on this module); a test pins it to the tool.
pub const SEARCH_DOCS: &str = "search_docs";

/// A conversation as listed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Summary {
    pub id: String,
    pub title: String,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub turn_count: i64,
}

/// A conversation with its turns, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Conversation {
    #[serde(flatten)]
    pub summary: Summary,
    pub turns: Vec<Turn>,
}

/// Which page of a caller's conversations: newest first, `limit` of them after skipping
/// `offset`, only those updated at or after `since_ms` (the retention cutoff), and only those
/// holding every one of `words` (lowercase) in a question, an answer or the title.
#[derive(Debug, Clone, PartialEq)]
pub struct ListQuery {
    pub limit: u32,
    pub offset: u32,
    pub since_ms: i64,
    pub words: Vec<String>,
}

#[async_trait]
pub trait ConversationStore: Send + Sync {
    /// A new, empty conversation of `owner`.
    async fn create(
        &self,
        owner: &str,
        id: &str,
        title: &str,
        now_ms: i64,
    ) -> Result<Summary, ConversationError>;

    /// Adds `turn` to `owner`'s conversation `id` and says the id it was given; `None` when
    /// there is no such conversation of theirs (or it is older than `since_ms`).
    async fn append(
        &self,
        owner: &str,
        id: &str,
        turn: &Turn,
        since_ms: i64,
    ) -> Result<Option<i64>, ConversationError>;

    /// `owner`'s conversation `id` with its turns.
    async fn get(
        &self,
        owner: &str,
        id: &str,
        since_ms: i64,
    ) -> Result<Option<Conversation>, ConversationError>;

    async fn list(&self, owner: &str, query: &ListQuery)
        -> Result<Vec<Summary>, ConversationError>;

    /// Renames `owner`'s conversation `id`; `false` when there is none.
    async fn rename(
        &self,
        owner: &str,
        id: &str,
        title: &str,
        since_ms: i64,
    ) -> Result<bool, ConversationError>;

    /// Deletes `owner`'s conversation `id` and its turns; `false` when there was none.
    async fn delete(&self, owner: &str, id: &str) -> Result<bool, ConversationError>;

    /// Deletes every conversation (of any owner) last updated before `cutoff_ms`, with its
    /// turns, shares and feedback; how many went.
    async fn purge_before(&self, cutoff_ms: i64) -> Result<u64, ConversationError>;

    /// Keeps `share` of `owner`'s conversation; `false` when there is no such conversation of
    /// theirs (or it is older than `since_ms`).
    async fn share(
        &self,
        owner: &str,
        share: &NewShare,
        since_ms: i64,
    ) -> Result<bool, ConversationError>;

    /// `owner`'s shares that have not expired at `now_ms`, newest first.
    async fn shares(&self, owner: &str, now_ms: i64) -> Result<Vec<Share>, ConversationError>;

    /// Revokes (deletes) `owner`'s share `share_id`; `false` when there is none.
    async fn revoke(&self, owner: &str, share_id: &str) -> Result<bool, ConversationError>;

    /// The share whose token has `token_digest`, when it has not expired at `now_ms`, with its
    /// conversation as its owner keeps it.
    async fn open_share(
        &self,
        token_digest: &str,
        now_ms: i64,
    ) -> Result<Option<Shared>, ConversationError>;

    /// Keeps `giver`'s feedback, replacing theirs on the same turn; `false` when the turn is
    /// not in a conversation of theirs.
    async fn give_feedback(
        &self,
        giver: &AuthUser,
        feedback: &Feedback,
        now_ms: i64,
    ) -> Result<bool, ConversationError>;

    /// Every caller's feedback given at or after `since_ms` (of one rating, when given), oldest
    /// first, with the turn it is about.
    async fn feedback_since(
        &self,
        since_ms: i64,
        rating: Option<Rating>,
    ) -> Result<Vec<FeedbackRecord>, ConversationError>;
}

/// A new conversation id: 128 random bits as hex. Never derived from the owner or a counter,
/// so that one id tells nothing about another.
pub fn new_id() -> String {
    let bits: u128 = rand::random();
    format!("c_{bits:032x}")
}

/// Whether `id` can be a conversation id at all (anything else is unknown without a lookup).
pub fn well_formed_id(id: &str) -> bool {
    id.len() == 34
        && id.starts_with("c_")
        && id[2..]
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
}

/// A title from `text` (the first question, or one a caller gave): one line, trimmed, at
/// most [`MAX_TITLE_CHARS`] characters.
pub fn title_of(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut title: String = line.chars().take(MAX_TITLE_CHARS).collect();
    if line.chars().count() > MAX_TITLE_CHARS {
        title.push('…');
    }
    title
}

/// The oldest update a conversation may have and still be kept: `retention_days` before
/// `now_ms`; every conversation is kept when retention is 0.
pub fn retention_cutoff(now_ms: i64, retention_days: u32) -> i64 {
    if retention_days == 0 {
        return i64::MIN;
    }
    now_ms - i64::from(retention_days) * 86_400_000
}

/// The words of a search: lowercase, each at most 64 characters, at most
/// [`MAX_SEARCH_WORDS`], as LIKE patterns with `%`, `_` and `\` escaped.
pub fn search_patterns(query: Option<&str>) -> Vec<String> {
    query
        .unwrap_or_default()
        .split_whitespace()
        .take(MAX_SEARCH_WORDS)
        .map(|word| {
            let word: String = word.to_lowercase().chars().take(64).collect();
            let escaped = word
                .replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_");
            format!("%{escaped}%")
        })
        .collect()
}

/// The page size asked for, within 1..=[`MAX_PAGE`].
pub fn page_size(asked: Option<u32>) -> u32 {
    asked.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE)
}

/// The stored turns as the history of the next question: the last [`HISTORY_TURNS`].
pub fn history_of(turns: &[Turn]) -> Vec<HistoryMessage> {
    let skip = turns.len().saturating_sub(HISTORY_TURNS);
    turns
        .iter()
        .skip(skip)
        .flat_map(|turn| {
            [
                HistoryMessage {
                    role: HistoryRole::User,
                    content: turn.question.clone(),
                },
                HistoryMessage {
                    role: HistoryRole::Assistant,
                    content: turn.answer.clone(),
                },
            ]
        })
        .collect()
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned + Default>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_default()
}

pub(crate) fn decision_of(text: &str) -> Decision {
    serde_json::from_value(serde_json::Value::String(text.to_string()))
        .unwrap_or(Decision::Answered)
}

#[cfg(test)]
mod tests;
