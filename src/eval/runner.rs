//! Running a dataset: every (model, case, repeat) is one job; jobs run with bounded
//! concurrency, each under a timeout, each case as its own `as:` caller. The answers come from
//! an [`AnswerTarget`] (the library in process, or a running server), the rubric grades from
//! the [`Judge`].

use super::check::{check, AssertionKind, AssertionResult};
use super::dataset::Case;
use super::judge::Judge;
use super::report::{run_status, CaseResult, JudgeRecord, ModelReport, RunRecord};
use crate::agent::answer::Agent;
use crate::contract::Usage;
use crate::contract::{AskResponse, Question};
use async_trait::async_trait;
use futures::StreamExt;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// PORT: where answers come from.
#[async_trait]
pub trait AnswerTarget: Send + Sync {
    /// The answer to `case` by `model`, asked as the case's caller; an error in words.
    async fn answer(&self, case: &Case, model: &str) -> Result<AskResponse, String>;
}

/// The library in process: one agent per model of the sweep. The model is the operator's
/// choice, so it is each agent's own answer model, not a per-request override (which would be
/// subject to the case caller's role).
pub struct InProcess {
    pub agents: HashMap<String, Agent>,
}

#[async_trait]
impl AnswerTarget for InProcess {
    async fn answer(&self, case: &Case, model: &str) -> Result<AskResponse, String> {
        let agent = self
            .agents
            .get(model)
            .ok_or_else(|| format!("no agent for model {model}"))?;
        let question = Question {
            history: case.history.clone(),
            ..Question::new(case.question.as_str())
        };
        agent
            .answer(&question, &case.caller(), None)
            .await
            .map_err(|error| error.to_string())
    }
}

/// The model name a remote run reports when it sends no override (the server's own model).
pub const SERVER_MODEL: &str = "server";

/// A running `serve`: each case asks as a development token minted for its `as:` caller
/// (HS256 with `EVAL_JWT_SECRET`, valid ten minutes). A sweep's models are sent as per-request
/// overrides, subject to the server's override policy.
pub struct Remote {
    pub agent: crate::client::RemoteAgent,
    pub secret: String,
}

#[async_trait]
impl AnswerTarget for Remote {
    async fn answer(&self, case: &Case, model: &str) -> Result<AskResponse, String> {
        use crate::client::RemoteIdentity;
        let identity = match &case.caller {
            None => RemoteIdentity::Anonymous,
            Some(spec) => {
                let caller = spec.caller(&case.id).user;
                let now = crate::clock::unix_secs();
                let claims = serde_json::json!({
                    "sub": caller.sub, "roles": caller.roles, "domains": caller.domains,
                    "iat": now, "exp": now + 600,
                });
                RemoteIdentity::Token(crate::auth::jwt::sign_hs256(
                    &claims,
                    self.secret.as_bytes(),
                ))
            }
        };
        let question = Question {
            history: case.history.clone(),
            model: (model != SERVER_MODEL).then(|| model.to_string()),
            ..Question::new(case.question.as_str())
        };
        self.agent
            .ask(&question, &identity, None)
            .await
            .map_err(|error| error.to_string())
    }
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Jobs in flight at once.
    pub jobs: usize,
    /// Runs of each case.
    pub repeat: u32,
    /// How long one answer (with its grading) may take.
    pub timeout: Duration,
}

/// Told as jobs finish (for a progress bar).
pub trait EvalProgress: Send + Sync {
    fn started(&self, _jobs: usize) {}
    fn finished(&self, _model: &str, _case_id: &str, _record: &RunRecord) {}
}

pub struct NoProgress;
impl EvalProgress for NoProgress {}

/// The cases `filters` select: a filter matches a case's id (with `*` as a wildcard) or one
/// of its tags. No filter selects every case.
pub fn select<'a>(cases: &'a [Case], filters: &[String]) -> Vec<&'a Case> {
    cases
        .iter()
        .filter(|case| {
            filters.is_empty()
                || filters
                    .iter()
                    .any(|f| wildcard_match(f, &case.id) || case.tags.contains(f))
        })
        .collect()
}

