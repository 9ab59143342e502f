//! What an answer has gathered so far: usage, the trace, the passages a citation may point at,
//! and what the live tools returned. Pure data with the small reads the rules make of it.

use super::super::tools::registry::ToolOutcome;
use crate::agent::error::{Outage, Service};
use crate::agent::llm::{ChatTurn, ToolCall};
use crate::agent::tools::search_docs::SearchDocs;
use crate::agent::tools::Tool;
use crate::agent::verdict::passages;
use crate::agent::verdict::staleness;
use crate::citations::ChunkOrigin;
use crate::contract::TraceEntry;
use crate::contract::{Cost, Usage};
use std::collections::HashMap;

#[derive(Debug, Default)]
pub(super) struct Gathered {
    pub usage: Usage,
    pub cost: Cost,
    pub trace: Vec<TraceEntry>,
    /// Every passage `search_docs` returned during this answer: what a citation may point at.
    pub returned_chunks: HashMap<String, ChunkOrigin>,
    /// The same passages as (chunk id, text), in the order returned, for attribution.
    pub passages: Vec<(String, String)>,
    /// A live-data tool returned data (not an error) during this answer.
    pub live_data_returned: bool,
    /// What the live-data tools returned, as the model read it.
    pub live_results: Vec<String>,
    /// Every call that returned data, in the order returned.
    results: Vec<Returned>,
    /// The model the provider says answered (the last one that said).
    pub served_model: Option<String>,
    /// A tool failed because its service was down or slow (the first such failure).
    pub outage: Option<Outage>,
}

impl Gathered {
    /// A model turn's tokens and cost; `answering`: the model it names is the one that
    /// answered (the topic check's is not).
    pub fn count_turn(&mut self, turn: &ChatTurn, answering: bool) {
        self.usage += turn.usage;
        self.usage.model_calls += 1;
        self.cost.add_provider(turn.provider_cost);
        if answering && !turn.model.is_empty() {
            self.served_model = Some(turn.model.clone());
        }
    }

    /// The outage that leaves the answer without what it needed: a documentation search that
    /// failed while no other returned passages, or any live-data failure.
    pub fn outage_without_data(&self) -> Option<Outage> {
        self.outage.filter(|outage| {
            outage.service != Service::DocumentationSearch || self.passages.is_empty()
        })
    }

    /// Remembers the first failure of `outcome`'s service (not of its arguments or its
    /// subject), whether or not the outcome is recorded.
    pub fn note_outage(&mut self, outcome: &ToolOutcome) {
        if self.outage.is_none() && !outcome.ok {
            self.outage = outage_of(outcome);
        }
    }

    pub fn record(&mut self, call: &ToolCall, outcome: ToolOutcome) {
        self.record_read(call, outcome, None);
    }

    /// As [`Gathered::record`], with the result as the model read it when it was written out
    /// already.
    pub fn record_read(&mut self, call: &ToolCall, outcome: ToolOutcome, read: Option<String>) {
        let arguments = arguments_value(&call.arguments);
        if outcome.ok && outcome.tool == SearchDocs::NAME {
            for passage in passages::returned(&outcome.content) {
                // A passage returned again (the model's search after the library's) is kept
                // once: the first copy is the one every check finds.
                if !self.returned_chunks.contains_key(passage.chunk_id) {
                    let id = passage.chunk_id.to_string();
                    self.returned_chunks.insert(id.clone(), passage.origin());
                    self.passages.push((id, passage.text.to_string()));
                }
            }
        } else if outcome.ok {
            self.live_data_returned = true;
            self.live_results.push(
                read.unwrap_or_else(|| serde_json::to_string(&outcome.content).unwrap_or_default()),
            );
        } else if let Some(message) = refused_arguments(&outcome.content) {
            // A call refused for its arguments ("a history window may be at most 7 days
            // long"): the answer may pass the reason on, figures included.
            self.live_results.push(message.to_string());
        }
        if outcome.ok {
            self.results.push(Returned {
                tool: outcome.tool.clone(),
                arguments: call.arguments.clone(),
                comparable: std::cell::OnceCell::new(),
                content: outcome.content,
            });
        }
        self.trace.push(TraceEntry {
            tool: outcome.tool,
            arguments,
            ok: outcome.ok,
            ms: outcome.ms,
            summary: outcome.summary,
        });
    }

    /// What `call` returned when it was made before in this answer, by the library or the
    /// model, with the same arguments (a search query compared without case, spacing or end
    /// punctuation); `None` when it was not, or failed.
    pub fn earlier_result(&self, call: &ToolCall) -> Option<&serde_json::Value> {
        let asked = comparable_arguments(&arguments_value(&call.arguments));
        self.results
            .iter()
            .find(|returned| returned.tool == call.name && *returned.comparable() == asked)
            .map(|returned| &returned.content)
    }

