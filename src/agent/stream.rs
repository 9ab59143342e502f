//! The answer's text on its way to a client while it streams: the code gate, the citation
//! marker filter and the link guard in turn, what the client shows so far, and the `retract`
//! that withdraws it when the library discards or replaces that text.

use crate::agent::verdict::decision::CodeGate;
use crate::citations;
use crate::contract::AgentEvent;
use tokio::sync::mpsc::UnboundedSender;

/// The answer's text as it streams, through a [`citations::StreamFilter`] that knows the
/// chunks returned so far (no invented marker is ever sent, not even in part) and a
/// [`crate::agent::verdict::links::StreamGuard`] (no link, image or tag to a host not allowed is ever sent,
/// not even in part).
pub(super) struct StreamedTokens<'a> {
    sender: &'a UnboundedSender<AgentEvent>,
    state: std::sync::Mutex<StreamState>,
}

#[derive(Default)]
struct StreamState {
    codes: CodeGate,
    markers: citations::StreamFilter,
    links: crate::agent::verdict::links::StreamGuard,
    known: std::collections::HashSet<String>,
    /// The text sent since the last retract: what a client shows now.
    shown: String,
}

impl StreamState {
    /// What of `delta` may be shown now: past the code gate, the marker filter and the link
    /// guard.
    fn push(&mut self, delta: &str) -> String {
        let passed = self.codes.push(delta);
        let passed = self.filter_markers(&passed);
        self.links.push(&passed)
    }

    /// A model turn ended: what is held back was neither a code nor a marker, and can no
    /// longer grow into a link.
    fn end_of_turn(&mut self) -> String {
        let held = self.codes.finish();
        let mut rest = self.filter_markers(&held);
        rest.push_str(&self.markers.finish());
        let mut shown = self.links.push(&rest);
        shown.push_str(&self.links.finish());
        shown
    }

    fn filter_markers(&mut self, text: &str) -> String {
        let known = &self.known;
        self.markers.push(text, |id| known.contains(id))
    }
}

impl<'a> StreamedTokens<'a> {
    pub(super) fn new(
        sender: &'a UnboundedSender<AgentEvent>,
        allowed_hosts: &[String],
    ) -> StreamedTokens<'a> {
        StreamedTokens {
            sender,
            state: std::sync::Mutex::new(StreamState {
                links: crate::agent::verdict::links::StreamGuard::new(allowed_hosts),
                ..StreamState::default()
            }),
        }
    }

    pub(super) fn push(&self, delta: &str) {
        let shown = self.lock().push(delta);
        self.send(shown);
    }

    /// A model turn ended: what is held back was neither a code nor a marker.
    pub(super) fn end_of_turn(&self) {
        let rest = self.lock().end_of_turn();
        self.send(rest);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, StreamState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Chunks a marker may now name.
    pub(super) fn allow<'i>(&self, ids: impl Iterator<Item = &'i String>) {
        self.lock().known.extend(ids.cloned());
    }

    /// Sends text as it is (the library's own sentences).
    pub(super) fn send(&self, text: String) {
        if !text.is_empty() {
            self.lock().shown.push_str(&text);
            // A receiver that has gone away (a client that hung up) only loses the deltas.
            let _ = self.sender.send(AgentEvent::Token { text });
        }
    }

    /// Withdraws what was shown (a `retract` event when anything was) and starts afresh:
    /// whatever the filters still held is dropped with it.
    pub(super) fn retract(&self) {
        let mut state = self.lock();
        let had_text = !state.shown.is_empty();
        *state = StreamState {
            links: crate::agent::verdict::links::StreamGuard::new(state.links.allowed_hosts()),
            known: std::mem::take(&mut state.known),
            ..StreamState::default()
        };
        drop(state);
        if had_text {
            let _ = self.sender.send(AgentEvent::Retract);
        }
    }

    /// The answer is final: when what the client shows does not read as `answer` (other words,
    /// not just other spacing or a marker moved past its punctuation), it is withdrawn and
    /// `answer` sent, so that a client that joins the tokens ends with the answer.
    pub(super) fn settle(&self, answer: &str) {
        let shown = std::mem::take(&mut self.lock().shown);
        if visible_words(&shown) != visible_words(answer) {
            if !shown.is_empty() {
                let _ = self.sender.send(AgentEvent::Retract);
            }
            self.send(answer.to_string());
        }
    }
}

/// The letters and digits of `text` outside citation markers: what a reader compares.
fn visible_words(text: &str) -> String {
    let mut words = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("[^") {
        words.extend(rest[..at].chars().filter(|c| c.is_alphanumeric()));
        rest = match rest[at..].find(']') {
            Some(end) => &rest[at + end + 1..],
            None => "",
        };
    }
    words.extend(rest.chars().filter(|c| c.is_alphanumeric()));
    words
}
