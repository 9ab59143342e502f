//! Streamed chunks, and their assembly into one turn: text deltas passed on as they come, tool
//! calls joined from their pieces.

use super::wire::*;
use crate::agent::llm::{ChatTurn, LlmError, TokenSink};
use serde::Deserialize;

#[derive(Deserialize)]
pub(super) struct WireChunk {
    pub(super) model: Option<String>,
    #[serde(default)]
    pub(super) choices: Vec<WireChunkChoice>,
    pub(super) usage: Option<WireUsage>,
    pub(super) error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
pub(super) struct WireChunkChoice {
    pub(super) delta: Option<WireDelta>,
    pub(super) finish_reason: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct WireDelta {
    pub(super) content: Option<String>,
    pub(super) tool_calls: Option<Vec<WireCallDelta>>,
}

#[derive(Deserialize)]
pub(super) struct WireCallDelta {
    pub(super) index: Option<usize>,
    pub(super) id: Option<String>,
    pub(super) function: Option<WireFunctionDelta>,
}

#[derive(Deserialize)]
pub(super) struct WireFunctionDelta {
    pub(super) name: Option<String>,
    pub(super) arguments: Option<String>,
}

#[derive(Default)]
pub(super) struct PartialCall {
    pub(super) index: usize,
    pub(super) id: Option<String>,
    pub(super) name: Option<String>,
    pub(super) arguments: String,
}

/// Collects a streamed turn: text deltas are passed on as they come; tool calls arrive in
/// pieces keyed by `index` (id and name in the first, the arguments spread over the rest).
#[derive(Default)]
pub(super) struct StreamAssembly {
    pub(super) content: String,
    pub(super) calls: Vec<PartialCall>,
    pub(super) finish: Option<String>,
    pub(super) usage: WireUsage,
    pub(super) model: Option<String>,
    pub(super) chunks: usize,
}

impl StreamAssembly {
    pub(super) fn push(
        &mut self,
        chunk: WireChunk,
        tokens: &TokenSink<'_>,
    ) -> Result<(), LlmError> {
        if let Some(error) = chunk.error {
            return Err(provider_error(&error));
        }
        self.chunks += 1;
        if self.model.is_none() {
            self.model = chunk.model;
        }
        if let Some(usage) = chunk.usage {
            self.usage = usage;
        }
        for choice in chunk.choices {
            if let Some(reason) = choice.finish_reason {
                self.finish = Some(reason);
            }
            let Some(delta) = choice.delta else { continue };
            if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
                tokens(&text);
                self.content.push_str(&text);
            }
            for piece in delta.tool_calls.unwrap_or_default() {
                self.add_call_piece(piece);
            }
        }
        Ok(())
    }

    pub(super) fn add_call_piece(&mut self, piece: WireCallDelta) {
        // Without an index, a piece with a new id starts a call; anything else continues the last.
        let index = piece.index.unwrap_or_else(|| {
            let last = self.calls.last();
            match (&piece.id, last) {
                (Some(id), Some(call)) if call.id.as_ref() != Some(id) => call.index + 1,
                (_, Some(call)) => call.index,
                (_, None) => 0,
            }
        });
        let position = match self.calls.iter().position(|c| c.index == index) {
            Some(position) => position,
            None => {
                self.calls.push(PartialCall {
                    index,
                    ..PartialCall::default()
                });
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[position];
        if let Some(id) = piece.id.filter(|id| !id.is_empty()) {
            call.id = Some(id);
        }
        if let Some(function) = piece.function {
            if let Some(name) = function.name.filter(|n| !n.is_empty()) {
                call.name = Some(name);
            }
            if let Some(arguments) = function.arguments {
                call.arguments.push_str(&arguments);
            }
        }
    }

    pub(super) fn finish(mut self) -> Result<ChatTurn, LlmError> {
        if self.chunks == 0 {
            return Err(LlmError::EmptyChoices);
        }
        if self.finish.is_none() {
            // No finish reason: the stream was cut off, and what came is not the answer.
            return Err(LlmError::Truncated);
        }
        self.calls.sort_by_key(|c| c.index);
        let calls = self
            .calls
            .into_iter()
            .map(|c| checked_call(c.id, c.name, c.arguments))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ChatTurn {
            finish: finish_reason(self.finish.as_deref(), !calls.is_empty())?,
            message: assistant_message(Some(self.content), calls),
            usage: self.usage.usage(),
            provider_cost: self.usage.cost(),
            model: self.model.unwrap_or_default(),
        })
    }
}
