//! One model turn read: the tools it asks for (within the hop and token limits) or its final
//! text classified. Pure; [`super::AnswerRun`] applies the rest of the rules to it.

use super::super::llm::{ChatTurn, ToolCall};
use crate::agent::verdict::decision::{classify, library_text, IDK_MARKER};
use crate::contract::Decision;

#[derive(Debug, Clone, PartialEq)]
pub enum TurnVerdict {
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
    /// Model tokens the loop's turns have used, and the request's budget (0: none).
    pub tokens: u64,
    pub max_tokens: u64,
}

impl LoopState {
    pub fn new(max_hops: u32) -> LoopState {
        LoopState {
            hops: 0,
            max_hops,
            tokens: 0,
            max_tokens: 0,
        }
    }

    /// With a token budget for the request (`MAX_TOKENS_PER_REQUEST`; 0 for none).
    pub fn with_token_budget(self, max_tokens: u64) -> LoopState {
        LoopState { max_tokens, ..self }
    }

    /// Decides on `turn`; counts a hop when it returns `CallTools`. Asking for tools when the
    /// next model call would pass the token budget (it reads at least this turn's prompt again)
    /// ends the answer as `budget_exhausted`.
    pub fn next(&mut self, turn: &ChatTurn) -> TurnVerdict {
        self.tokens += turn.usage.total_tokens;
        let calls = &turn.message.tool_calls;
        if !calls.is_empty() {
            if self.hops >= self.max_hops {
                return TurnVerdict::Done {
                    answer: IDK_MARKER.to_string(),
                    decision: Decision::ToolLoopExhausted,
                };
            }
            let next_call = turn.usage.prompt_tokens + turn.usage.completion_tokens;
            if self.max_tokens > 0 && self.tokens + next_call > self.max_tokens {
                return TurnVerdict::Done {
                    answer: IDK_MARKER.to_string(),
                    decision: Decision::BudgetExhausted,
                };
            }
            self.hops += 1;
            return TurnVerdict::CallTools(calls.clone());
        }
        let answer = turn.message.content.clone().unwrap_or_default();
        if answer.trim().is_empty() {
            // A model that stops with nothing to say has not answered.
            return TurnVerdict::Done {
                answer: IDK_MARKER.to_string(),
                decision: Decision::Idk,
            };
        }
        let decision = classify(&answer, self.hops > 0);
        match library_text(decision) {
            Some(sentence) => TurnVerdict::Done {
                answer: sentence.to_string(),
                decision,
            },
            None => TurnVerdict::Done { answer, decision },
        }
    }
}

#[cfg(test)]
mod budget_tests {
    use super::*;
    use crate::agent::llm::{FinishReason, Message, ToolCall};
    use crate::contract::Usage;

    fn calling(prompt: u64, completion: u64) -> ChatTurn {
        ChatTurn {
            finish: FinishReason::ToolCalls,
            message: Message::assistant_calls(vec![ToolCall {
                id: "c".into(),
                name: "search_docs".into(),
                arguments: "{}".into(),
            }]),
            usage: Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: prompt + completion,
                ..Usage::default()
            },
            provider_cost: None,
            model: "m".into(),
        }
    }

    /// Turns of (prompt, completion) tokens, the budget, and the decision after the last turn
    /// (`None`: the tools are called).
    type BudgetCase = (&'static [(u64, u64)], u64, Option<Decision>);

    #[test]
    fn the_loop_stops_before_a_call_that_would_pass_the_token_budget() {
        let cases: [BudgetCase; 4] = [
            (&[(1000, 50)], 0, None),
            (&[(1000, 50)], 5000, None),
            (
                &[(1000, 50), (2000, 50)],
                5000,
                Some(Decision::BudgetExhausted),
            ),
            (&[(4000, 50)], 5000, Some(Decision::BudgetExhausted)),
        ];
        for (turns, budget, expected) in cases {
            let mut state = LoopState::new(6).with_token_budget(budget);
            let mut step = None;
            for (prompt, completion) in turns {
                step = Some(state.next(&calling(*prompt, *completion)));
            }
            let decision = match step.unwrap() {
                TurnVerdict::Done { decision, .. } => Some(decision),
                TurnVerdict::CallTools(_) => None,
            };
            assert_eq!(decision, expected, "{turns:?} within {budget}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::llm::{FinishReason, Message};
    use crate::agent::verdict::decision::REFUSAL_PREFIX;
    use crate::contract::Usage;

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
        assert_eq!(step, TurnVerdict::CallTools(vec![call("a"), call("b")]));
        assert_eq!(state.hops, 1);
    }

    #[test]
    fn the_bound_ends_the_loop_with_the_idk_marker() {
        let mut state = LoopState::new(2);
        let calling = turn(Message::assistant_calls(vec![call("a")]));
        assert!(matches!(state.next(&calling), TurnVerdict::CallTools(_)));
        assert!(matches!(state.next(&calling), TurnVerdict::CallTools(_)));
        assert_eq!(
            state.next(&calling),
            TurnVerdict::Done {
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
            TurnVerdict::Done {
                decision: Decision::Declined,
                ..
            }
        ));
        let mut after_tools = LoopState {
            hops: 1,
            ..LoopState::new(6)
        };
        assert!(matches!(
            after_tools.next(&turn(Message::assistant(refusal))),
            TurnVerdict::Done {
                decision: Decision::Idk,
                ..
            }
        ));
        assert_eq!(
            fresh.next(&turn(Message::assistant("NO_ANSWER"))),
            TurnVerdict::Done {
                answer: IDK_MARKER.into(),
                decision: Decision::Idk
            }
        );
        assert!(matches!(
            after_tools.next(&turn(Message::assistant(IDK_MARKER))),
            TurnVerdict::Done {
                decision: Decision::Idk,
                ..
            }
        ));
        assert!(matches!(
            fresh.next(&turn(Message::assistant("Hello!"))),
            TurnVerdict::Done {
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
            TurnVerdict::Done {
                answer: IDK_MARKER.into(),
                decision: Decision::Idk
            }
        );
    }
}
