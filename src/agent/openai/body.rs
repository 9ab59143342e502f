//! The one-response call's body written straight into bytes: the same JSON, byte for byte, as
//! serde writes for `WireRequest` (a property test holds the two together), without serde's
//! per-byte escaping table or its per-field machinery. Writing the body was a tenth of the
//! instructions of a served answer (BENCHMARKS.md); the tool definitions, already JSON, are
//! copied as they are.

#[cfg(test)]
use super::wire::WireRequest;
use super::wire::{tool_choice, WireResponseFormat};
use crate::agent::llm::{ChatRequest, Message, Role};

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

/// `items` as a JSON array, each written by `write_item`.
fn write_list<T>(out: &mut Vec<u8>, items: &[T], write_item: impl Fn(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_item(out, item);
    }
    out.push(b']');
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

/// `text` as a JSON string, escaped as serde_json escapes it: `"` and `\` with a backslash,
/// the control characters below U+0020 as `\b \t \n \f \r` or `\u00xx`, everything else as it
/// is. Runs of plain text are found eight bytes at a time and copied whole.
pub(super) fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut copied_to = 0;
    let mut escape_at = |at: usize, out: &mut Vec<u8>| {
        out.extend_from_slice(&bytes[copied_to..at]);
        write_escape(out, bytes[at]);
        copied_to = at + 1;
    };
    let words = bytes.chunks_exact(8);
    let tail_start = bytes.len() - words.remainder().len();
    for (index, word) in words.enumerate() {
        if may_need_escape(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
            for (offset, byte) in word.iter().enumerate() {
                if needs_escape(*byte) {
                    escape_at(index * 8 + offset, out);
                }
            }
        }
    }
    for (offset, byte) in bytes[tail_start..].iter().enumerate() {
        if needs_escape(*byte) {
            escape_at(tail_start + offset, out);
        }
    }
    out.extend_from_slice(&bytes[copied_to..]);
    out.push(b'"');
}

fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Whether any of the eight bytes in `word` may need an escape (never false when one does).
fn may_need_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    // A byte below `n` (n ≤ 0x80) leaves its high bit set in `x - n` where `x` had it clear.
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x;
    (below_space | zero_byte(quote) | zero_byte(backslash)) & HIGH_BITS != 0
}

fn write_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match byte {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0C => out.extend_from_slice(b"\\f"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xF)],
        ]),
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

    fn escaped(text: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, text);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_byte_that_needs_an_escape_is_escaped_as_serde_escapes_it() {
        for byte in 0u8..=0x7F {
            let text = format!("ab{}cdefghij{}", byte as char, byte as char);
            assert_eq!(
                escaped(&text),
                serde_json::to_string(&text).unwrap(),
                "{byte}"
            );
        }
        assert_eq!(escaped("é ß 漢 🙂"), "\"é ß 漢 🙂\"");
    }

    fn schema() -> ToolSchema {
        ToolSchema::new(
            "find_room",
            "Finds a \"room\" by name.\nOne line more.",
            serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}}}),
        )
    }

    fn text() -> impl Strategy<Value = String> {
        prop_oneof![".{0,80}", "[a-z \"\\\\\n\t\u{0}-\u{1f}\u{7f}é漢]{0,40}",]
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
        fn plain_and_escaped_text_is_written_as_serde_writes_it(text in text()) {
            prop_assert_eq!(escaped(&text), serde_json::to_string(&text).unwrap());
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