    /// The live-data tools' results that held data: (tool, content).
    pub fn live_data(&self) -> impl Iterator<Item = (&str, &serde_json::Value)> {
        self.results
            .iter()
            .filter(|returned| returned.tool != SearchDocs::NAME)
            .map(|returned| (returned.tool.as_str(), &returned.content))
    }

    /// The readings the live tools returned marked stale.
    pub fn stale_readings(&self) -> Vec<staleness::StaleReading> {
        self.live_data()
            .flat_map(|(_, content)| staleness::stale_readings(content))
            .collect()
    }

    /// Everything the answer could draw figures from: live results and passages.
    pub fn sources(&self) -> Vec<&str> {
        self.live_results
            .iter()
            .map(String::as_str)
            .chain(self.passages.iter().map(|(_, text)| text.as_str()))
            .collect()
    }
}

/// A call that returned data.
#[derive(Debug)]
struct Returned {
    tool: String,
    /// As the call sent them.
    arguments: String,
    /// The arguments as compared for a repeat, worked out when a later call is first compared
    /// with this one (most answers make none).
    comparable: std::cell::OnceCell<serde_json::Value>,
    /// Written out only when a repeat asks for it.
    content: serde_json::Value,
}

impl Returned {
    fn comparable(&self) -> &serde_json::Value {
        self.comparable
            .get_or_init(|| comparable_arguments(&arguments_value(&self.arguments)))
    }
}

/// The outage a failed outcome reports: `unavailable` or `timeout` from the documentation
/// search or a live-data tool.
fn outage_of(outcome: &ToolOutcome) -> Option<Outage> {
    let timed_out = match outcome.content["error"]["kind"].as_str()? {
        "unavailable" => false,
        "timeout" => true,
        _ => return None,
    };
    let service = if outcome.tool == SearchDocs::NAME {
        Service::DocumentationSearch
    } else {
        Service::LiveData
    };
    Some(Outage { service, timed_out })
}

/// The message of a tool's refusal of its arguments (`{"error": {"kind": "bad_arguments",
/// "message": …}}`).
fn refused_arguments(content: &serde_json::Value) -> Option<&str> {
    let error = content.get("error")?;
    (error.get("kind")?.as_str()? == "bad_arguments")
        .then(|| error.get("message")?.as_str())
        .flatten()
}

/// The arguments for the trace and the events: the JSON the model sent, or its text when it
/// is not JSON.
pub fn arguments_value(arguments: &str) -> serde_json::Value {
    serde_json::from_str(arguments)
        .unwrap_or_else(|_| serde_json::Value::String(arguments.to_string()))
}

/// Arguments as compared for a repeated call: string values lowercased, their whitespace
/// collapsed and their end punctuation dropped.
fn comparable_arguments(arguments: &serde_json::Value) -> serde_json::Value {
    match arguments {
        serde_json::Value::String(text) => {
            let mut joined = String::with_capacity(text.len());
            for word in text.split_whitespace() {
                if !joined.is_empty() {
                    joined.push(' ');
                }
                joined.push_str(word);
            }
            let mut lowered = joined.to_lowercase();
            lowered.truncate(lowered.trim_end_matches(['?', '.', '!']).len());
            serde_json::Value::String(lowered)
        }
        serde_json::Value::Object(fields) => serde_json::Value::Object(
            fields
                .iter()
                .map(|(key, value)| (key.clone(), comparable_arguments(value)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::comparable_arguments;
    use serde_json::{json, Value};

    /// The comparison as first written: the words joined, lowercased, end punctuation dropped.
    fn joined_then_lowered(text: &str) -> Value {
        let words: Vec<&str> = text.split_whitespace().collect();
        let joined = words.join(" ").to_lowercase();
        Value::String(joined.trim_end_matches(['?', '.', '!']).to_string())
    }

    #[test]
    fn strings_compare_by_their_lowercased_words_without_end_punctuation() {
        let asked = json!({"query": "  Fire   EXIT rules?! ", "days": 3});
        assert_eq!(
            comparable_arguments(&asked),
            json!({"query": "fire exit rules", "days": 3})
        );
    }

    proptest::proptest! {
        #[test]
        fn one_pass_agrees_with_joining_the_words_first(text in "[ \\tAaΣσςİ.?!x\u{3000}]{0,24}") {
            proptest::prop_assert_eq!(
                comparable_arguments(&Value::String(text.clone())),
                joined_then_lowered(&text)
            );
        }
    }
}
