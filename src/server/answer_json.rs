//! The answer's JSON (`POST /ask`, the `done` event) written straight into bytes: the same
//! bytes serde writes for the response with its kept turn beside it (a property test holds the
//! two together), without serde's flattened map and per-field machinery, a twelfth of a served
//! answer's instructions before (BENCHMARKS.md). A tool call's arguments, already JSON values,
//! and the two costs go through serde, which formats them as it always has.

use super::conversations::KeptTurn;
use crate::citations::Citation;
use crate::contract::{AskResponse, TraceEntry};
use crate::json_out::{write_bool, write_list, write_str, write_u64};

/// `response` as the object a client reads, with `conversation_id` and `turn_id` after its
/// fields when it was kept.
pub fn answer_body(response: &AskResponse, kept: Option<&KeptTurn>) -> Vec<u8> {
    let mut out = Vec::with_capacity(estimated_len(response));
    out.extend_from_slice(b"{\"answer\":");
    write_str(&mut out, &response.answer);
    out.extend_from_slice(b",\"citations\":");
    write_list(&mut out, &response.citations, write_citation);
    out.extend_from_slice(b",\"trace\":");
    write_list(&mut out, &response.trace, write_trace_entry);
    let usage = &response.usage;
    out.extend_from_slice(b",\"usage\":{\"prompt_tokens\":");
    write_u64(&mut out, usage.prompt_tokens);
    out.extend_from_slice(b",\"completion_tokens\":");
    write_u64(&mut out, usage.completion_tokens);
    out.extend_from_slice(b",\"total_tokens\":");
    write_u64(&mut out, usage.total_tokens);
    out.extend_from_slice(b",\"cached_prompt_tokens\":");
    write_u64(&mut out, usage.cached_prompt_tokens);
    out.extend_from_slice(b",\"model_calls\":");
    write_u64(&mut out, usage.model_calls);
    out.extend_from_slice(b"},\"cost\":{\"estimated_usd\":");
    write_usd(&mut out, response.cost.estimated_usd);
    out.extend_from_slice(b",\"provider_usd\":");
    write_usd(&mut out, response.cost.provider_usd);
    out.extend_from_slice(b"},\"idk\":");
    write_bool(&mut out, response.idk);
    out.extend_from_slice(b",\"decision\":\"");
    out.extend_from_slice(response.decision.as_str().as_bytes());
    out.extend_from_slice(b"\",\"model\":");
    write_str(&mut out, &response.model);
    // Invented markers leave as their number only (see `RetrievalReport`).
    let retrieval = &response.retrieval;
    out.extend_from_slice(b",\"retrieval\":{\"hallucinated_citations\":");
    write_u64(&mut out, retrieval.hallucinated_citations.len() as u64);
    out.extend_from_slice(b",\"unsupported_citations\":");
    write_list(&mut out, &retrieval.unsupported_citations, |out, id| {
        write_str(out, id)
    });
    out.push(b'}');
    if let Some(kept) = kept {
        out.extend_from_slice(b",\"conversation_id\":");
        write_str(&mut out, &kept.conversation_id);
        out.extend_from_slice(b",\"turn_id\":");
        write_i64(&mut out, kept.turn_id);
    }
    out.push(b'}');
    out
}

fn estimated_len(response: &AskResponse) -> usize {
    let citations: usize = response
        .citations
        .iter()
        .map(|c| {
            112 + c.marker.len()
                + c.chunk_id.len()
                + c.source.len()
                + c.section.len()
                + c.excerpt.len()
        })
        .sum();
    let trace: usize = response
        .trace
        .iter()
        .map(|t| 96 + t.tool.len() + t.summary.len())
        .sum();
    // The fixed fields take about 300 bytes; escapes and arguments grow it once at most.
    320 + response.answer.len() + response.model.len() + citations + trace
}

fn write_citation(out: &mut Vec<u8>, citation: &Citation) {
    out.extend_from_slice(b"{\"marker\":");
    write_str(out, &citation.marker);
    out.extend_from_slice(b",\"chunk_id\":");
    write_str(out, &citation.chunk_id);
    out.extend_from_slice(b",\"source\":");
    write_str(out, &citation.source);
    out.extend_from_slice(b",\"section\":");
    write_str(out, &citation.section);
    out.extend_from_slice(b",\"attributed\":");
    write_bool(out, citation.attributed);
    if !citation.excerpt.is_empty() {
        out.extend_from_slice(b",\"excerpt\":");
        write_str(out, &citation.excerpt);
    }
    out.push(b'}');
}

fn write_trace_entry(out: &mut Vec<u8>, entry: &TraceEntry) {
    out.extend_from_slice(b"{\"tool\":");
    write_str(out, &entry.tool);
    out.extend_from_slice(b",\"arguments\":");
    serde_json::to_writer(&mut *out, &entry.arguments).expect("a JSON value always serializes");
    out.extend_from_slice(b",\"ok\":");
    write_bool(out, entry.ok);
    out.extend_from_slice(b",\"ms\":");
    write_u64(out, entry.ms);
    out.extend_from_slice(b",\"summary\":");
    write_str(out, &entry.summary);
    out.push(b'}');
}

