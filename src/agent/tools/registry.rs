//! The tools the model may call: their schemas for the request, and one entry point that runs a
//! call by name and always returns something the model can read.

use super::{Tool, ToolContext, ToolError, ToolErrorKind};
use async_trait::async_trait;
use serde::Serialize;
use serde_json::value::RawValue;
use std::time::{Duration, Instant};

/// A tool with its argument type erased, so tools of different types share one registry.
#[async_trait]
trait ErasedTool: Send + Sync {
    fn name(&self) -> &'static str;
    fn description(&self) -> &'static str;
    fn parameters(&self) -> serde_json::Value;
    fn output_schema(&self) -> Option<serde_json::Value>;
    async fn call(
        &self,
        arguments: serde_json::Value,
        context: ToolContext<'_>,
    ) -> Result<(serde_json::Value, String), ToolError>;
}

#[async_trait]
impl<T: Tool> ErasedTool for T {
    fn name(&self) -> &'static str {
        Tool::name(self)
    }

    fn description(&self) -> &'static str {
        Tool::description(self)
    }

    fn output_schema(&self) -> Option<serde_json::Value> {
        Tool::output_schema(self)
    }

    fn parameters(&self) -> serde_json::Value {
        let schema =
            serde_json::to_value(schemars::schema_for!(T::Args)).expect("schemas serialize");
        compact_schema(schema)
    }

    async fn call(
        &self,
        arguments: serde_json::Value,
        context: ToolContext<'_>,
    ) -> Result<(serde_json::Value, String), ToolError> {
        let args: T::Args = serde_json::from_value(arguments).map_err(|e| {
            ToolError::new(
                ToolErrorKind::BadArguments,
                format!("invalid arguments: {e}"),
            )
        })?;
        self.run(args, context).await
    }
}

/// The generated schema without what costs prompt tokens and tells the model nothing: the
/// meta fields, `additionalProperties` (unknown arguments are refused when parsed anyway), and
/// the `null` alternative and `null` default of optional arguments (an optional argument is
/// one that is not `required`).
fn compact_schema(mut schema: serde_json::Value) -> serde_json::Value {
    if let Some(object) = schema.as_object_mut() {
        for meta in ["$schema", "title", "additionalProperties"] {
            object.remove(meta);
        }
    }
    if let Some(properties) = schema.get_mut("properties").and_then(|p| p.as_object_mut()) {
        for property in properties.values_mut().filter_map(|p| p.as_object_mut()) {
            if property.get("default") == Some(&serde_json::Value::Null) {
                property.remove("default");
            }
            let single_type = match property.get("type") {
                Some(serde_json::Value::Array(types)) => {
                    let named: Vec<&serde_json::Value> =
                        types.iter().filter(|t| *t != "null").collect();
                    (named.len() == 1).then(|| named[0].clone())
                }
                _ => None,
            };
            if let Some(single_type) = single_type {
                property.insert("type".to_string(), single_type);
            }
        }
    }
    schema
}

/// What the model is told a tool can do.
#[derive(Debug, Clone, Serialize)]
pub struct ToolSchema {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters: serde_json::Value,
    /// `{"name", "description", "parameters"}` as JSON text, rendered once: every model call
    /// sends it, and walking the `Value` and escaping the description again for each request
    /// were a measurable share of a served answer's CPU.
    #[serde(skip)]
    pub definition_json: Box<RawValue>,
    /// What a successful result holds, for MCP hosts; never sent to the model.
    #[serde(skip)]
    pub output: Option<serde_json::Value>,
}

impl ToolSchema {
    pub fn new(
        name: &'static str,
        description: &'static str,
        parameters: serde_json::Value,
    ) -> ToolSchema {
        /// The keys in the order the provider has always been sent them.
        #[derive(Serialize)]
        struct Definition<'a> {
            name: &'a str,
            description: &'a str,
            parameters: &'a serde_json::Value,
        }
        let definition_json = serde_json::value::to_raw_value(&Definition {
            name,
            description,
            parameters: &parameters,
        })
        .expect("a JSON value always serializes");
        ToolSchema {
            name,
            description,
            parameters,
            definition_json,
            output: None,
        }
    }

    pub fn with_output(mut self, output: Option<serde_json::Value>) -> ToolSchema {
        self.output = output;
        self
    }
}

