//! Golden datasets: YAML files of cases (contracts §7), read from files or folders and checked
//! whole before anything runs. Every problem names the file, the case and the field, and all
//! problems of a load are reported together.

use crate::auth::identity::Caller;
use crate::auth::{AuthUser, RoleHierarchy};
use crate::contract::Decision;
use crate::contract::HistoryMessage;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Largest dataset file read; a golden set is hand-written and small.
const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The cases of one or more files, in file order.
#[derive(Debug, Clone, Default)]
pub struct Dataset {
    /// The judge named by the files (all files that name one agree).
    pub judge_model: Option<String>,
    pub cases: Vec<Case>,
    pub files: Vec<PathBuf>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Case {
    pub id: String,
    pub question: String,
    /// Who asks; `None` is the anonymous caller.
    pub caller: Option<CallerSpec>,
    pub expect: Expect,
    /// Why the case is expected to fail, when it is.
    pub xfail: Option<String>,
    pub tags: Vec<String>,
    /// Earlier turns of the conversation, for follow-up questions.
    pub history: Vec<HistoryMessage>,
    /// The file the case was read from.
    pub file: PathBuf,
}

/// The `as:` of a case: the caller's roles and domains.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallerSpec {
    #[serde(default)]
    pub sub: Option<String>,
    #[serde(default)]
    pub roles: Vec<String>,
    #[serde(default)]
    pub domains: Vec<String>,
}

/// What a case expects of the answer. Every field is optional; a case needs at least one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Each must appear in the trace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// None may appear in the trace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_tools: Vec<String>,
    /// Each source must be cited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cited_sources: Vec<String>,
    /// No citation may point at these sources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_cited_sources: Vec<String>,
    /// Case-insensitive substrings the answer must hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub contains: Vec<String>,
    /// Case-insensitive substrings the answer must not hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_contains: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idk: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// A rubric graded by the judge model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judge: Option<String>,
    /// The answer's language, ISO 639-1 (`de`, `fr`, `es`, …), as detected in code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// An answer someone complained about (`eval import-feedback` writes it): the case passes
    /// only when today's answer is another one (compared without case and spacing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub differs_from: Option<String>,
}

impl Expect {
    fn is_empty(&self) -> bool {
        *self == Expect::default()
    }
}

impl CallerSpec {
    /// The caller this spec describes, with a claims header minted for the downstream services.
    pub fn caller(&self, case_id: &str) -> Caller {
        Caller::minted(AuthUser {
            sub: self
                .sub
                .clone()
                .unwrap_or_else(|| format!("eval:{case_id}")),
            roles: self.roles.clone(),
            domains: self.domains.clone(),
        })
    }
}

impl Case {
    pub fn caller(&self) -> Caller {
        match &self.caller {
            Some(spec) => spec.caller(&self.id),
            None => Caller::anonymous(),
        }
    }
}

/// One thing wrong with a dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    /// The case id, or `#N` (1-based) for a case without a usable id.
    pub case: Option<String>,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.case {
            Some(case) => write!(f, "{}: case {case}: {}", self.file.display(), self.message),
            None => write!(f, "{}: {}", self.file.display(), self.message),
        }
    }
}

/// Every problem found while loading; nothing runs while there is one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct DatasetError {
    pub problems: Vec<Problem>,
}

impl fmt::Display for DatasetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let lines: Vec<String> = self.problems.iter().map(Problem::to_string).collect();
        write!(f, "the dataset is not usable:\n  {}", lines.join("\n  "))
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    judge_model: Option<String>,
    cases: Vec<serde_yaml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    id: String,
    question: String,
    #[serde(default, rename = "as")]
    caller: Option<CallerSpec>,
    #[serde(default)]
    expect: Expect,
    #[serde(default)]
    xfail: Option<String>,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    history: Vec<HistoryMessage>,
}