/// A cost in dollars as serde writes an `Option<f64>`: the shortest decimal that reads back,
/// `null` for none (and for a value that is not finite).
fn write_usd(out: &mut Vec<u8>, usd: Option<f64>) {
    serde_json::to_writer(&mut *out, &usd).expect("a float always serializes");
}

fn write_i64(out: &mut Vec<u8>, value: i64) {
    if value < 0 {
        out.push(b'-');
    }
    write_u64(out, value.unsigned_abs());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Cost, Decision, RetrievalReport, Usage};
    use crate::json_out::arbitrary_text;
    use proptest::prelude::*;

    /// What serde writes for the same response and turn: the reference the writer must equal.
    #[derive(serde::Serialize)]
    struct BySerde<'a> {
        #[serde(flatten)]
        response: &'a AskResponse,
        #[serde(flatten, skip_serializing_if = "Option::is_none")]
        kept: Option<&'a KeptTurn>,
    }

    fn citation() -> impl Strategy<Value = Citation> {
        (
            arbitrary_text(),
            arbitrary_text(),
            arbitrary_text(),
            arbitrary_text(),
            any::<bool>(),
            prop_oneof![Just(String::new()), arbitrary_text()],
        )
            .prop_map(|(marker, chunk_id, source, section, attributed, excerpt)| {
                Citation {
                    marker,
                    chunk_id,
                    source,
                    section,
                    attributed,
                    excerpt,
                }
            })
    }

    fn trace_entry() -> impl Strategy<Value = TraceEntry> {
        (
            arbitrary_text(),
            arbitrary_text(),
            any::<bool>(),
            any::<u64>(),
            arbitrary_text(),
            any::<i64>(),
        )
            .prop_map(|(tool, argument, ok, ms, summary, number)| TraceEntry {
                tool,
                arguments: serde_json::json!({"query": argument, "n": number, "deep": [1.5, null]}),
                ok,
                ms,
                summary,
            })
    }

    fn usd() -> impl Strategy<Value = Option<f64>> {
        prop_oneof![
            Just(None),
            Just(Some(0.0)),
            Just(Some(f64::NAN)),
            any::<f64>().prop_map(Some),
            (0.0..1.0f64).prop_map(Some),
        ]
    }

    fn response() -> impl Strategy<Value = AskResponse> {
        (
            (
                arbitrary_text(),
                proptest::collection::vec(citation(), 0..3),
                proptest::collection::vec(trace_entry(), 0..3),
                proptest::array::uniform5(any::<u64>()),
            ),
            (usd(), usd(), any::<bool>(), 0..5usize, arbitrary_text()),
            (
                proptest::collection::vec(arbitrary_text(), 0..3),
                proptest::collection::vec(arbitrary_text(), 0..3),
            ),
        )
            .prop_map(
                |(
                    (answer, citations, trace, tokens),
                    (estimated_usd, provider_usd, idk, decision, model),
                    (hallucinated_citations, unsupported_citations),
                )| AskResponse {
                    answer,
                    citations,
                    trace,
                    usage: Usage {
                        prompt_tokens: tokens[0],
                        completion_tokens: tokens[1],
                        total_tokens: tokens[2],
                        cached_prompt_tokens: tokens[3],
                        model_calls: tokens[4],
                    },
                    cost: Cost {
                        estimated_usd,
                        provider_usd,
                    },
                    idk,
                    decision: [
                        Decision::Answered,
                        Decision::Idk,
                        Decision::Declined,
                        Decision::ToolLoopExhausted,
                        Decision::BudgetExhausted,
                    ][decision],
                    model,
                    retrieval: RetrievalReport {
                        hallucinated_citations,
                        unsupported_citations,
                    },
                    trace_id: Some("not sent".into()),
                },
            )
    }

    fn kept() -> impl Strategy<Value = Option<KeptTurn>> {
        proptest::option::of((arbitrary_text(), any::<i64>()).prop_map(
            |(conversation_id, turn_id)| KeptTurn {
                conversation_id,
                turn_id,
            },
        ))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(256)))]

        #[test]
        fn the_body_is_the_one_serde_writes(response in response(), kept in kept()) {
            let by_serde = serde_json::to_vec(&BySerde { response: &response, kept: kept.as_ref() }).unwrap();
            let written = answer_body(&response, kept.as_ref());
            prop_assert_eq!(String::from_utf8(written).unwrap(), String::from_utf8(by_serde).unwrap());
        }
    }

    #[test]
    fn the_smallest_and_largest_turn_ids_are_written_whole() {
        let response = AskResponse {
            answer: String::new(),
            citations: vec![],
            trace: vec![],
            usage: Usage::default(),
            cost: Cost::default(),
            idk: true,
            decision: Decision::Idk,
            model: "m".into(),
            retrieval: RetrievalReport::default(),
            trace_id: None,
        };
        for turn_id in [i64::MIN, -1, 0, i64::MAX] {
            let kept = KeptTurn {
                conversation_id: "c".into(),
                turn_id,
            };
            let written: serde_json::Value =
                serde_json::from_slice(&answer_body(&response, Some(&kept))).unwrap();
            assert_eq!(written["turn_id"], turn_id);
        }
    }
}
