//! What the MCP server offers and how a call becomes a result, without IO: the tool list (the
//! registry's schemas and `ask`), which call a `tools/call` request is, and the result or
//! protocol error each outcome becomes.
//!
//! The split follows the protocol: a call the server cannot route (an unknown tool, `ask`
//! without a question) is a JSON-RPC error (`-32602`) and runs nothing; a call that ran, or whose
//! arguments the tool refused before running, is a result with `isError`, so the host's model
//! reads the reason and can correct itself.

use crate::agent::tools::registry::{ToolOutcome, ToolSchema};
use crate::contract::AskResponse;
use rmcp::model::{CallToolResult, ContentBlock, ErrorData, JsonObject, Tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// The name of the tool that runs the whole agent.
pub const ASK: &str = "ask";

const ASK_DESCRIPTION: &str = "Ask the CrowdVision agent a question about buildings, rooms, \
    live occupancy, sensors or their documentation. It searches the documentation and the live \
    data it may see for you, and answers with footnoted citations, or says it does not know.";

/// The arguments of `ask`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    /// The question, in any language.
    pub question: String,
}

/// A `tools/call` request, once routed.
#[derive(Debug, PartialEq)]
pub enum Call {
    /// One of the registry's tools, with the arguments as sent (the registry checks them).
    Tool { name: String, arguments: Value },
    /// The whole agent.
    Ask { question: String },
    /// `ask` with arguments that are not an [`AskArgs`]: answered with this reason, not run.
    BadAsk(String),
}

/// Every tool, in the order a host lists them: the registry's, then `ask`; each with what its
/// structured content holds when it succeeds (an error result carries the error object).
pub fn tools(schemas: &[ToolSchema]) -> Vec<Tool> {
    let mut tools: Vec<Tool> = schemas
        .iter()
        .map(|schema| {
            let tool = Tool::new(schema.name, schema.description, object(&schema.parameters));
            match &schema.output {
                Some(output) => tool.with_raw_output_schema(object(output)),
                None => tool,
            }
        })
        .collect();
    let ask_schema = serde_json::to_value(schemars::schema_for!(AskArgs)).unwrap_or(Value::Null);
    tools.push(
        Tool::new(ASK, ASK_DESCRIPTION, object(&ask_schema))
            .with_raw_output_schema(object(&ask_output_schema())),
    );
    tools
}

/// What [`answer_result`]'s structured content holds.
fn ask_output_schema() -> Value {
    crate::agent::tools::result_schema(
        &[
            ("answer", "string"),
            ("citations", "array"),
            ("idk", "boolean"),
            ("decision", "string"),
        ],
        &["answer", "citations", "idk", "decision"],
    )
}

/// A JSON Schema as the object MCP wants, without the meta fields a host has no use for.
fn object(schema: &Value) -> Arc<JsonObject> {
    let mut object = schema.as_object().cloned().unwrap_or_default();
    for meta in ["$schema", "title"] {
        object.remove(meta);
    }
    object
        .entry("type")
        .or_insert_with(|| Value::String("object".to_string()));
    Arc::new(object)
}

/// Routes a call: `known` says which names the registry has. An unknown name is a protocol
/// error (`-32602`), as MCP asks.
pub fn route(
    name: &str,
    arguments: Option<JsonObject>,
    known: impl Fn(&str) -> bool,
) -> Result<Call, ErrorData> {
    let arguments = Value::Object(arguments.unwrap_or_default());
    if name == ASK {
        return Ok(match serde_json::from_value::<AskArgs>(arguments) {
            Ok(args) => Call::Ask {
                question: args.question,
            },
            Err(e) => Call::BadAsk(format!("invalid arguments for ask: {e}")),
        });
    }
    if known(name) {
        return Ok(Call::Tool {
            name: name.to_string(),
            arguments,
        });
    }
    Err(ErrorData::invalid_params(
        format!("unknown tool: {}", shorten(name)),
        None,
    ))
}

/// A tool's outcome as an MCP result: its JSON as text (and as structured content when it is an
/// object); a failure (bad arguments, not found, unavailable, timeout) with `isError` and the
/// same `{"error": {"kind", "message"}}` the agent's model reads.
pub fn tool_result(outcome: &ToolOutcome) -> CallToolResult {
    let text = outcome.content.to_string();
    let mut result = if outcome.ok {
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(text)])
    };
    if outcome.content.is_object() {
        result.structured_content = Some(outcome.content.clone());
    }
    result
}

