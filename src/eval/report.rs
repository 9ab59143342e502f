//! The results of an eval as plain data: statuses, one record per run, a case's status over
//! its repeats, per-model summaries (pass rate, latency, tokens, cost, rates per tag and per
//! assertion kind), the cases whose outcome differs between models, and the diff against a
//! baseline report. Pure; the same structure is the `--json` report and what `--baseline`
//! reads back.

use super::check::{AssertionKind, AssertionResult};
use crate::contract::Decision;
use crate::contract::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of the JSON report's layout.
pub const REPORT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Status {
    Pass,
    Fail,
    Error,
    /// Failed, as its `xfail` predicted.
    Xfail,
    /// Passed though marked `xfail`: the marker is stale.
    Xpass,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Error => "ERROR",
            Status::Xfail => "XFAIL",
            Status::Xpass => "XPASS",
        }
    }

    /// Behaved as the dataset says it should (PASS or XPASS).
    pub fn behaved(self) -> bool {
        matches!(self, Status::Pass | Status::Xpass)
    }

    /// Fails the run: FAIL and ERROR always, XPASS under `--strict`.
    pub fn fails_run(self, strict: bool) -> bool {
        matches!(self, Status::Fail | Status::Error) || (strict && self == Status::Xpass)
    }
}

/// The status of one run: an error is an error; otherwise whether every assertion passed,
/// read against the case's `xfail` marker.
pub fn run_status(error: bool, all_passed: bool, xfail: bool) -> Status {
    match (error, all_passed, xfail) {
        (true, _, _) => Status::Error,
        (false, true, false) => Status::Pass,
        (false, true, true) => Status::Xpass,
        (false, false, false) => Status::Fail,
        (false, false, true) => Status::Xfail,
    }
}

/// A case's status over its repeats, and whether it was flaky (passed some, failed some).
/// Any error makes it ERROR. A flaky case is not reliable: it is FAIL (XFAIL when marked).
pub fn case_status(runs: &[Status], xfail: bool) -> (Status, bool) {
    let passed = runs.iter().filter(|s| s.behaved()).count();
    let flaky = passed > 0 && passed < runs.len();
    if runs.contains(&Status::Error) {
        return (Status::Error, flaky);
    }
    let status = match (passed == runs.len() && !runs.is_empty(), xfail) {
        (true, false) => Status::Pass,
        (true, true) => Status::Xpass,
        (false, false) => Status::Fail,
        (false, true) => Status::Xfail,
    };
    (status, flaky)
}

/// One run of one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    pub status: Status,
    /// Why the run could not be judged (provider failure, timeout, judge failure).
    pub error: Option<String>,
    pub latency_ms: u64,
    pub answer: String,
    pub decision: Option<Decision>,
    pub tools: Vec<String>,
    pub cited_sources: Vec<String>,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    pub assertions: Vec<AssertionResult>,
    pub judge: Option<JudgeRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeRecord {
    pub model: String,
    /// `None` when no verdict could be had.
    pub passed: Option<bool>,
    pub reason: String,
    pub usage: Usage,
    pub cost_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub id: String,
    pub question: String,
    pub tags: Vec<String>,
    pub xfail: Option<String>,
    pub status: Status,
    pub flaky: bool,
    /// Share of runs that behaved.
    pub pass_rate: f64,
    pub runs: Vec<RunRecord>,
}

impl CaseResult {
    pub fn new(
        id: String,
        question: String,
        tags: Vec<String>,
        xfail: Option<String>,
        runs: Vec<RunRecord>,
    ) -> CaseResult {
        let statuses: Vec<Status> = runs.iter().map(|r| r.status).collect();
        let (status, flaky) = case_status(&statuses, xfail.is_some());
        let behaved = statuses.iter().filter(|s| s.behaved()).count();
        CaseResult {
            id,
            question,
            tags,
            xfail,
            status,
            flaky,
            pass_rate: ratio(behaved, runs.len()),
            runs,
        }
    }

    /// The failing assertions of the runs, once each, in order.
    pub fn failed_assertions(&self) -> Vec<&AssertionResult> {
        let mut failed: Vec<&AssertionResult> = Vec::new();
        for run in &self.runs {
            for assertion in run.assertions.iter().filter(|a| !a.passed) {
                if !failed.contains(&assertion) {
                    failed.push(assertion);
                }
            }
        }
        failed
    }

    /// The errors of the runs, once each.
    pub fn errors(&self) -> Vec<&str> {
        let mut errors: Vec<&str> = Vec::new();
        for error in self.runs.iter().filter_map(|r| r.error.as_deref()) {
            if !errors.contains(&error) {
                errors.push(error);
            }
        }
        errors
    }
}