/// The result of one call, success or not.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolOutcome {
    pub tool: String,
    pub ok: bool,
    /// What goes back to the model: the tool's JSON, or `{"error": {"kind", "message"}}`.
    pub content: serde_json::Value,
    pub summary: String,
    pub ms: u64,
}

pub struct ToolRegistry {
    tools: Vec<Box<dyn ErasedTool>>,
    timeout: Duration,
}

impl ToolRegistry {
    pub fn new(timeout: Duration) -> ToolRegistry {
        ToolRegistry {
            tools: Vec::new(),
            timeout,
        }
    }

    pub fn register(&mut self, tool: impl Tool + 'static) {
        let name = Tool::name(&tool);
        crate::observe::metrics::know_tool(name);
        self.tools.retain(|t| t.name() != name);
        self.tools.push(Box::new(tool));
    }

    pub fn has(&self, name: &str) -> bool {
        self.tools.iter().any(|t| t.name() == name)
    }

    pub fn schemas(&self) -> Vec<ToolSchema> {
        self.tools
            .iter()
            .map(|t| {
                ToolSchema::new(t.name(), t.description(), t.parameters())
                    .with_output(t.output_schema())
            })
            .collect()
    }

    /// Runs a call as the model sent it: `arguments` is JSON text (empty means no arguments).
    /// Text that is not JSON is a bad-arguments result like any other.
    pub async fn call_text(
        &self,
        name: &str,
        arguments: &str,
        context: ToolContext<'_>,
    ) -> ToolOutcome {
        let parsed = if arguments.trim().is_empty() {
            Ok(serde_json::json!({}))
        } else {
            serde_json::from_str(arguments)
        };
        match parsed {
            Ok(value) => self.call(name, value, context).await,
            Err(e) => outcome(
                name,
                Err(ToolError::new(
                    ToolErrorKind::BadArguments,
                    format!("the arguments are not a JSON object: {e}"),
                )),
                0,
            ),
        }
    }

    /// Runs `name` with `arguments` for the caller in `context`. Unknown names, invalid
    /// arguments, tool errors and timeouts all come back as an outcome with `ok = false` and an
    /// error for the model. Arguments are checked by deserialising them into the tool's
    /// argument type, the same type its schema is generated from.
    pub async fn call(
        &self,
        name: &str,
        arguments: serde_json::Value,
        context: ToolContext<'_>,
    ) -> ToolOutcome {
        let started = Instant::now();
        let result = match self.tools.iter().find(|t| t.name() == name) {
            None => Err(ToolError::new(
                ToolErrorKind::UnknownTool,
                format!(
                    "there is no tool named {:?}",
                    name.chars().take(64).collect::<String>()
                ),
            )),
            Some(tool) => {
                match tokio::time::timeout(self.timeout, tool.call(arguments, context)).await {
                    Ok(result) => result,
                    Err(_) => Err(ToolError::new(
                        ToolErrorKind::Timeout,
                        format!(
                            "{name} did not answer within {} s",
                            self.timeout.as_secs_f64()
                        ),
                    )),
                }
            }
        };
        outcome(name, result, started.elapsed().as_millis() as u64)
    }
}

impl ToolOutcome {
    /// A call that was not run, with the reason for the model.
    pub fn refused(name: &str, message: String) -> ToolOutcome {
        outcome(
            name,
            Err(ToolError::new(ToolErrorKind::TooManyCalls, message)),
            0,
        )
    }
}

