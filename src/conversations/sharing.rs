//! Share links: a conversation shown read-only to someone else, through a random token that is
//! not the conversation's id. The store keeps only the token's SHA-256, so a copy of the
//! database opens no share. On every view the turns are re-checked against the **viewer**:
//! [`view_turn`] drops what the viewer may not read (a restricted citation, the sentences that
//! cite it, the answer of a turn that read live data of a building the viewer cannot see).
//! The lookups those checks need (which passages the viewer may read, which buildings they
//! see) are made by the caller where the data lives; everything here is pure.

use super::Turn;
use crate::citations::{markers, Citation};
use crate::contract::Decision;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// How long a share lasts when its maker does not say, and the longest it may last.
pub const DEFAULT_DAYS: u32 = 7;
pub const MAX_DAYS: u32 = 90;

/// What replaces a sentence that cites a passage the viewer may not read.
pub const RESTRICTED_SENTENCE: &str = "[A sentence from a restricted source is not shown.]";
/// What replaces an answer the viewer may not see whole.
pub const WITHHELD_ANSWER: &str =
    "[This answer is withheld: it draws on data you do not have access to.]";
/// How a citation of a passage the viewer may not read is shown.
pub const RESTRICTED_SOURCE: &str = "restricted source";

/// A share as its maker lists it (never its token, which only its maker ever saw, once).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Share {
    pub id: String,
    pub conversation_id: String,
    pub created_ms: i64,
    pub expires_ms: i64,
    /// Viewable without signing in.
    pub public: bool,
}

/// A share to be kept: its listing and its token's digest.
#[derive(Debug, Clone, PartialEq)]
pub struct NewShare {
    pub share: Share,
    pub token_digest: String,
}

/// What a token opens: the share, and the conversation as its owner keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Shared {
    pub share: Share,
    /// Who made it: the one viewer who sees every answer whole.
    pub owner: String,
    pub title: String,
    pub turns: Vec<Turn>,
}

/// A turn as one viewer may see it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SharedTurn {
    pub question: String,
    pub answer: String,
    pub citations: Vec<SharedCitation>,
    pub decision: Decision,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub at_ms: i64,
    /// Set when the answer is not shown to this viewer, saying why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub withheld: Option<String>,
}

/// A citation as a viewer sees it: whole when they may read its passage, else only that it
/// exists.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(untagged)]
pub enum SharedCitation {
    Readable(Citation),
    Restricted { restricted: bool, source: String },
}