/// Passed out of total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rate {
    pub passed: usize,
    pub total: usize,
}

impl Rate {
    pub fn share(&self) -> f64 {
        ratio(self.passed, self.total)
    }

    fn add(&mut self, passed: bool) {
        self.total += 1;
        self.passed += usize::from(passed);
    }
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Summary {
    pub cases: usize,
    pub runs: usize,
    pub pass: usize,
    pub fail: usize,
    pub error: usize,
    pub xfail: usize,
    pub xpass: usize,
    pub flaky: usize,
    /// Share of runs that behaved (PASS or XPASS).
    pub pass_rate: f64,
    pub latency_ms_mean: f64,
    pub latency_ms_p95: u64,
    /// The answers' tokens and cost (the judge's are apart).
    pub usage: Usage,
    pub cost_usd: Option<f64>,
    pub judge_usage: Usage,
    pub judge_cost_usd: Option<f64>,
    /// Runs that behaved, per tag.
    pub by_tag: BTreeMap<String, Rate>,
    /// Assertions that held, per kind.
    pub by_assertion: BTreeMap<AssertionKind, Rate>,
}

impl Summary {
    pub fn of(cases: &[CaseResult]) -> Summary {
        let mut summary = Summary {
            cases: cases.len(),
            ..Summary::default()
        };
        let mut latencies = Vec::new();
        let mut behaved = 0;
        for case in cases {
            match case.status {
                Status::Pass => summary.pass += 1,
                Status::Fail => summary.fail += 1,
                Status::Error => summary.error += 1,
                Status::Xfail => summary.xfail += 1,
                Status::Xpass => summary.xpass += 1,
            }
            summary.flaky += usize::from(case.flaky);
            for run in &case.runs {
                summary.runs += 1;
                behaved += usize::from(run.status.behaved());
                latencies.push(run.latency_ms);
                summary.usage += run.usage;
                add_cost(&mut summary.cost_usd, run.cost_usd);
                if let Some(judge) = &run.judge {
                    summary.judge_usage += judge.usage;
                    add_cost(&mut summary.judge_cost_usd, judge.cost_usd);
                }
                for tag in &case.tags {
                    summary
                        .by_tag
                        .entry(tag.clone())
                        .or_default()
                        .add(run.status.behaved());
                }
                for assertion in &run.assertions {
                    summary
                        .by_assertion
                        .entry(assertion.kind)
                        .or_default()
                        .add(assertion.passed);
                }
            }
        }
        summary.pass_rate = ratio(behaved, summary.runs);
        summary.latency_ms_mean = if latencies.is_empty() {
            0.0
        } else {
            latencies.iter().sum::<u64>() as f64 / latencies.len() as f64
        };
        summary.latency_ms_p95 = percentile(&mut latencies, 0.95);
        summary
    }
}

fn add_cost(total: &mut Option<f64>, cost: Option<f64>) {
    if let Some(usd) = cost {
        *total.get_or_insert(0.0) += usd;
    }
}

fn ratio(part: usize, whole: usize) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

/// The nearest-rank percentile.
fn percentile(values: &mut [u64], p: f64) -> u64 {
    if values.is_empty() {
        return 0;
    }
    values.sort_unstable();
    let rank = (p * values.len() as f64).ceil() as usize;
    values[rank.clamp(1, values.len()) - 1]
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelReport {
    pub model: String,
    pub summary: Summary,
    pub cases: Vec<CaseResult>,
}

impl ModelReport {
    pub fn new(model: String, cases: Vec<CaseResult>) -> ModelReport {
        ModelReport {
            summary: Summary::of(&cases),
            model,
            cases,
        }
    }
}

/// A case whose status is not the same for every model of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DifferingCase {
    pub id: String,
    /// `(model, status)` in the sweep's model order.
    pub statuses: Vec<(String, Status)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub version: u32,
    pub datasets: Vec<String>,
    /// The judge, when any case has a rubric.
    pub judge_model: Option<String>,
    pub repeat: u32,
    pub strict: bool,
    pub models: Vec<ModelReport>,
    pub differing: Vec<DifferingCase>,
}

impl Report {
    pub fn new(
        datasets: Vec<String>,
        judge_model: Option<String>,
        repeat: u32,
        strict: bool,
        models: Vec<ModelReport>,
    ) -> Report {
        Report {
            version: REPORT_VERSION,
            differing: differing_cases(&models),
            datasets,
            judge_model,
            repeat,
            strict,
            models,
        }
    }