/// Reads every dataset file named by `paths` (files, or folders searched for `*.yaml` and
/// `*.yml`), checking each case; `known_tools` are the names `tools:` and `not_tools:` may use.
pub fn load(paths: &[PathBuf], known_tools: &[&str]) -> Result<Dataset, DatasetError> {
    let mut problems = Vec::new();
    let mut dataset = Dataset::default();
    let mut judge_from: Option<PathBuf> = None;
    for file in dataset_files(paths, &mut problems) {
        let text = match read_file(&file) {
            Ok(text) => text,
            Err(message) => {
                problems.push(Problem {
                    file,
                    case: None,
                    message,
                });
                continue;
            }
        };
        let (judge, cases) = parse(&text, &file, known_tools, &mut problems);
        if let Some(judge) = judge {
            match (&dataset.judge_model, &judge_from) {
                (Some(earlier), Some(earlier_file)) if *earlier != judge => {
                    problems.push(Problem {
                        file: file.clone(),
                        case: None,
                        message: format!(
                            "judge_model {judge:?} differs from {earlier:?} named by {}",
                            earlier_file.display()
                        ),
                    })
                }
                _ => {
                    dataset.judge_model = Some(judge);
                    judge_from = Some(file.clone());
                }
            }
        }
        dataset.cases.extend(cases);
        dataset.files.push(file);
    }
    check_unique_ids(&dataset.cases, &mut problems);
    if dataset.cases.is_empty() && problems.is_empty() {
        problems.push(Problem {
            file: paths.first().cloned().unwrap_or_default(),
            case: None,
            message: "no cases found".to_string(),
        });
    }
    if problems.is_empty() {
        Ok(dataset)
    } else {
        Err(DatasetError { problems })
    }
}

/// Parses one file's text. Problems are pushed; the cases that are fine are returned.
pub fn parse(
    text: &str,
    file: &Path,
    known_tools: &[&str],
    problems: &mut Vec<Problem>,
) -> (Option<String>, Vec<Case>) {
    let problem = |case: Option<String>, message: String| Problem {
        file: file.to_path_buf(),
        case,
        message,
    };
    let raw: RawFile = match serde_yaml::from_str(text) {
        Ok(raw) => raw,
        Err(error) => {
            problems.push(problem(None, error.to_string()));
            return (None, Vec::new());
        }
    };
    if raw
        .judge_model
        .as_deref()
        .is_some_and(|m| m.trim().is_empty())
    {
        problems.push(problem(None, "judge_model is empty".to_string()));
    }
    let mut cases = Vec::new();
    for (index, value) in raw.cases.into_iter().enumerate() {
        let label = case_label(&value, index);
        match serde_yaml::from_value::<RawCase>(value) {
            Ok(raw_case) => {
                let found = check_case(&raw_case, known_tools);
                if found.is_empty() {
                    cases.push(into_case(raw_case, file));
                }
                problems.extend(found.into_iter().map(|m| problem(Some(label.clone()), m)));
            }
            Err(error) => problems.push(problem(Some(label), error.to_string())),
        }
    }
    (raw.judge_model, cases)
}

fn into_case(raw: RawCase, file: &Path) -> Case {
    Case {
        id: raw.id,
        question: raw.question,
        caller: raw.caller,
        expect: raw.expect,
        xfail: raw.xfail.map(|reason| reason.trim().to_string()),
        tags: raw.tags,
        history: raw.history,
        file: file.to_path_buf(),
    }
}

/// `"the-id"` when the case has a string id, `#N` otherwise.
fn case_label(value: &serde_yaml::Value, index: usize) -> String {
    match value.get("id").and_then(serde_yaml::Value::as_str) {
        Some(id) if !id.trim().is_empty() => format!("{id:?}"),
        _ => format!("#{}", index + 1),
    }
}