fn wildcard_match(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text.ends_with(last) || text.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// Runs `cases` for every model; one [`ModelReport`] per model, cases in dataset order.
pub async fn run(
    cases: &[&Case],
    models: &[String],
    target: &dyn AnswerTarget,
    judge: Option<&Judge>,
    options: &RunOptions,
    progress: &dyn EvalProgress,
) -> Vec<ModelReport> {
    let repeat = options.repeat.max(1) as usize;
    let jobs: Vec<(usize, usize, usize)> = (0..models.len())
        .flat_map(|m| (0..cases.len()).flat_map(move |c| (0..repeat).map(move |r| (m, c, r))))
        .collect();
    progress.started(jobs.len());
    let mut records: HashMap<(usize, usize, usize), RunRecord> = futures::stream::iter(jobs)
        .map(|(m, c, r)| async move {
            let record = run_one(cases[c], &models[m], target, judge, options.timeout).await;
            progress.finished(&models[m], &cases[c].id, &record);
            ((m, c, r), record)
        })
        .buffer_unordered(options.jobs.max(1))
        .collect()
        .await;
    models
        .iter()
        .enumerate()
        .map(|(m, model)| {
            let results = cases
                .iter()
                .enumerate()
                .map(|(c, case)| {
                    let runs = (0..repeat)
                        .filter_map(|r| records.remove(&(m, c, r)))
                        .collect();
                    CaseResult::new(
                        case.id.clone(),
                        case.question.clone(),
                        case.tags.clone(),
                        case.xfail.clone(),
                        runs,
                    )
                })
                .collect();
            ModelReport::new(model.clone(), results)
        })
        .collect()
}

/// One run of one case: the answer, the assertions, the judge when the case has a rubric.
async fn run_one(
    case: &Case,
    model: &str,
    target: &dyn AnswerTarget,
    judge: Option<&Judge>,
    timeout: Duration,
) -> RunRecord {
    let started = Instant::now();
    let answered = tokio::time::timeout(timeout, target.answer(case, model)).await;
    let latency_ms = started.elapsed().as_millis() as u64;
    let response = match answered {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => return error_record(error, latency_ms),
        Err(_) => {
            return error_record(
                format!("no answer within {} s", timeout.as_secs_f64()),
                latency_ms,
            )
        }
    };
    let mut assertions = check(&case.expect, &response);
    let mut error = None;
    let judge_record = match (&case.expect.judge, judge) {
        (Some(rubric), Some(judge)) => {
            let record = grade(judge, case, &response, rubric).await;
            match record.passed {
                Some(passed) => assertions.push(AssertionResult {
                    kind: AssertionKind::Judge,
                    passed,
                    expected: rubric.clone(),
                    got: record.reason.clone(),
                }),
                None => error = Some(record.reason.clone()),
            }
            Some(record)
        }
        (Some(_), None) => {
            error = Some("the case has a judge rubric but no judge is configured".to_string());
            None
        }
        _ => None,
    };
    let all_passed = assertions.iter().all(|a| a.passed);
    RunRecord {
        status: run_status(error.is_some(), all_passed, case.xfail.is_some()),
        error,
        latency_ms,
        decision: Some(response.decision),
        tools: response.trace.iter().map(|t| t.tool.clone()).collect(),
        cited_sources: response
            .citations
            .iter()
            .map(|c| c.source.clone())
            .collect(),
        usage: response.usage,
        cost_usd: response.cost.provider_usd.or(response.cost.estimated_usd),
        answer: response.answer,
        assertions,
        judge: judge_record,
    }
}

async fn grade(judge: &Judge, case: &Case, response: &AskResponse, rubric: &str) -> JudgeRecord {
    let grading = judge.grade(&case.question, &response.answer, rubric).await;
    let (passed, reason) = match grading.verdict {
        Ok(verdict) => (Some(verdict.passed), verdict.reason),
        Err(problem) => (None, problem),
    };
    JudgeRecord {
        model: judge.judge_model.clone(),
        passed,
        reason,
        usage: grading.usage,
        cost_usd: grading.cost.provider_usd.or(grading.cost.estimated_usd),
    }
}

fn error_record(error: String, latency_ms: u64) -> RunRecord {
    RunRecord {
        status: super::report::Status::Error,
        error: Some(error),
        latency_ms,
        answer: String::new(),
        decision: None,
        tools: Vec::new(),
        cited_sources: Vec::new(),
        usage: Usage::default(),
        cost_usd: None,
        assertions: Vec::new(),
        judge: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::dataset::Expect;

    fn case(id: &str, tags: &[&str]) -> Case {
        Case {
            id: id.into(),
            question: "q".into(),
            caller: None,
            expect: Expect {
                idk: Some(true),
                ..Expect::default()
            },
            xfail: None,
            tags: tags.iter().map(|t| t.to_string()).collect(),
            history: vec![],
            file: "g.yaml".into(),
        }
    }

    #[test]
    fn filters_match_ids_with_wildcards_and_tags() {
        let cases = vec![
            case("live-co2-hq", &["live"]),
            case("docs-co2", &["docs"]),
            case("decline-poem", &["scope"]),
        ];
        let ids = |filters: &[&str]| -> Vec<String> {
            let filters: Vec<String> = filters.iter().map(|f| f.to_string()).collect();
            select(&cases, &filters)
                .iter()
                .map(|c| c.id.clone())
                .collect()
        };
        assert_eq!(ids(&[]).len(), 3);
        assert_eq!(ids(&["docs-co2"]), vec!["docs-co2"]);
        assert_eq!(ids(&["*co2*"]), vec!["live-co2-hq", "docs-co2"]);
        assert_eq!(ids(&["live-*"]), vec!["live-co2-hq"]);
        assert_eq!(ids(&["*-hq"]), vec!["live-co2-hq"]);
        assert_eq!(ids(&["scope", "docs"]), vec!["docs-co2", "decline-poem"]);
        assert!(ids(&["co2"]).is_empty());
    }
}
