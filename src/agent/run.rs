//! The loop's decisions as a step function: given the latest model turn, what happens next.
//! Pure; the runner that calls the model and the tools drives it.

use super::decision::{classify, library_text, Decision, IDK_MARKER};
use super::llm::{ChatTurn, ToolCall};

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run these tools (concurrently), append their results in this order, ask the model again.
    CallTools(Vec<ToolCall>),
    /// The answer is final.
    Done { answer: String, decision: Decision },
}

/// What the loop has done so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoopState {
    /// Rounds of tool calls already run.
    pub hops: u32,
    pub max_hops: u32,
}

impl LoopState {
    pub fn new(max_hops: u32) -> LoopState {
        LoopState { hops: 0, max_hops }
    }

    /// Decides on `turn`; counts a hop when it returns `CallTools`.
    pub fn next(&mut self, turn: &ChatTurn) -> Step {
        let calls = &turn.message.tool_calls;
        if !calls.is_empty() {
            if self.hops >= self.max_hops {
                return Step::Done {
                    answer: IDK_MARKER.to_string(),
                    decision: Decision::ToolLoopExhausted,
                };
            }
            self.hops += 1;
            return Step::CallTools(calls.clone());
        }
        let answer = turn.message.content.clone().unwrap_or_default();
        if answer.trim().is_empty() {
            // A model that stops with nothing to say has not answered.
            return Step::Done {
                answer: IDK_MARKER.to_string(),
                decision: Decision::Idk,
            };
        }
        let decision = classify(&answer, self.hops > 0);
        match library_text(decision) {
            Some(sentence) => Step::Done {
                answer: sentence.to_string(),
                decision,
            },
            None => Step::Done { answer, decision },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::decision::REFUSAL_PREFIX;
    use crate::agent::llm::{FinishReason, Message};
    use crate::agent::usage::Usage;

    fn turn(message: Message) -> ChatTurn {
        ChatTurn {
            finish: if message.tool_calls.is_empty() {
                FinishReason::Stop
            } else {
                FinishReason::ToolCalls
            },
            message,
            usage: Usage::default(),
            provider_cost: None,
            model: "m".into(),
        }
    }

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: "search_docs".into(),
            arguments: "{\"query\":\"co2\"}".into(),
        }
    }

    #[test]
    fn tool_calls_are_run_in_the_order_requested() {
        let mut state = LoopState::new(6);
        let step = state.next(&turn(Message::assistant_calls(vec![call("a"), call("b")])));
        assert_eq!(step, Step::CallTools(vec![call("a"), call("b")]));
        assert_eq!(state.hops, 1);
    }

    #[test]
    fn the_bound_ends_the_loop_with_the_idk_marker() {
        let mut state = LoopState::new(2);
        let calling = turn(Message::assistant_calls(vec![call("a")]));
        assert!(matches!(state.next(&calling), Step::CallTools(_)));
        assert!(matches!(state.next(&calling), Step::CallTools(_)));
        assert_eq!(
            state.next(&calling),
            Step::Done {
                answer: IDK_MARKER.into(),
                decision: Decision::ToolLoopExhausted
            }
        );
    }

    #[test]
    fn final_text_is_classified() {
        let mut fresh = LoopState::new(6);
        let refusal = format!("{REFUSAL_PREFIX} topics.");
        assert!(matches!(
            fresh.next(&turn(Message::assistant(refusal.clone()))),
            Step::Done {
                decision: Decision::Declined,
                ..
            }
        ));
        let mut after_tools = LoopState {
            hops: 1,
            max_hops: 6,
        };
        assert!(matches!(
            after_tools.next(&turn(Message::assistant(refusal))),
            Step::Done {
                decision: Decision::Idk,
                ..
            }
        ));
        assert_eq!(
            fresh.next(&turn(Message::assistant("NO_ANSWER"))),
            Step::Done {
                answer: IDK_MARKER.into(),
                decision: Decision::Idk
            }
        );
        assert!(matches!(
            after_tools.next(&turn(Message::assistant(IDK_MARKER))),
            Step::Done {
                decision: Decision::Idk,
                ..
            }
        ));
        assert!(matches!(
            fresh.next(&turn(Message::assistant("Hello!"))),
            Step::Done {
                decision: Decision::Answered,
                ..
            }
        ));
    }

    #[test]
    fn an_empty_answer_is_idk() {
        let mut state = LoopState::new(6);
        assert_eq!(
            state.next(&turn(Message::assistant("  "))),
            Step::Done {
                answer: IDK_MARKER.into(),
                decision: Decision::Idk
            }
        );
    }
}
