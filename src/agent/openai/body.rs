//! The one-response call's body written straight into bytes: the same JSON, byte for byte, as
//! serde writes for `WireRequest` (a property test holds the two together), without serde's
//! per-byte escaping table or its per-field machinery. Writing the body was a tenth of the
//! instructions of a served answer (BENCHMARKS.md); the tool definitions, already JSON, are
//! copied as they are.

#[cfg(test)]
use super::wire::WireRequest;
use super::wire::{tool_choice, WireResponseFormat};
use crate::agent::llm::{ChatRequest, Message, Role};
use crate::json_out::{write_list, write_str};

/// The body of a one-response (`stream: false`) chat-completions call for `request`.
pub(super) fn one_response(request: &ChatRequest<'_>) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::with_capacity(estimated_len(request));
    out.extend_from_slice(b"{\"model\":");
    write_str(&mut out, request.model);
    out.extend_from_slice(b",\"messages\":");
    write_list(&mut out, request.messages, write_message);
    if !request.tools.is_empty() {
        out.extend_from_slice(b",\"tools\":");
        write_list(&mut out, request.tools, |out, tool| {
            out.extend_from_slice(b"{\"type\":\"function\",\"function\":");
            out.extend_from_slice(tool.definition_json.get().as_bytes());
            out.push(b'}');
        });
    }
    // Numbers and the rare structured schema go through serde, which formats them as it always
    // has (the shortest float that reads back).
    out.extend_from_slice(b",\"temperature\":");
    serde_json::to_writer(&mut out, &request.temperature)?;
    out.extend_from_slice(b",\"max_tokens\":");
    serde_json::to_writer(&mut out, &request.max_output_tokens)?;
    out.extend_from_slice(b",\"stream\":false");
    if let Some(format) = request.response_schema.map(WireResponseFormat::of) {
        out.extend_from_slice(b",\"response_format\":");
        serde_json::to_writer(&mut out, &format)?;
    }
    if let Some(choice) = tool_choice(request) {
        out.extend_from_slice(b",\"tool_choice\":\"");
        out.extend_from_slice(choice.as_bytes());
        out.push(b'"');
    }
    out.push(b'}');
    Ok(out)
}

fn estimated_len(request: &ChatRequest<'_>) -> usize {
    let messages: usize = request
        .messages
        .iter()
        .map(|m| {
            64 + m.content.as_ref().map_or(0, String::len)
                + m.tool_calls
                    .iter()
                    .map(|c| 64 + c.id.len() + c.name.len() + c.arguments.len())
                    .sum::<usize>()
        })
        .sum();
    let tools: usize = request
        .tools
        .iter()
        .map(|t| 40 + t.definition_json.get().len())
        .sum();
    // Escapes make the body a little longer than its text; one growth covers them.
    128 + request.model.len() + messages + tools
}

fn write_message(out: &mut Vec<u8>, message: &Message) {
    out.extend_from_slice(b"{\"role\":\"");
    out.extend_from_slice(role_name(message.role).as_bytes());
    out.extend_from_slice(b"\",\"content\":");
    match &message.content {
        Some(text) if message.role == Role::System => write_system_prompt(out, text),
        Some(text) => write_str(out, text),
        None => out.extend_from_slice(b"null"),
    }
    if !message.tool_calls.is_empty() {
        out.extend_from_slice(b",\"tool_calls\":");
        write_list(out, &message.tool_calls, |out, call| {
            out.extend_from_slice(b"{\"id\":");
            write_str(out, &call.id);
            out.extend_from_slice(b",\"type\":\"function\",\"function\":{\"name\":");
            write_str(out, &call.name);
            out.extend_from_slice(b",\"arguments\":");
            write_str(out, &call.arguments);
            out.extend_from_slice(b"}}");
        });
    }
    if let Some(id) = &message.tool_call_id {
        out.extend_from_slice(b",\"tool_call_id\":");
        write_str(out, id);
    }
    out.push(b'}');
}

/// How many system prompts each thread keeps escaped.
const KEPT_SYSTEM_PROMPTS: usize = 4;

/// Kept system prompts, each with its escaped JSON string (empty until written), and the next
/// slot to replace.
type EscapedPrompts = ([(String, Vec<u8>); KEPT_SYSTEM_PROMPTS], usize);