/// An answer of `ask`: the text with its citations as footnotes, and the citations themselves
/// as structured content.
pub fn answer_result(response: &AskResponse) -> CallToolResult {
    let text = crate::citations::with_footnotes(&response.answer, &response.citations);
    let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
    result.structured_content = Some(json!({
        "answer": response.answer,
        "citations": response.citations,
        "idk": response.idk,
        "decision": response.decision,
    }));
    result
}

/// A failure the caller should read (the agent refused or could not answer), as a result with
/// `isError`.
pub fn failure_result(message: &str) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_string())])
}

/// Names echoed back are cut short: they came from the client.
fn shorten(name: &str) -> String {
    name.chars().take(64).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ErrorCode;

    fn args(value: Value) -> Option<JsonObject> {
        value.as_object().cloned()
    }

    #[test]
    fn calls_are_routed_by_name() {
        let known = |name: &str| name == "get_room";
        let table = [
            (
                "get_room",
                json!({"building_id": "b"}),
                Ok(Call::Tool {
                    name: "get_room".into(),
                    arguments: json!({"building_id": "b"}),
                }),
            ),
            (
                "ask",
                json!({"question": "q?"}),
                Ok(Call::Ask {
                    question: "q?".into(),
                }),
            ),
            ("nope", json!({}), Err(ErrorCode::INVALID_PARAMS)),
        ];
        for (name, arguments, want) in table {
            let got = route(name, args(arguments), known).map_err(|e| e.code);
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn ask_without_a_string_question_is_answered_not_run() {
        for arguments in [
            json!({}),
            json!({"question": 3}),
            json!({"question": "q", "x": 1}),
        ] {
            let routed = route(ASK, args(arguments.clone()), |_| false);
            assert!(
                matches!(&routed, Ok(Call::BadAsk(reason)) if reason.contains("ask")),
                "{arguments}: {routed:?}"
            );
        }
    }

    #[test]
    fn unknown_names_are_cut_short_in_the_error() {
        let long = "x".repeat(5000);
        let error = route(&long, None, |_| false).unwrap_err();
        assert!(error.message.len() < 100, "{}", error.message);
    }

    #[test]
    fn the_list_holds_every_schema_and_ask() {
        let schemas = vec![ToolSchema::new(
            "get_room",
            "a room",
            json!({"type": "object", "properties": {"building_id": {"type": "string"}},
                   "required": ["building_id"]}),
        )];
        let listed = tools(&schemas);
        let names: Vec<&str> = listed.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["get_room", ASK]);
        let ask = &listed[1].input_schema;
        assert_eq!(ask["type"], "object");
        assert_eq!(ask["required"], json!(["question"]));
        assert!(!ask.contains_key("$schema"));
        assert_eq!(
            listed[0].output_schema, None,
            "no schema given, none listed"
        );
    }

    #[test]
    fn an_answer_holds_what_asks_output_schema_requires() {
        let response = AskResponse {
            answer: "In the lobby [^a].".into(),
            citations: vec![],
            trace: vec![],
            usage: Default::default(),
            cost: crate::contract::Cost {
                estimated_usd: None,
                provider_usd: None,
            },
            idk: false,
            decision: crate::contract::Decision::Answered,
            model: "m".into(),
            retrieval: Default::default(),
            trace_id: None,
        };
        let structured = answer_result(&response).structured_content.unwrap();
        let schema = ask_output_schema();
        for field in schema["required"].as_array().unwrap() {
            let field = field.as_str().unwrap();
            let kind = schema["properties"][field]["type"].as_str().unwrap();
            let value = &structured[field];
            let fits = match kind {
                "string" => value.is_string(),
                "array" => value.is_array(),
                "boolean" => value.is_boolean(),
                _ => false,
            };
            assert!(fits, "{field} should be a {kind}: {value}");
        }
    }

    #[test]
    fn failed_outcomes_are_error_results_with_the_same_body() {
        let outcome = ToolOutcome {
            tool: "get_building".into(),
            ok: false,
            content: json!({"error": {"kind": "not_found", "message": "none"}}),
            summary: "none".into(),
            ms: 0,
        };
        let result = tool_result(&outcome);
        assert_eq!(result.is_error, Some(true));
        assert_eq!(result.structured_content, Some(outcome.content.clone()));
        let ok = tool_result(&ToolOutcome {
            ok: true,
            content: json!([1, 2]),
            ..outcome
        });
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(
            ok.structured_content, None,
            "only objects are structured content"
        );
    }
}
