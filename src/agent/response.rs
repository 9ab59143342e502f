//! The response object of `ask` and `POST /ask` (contracts §5), as plain data.

use super::decision::Decision;
use super::usage::{Cost, Usage};
use crate::citations::Citation;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AskResponse {
    pub answer: String,
    pub citations: Vec<Citation>,
    pub trace: Vec<TraceEntry>,
    pub usage: Usage,
    pub cost: Cost,
    pub idk: bool,
    pub decision: Decision,
    pub model: String,
    pub retrieval: RetrievalReport,
}

/// One tool call of the answer: what ran, with which arguments, how it went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct TraceEntry {
    pub tool: String,
    #[schema(value_type = Object)]
    pub arguments: serde_json::Value,
    pub ok: bool,
    pub ms: u64,
    pub summary: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct RetrievalReport {
    /// The invented markers removed from the answer. Serialised as their number: no part of an
    /// invented marker ever reaches a client (`ask -v` prints the ids locally).
    #[serde(serialize_with = "count", deserialize_with = "placeholders")]
    #[schema(value_type = u64)]
    pub hallucinated_citations: Vec<String>,
    /// The model's own markers whose passage does not support the sentence they end (no
    /// shared figure or key term): kept in the answer, flagged here for a reader to check.
    #[serde(default)]
    pub unsupported_citations: Vec<String>,
}

fn count<S: serde::Serializer>(ids: &[String], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(ids.len() as u64)
}

/// Read back from a server, the count becomes that many unnamed entries.
fn placeholders<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<String>, D::Error> {
    let count = u64::deserialize(deserializer)?;
    Ok(vec![String::new(); count.min(10_000) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_with_the_contract_field_names() {
        let response = AskResponse {
            answer: "Room 2.14 reads 612 ppm.".into(),
            citations: vec![],
            trace: vec![TraceEntry {
                tool: "get_latest_sensor_data".into(),
                arguments: serde_json::json!({"building_id": "hq", "room_id": "2.14"}),
                ok: true,
                ms: 12,
                summary: "1 reading".into(),
            }],
            usage: Usage {
                prompt_tokens: 10,
                completion_tokens: 5,
                total_tokens: 15,
            },
            cost: Cost {
                estimated_usd: Some(0.0001),
                provider_usd: None,
            },
            idk: false,
            decision: Decision::Answered,
            model: "openai/gpt-4o-mini".into(),
            retrieval: RetrievalReport::default(),
        };
        let json = serde_json::to_value(&response).unwrap();
        for field in [
            "answer",
            "citations",
            "trace",
            "usage",
            "cost",
            "idk",
            "decision",
            "model",
            "retrieval",
        ] {
            assert!(json.get(field).is_some(), "{field}");
        }
        assert_eq!(json["trace"][0]["summary"], "1 reading");
        assert_eq!(json["usage"]["total_tokens"], 15);
        assert_eq!(json["cost"]["provider_usd"], serde_json::Value::Null);
        assert_eq!(json["retrieval"]["hallucinated_citations"], 0);
        assert_eq!(json["decision"], "answered");
    }
}
