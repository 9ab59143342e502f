//! The deterministic assertions of a case, read from the response object: tools in the trace,
//! cited sources, substrings, the IDK flag and the decision. Pure. The judge's rubric is graded
//! elsewhere ([`super::judge`]) and joins these results as one more assertion.

use super::dataset::Expect;
use crate::contract::AskResponse;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AssertionKind {
    Tools,
    NotTools,
    CitedSources,
    NotCitedSources,
    Contains,
    NotContains,
    Idk,
    Decision,
    Language,
    DiffersFrom,
    Judge,
}

impl AssertionKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AssertionKind::Tools => "tools",
            AssertionKind::NotTools => "not_tools",
            AssertionKind::CitedSources => "cited_sources",
            AssertionKind::NotCitedSources => "not_cited_sources",
            AssertionKind::Contains => "contains",
            AssertionKind::NotContains => "not_contains",
            AssertionKind::Idk => "idk",
            AssertionKind::Decision => "decision",
            AssertionKind::Language => "language",
            AssertionKind::DiffersFrom => "differs_from",
            AssertionKind::Judge => "judge",
        }
    }
}

/// One assertion's outcome, with what was expected and what the answer had.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssertionResult {
    pub kind: AssertionKind,
    pub passed: bool,
    pub expected: String,
    pub got: String,
}

/// Every deterministic assertion `expect` makes, checked against `response`.
pub fn check(expect: &Expect, response: &AskResponse) -> Vec<AssertionResult> {
    let fired: Vec<&str> = response.trace.iter().map(|t| t.tool.as_str()).collect();
    let cited: Vec<&str> = response
        .citations
        .iter()
        .map(|c| c.source.as_str())
        .collect();
    let answer = response.answer.to_lowercase();
    let mut results = Vec::new();
    if !expect.tools.is_empty() {
        let missing = absent(&expect.tools, |name| fired.contains(&name));
        results.push(listed(
            AssertionKind::Tools,
            &expect.tools,
            &missing,
            &fired,
            "missing",
        ));
    }
    if !expect.not_tools.is_empty() {
        let present = present(&expect.not_tools, |name| fired.contains(&name));
        results.push(listed(
            AssertionKind::NotTools,
            &expect.not_tools,
            &present,
            &fired,
            "fired",
        ));
    }
    if !expect.cited_sources.is_empty() {
        let missing = absent(&expect.cited_sources, |s| {
            cited.iter().any(|c| same_source(c, s))
        });
        results.push(listed(
            AssertionKind::CitedSources,
            &expect.cited_sources,
            &missing,
            &cited,
            "not cited",
        ));
    }
    if !expect.not_cited_sources.is_empty() {
        let present = present(&expect.not_cited_sources, |s| {
            cited.iter().any(|c| same_source(c, s))
        });
        results.push(listed(
            AssertionKind::NotCitedSources,
            &expect.not_cited_sources,
            &present,
            &cited,
            "cited",
        ));
    }
    if !expect.contains.is_empty() {
        let missing = absent(&expect.contains, |t| answer.contains(&t.to_lowercase()));
        results.push(substrings(
            AssertionKind::Contains,
            &expect.contains,
            &missing,
            "missing",
        ));
    }
    if !expect.not_contains.is_empty() {
        let present = present(&expect.not_contains, |t| answer.contains(&t.to_lowercase()));
        results.push(substrings(
            AssertionKind::NotContains,
            &expect.not_contains,
            &present,
            "present",
        ));
    }
    if let Some(idk) = expect.idk {
        results.push(AssertionResult {
            kind: AssertionKind::Idk,
            passed: response.idk == idk,
            expected: idk.to_string(),
            got: response.idk.to_string(),
        });
    }
    if let Some(decision) = expect.decision {
        results.push(AssertionResult {
            kind: AssertionKind::Decision,
            passed: response.decision == decision,
            expected: decision.as_str().to_string(),
            got: response.decision.as_str().to_string(),
        });
    }
    if let Some(code) = &expect.language {
        let got = crate::agent::question::language::detect(&response.answer);
        results.push(AssertionResult {
            kind: AssertionKind::Language,
            passed: got.is_some_and(|l| l.code().eq_ignore_ascii_case(code.trim())),
            expected: code.clone(),
            got: got.map_or("undetermined".to_string(), |l| l.code().to_string()),
        });
    }
    if let Some(complained) = &expect.differs_from {
        let same = comparable(complained) == comparable(&response.answer);
        results.push(AssertionResult {
            kind: AssertionKind::DiffersFrom,
            passed: !same,
            expected: format!(
                "an answer other than {}",
                quoted([complained.as_str()].into_iter())
            ),
            got: if same {
                "the same answer".to_string()
            } else {
                "another answer".to_string()
            },
        });
    }
    results
}