/// The problems of one parsed case, each a message naming its field.
fn check_case(case: &RawCase, known_tools: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    if case.id.trim().is_empty() {
        found.push("id: is empty".to_string());
    } else if case.id.chars().any(char::is_whitespace) {
        found.push("id: must not contain spaces".to_string());
    }
    if case.question.trim().is_empty() {
        found.push("question: is empty".to_string());
    }
    if case.xfail.as_deref().is_some_and(|r| r.trim().is_empty()) {
        found.push("xfail: needs a written reason".to_string());
    }
    if case.expect.is_empty() {
        found.push("expect: names no assertion".to_string());
    }
    if case
        .expect
        .judge
        .as_deref()
        .is_some_and(|r| r.trim().is_empty())
    {
        found.push("expect.judge: the rubric is empty".to_string());
    }
    for (field, names) in [
        ("expect.tools", &case.expect.tools),
        ("expect.not_tools", &case.expect.not_tools),
    ] {
        for name in names {
            if !known_tools.contains(&name.as_str()) {
                found.push(format!(
                    "{field}: unknown tool {name:?} (known: {})",
                    known_tools.join(", ")
                ));
            }
        }
    }
    for (field, texts) in [
        ("expect.contains", &case.expect.contains),
        ("expect.not_contains", &case.expect.not_contains),
        ("expect.cited_sources", &case.expect.cited_sources),
        ("expect.not_cited_sources", &case.expect.not_cited_sources),
    ] {
        if texts.iter().any(|t| t.trim().is_empty()) {
            found.push(format!("{field}: holds an empty entry"));
        }
    }
    if let Some(code) = &case.expect.language {
        if crate::agent::question::language::Language::from_code(code).is_none() {
            let known: Vec<&str> = crate::agent::question::language::Language::ALL
                .iter()
                .map(|l| l.code())
                .collect();
            found.push(format!(
                "expect.language: unknown language {code:?} (known: {})",
                known.join(", ")
            ));
        }
    }
    if let Some(spec) = &case.caller {
        found.extend(check_caller(spec));
    }
    if case.tags.iter().any(|t| t.trim().is_empty()) {
        found.push("tags: holds an empty tag".to_string());
    }
    found
}

fn check_caller(spec: &CallerSpec) -> Vec<String> {
    let hierarchy = RoleHierarchy::shipped();
    let mut found = Vec::new();
    for role in &spec.roles {
        if !hierarchy.is_known(role) {
            let known: Vec<&str> = hierarchy.names().collect();
            found.push(format!(
                "as.roles: unknown role {role:?} (known: {})",
                known.join(", ")
            ));
        }
    }
    if spec
        .domains
        .iter()
        .any(|d| d.trim().is_empty() || d.trim() != d)
    {
        found.push("as.domains: a domain is empty or has surrounding spaces".to_string());
    }
    if spec.sub.as_deref().is_some_and(|s| s.trim().is_empty()) {
        found.push("as.sub: is empty".to_string());
    }
    found
}

fn check_unique_ids(cases: &[Case], problems: &mut Vec<Problem>) {
    let mut first_seen: HashMap<&str, &Path> = HashMap::new();
    for case in cases {
        if let Some(earlier) = first_seen.get(case.id.as_str()) {
            problems.push(Problem {
                file: case.file.clone(),
                case: Some(format!("{:?}", case.id)),
                message: format!("id: duplicate (first defined in {})", earlier.display()),
            });
        } else {
            first_seen.insert(&case.id, &case.file);
        }
    }
}

/// The dataset files named by `paths`: files as given, folders searched (sorted) for YAML.
fn dataset_files(paths: &[PathBuf], problems: &mut Vec<Problem>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found: Vec<PathBuf> = walkdir::WalkDir::new(path)
                .sort_by_file_name()
                .into_iter()
                .filter_map(Result::ok)
                .filter(|entry| entry.file_type().is_file())
                .map(walkdir::DirEntry::into_path)
                .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
                .collect();
            if found.is_empty() {
                problems.push(Problem {
                    file: path.clone(),
                    case: None,
                    message: "the folder holds no .yaml or .yml file".to_string(),
                });
            }
            files.append(&mut found);
        } else {
            files.push(path.clone());
        }
    }
    files
}