    /// Whether the run failed: any FAIL or ERROR, or XPASS under `--strict`.
    pub fn failed(&self) -> bool {
        self.models
            .iter()
            .flat_map(|m| &m.cases)
            .any(|c| c.status.fails_run(self.strict))
    }
}

fn differing_cases(models: &[ModelReport]) -> Vec<DifferingCase> {
    let Some(first) = models.first() else {
        return Vec::new();
    };
    let mut differing = Vec::new();
    for case in &first.cases {
        let statuses: Vec<(String, Status)> = models
            .iter()
            .filter_map(|m| {
                let other = m.cases.iter().find(|c| c.id == case.id)?;
                Some((m.model.clone(), other.status))
            })
            .collect();
        if statuses.iter().any(|(_, s)| *s != case.status) {
            differing.push(DifferingCase {
                id: case.id.clone(),
                statuses,
            });
        }
    }
    differing
}

/// A case whose status moved between the baseline and this run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatusChange {
    pub model: String,
    pub id: String,
    pub before: Status,
    pub after: Status,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassRateChange {
    pub model: String,
    pub before: f64,
    pub after: f64,
}

/// This run against a previous report, model by model and case by case.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct BaselineDiff {
    /// Behaved (or failed as predicted) before, FAIL or ERROR now.
    pub new_failures: Vec<StatusChange>,
    /// FAIL or ERROR before, behaving now.
    pub fixed: Vec<StatusChange>,
    /// Any other change of status (an XFAIL turned XPASS, …).
    pub other_changes: Vec<StatusChange>,
    pub pass_rates: Vec<PassRateChange>,
    /// `model/id` of cases the baseline did not have.
    pub new_cases: Vec<String>,
    /// `model/id` of baseline cases this run did not have.
    pub gone_cases: Vec<String>,
}