/// Text as compared by `differs_from`: lowercase, whitespace runs as one space.
fn comparable(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// A cited source matches an expected one when they are equal, or when the expected one is a
/// trailing part of the path (`sensor-co2.md` matches `user/sensor-co2.md`).
fn same_source(cited: &str, expected: &str) -> bool {
    cited == expected
        || cited
            .strip_suffix(expected)
            .is_some_and(|head| head.ends_with('/'))
}

fn absent(wanted: &[String], found: impl Fn(&str) -> bool) -> Vec<&str> {
    wanted
        .iter()
        .map(String::as_str)
        .filter(|w| !found(w))
        .collect()
}

fn present(unwanted: &[String], found: impl Fn(&str) -> bool) -> Vec<&str> {
    unwanted
        .iter()
        .map(String::as_str)
        .filter(|w| found(w))
        .collect()
}

/// An assertion over names (tools, sources): `got` lists what the answer had.
fn listed(
    kind: AssertionKind,
    wanted: &[String],
    wrong: &[&str],
    had: &[&str],
    wrong_word: &str,
) -> AssertionResult {
    let mut had: Vec<&str> = had.to_vec();
    had.dedup();
    let had = if had.is_empty() {
        "none".to_string()
    } else {
        had.join(", ")
    };
    AssertionResult {
        kind,
        passed: wrong.is_empty(),
        expected: wanted.join(", "),
        got: if wrong.is_empty() {
            had
        } else {
            format!("{wrong_word}: {}; had: {had}", wrong.join(", "))
        },
    }
}

/// An assertion over substrings of the answer.
fn substrings(
    kind: AssertionKind,
    wanted: &[String],
    wrong: &[&str],
    wrong_word: &str,
) -> AssertionResult {
    AssertionResult {
        kind,
        passed: wrong.is_empty(),
        expected: quoted(wanted.iter().map(String::as_str)),
        got: if wrong.is_empty() {
            "ok".to_string()
        } else {
            format!("{wrong_word}: {}", quoted(wrong.iter().copied()))
        },
    }
}

fn quoted<'a>(texts: impl Iterator<Item = &'a str>) -> String {
    texts
        .map(|t| format!("{t:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::citations::Citation;
    use crate::contract::Decision;
    use crate::contract::{Cost, Usage};
    use crate::contract::{RetrievalReport, TraceEntry};

    fn response() -> AskResponse {
        AskResponse {
            answer: "Room hq-101 reads 612 PPM [^c1].".into(),
            citations: vec![Citation {
                marker: "[^c1]".into(),
                chunk_id: "c1".into(),
                source: "user/sensor-co2.md".into(),
                section: "CO2".into(),
                attributed: false,
                excerpt: String::new(),
            }],
            trace: vec![TraceEntry {
                tool: "get_latest_sensor_data".into(),
                arguments: serde_json::json!({}),
                ok: true,
                ms: 3,
                summary: String::new(),
            }],
            usage: Usage::default(),
            cost: Cost::default(),
            idk: false,
            decision: Decision::Answered,
            model: "m".into(),
            retrieval: RetrievalReport::default(),
            trace_id: None,
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn every_assertion_passes_on_a_matching_answer() {
        let expect = Expect {
            tools: strings(&["get_latest_sensor_data"]),
            not_tools: strings(&["search_docs"]),
            cited_sources: strings(&["sensor-co2.md"]),
            not_cited_sources: strings(&["staff/sensor-maintenance.md"]),
            contains: strings(&["ppm", "hq-101"]),
            not_contains: strings(&["1200"]),
            idk: Some(false),
            decision: Some(Decision::Answered),
            judge: None,
            language: None,
            differs_from: None,
        };
        let results = check(&expect, &response());
        assert_eq!(results.len(), 8);
        assert!(results.iter().all(|r| r.passed), "{results:#?}");
    }

    #[test]
    fn the_language_is_detected_in_the_answer() {
        let expect = Expect {
            language: Some("de".into()),
            ..Expect::default()
        };
        let german = AskResponse {
            answer: "Im Raum hq-101 sind gerade 6 Personen [^c1].".into(),
            ..response()
        };
        let english = AskResponse {
            answer: "There are 6 people in room hq-101 right now [^c1].".into(),
            ..response()
        };
        let too_short = AskResponse {
            answer: "hq-101: 612 ppm [^c1].".into(),
            ..response()
        };
        let verdicts: Vec<(bool, String)> = [german, english, too_short]
            .iter()
            .map(|r| {
                let result = &check(&expect, r)[0];
                (result.passed, result.got.clone())
            })
            .collect();
        assert_eq!(
            verdicts,
            [
                (true, "de".to_string()),
                (false, "en".to_string()),
                (false, "undetermined".to_string())
            ]
        );
    }

    #[test]
    fn failures_spell_out_expected_and_got() {
        let expect = Expect {
            tools: strings(&["search_docs", "get_latest_sensor_data"]),
            not_tools: strings(&["get_latest_sensor_data"]),
            cited_sources: strings(&["co2.md"]),
            not_cited_sources: strings(&["user/sensor-co2.md"]),
            contains: strings(&["ppm", "degrees"]),
            not_contains: strings(&["612"]),
            idk: Some(true),
            decision: Some(Decision::Declined),
            judge: None,
            language: None,
            differs_from: None,
        };
        let results = check(&expect, &response());
        assert!(results.iter().all(|r| !r.passed), "{results:#?}");
        assert_eq!(
            results[0].got,
            "missing: search_docs; had: get_latest_sensor_data"
        );
        assert_eq!(
            results[1].got,
            "fired: get_latest_sensor_data; had: get_latest_sensor_data"
        );
        // `co2.md` is not a whole trailing path segment of `user/sensor-co2.md`.
        assert_eq!(results[2].got, "not cited: co2.md; had: user/sensor-co2.md");
        assert_eq!(
            results[3].got,
            "cited: user/sensor-co2.md; had: user/sensor-co2.md"
        );
        assert_eq!(results[4].got, "missing: \"degrees\"");
        assert_eq!(results[5].got, "present: \"612\"");
        assert_eq!(
            (results[6].expected.as_str(), results[6].got.as_str()),
            ("true", "false")
        );
        assert_eq!(results[7].got, "answered");
    }

    #[test]
    fn differs_from_fails_while_the_answer_is_the_one_complained_about() {
        let expect = |text: &str| Expect {
            differs_from: Some(text.to_string()),
            ..Expect::default()
        };
        let answer = response().answer;
        let same = format!("  {}  ", answer.to_uppercase().replace(' ', "\n "));
        assert!(!check(&expect(&same), &response())[0].passed);
        assert!(check(&expect("Something else entirely."), &response())[0].passed);
    }

    #[test]
    fn substrings_ignore_case_in_any_script() {
        let mut answer = response();
        answer.answer = "Die CO2-KONZENTRATION beträgt 612 ppm. Ärger".into();
        let expect = Expect {
            contains: strings(&["co2-konzentration", "ärger"]),
            ..Expect::default()
        };
        assert!(check(&expect, &answer)[0].passed);
    }
}
