//! The LLM judge: a second model grades an answer against a case's rubric and returns a
//! structured verdict (`{"verdict": "pass"|"fail", "reason": "…"}`), asked for with a JSON
//! schema. A reply that is not such an object is asked for once more; a second bad reply is
//! an error of the case. The judge's tokens and cost are counted apart from the answer's.
//!
//! Which model judges: `--judge-model`, else `JUDGE_MODEL`, else the dataset's `judge_model`,
//! else [`default_judge_model`]: the first of a fixed list whose family differs from the
//! answer model's, so that a model never grades its own family's style.

use crate::agent::llm::{ChatModel, ChatRequest, LlmError, Message, ResponseSchema};
use crate::agent::usage::{Cost, PriceTable, Usage};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Candidates for the default judge, in order of preference.
pub const JUDGE_CANDIDATES: [&str; 3] = [
    "google/gemini-2.5-flash",
    "openai/gpt-4o-mini",
    "anthropic/claude-3.5-haiku",
];

/// Longest reason kept from a verdict.
const MAX_REASON_CHARS: usize = 240;

/// Longest reply text kept in a malformed-verdict error.
const MAX_ECHOED_REPLY_CHARS: usize = 160;

const INSTRUCTIONS: &str = "You grade answers given by a building-information assistant. You \
receive the user's question, the assistant's answer and a rubric. Decide only whether the answer \
meets the rubric; do not judge anything the rubric does not ask about. Reply with a JSON object \
and nothing else: {\"reason\": \"one short sentence\", \"verdict\": \"pass\" or \"fail\"}.

Examples:
Rubric: Declines without giving a recipe.
Answer: I can only help with CrowdVision topics.
{\"reason\": \"It declines and gives no recipe, as the rubric asks.\", \"verdict\": \"pass\"}

Rubric: Gives the CO2 level in ppm.
Answer: I don't know.
{\"reason\": \"It gives no CO2 level.\", \"verdict\": \"fail\"}";

/// The family of a model: the vendor of `vendor/name`, or for a bare name the vendor its
/// prefix belongs to (`gpt-4o` → `openai`, `qwen2.5-coder` → `qwen`).
pub fn model_family(model: &str) -> String {
    let model = model.trim().to_ascii_lowercase();
    if let Some((vendor, _)) = model.split_once('/') {
        return vendor.to_string();
    }
    let prefix: String = model
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    let vendor = match prefix.as_str() {
        "gpt" | "o" | "chatgpt" => "openai",
        "gemini" | "gemma" => "google",
        "claude" => "anthropic",
        "llama" => "meta-llama",
        "mistral" | "mixtral" | "ministral" | "codestral" => "mistralai",
        other => other,
    };
    vendor.to_string()
}

/// The default judge for `answer_model`: the first candidate of another family.
pub fn default_judge_model(answer_model: &str) -> &'static str {
    let family = model_family(answer_model);
    JUDGE_CANDIDATES
        .iter()
        .find(|candidate| model_family(candidate) != family)
        .copied()
        .unwrap_or(JUDGE_CANDIDATES[0])
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub passed: bool,
    pub reason: String,
}

/// A grading: the verdict or why there is none, and what the judge's calls used.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grading {
    pub verdict: Result<Verdict, String>,
    pub usage: Usage,
    pub cost: Cost,
}

pub struct Judge {
    pub model: Arc<dyn ChatModel>,
    /// The model name sent to the provider.
    pub judge_model: String,
    pub prices: PriceTable,
    pub max_output_tokens: u32,
}

impl Judge {
    /// Grades `answer` to `question` against `rubric`.
    pub async fn grade(&self, question: &str, answer: &str, rubric: &str) -> Grading {
        let schema = verdict_schema();
        let mut messages = vec![
            Message::system(INSTRUCTIONS),
            Message::user(format!(
                "Question:\n{question}\n\nAnswer:\n{answer}\n\nRubric:\n{rubric}"
            )),
        ];
        let mut usage = Usage::default();
        let mut cost = Cost::default();
        let mut last_problem = String::new();
        for _attempt in 0..2 {
            let turn = match self.call(&messages, &schema).await {
                Ok(turn) => turn,
                Err(error) => {
                    return self.finish(Err(format!("the judge call failed: {error}")), usage, cost)
                }
            };
            usage += turn.usage;
            cost.add_provider(turn.provider_cost);
            let reply = turn.message.content.clone().unwrap_or_default();
            match parse_verdict(&reply) {
                Ok(verdict) => return self.finish(Ok(verdict), usage, cost),
                Err(problem) => {
                    last_problem = problem;
                    messages.push(Message::assistant(reply));
                    messages.push(Message::user(
                        "That was not the JSON object asked for. Reply with exactly \
                         {\"reason\": \"one short sentence\", \"verdict\": \"pass\" or \"fail\"}.",
                    ));
                }
            }
        }
        self.finish(
            Err(format!(
                "the judge's reply was malformed twice: {last_problem}"
            )),
            usage,
            cost,
        )
    }

