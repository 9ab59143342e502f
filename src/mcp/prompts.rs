//! The prompts an MCP host offers its user, without IO: a room's status now, a room's CO2 over
//! a window, a setting or threshold explained. Each becomes one user message that hands the
//! question to the `ask` tool, so the answer is the agent's own, cited and as the caller. Which
//! buildings a `building_id` may complete to is the caller's own list (`mod.rs` reads it
//! through `list_buildings`, as the caller); here it is only filtered.

use rmcp::model::{
    ErrorData, GetPromptResult, JsonObject, Prompt, PromptArgument, PromptMessage, Role,
};

/// One prompt: its name, what it is for, its arguments (name, description, required) and the
/// question it asks, with `{argument}` places.
struct Template {
    name: &'static str,
    description: &'static str,
    arguments: &'static [(&'static str, &'static str, bool)],
    question: &'static str,
}

const TEMPLATES: &[Template] = &[
    Template {
        name: "room-status",
        description: "How a room is doing now: people present against its capacity, and its \
                      latest sensor readings.",
        arguments: &[
            ("building_id", "The building, e.g. acme-hq", true),
            ("room_id", "The room, e.g. hq-201", true),
        ],
        question: "How many people are in room {room_id} of building {building_id} right now, \
                   against its capacity, and what do its sensors read?",
    },
    Template {
        name: "co2-report",
        description: "A room's CO2 over a past window: low, high, mean and whether it stayed \
                      in the good band.",
        arguments: &[
            ("building_id", "The building, e.g. acme-hq", true),
            ("room_id", "The room, e.g. hq-201", true),
            (
                "hours",
                "How many hours back, at most 168 (default 24)",
                false,
            ),
        ],
        question: "Report the CO2 in room {room_id} of building {building_id} over the last \
                   {hours} hours: the lowest, the highest and the mean reading, and whether it \
                   stayed below the level the documentation calls good.",
    },
    Template {
        name: "explain-setting",
        description: "A setting, threshold or band explained as the documentation states it, \
                      with citations.",
        arguments: &[(
            "setting",
            "What to explain, e.g. the CO2 bands or occupancy staleness",
            true,
        )],
        question: "Explain \"{setting}\" as the CrowdVision documentation describes it, with \
                   its figures.",
    },
];

/// Defaults of optional arguments.
const DEFAULTS: &[(&str, &str)] = &[("hours", "24")];

/// Longest argument value accepted into a prompt.
const MAX_ARGUMENT_CHARS: usize = 200;

/// The prompts as a host lists them.
pub fn list() -> Vec<Prompt> {
    TEMPLATES
        .iter()
        .map(|template| {
            let arguments = template
                .arguments
                .iter()
                .map(|(name, description, required)| {
                    PromptArgument::new(*name)
                        .with_description(*description)
                        .with_required(*required)
                })
                .collect();
            Prompt::new(template.name, Some(template.description), Some(arguments))
        })
        .collect()
}

/// The prompt `name` with `arguments` filled in; an unknown prompt or a missing, blank or
/// overlong argument is invalid params (`-32602`).
pub fn render(name: &str, arguments: Option<&JsonObject>) -> Result<GetPromptResult, ErrorData> {
    let template = TEMPLATES
        .iter()
        .find(|template| template.name == name)
        .ok_or_else(|| ErrorData::invalid_params(format!("unknown prompt: {name}"), None))?;
    let mut question = template.question.to_string();
    for (argument, _, required) in template.arguments {
        let given = arguments
            .and_then(|a| a.get(*argument))
            .and_then(|v| v.as_str())
            .map(str::trim)
            .filter(|v| !v.is_empty());
        let default = DEFAULTS
            .iter()
            .find(|(n, _)| n == argument)
            .map(|(_, v)| *v);
        let value = match (given, default) {
            (Some(value), _) if value.chars().count() > MAX_ARGUMENT_CHARS => {
                return Err(ErrorData::invalid_params(
                    format!("{argument} is longer than {MAX_ARGUMENT_CHARS} characters"),
                    None,
                ))
            }
            (Some(value), _) => value,
            (None, Some(default)) if !required => default,
            _ => {
                return Err(ErrorData::invalid_params(
                    format!("{name} needs {argument}"),
                    None,
                ))
            }
        };
        question = question.replace(&format!("{{{argument}}}"), value);
    }
    let text = format!("Use the `ask` tool to answer this, and show its citations: {question}");
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(template.description),
    )
}

/// Whether `argument` of prompt `prompt` completes to the caller's building ids.
pub fn completes_to_buildings(prompt: &str, argument: &str) -> bool {
    argument == "building_id"
        && TEMPLATES
            .iter()
            .any(|t| t.name == prompt && t.arguments.iter().any(|(a, _, _)| *a == argument))
}

/// The ids among `ids` that start with what was typed (case ignored), at most 100.
pub fn matching(ids: &[String], typed: &str) -> Vec<String> {
    let typed = typed.to_lowercase();
    ids.iter()
        .filter(|id| id.to_lowercase().starts_with(&typed))
        .take(100)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(value: serde_json::Value) -> JsonObject {
        value.as_object().unwrap().clone()
    }

    fn text_of(result: &GetPromptResult) -> String {
        serde_json::to_value(&result.messages[0].content).unwrap()["text"]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn every_prompt_fills_its_arguments_and_asks_through_the_ask_tool() {
        let names: Vec<String> = list().into_iter().map(|p| p.name).collect();
        assert_eq!(names, ["room-status", "co2-report", "explain-setting"]);
        let report = render(
            "co2-report",
            Some(&args(
                json!({"building_id": "acme-hq", "room_id": "hq-201"}),
            )),
        )
        .unwrap();
        let text = text_of(&report);
        assert!(
            text.contains("room hq-201 of building acme-hq over the last 24 hours"),
            "{text}"
        );
        assert!(text.contains("`ask` tool"), "{text}");
        assert!(!text.contains('{'), "every place filled: {text}");
        let week = render(
            "co2-report",
            Some(&args(
                json!({"building_id": "acme-hq", "room_id": "hq-201", "hours": "168"}),
            )),
        )
        .unwrap();
        assert!(text_of(&week).contains("last 168 hours"));
    }

    #[test]
    fn an_unknown_prompt_or_a_missing_or_overlong_argument_is_invalid_params() {
        let invalid = |result: Result<GetPromptResult, ErrorData>| {
            result.err().map(|e| e.code.0) == Some(-32602)
        };
        assert!(invalid(render("poem", None)));
        assert!(invalid(render(
            "room-status",
            Some(&args(json!({"building_id": "acme-hq"})))
        )));
        assert!(invalid(render(
            "room-status",
            Some(&args(json!({"building_id": " ", "room_id": "x"})))
        )));
        let long = "x".repeat(MAX_ARGUMENT_CHARS + 1);
        assert!(invalid(render(
            "explain-setting",
            Some(&args(json!({"setting": long})))
        )));
    }

    #[test]
    fn building_ids_complete_from_the_callers_own_list() {
        assert!(completes_to_buildings("room-status", "building_id"));
        assert!(!completes_to_buildings("room-status", "room_id"));
        assert!(!completes_to_buildings("explain-setting", "building_id"));
        let ids = vec![
            "acme-hq".to_string(),
            "acme-lab".to_string(),
            "other".to_string(),
        ];
        assert_eq!(matching(&ids, "ACME"), ["acme-hq", "acme-lab"]);
        assert_eq!(matching(&ids, ""), ids);
    }
}