fn outcome(
    name: &str,
    result: Result<(serde_json::Value, String), ToolError>,
    ms: u64,
) -> ToolOutcome {
    match result {
        Ok((content, summary)) => ToolOutcome {
            tool: name.to_string(),
            ok: true,
            content,
            summary,
            ms,
        },
        Err(error) => ToolOutcome {
            tool: name.to_string(),
            ok: false,
            content: serde_json::json!({"error": {"kind": error.kind, "message": error.message}}),
            summary: error.message,
            ms,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth::identity::Caller;
    use schemars::JsonSchema;
    use serde::Deserialize;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct EchoArgs {
        /// What to echo back.
        text: String,
        #[serde(default)]
        delay_ms: u64,
    }

    struct Echo;

    #[async_trait]
    impl Tool for Echo {
        type Args = EchoArgs;
        const NAME: &'static str = "echo";
        fn description(&self) -> &'static str {
            "Echoes its text."
        }
        async fn run(
            &self,
            args: EchoArgs,
            context: ToolContext<'_>,
        ) -> Result<(serde_json::Value, String), ToolError> {
            tokio::time::sleep(Duration::from_millis(args.delay_ms)).await;
            if args.text == "fail" {
                return Err(ToolError::new(
                    ToolErrorKind::Unavailable,
                    "the echo service is down",
                ));
            }
            Ok((
                serde_json::json!({"text": args.text, "as": context.user.sub}),
                "echoed".into(),
            ))
        }
    }

    fn registry() -> ToolRegistry {
        let mut registry = ToolRegistry::new(Duration::from_millis(200));
        registry.register(Echo);
        registry
    }

    #[test]
    fn schemas_are_generated_from_the_argument_type() {
        let schemas = registry().schemas();
        assert_eq!(schemas[0].name, "echo");
        let parameters = &schemas[0].parameters;
        assert_eq!(parameters["type"], "object");
        assert_eq!(parameters["properties"]["text"]["type"], "string");
        assert_eq!(
            parameters["properties"]["text"]["description"],
            "What to echo back."
        );
        assert_eq!(parameters["required"], serde_json::json!(["text"]));
        assert!(parameters.get("additionalProperties").is_none());
    }

    #[test]
    fn optional_arguments_lose_their_null_type_and_default() {
        let compact = compact_schema(serde_json::json!({
            "$schema": "x", "title": "Args", "additionalProperties": false, "type": "object",
            "required": ["a"],
            "properties": {
                "a": {"type": "string", "description": "kept"},
                "b": {"type": ["string", "null"], "default": null},
                "c": {"type": ["string", "integer", "null"], "default": 3},
            }
        }));
        assert_eq!(
            compact,
            serde_json::json!({
                "type": "object", "required": ["a"],
                "properties": {
                    "a": {"type": "string", "description": "kept"},
                    "b": {"type": "string"},
                    "c": {"type": ["string", "integer", "null"], "default": 3},
                }
            })
        );
    }

    #[tokio::test]
    async fn a_call_runs_as_the_user() {
        let outcome = registry()
            .call(
                "echo",
                serde_json::json!({"text": "hi"}),
                ToolContext::for_caller(&Caller::anonymous()),
            )
            .await;
        assert!(outcome.ok);
        assert_eq!(
            outcome.content,
            serde_json::json!({"text": "hi", "as": "anonymous"})
        );
    }

    #[tokio::test(start_paused = true)]
    async fn every_failure_becomes_a_result_for_the_model() {
        let user = Caller::anonymous();
        let registry = registry();
        let cases = [
            ("nope", serde_json::json!({}), "unknown_tool"),
            ("echo", serde_json::json!({"txt": "hi"}), "bad_arguments"),
            ("echo", serde_json::json!({"text": 5}), "bad_arguments"),
            ("echo", serde_json::json!({"text": "fail"}), "unavailable"),
            (
                "echo",
                serde_json::json!({"text": "slow", "delay_ms": 5000}),
                "timeout",
            ),
        ];
        for (name, arguments, kind) in cases {
            let outcome = registry
                .call(name, arguments, ToolContext::for_caller(&user))
                .await;
            assert!(!outcome.ok, "{name}");
            assert_eq!(outcome.content["error"]["kind"], kind, "{outcome:?}");
            assert!(!outcome.summary.is_empty());
        }
    }

    #[tokio::test]
    async fn text_that_is_not_json_is_bad_arguments() {
        let user = Caller::anonymous();
        let registry = registry();
        let outcome = registry
            .call_text("echo", "{\"text\": \"hi", ToolContext::for_caller(&user))
            .await;
        assert!(!outcome.ok);
        assert_eq!(outcome.content["error"]["kind"], "bad_arguments");
        let empty = registry
            .call_text("echo", " ", ToolContext::for_caller(&user))
            .await;
        assert_eq!(empty.content["error"]["kind"], "bad_arguments");
        assert!(empty.summary.contains("text"), "{}", empty.summary);
        let fine = registry
            .call_text("echo", "{\"text\": \"hi\"}", ToolContext::for_caller(&user))
            .await;
        assert!(fine.ok);
    }
}