fn read_file(path: &Path) -> Result<String, String> {
    let metadata = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !metadata.is_file() {
        return Err("not a regular file".to_string());
    }
    if metadata.len() > MAX_FILE_BYTES {
        return Err(format!(
            "larger than {} MiB",
            MAX_FILE_BYTES / (1024 * 1024)
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOOLS: &[&str] = &["search_docs", "get_latest_sensor_data"];

    fn parse_text(text: &str) -> (Vec<Case>, Vec<String>) {
        let mut problems = Vec::new();
        let (_, cases) = parse(text, Path::new("g.yaml"), TOOLS, &mut problems);
        (cases, problems.iter().map(Problem::to_string).collect())
    }

    #[test]
    fn reads_the_contract_example() {
        let (cases, problems) = parse_text(
            r#"
judge_model: google/gemini-2.5-flash
cases:
  - id: latest-co2
    question: "What is the CO2 level in room 2.14 of HQ right now?"
    as: {roles: [business_staff], domains: [acme]}
    expect:
      tools: [get_latest_sensor_data]
      not_tools: [search_docs]
      cited_sources: [user/sensors.md]
      contains: ["ppm"]
      not_contains: []
      idk: false
      decision: answered
      judge: "Gives a number in ppm."
    xfail: "the model guesses room ids"
    tags: [live-data]
"#,
        );
        assert!(problems.is_empty(), "{problems:?}");
        let case = &cases[0];
        assert_eq!(case.expect.decision, Some(Decision::Answered));
        assert_eq!(case.expect.idk, Some(false));
        assert_eq!(case.xfail.as_deref(), Some("the model guesses room ids"));
        let caller = case.caller();
        assert_eq!(caller.user.sub, "eval:latest-co2");
        assert_eq!(caller.user.domains, vec!["acme".to_string()]);
        assert!(caller.forwarded_claims.is_some());
    }

    #[test]
    fn names_file_case_and_field_of_each_problem() {
        let (cases, problems) = parse_text(
            r#"
cases:
  - id: a
    question: q
    expct: {idk: true}
  - id: b
    question: q
    expect: {idk: true}
    xfail: ""
  - id: c
    question: q
    expect: {tools: [get_weather]}
  - id: d
    question: q
    as: {roles: [superuser]}
    expect: {idk: true}
  - question: no id
    expect: {idk: true}
  - id: e
    question: q
  - id: f
    question: q
    expect: {decision: maybe}
"#,
        );
        assert!(cases.is_empty());
        assert_eq!(problems.len(), 7, "{problems:#?}");
        assert!(problems[0].starts_with("g.yaml: case \"a\": unknown field `expct`"));
        assert!(problems[1].contains("case \"b\": xfail: needs a written reason"));
        assert!(problems[2].contains("case \"c\": expect.tools: unknown tool \"get_weather\""));
        assert!(problems[3].contains("case \"d\": as.roles: unknown role \"superuser\""));
        assert!(problems[4].contains("case #5: missing field `id`"));
        assert!(problems[5].contains("case \"e\": expect: names no assertion"));
        assert!(problems[6].contains("case \"f\": unknown variant `maybe`"));
    }

    #[test]
    fn duplicate_ids_across_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let text = "cases:\n  - {id: same, question: q, expect: {idk: true}}\n";
        std::fs::write(dir.path().join("a.yaml"), text).unwrap();
        std::fs::write(dir.path().join("b.yml"), text).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a dataset").unwrap();
        let error = load(&[dir.path().to_path_buf()], TOOLS).unwrap_err();
        assert_eq!(error.problems.len(), 1);
        assert!(error.problems[0]
            .to_string()
            .contains("b.yml: case \"same\": id: duplicate"));
    }

    #[test]
    fn unknown_top_level_keys_and_conflicting_judges_are_refused() {
        let (_, problems) = parse_text("cases: []\njudge: x\n");
        assert!(
            problems[0].contains("unknown field `judge`"),
            "{problems:?}"
        );

        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.yaml");
        let b = dir.path().join("b.yaml");
        std::fs::write(
            &a,
            "judge_model: m1\ncases:\n  - {id: x, question: q, expect: {idk: true}}\n",
        )
        .unwrap();
        std::fs::write(
            &b,
            "judge_model: m2\ncases:\n  - {id: y, question: q, expect: {idk: true}}\n",
        )
        .unwrap();
        let error = load(&[a, b], TOOLS).unwrap_err();
        assert!(error.to_string().contains("judge_model \"m2\" differs"));
    }

    #[test]
    fn a_missing_file_and_an_empty_dataset_are_problems() {
        let error = load(&[PathBuf::from("/nonexistent/golden.yaml")], TOOLS).unwrap_err();
        assert!(error
            .to_string()
            .contains("/nonexistent/golden.yaml: cannot read"));
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("e.yaml");
        std::fs::write(&empty, "cases: []\n").unwrap();
        assert!(load(&[empty], TOOLS)
            .unwrap_err()
            .to_string()
            .contains("no cases found"));
    }
}