thread_local! {
    /// The system prompts this thread wrote last. A system prompt is the same text call after
    /// call, and escaping its few kilobytes was most of writing a body (BENCHMARKS.md);
    /// comparing it with the kept text costs a memcmp.
    static ESCAPED_SYSTEM_PROMPTS: std::cell::RefCell<EscapedPrompts> =
        std::cell::RefCell::new((Default::default(), 0));
}

/// `text` as [`write_str`] writes it, copied from this thread's kept escape when it was
/// written before.
fn write_system_prompt(out: &mut Vec<u8>, text: &str) {
    ESCAPED_SYSTEM_PROMPTS.with_borrow_mut(|(kept, next)| {
        // An empty slot has no escape yet (a written one holds at least its two quotes).
        let found = kept
            .iter()
            .find(|(plain, escaped)| !escaped.is_empty() && plain == text);
        if let Some((_, escaped)) = found {
            out.extend_from_slice(escaped);
            return;
        }
        let (plain, escaped) = &mut kept[*next];
        *next = (*next + 1) % KEPT_SYSTEM_PROMPTS;
        plain.clear();
        plain.push_str(text);
        escaped.clear();
        write_str(escaped, text);
        out.extend_from_slice(escaped);
    });
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::llm::{ToolCall, ToolChoice};
    use crate::agent::tools::registry::ToolSchema;
    use proptest::prelude::*;

    fn by_serde(request: &ChatRequest<'_>) -> Vec<u8> {
        serde_json::to_vec(&WireRequest::new(request, false)).unwrap()
    }

    fn schema() -> ToolSchema {
        ToolSchema::new(
            "find_room",
            "Finds a \"room\" by name.\nOne line more.",
            serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        )
    }

    fn text() -> impl Strategy<Value = String> {
        crate::json_out::arbitrary_text()
    }

    fn message() -> impl Strategy<Value = Message> {
        (
            0..4usize,
            proptest::option::of(text()),
            proptest::collection::vec((text(), text(), text()), 0..3),
            proptest::option::of(text()),
        )
            .prop_map(|(role, content, calls, call_id)| Message {
                role: [Role::System, Role::User, Role::Assistant, Role::Tool][role],
                content,
                tool_calls: calls
                    .into_iter()
                    .map(|(id, name, arguments)| ToolCall {
                        id,
                        name,
                        arguments,
                    })
                    .collect(),
                tool_call_id: call_id,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(256)))]

        #[test]
        fn system_prompts_written_again_are_written_as_serde_writes_them(
            prompts in proptest::collection::vec(text(), 1..7),
            order in proptest::collection::vec(0..7usize, 1..16),
        ) {
            for at in order {
                let message = Message::system(prompts[at % prompts.len()].clone());
                let mut written = Vec::new();
                write_message(&mut written, &message);
                prop_assert_eq!(written, serde_json::to_vec(&super::super::wire::WireMessage::from(&message)).unwrap());
            }
        }

        #[test]
        fn the_body_is_the_one_serde_writes(
            model in text(),
            messages in proptest::collection::vec(message(), 0..5),
            with_tools in any::<bool>(),
            temperature in prop_oneof![Just(0.0f32), Just(0.2), any::<f32>().prop_filter("finite", |t| t.is_finite())],
            max_tokens in any::<u32>(),
            choice in 0..3usize,
            with_schema in any::<bool>(),
        ) {
            let tools = [schema(), schema()];
            let topic = serde_json::json!({"type": "object", "properties": {"on_topic": {"type": "boolean"}}});
            let request = ChatRequest {
                model: &model,
                messages: &messages,
                tools: if with_tools { &tools } else { &[] },
                temperature,
                max_output_tokens: max_tokens,
                response_schema: with_schema.then_some(crate::agent::llm::ResponseSchema {
                    name: "topic",
                    schema: &topic,
                }),
                tool_choice: [ToolChoice::Auto, ToolChoice::Required, ToolChoice::None][choice],
            };
            let written = one_response(&request).unwrap();
            prop_assert_eq!(String::from_utf8(written).unwrap(), String::from_utf8(by_serde(&request)).unwrap());
        }
    }
}
