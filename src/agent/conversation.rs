//! A conversation for `chat`: the turns so far (sent back as history with each question), the
//! model chosen for the session, the last answer (for `/trace`) and the session's totals (for
//! `/cost`). Pure bookkeeping; the REPL in the binary does the I/O.

use crate::contract::Usage;
use crate::contract::{AskResponse, HistoryMessage, HistoryRole, Question};

#[derive(Debug, Default)]
pub struct Conversation {
    history: Vec<HistoryMessage>,
    /// `None`: the configured answer model.
    pub model: Option<String>,
    pub top_k: Option<usize>,
    pub last: Option<AskResponse>,
    pub totals: SessionTotals,
}

#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct SessionTotals {
    pub answers: u32,
    pub usage: Usage,
    /// Summed over the answers the price table could price.
    pub estimated_usd: f64,
    /// Answers from a model the price table does not list.
    pub unpriced_answers: u32,
    /// `None` until the provider reports a cost.
    pub provider_usd: Option<f64>,
}

impl Conversation {
    pub fn new(model: Option<String>, top_k: Option<usize>) -> Conversation {
        Conversation {
            model,
            top_k,
            ..Conversation::default()
        }
    }

    /// The next question, carrying the conversation so far.
    pub fn question(&self, text: &str) -> Question {
        Question {
            text: text.to_string(),
            history: self.history.clone(),
            model: self.model.clone(),
            top_k: self.top_k,
        }
    }

    /// Goes on from turns kept elsewhere (`chat --resume`): they are the history.
    pub fn resume(&mut self, history: Vec<HistoryMessage>) {
        self.history = history;
    }

    /// Remembers a completed exchange. A cancelled or failed question is never recorded, so
    /// the model does not see a question without its answer.
    pub fn record(&mut self, question: &str, response: AskResponse) {
        self.history.push(HistoryMessage {
            role: HistoryRole::User,
            content: question.to_string(),
        });
        self.history.push(HistoryMessage {
            role: HistoryRole::Assistant,
            content: response.answer.clone(),
        });
        self.totals.answers += 1;
        self.totals.usage += response.usage;
        match response.cost.estimated_usd {
            Some(usd) => self.totals.estimated_usd += usd,
            None => self.totals.unpriced_answers += 1,
        }
        if let Some(usd) = response.cost.provider_usd {
            *self.totals.provider_usd.get_or_insert(0.0) += usd;
        }
        self.last = Some(response);
    }

    /// Forgets the turns; the model choice and the totals stay.
    pub fn reset(&mut self) {
        self.history.clear();
        self.last = None;
    }

    pub fn turns(&self) -> usize {
        self.history.len() / 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Cost;
    use crate::contract::Decision;
    use crate::contract::RetrievalReport;

    fn response(answer: &str, tokens: u64, provider: Option<f64>) -> AskResponse {
        AskResponse {
            answer: answer.into(),
            citations: vec![],
            trace: vec![],
            usage: Usage {
                prompt_tokens: tokens,
                completion_tokens: 0,
                total_tokens: tokens,
                ..Usage::default()
            },
            cost: Cost {
                estimated_usd: Some(0.5),
                provider_usd: provider,
            },
            idk: false,
            decision: Decision::Answered,
            model: "m".into(),
            retrieval: RetrievalReport::default(),
            trace_id: None,
        }
    }

    #[test]
    fn questions_carry_the_exchanges_so_far() {
        let mut conversation = Conversation::default();
        assert!(conversation.question("first").history.is_empty());
        conversation.record("first", response("one", 10, None));
        conversation.record("second", response("two", 5, Some(0.25)));
        let mut unpriced = response("three", 1, None);
        unpriced.cost.estimated_usd = None;
        conversation.record("third", unpriced);
        let next = conversation.question("third");
        let contents: Vec<&str> = next.history.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(
            contents,
            vec!["first", "one", "second", "two", "third", "three"]
        );
        assert_eq!(next.history[1].role, HistoryRole::Assistant);
        assert_eq!(conversation.turns(), 3);
        assert_eq!(conversation.totals.usage.total_tokens, 16);
        assert_eq!(conversation.totals.estimated_usd, 1.0);
        assert_eq!(conversation.totals.unpriced_answers, 1);
        assert_eq!(conversation.totals.provider_usd, Some(0.25));
    }

    #[test]
    fn reset_forgets_turns_but_keeps_model_and_totals() {
        let mut conversation = Conversation::new(Some("other/model".into()), None);
        conversation.record("q", response("a", 10, None));
        conversation.reset();
        assert_eq!(conversation.turns(), 0);
        assert!(conversation.last.is_none());
        assert_eq!(
            conversation.question("x").model.as_deref(),
            Some("other/model")
        );
        assert_eq!(conversation.totals.answers, 1);
    }
}
