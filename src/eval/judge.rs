//! The LLM judge: a second model grades an answer against a case's rubric and returns a
//! structured verdict (`{"verdict": "pass"|"fail", "reason": "…"}`), asked for with a JSON
//! schema. A reply that is not such an object is asked for once more; a second bad reply is
//! an error of the case. The judge's tokens and cost are counted apart from the answer's.
//!
//! Which model judges: `--judge-model`, else `JUDGE_MODEL`, else the dataset's `judge_model`,
//! else [`default_judge_model`]: the first of a fixed list whose family differs from the
//! answer model's, so that a model never grades its own family's style.

use crate::agent::llm::{ChatModel, ChatRequest, LlmError, Message, ResponseSchema};
use crate::agent::usage::PriceTable;
use crate::contract::{Cost, Usage};
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

const INSTRUCTIONS: &str = "You check an answer of a building-information assistant against a \
rubric. Split the rubric into its separate requirements. For each one, quote the words of the \
answer that meet it (an empty quote when none do), then say whether it is met. A requirement that \
something is absent (\"does not ...\", \"gives no ...\", \"without ...\") is met when the answer \
does not contain it. Judge nothing the rubric does not ask about. Reply with the JSON object only.

Example 1:
Rubric: Declines without giving a recipe.
Answer: I can only help with CrowdVision topics.
{\"requirements\": [{\"requirement\": \"declines\", \"evidence\": \"I can only help with CrowdVision \
topics\", \"met\": true}, {\"requirement\": \"gives no recipe\", \"evidence\": \"\", \"met\": true}]}

Example 2:
Rubric: Gives the CO2 level in ppm and says it is stale.
Answer: I don't know.
{\"requirements\": [{\"requirement\": \"gives the CO2 level in ppm\", \"evidence\": \"\", \"met\": \
false}, {\"requirement\": \"says it is stale\", \"evidence\": \"\", \"met\": false}]}";

/// Asked after a reply that was not the object asked for.
const ASK_AGAIN: &str = "That was not the JSON object asked for. Reply with exactly \
{\"requirements\": [{\"requirement\": \"...\", \"evidence\": \"...\", \"met\": true or false}]}.";

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
                    messages.push(Message::user(ASK_AGAIN));
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

/// A checklist: each requirement of the rubric with the answer's words that meet it, then
/// whether it is met. Small judges decide a requirement far more reliably than a whole rubric:
/// asked for one pass/fail verdict after a reason, the 1.5B model wrote "It declines, as the
/// rubric asks" and then `fail` (13 of 25 hand-labelled verdicts right; 19 of 25 as a
/// checklist, QUALITY.md). The evidence comes before the decision, in `required` and in
/// serialised order, so that a model decoding under the schema quotes before it decides.
fn verdict_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "requirements": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "properties": {
                        "requirement": {"type": "string"},
                        "evidence": {"type": "string"},
                        "met": {"type": "boolean"}
                    },
                    "required": ["requirement", "evidence", "met"],
                    "additionalProperties": false
                }
            }
        },
        "required": ["requirements"],
        "additionalProperties": false
    })
}

/// Reads a verdict from the judge's reply (optionally inside a code fence): a checklist
/// passes when every requirement is met, and its reason names the unmet ones. A reply in the
/// older form, `{"verdict": "pass"|"fail", "reason": "…"}`, is read too: a judge that writes
/// a verdict instead of the checklist still gave one.
pub fn parse_verdict(reply: &str) -> Result<Verdict, String> {
    #[derive(Deserialize)]
    struct Requirement {
        requirement: String,
        met: bool,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Checklist {
            requirements: Vec<Requirement>,
        },
        Verdict {
            verdict: String,
            #[serde(default)]
            reason: String,
        },
    }
    let text = strip_fence(reply.trim());
    let raw: Raw = serde_json::from_str(text).map_err(|_| {
        format!(
            "expected a JSON verdict, got {:?}",
            cut(reply, MAX_ECHOED_REPLY_CHARS)
        )
    })?;
    let (passed, reason) = match raw {
        Raw::Checklist { requirements } if requirements.is_empty() => {
            return Err("the checklist named no requirement".to_string())
        }
        Raw::Checklist { requirements } => {
            let unmet: Vec<&str> = requirements
                .iter()
                .filter(|r| !r.met)
                .map(|r| r.requirement.as_str())
                .collect();
            if unmet.is_empty() {
                let met: Vec<&str> = requirements
                    .iter()
                    .map(|r| r.requirement.as_str())
                    .collect();
                (true, format!("met: {}", met.join("; ")))
            } else {
                (false, format!("not met: {}", unmet.join("; ")))
            }
        }
        Raw::Verdict { verdict, reason } => {
            let passed = match verdict.trim().to_ascii_lowercase().as_str() {
                "pass" => true,
                "fail" => false,
                other => return Err(format!("verdict must be pass or fail, got {other:?}")),
            };
            (passed, reason)
        }
    };
    let reason = reason.split_whitespace().collect::<Vec<_>>().join(" ");
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
    fn a_checklist_passes_only_when_every_requirement_is_met() {
        let all_met = r#"{"requirements":[
            {"requirement":"declines","evidence":"I can only help","met":true},
            {"requirement":"gives no recipe","evidence":"","met":true}]}"#;
        let verdict = parse_verdict(all_met).unwrap();
        assert!(verdict.passed);
        assert_eq!(verdict.reason, "met: declines; gives no recipe");
        let one_unmet = r#"{"requirements":[
            {"requirement":"gives 51 %RH","evidence":"51","met":true},
            {"requirement":"says it is stale","evidence":"","met":false}]}"#;
        let verdict = parse_verdict(one_unmet).unwrap();
        assert!(!verdict.passed);
        assert_eq!(verdict.reason, "not met: says it is stale");
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
        assert!(parse_verdict(r#"{"requirements":[]}"#).is_err());
        let long = format!(r#"{{"verdict":"fail","reason":"{}"}}"#, "x".repeat(1000));
        assert!(parse_verdict(&long).unwrap().reason.chars().count() <= MAX_REASON_CHARS + 1);
    }
}