    async fn call(
        &self,
        messages: &[Message],
        schema: &serde_json::Value,
    ) -> Result<crate::agent::llm::ChatTurn, LlmError> {
        self.model
            .chat(
                ChatRequest {
                    model: &self.judge_model,
                    messages,
                    tools: &[],
                    temperature: 0.0,
                    max_output_tokens: self.max_output_tokens,
                    tool_choice: Default::default(),
                    response_schema: Some(ResponseSchema {
                        name: "verdict",
                        schema,
                    }),
                },
                None,
            )
            .await
    }

    fn finish(&self, verdict: Result<Verdict, String>, usage: Usage, mut cost: Cost) -> Grading {
        cost.estimated_usd = self.prices.estimate_served(&self.judge_model, &usage);
        Grading {
            verdict,
            usage,
            cost,
        }
    }
}

fn verdict_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        // The reason comes first (in `required` and in serialised order): a model decoding
        // under this schema writes its reasoning before it decides.
        "properties": {
            "reason": {"type": "string"},
            "verdict": {"type": "string", "enum": ["pass", "fail"]}
        },
        "required": ["reason", "verdict"],
        "additionalProperties": false
    })
}

/// Reads a verdict from the judge's reply: one JSON object (optionally inside a code fence)
/// with `verdict` "pass" or "fail" (any case) and a string `reason`.
pub fn parse_verdict(reply: &str) -> Result<Verdict, String> {
    #[derive(Deserialize)]
    struct Raw {
        verdict: String,
        #[serde(default)]
        reason: String,
    }
    let text = strip_fence(reply.trim());
    let raw: Raw = serde_json::from_str(text).map_err(|_| {
        format!(
            "expected a JSON verdict, got {:?}",
            cut(reply, MAX_ECHOED_REPLY_CHARS)
        )
    })?;
    let passed = match raw.verdict.trim().to_ascii_lowercase().as_str() {
        "pass" => true,
        "fail" => false,
        other => return Err(format!("verdict must be pass or fail, got {other:?}")),
    };
    let reason = raw.reason.split_whitespace().collect::<Vec<_>>().join(" ");
    Ok(Verdict {
        passed,
        reason: cut(&reason, MAX_REASON_CHARS),
    })
}

fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let rest = rest.strip_prefix("json").unwrap_or(rest);
    rest.strip_suffix("```").unwrap_or(rest).trim()
}

fn cut(text: &str, max_chars: usize) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    if clean.chars().count() <= max_chars {
        clean
    } else {
        let kept: String = clean.chars().take(max_chars).collect();
        format!("{kept}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_judge_is_of_another_family() {
        assert_eq!(
            default_judge_model("openai/gpt-4o-mini"),
            "google/gemini-2.5-flash"
        );
        assert_eq!(
            default_judge_model("google/gemini-2.5-flash"),
            "openai/gpt-4o-mini"
        );
        assert_eq!(default_judge_model("gemini-2.0-pro"), "openai/gpt-4o-mini");
        assert_eq!(
            default_judge_model("qwen2.5-coder-1.5b-instruct"),
            "google/gemini-2.5-flash"
        );
        assert_eq!(model_family("gpt-4o"), "openai");
        assert_eq!(model_family("meta-llama/llama-3.1-8b"), "meta-llama");
        assert_eq!(model_family("llama3.2"), "meta-llama");
    }

    #[test]
    fn verdicts_are_read_strictly() {
        assert_eq!(
            parse_verdict(r#"{"verdict":"PASS","reason":"Declines\n in one sentence."}"#).unwrap(),
            Verdict {
                passed: true,
                reason: "Declines in one sentence.".into()
            }
        );
        assert!(
            !parse_verdict("```json\n{\"verdict\": \"fail\", \"reason\": \"x\"}\n```")
                .unwrap()
                .passed
        );
        assert!(parse_verdict("The answer passes.").is_err());
        assert!(parse_verdict(r#"{"verdict":"maybe","reason":""}"#).is_err());
        assert!(parse_verdict(r#"{"reason":"no verdict"}"#).is_err());
        let long = format!(r#"{{"verdict":"fail","reason":"{}"}}"#, "x".repeat(1000));
        assert!(parse_verdict(&long).unwrap().reason.chars().count() <= MAX_REASON_CHARS + 1);
    }
}