impl SharedCitation {
    fn restricted() -> SharedCitation {
        SharedCitation::Restricted {
            restricted: true,
            source: RESTRICTED_SOURCE.to_string(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShareRefusal {
    #[error("a share lasts 1 to {MAX_DAYS} days")]
    BadExpiry,
    #[error(
        "this conversation cannot be shared publicly: it cites a passage that is not public, or \
         an answer read live building data; share it with signed-in viewers instead"
    )]
    NotPublic,
}

/// A new share of `conversation_id`: a random id for listing and revoking, and a random
/// 256-bit token (URL-safe base64) that only the returned value holds in the clear.
pub fn new_share(
    conversation_id: &str,
    now_ms: i64,
    days: Option<u32>,
    public: bool,
) -> Result<(NewShare, String), ShareRefusal> {
    let days = days.unwrap_or(DEFAULT_DAYS);
    if !(1..=MAX_DAYS).contains(&days) {
        return Err(ShareRefusal::BadExpiry);
    }
    let id_bits: u128 = rand::random();
    let token_bytes: [u8; 32] = rand::random();
    let token = base64::Engine::encode(
        &base64::engine::general_purpose::URL_SAFE_NO_PAD,
        token_bytes,
    );
    let share = Share {
        id: format!("s_{id_bits:032x}"),
        conversation_id: conversation_id.to_string(),
        created_ms: now_ms,
        expires_ms: now_ms + i64::from(days) * 86_400_000,
        public,
    };
    let token_digest = token_digest(&token);
    Ok((
        NewShare {
            share,
            token_digest,
        },
        token,
    ))
}

/// What the store keeps of a token.
pub fn token_digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Whether `token` can be a share token at all (anything else is unknown without a lookup).
pub fn well_formed_token(token: &str) -> bool {
    token.len() == 43
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Whether `id` can be a share id.
pub fn well_formed_share_id(id: &str) -> bool {
    id.len() == 34
        && id.starts_with("s_")
        && id[2..]
            .chars()
            .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
}

/// Whether a share made of `turns` may be viewed by anyone, signed in or not: every cited
/// passage is public (`is_public` asks the store) and no answer read live data.
pub fn may_be_public(turns: &[Turn], is_public: impl Fn(&Citation) -> bool) -> bool {
    turns
        .iter()
        .all(|turn| turn.live.is_none() && turn.citations.iter().all(&is_public))
}

/// `turn` as a viewer sees it. `readable` says whether the viewer may read a citation's
/// passage; `live_visible` whether they see every building whose live data the answer read.
/// The answer is withheld whole when it read such data of a building they cannot see, or
/// when a restricted citation cannot be tied to its sentences.
pub fn view_turn(
    turn: &Turn,
    readable: impl Fn(&Citation) -> bool,
    live_visible: bool,
) -> SharedTurn {
    let restricted: Vec<&str> = turn
        .citations
        .iter()
        .filter(|citation| !readable(citation))
        .map(|citation| citation.chunk_id.as_str())
        .collect();
    let citations = turn
        .citations
        .iter()
        .map(|citation| {
            if restricted.contains(&citation.chunk_id.as_str()) {
                SharedCitation::restricted()
            } else {
                SharedCitation::Readable(citation.clone())
            }
        })
        .collect();
    let (answer, withheld) = if !live_visible {
        (WITHHELD_ANSWER.to_string(), Some("live_data".to_string()))
    } else {
        match without_sentences_citing(&turn.answer, &restricted) {
            Some(answer) => (answer, None),
            None => (
                WITHHELD_ANSWER.to_string(),
                Some("restricted_source".to_string()),
            ),
        }
    };
    SharedTurn {
        question: turn.question.clone(),
        answer,
        citations,
        decision: turn.decision,
        language: turn.language.clone(),
        at_ms: turn.at_ms,
        withheld,
    }
}

/// `answer` with every sentence that cites one of `restricted` (chunk ids, as `[^id]`) replaced
/// by [`RESTRICTED_SENTENCE`]; `None` when a restricted marker appears nowhere in the text
/// (the citation was tied to the answer by the library, so its sentence is not known).
pub fn without_sentences_citing(answer: &str, restricted: &[&str]) -> Option<String> {
    if restricted.is_empty() {
        return Some(answer.to_string());
    }
    let found = markers(answer);
    let restricted_ranges: Vec<std::ops::Range<usize>> = found
        .iter()
        .filter(|(_, id)| restricted.contains(id))
        .map(|(range, _)| range.clone())
        .collect();
    let every_one_found = restricted
        .iter()
        .all(|marker| found.iter().any(|(_, id)| id == marker));
    if !every_one_found {
        return None;
    }
    let mut shown = String::with_capacity(answer.len());
    for sentence in sentences(answer, &found) {
        let cites_restricted = restricted_ranges
            .iter()
            .any(|range| range.start >= sentence.start && range.end <= sentence.end);
        if cites_restricted {
            let text = &answer[sentence.clone()];
            let leading = &text[..text.len() - text.trim_start().len()];
            let trailing = &text[text.trim_end().len()..];
            shown.push_str(leading);
            shown.push_str(RESTRICTED_SENTENCE);
            shown.push_str(trailing);
        } else {
            shown.push_str(&answer[sentence]);
        }
    }
    Some(shown)
}

/// The byte ranges of `text`'s sentences, covering it whole. A sentence ends after `.`, `!`,
/// `?` or `。` and the markers and closing brackets right after it, where whitespace or the
/// end follows; or at a line break. Markers (`found`) are never split.
fn sentences(text: &str, found: &[(std::ops::Range<usize>, &str)]) -> Vec<std::ops::Range<usize>> {
    let inside_marker = |at: usize| {
        found
            .iter()
            .any(|(range, _)| range.start < at && at < range.end)
    };
    let mut ranges = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if inside_marker(at) {
            continue;
        }
        let end_here = match c {
            '\n' => Some(at + 1),
            '.' | '!' | '?' | '。' => {
                let mut end = at + c.len_utf8();
                loop {
                    if let Some((range, _)) = found.iter().find(|(range, _)| range.start == end) {
                        end = range.end;
                        continue;
                    }
                    match text[end..].chars().next() {
                        Some(next @ (')' | ']' | '"' | '\'' | '»' | '”')) => {
                            end += next.len_utf8()
                        }
                        _ => break,
                    }
                }
                match text[end..].chars().next() {
                    None => Some(end),
                    Some(next) if next.is_whitespace() => Some(end),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some(end) = end_here {
            // Trailing spaces belong to the sentence they follow.
            let mut end = end;
            while let Some(next) = text[end..].chars().next() {
                if next == ' ' || next == '\t' {
                    end += next.len_utf8();
                } else {
                    break;
                }
            }
            ranges.push(start..end);
            start = end;
            while chars.peek().is_some_and(|(at, _)| *at < end) {
                chars.next();
            }
        }
    }
    if start < text.len() {
        ranges.push(start..text.len());
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Usage;

    fn citation(id: &str) -> Citation {
        Citation {
            marker: format!("[^{id}]"),
            chunk_id: id.to_string(),
            source: format!("{id}.md"),
            section: "S".to_string(),
            attributed: false,
            excerpt: format!("excerpt of {id}"),
        }
    }

    fn turn(answer: &str, cited: &[&str], live: Option<Vec<String>>) -> Turn {
        Turn {
            id: 1,
            question: "q".to_string(),
            answer: answer.to_string(),
            citations: cited.iter().map(|marker| citation(marker)).collect(),
            decision: Decision::Answered,
            model: "m".to_string(),
            usage: Usage::default(),
            trace_id: None,
            language: Some("en".to_string()),
            at_ms: 5,
            live,
        }
    }

    #[test]
    fn sentences_citing_a_restricted_passage_are_replaced() {
        let cases = [
            (
                "Poor is above 1000 ppm [^pub]. The fan code is 4711 [^adm]. Open a window.",
                "Poor is above 1000 ppm [^pub]. [A sentence from a restricted source is not shown.] Open a window.",
            ),
            (
                "Code 4711.[^adm] Poor is 1000 ppm.[^pub]",
                "[A sentence from a restricted source is not shown.] Poor is 1000 ppm.[^pub]",
            ),
            (
                "- first [^pub]\n- code 4711 [^adm]\n- last",
                "- first [^pub]\n[A sentence from a restricted source is not shown.]\n- last",
            ),
            ("Version 2.5 uses code 4711 [^adm].", "[A sentence from a restricted source is not shown.]"),
        ];
        for (answer, shown) in cases {
            assert_eq!(
                without_sentences_citing(answer, &["adm"]).as_deref(),
                Some(shown),
                "{answer}"
            );
        }
    }

    #[test]
    fn nothing_restricted_leaves_the_answer_alone_and_an_unplaced_marker_withholds_it() {
        let answer = "Poor is above 1000 ppm [^pub].";
        assert_eq!(
            without_sentences_citing(answer, &[]).as_deref(),
            Some(answer)
        );
        assert_eq!(without_sentences_citing(answer, &["adm"]), None);
    }

    #[test]
    fn a_viewer_sees_readable_citations_and_only_that_others_exist() {
        let shared = turn("A [^pub]. B 4711 [^adm].", &["pub", "adm"], None);
        let seen = view_turn(&shared, |c| c.chunk_id == "pub", true);
        assert_eq!(
            seen.answer,
            "A [^pub]. [A sentence from a restricted source is not shown.]"
        );
        assert_eq!(seen.citations[0], SharedCitation::Readable(citation("pub")));
        assert_eq!(seen.citations[1], SharedCitation::restricted());
        let bytes = serde_json::to_string(&seen).unwrap();
        assert!(!bytes.contains("adm") && !bytes.contains("4711"), "{bytes}");
        assert_eq!(seen.withheld, None);
    }

    #[test]
    fn live_data_of_a_building_the_viewer_cannot_see_withholds_the_answer() {
        let shared = turn("6 people are in Aurora.", &[], Some(vec!["hq".into()]));
        let seen = view_turn(&shared, |_| true, false);
        assert_eq!(seen.answer, WITHHELD_ANSWER);
        assert_eq!(seen.withheld.as_deref(), Some("live_data"));
        assert_eq!(view_turn(&shared, |_| true, true).answer, shared.answer);
    }

    #[test]
    fn only_public_passages_and_no_live_data_may_be_shared_publicly() {
        let public = |c: &Citation| c.chunk_id == "pub";
        assert!(may_be_public(&[turn("a", &["pub"], None)], public));
        assert!(!may_be_public(&[turn("a", &["pub", "adm"], None)], public));
        assert!(!may_be_public(&[turn("a", &["pub"], Some(vec![]))], public));
    }

    #[test]
    fn tokens_are_random_and_only_their_digest_is_kept() {
        let (first, token) = new_share("c", 0, None, false).unwrap();
        let (second, other) = new_share("c", 0, Some(90), false).unwrap();
        assert_ne!(token, other);
        assert!(well_formed_token(&token), "{token}");
        assert!(well_formed_share_id(&first.share.id));
        assert_eq!(first.token_digest, token_digest(&token));
        assert!(!first.token_digest.contains(&token));
        assert_eq!(first.share.expires_ms, 7 * 86_400_000);
        assert_eq!(second.share.expires_ms, 90 * 86_400_000);
        assert_eq!(
            new_share("c", 0, Some(0), false).unwrap_err(),
            ShareRefusal::BadExpiry
        );
        assert_eq!(
            new_share("c", 0, Some(91), false).unwrap_err(),
            ShareRefusal::BadExpiry
        );
        assert!(!well_formed_token("c_0"));
    }
}