pub fn compare(baseline: &Report, current: &Report) -> BaselineDiff {
    let mut diff = BaselineDiff::default();
    for model in &current.models {
        let Some(before) = baseline.models.iter().find(|m| m.model == model.model) else {
            diff.new_cases.extend(
                model
                    .cases
                    .iter()
                    .map(|c| format!("{}/{}", model.model, c.id)),
            );
            continue;
        };
        diff.pass_rates.push(PassRateChange {
            model: model.model.clone(),
            before: before.summary.pass_rate,
            after: model.summary.pass_rate,
        });
        for case in &model.cases {
            let Some(old) = before.cases.iter().find(|c| c.id == case.id) else {
                diff.new_cases.push(format!("{}/{}", model.model, case.id));
                continue;
            };
            if old.status == case.status {
                continue;
            }
            let change = StatusChange {
                model: model.model.clone(),
                id: case.id.clone(),
                before: old.status,
                after: case.status,
            };
            let was_failing = matches!(old.status, Status::Fail | Status::Error);
            let is_failing = matches!(case.status, Status::Fail | Status::Error);
            match (was_failing, is_failing) {
                (false, true) => diff.new_failures.push(change),
                (true, false) if case.status.behaved() => diff.fixed.push(change),
                _ => diff.other_changes.push(change),
            }
        }
        diff.gone_cases.extend(
            before
                .cases
                .iter()
                .filter(|old| !model.cases.iter().any(|c| c.id == old.id))
                .map(|old| format!("{}/{}", model.model, old.id)),
        );
    }
    diff
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(status: Status, latency_ms: u64) -> RunRecord {
        RunRecord {
            status,
            error: (status == Status::Error).then(|| "boom".to_string()),
            latency_ms,
            answer: String::new(),
            decision: None,
            tools: vec![],
            cited_sources: vec![],
            usage: Usage {
                prompt_tokens: 10,
                completion_tokens: 5,
                total_tokens: 15,
                ..Usage::default()
            },
            cost_usd: Some(0.001),
            assertions: vec![AssertionResult {
                kind: AssertionKind::Contains,
                passed: status.behaved(),
                expected: "\"x\"".into(),
                got: "ok".into(),
            }],
            judge: None,
        }
    }

    fn case(id: &str, xfail: bool, runs: Vec<RunRecord>) -> CaseResult {
        CaseResult::new(
            id.into(),
            "q".into(),
            vec!["t".into()],
            xfail.then(|| "known gap".to_string()),
            runs,
        )
    }

    #[test]
    fn run_statuses_follow_the_xfail_marker() {
        assert_eq!(run_status(false, true, false), Status::Pass);
        assert_eq!(run_status(false, false, false), Status::Fail);
        assert_eq!(run_status(false, false, true), Status::Xfail);
        assert_eq!(run_status(false, true, true), Status::Xpass);
        assert_eq!(run_status(true, true, true), Status::Error);
    }

    #[test]
    fn repeats_mark_flaky_cases_and_fail_them() {
        use Status::*;
        assert_eq!(case_status(&[Pass, Pass, Pass], false), (Pass, false));
        assert_eq!(case_status(&[Pass, Fail, Pass], false), (Fail, true));
        assert_eq!(case_status(&[Xfail, Xpass], true), (Xfail, true));
        assert_eq!(case_status(&[Xpass, Xpass], true), (Xpass, false));
        assert_eq!(case_status(&[Pass, Error], false), (Error, true));
        let flaky = case("f", false, vec![run(Pass, 1), run(Fail, 1), run(Pass, 1)]);
        assert!((flaky.pass_rate - 2.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn summaries_count_statuses_latency_and_rates() {
        let cases = vec![
            case("a", false, vec![run(Status::Pass, 100)]),
            case("b", false, vec![run(Status::Fail, 200)]),
            case("c", true, vec![run(Status::Xfail, 300)]),
            case("d", true, vec![run(Status::Xpass, 400)]),
            case("e", false, vec![run(Status::Error, 1000)]),
        ];
        let summary = Summary::of(&cases);
        assert_eq!(
            (
                summary.pass,
                summary.fail,
                summary.xfail,
                summary.xpass,
                summary.error
            ),
            (1, 1, 1, 1, 1)
        );
        assert!((summary.pass_rate - 0.4).abs() < 1e-9);
        assert!((summary.latency_ms_mean - 400.0).abs() < 1e-9);
        assert_eq!(summary.latency_ms_p95, 1000);
        assert_eq!(summary.usage.total_tokens, 75);
        assert!((summary.cost_usd.unwrap() - 0.005).abs() < 1e-12);
        assert_eq!(
            summary.by_tag["t"],
            Rate {
                passed: 2,
                total: 5
            }
        );
        assert_eq!(summary.by_assertion[&AssertionKind::Contains].passed, 2);
    }

    #[test]
    fn strict_fails_on_xpass_only() {
        let report = |status, strict| {
            Report::new(
                vec![],
                None,
                1,
                strict,
                vec![ModelReport::new(
                    "m".into(),
                    vec![case("a", true, vec![run(status, 1)])],
                )],
            )
        };
        assert!(!report(Status::Xpass, false).failed());
        assert!(report(Status::Xpass, true).failed());
        assert!(!report(Status::Xfail, true).failed());
    }

    #[test]
    fn sweeps_list_the_cases_whose_outcome_differs() {
        let m1 = ModelReport::new(
            "m1".into(),
            vec![
                case("a", false, vec![run(Status::Pass, 1)]),
                case("b", false, vec![run(Status::Pass, 1)]),
            ],
        );
        let m2 = ModelReport::new(
            "m2".into(),
            vec![
                case("a", false, vec![run(Status::Pass, 1)]),
                case("b", false, vec![run(Status::Fail, 1)]),
            ],
        );
        let report = Report::new(vec![], None, 1, false, vec![m1, m2]);
        assert_eq!(report.differing.len(), 1);
        assert_eq!(report.differing[0].id, "b");
        assert_eq!(
            report.differing[0].statuses[1],
            ("m2".to_string(), Status::Fail)
        );
    }

    #[test]
    fn the_baseline_diff_names_new_failures_and_fixes() {
        let before = Report::new(
            vec![],
            None,
            1,
            false,
            vec![ModelReport::new(
                "m".into(),
                vec![
                    case("a", false, vec![run(Status::Pass, 1)]),
                    case("b", false, vec![run(Status::Fail, 1)]),
                    case("gone", false, vec![run(Status::Pass, 1)]),
                ],
            )],
        );
        let after = Report::new(
            vec![],
            None,
            1,
            false,
            vec![ModelReport::new(
                "m".into(),
                vec![
                    case("a", false, vec![run(Status::Fail, 1)]),
                    case("b", false, vec![run(Status::Pass, 1)]),
                    case("new", false, vec![run(Status::Pass, 1)]),
                ],
            )],
        );
        let diff = compare(&before, &after);
        assert_eq!(diff.new_failures.len(), 1);
        assert_eq!(diff.new_failures[0].id, "a");
        assert_eq!(diff.fixed[0].id, "b");
        assert_eq!(diff.new_cases, vec!["m/new".to_string()]);
        assert_eq!(diff.gone_cases, vec!["m/gone".to_string()]);
        assert!((diff.pass_rates[0].before - 2.0 / 3.0).abs() < 1e-9);
    }
}
