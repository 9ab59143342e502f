//! The report as files: JUnit XML for CI systems and Markdown for a pull-request comment. Pure
//! text generation; the binary writes the files.
//!
//! JUnit mapping (as pytest does it): one `<testsuite>` per model, one `<testcase>` per case;
//! FAIL → `<failure>`, ERROR → `<error>`, XFAIL → `<skipped>` with its reason, XPASS → passed,
//! or `<failure>` under `--strict`.

use super::report::{BaselineDiff, CaseResult, ModelReport, Report, Status};
use std::fmt::Write;

/// Longest answer kept in a test case's `<system-out>`.
const MAX_OUTPUT_CHARS: usize = 4000;

pub fn junit(report: &Report) -> String {
    let count = |pick: fn(&CaseResult, bool) -> bool| -> usize {
        report
            .models
            .iter()
            .flat_map(|m| &m.cases)
            .filter(|c| pick(c, report.strict))
            .count()
    };
    let tests = count(|_, _| true);
    let failures = count(is_failure);
    let errors = count(|c, _| c.status == Status::Error);
    let skipped = count(|c, _| c.status == Status::Xfail);
    let seconds: f64 = report.models.iter().map(model_seconds).sum();
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        xml,
        "<testsuites name=\"crowdvision-agent eval\" tests=\"{tests}\" failures=\"{failures}\" \
         errors=\"{errors}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">"
    );
    for model in &report.models {
        suite(&mut xml, model, report.strict);
    }
    xml.push_str("</testsuites>\n");
    xml
}

fn is_failure(case: &CaseResult, strict: bool) -> bool {
    case.status == Status::Fail || (strict && case.status == Status::Xpass)
}

fn model_seconds(model: &ModelReport) -> f64 {
    model
        .cases
        .iter()
        .flat_map(|c| &c.runs)
        .map(|r| r.latency_ms as f64 / 1000.0)
        .sum()
}

fn suite(xml: &mut String, model: &ModelReport, strict: bool) {
    let s = &model.summary;
    let failures = model.cases.iter().filter(|c| is_failure(c, strict)).count();
    let _ = writeln!(
        xml,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" errors=\"{}\" skipped=\"{}\" \
         time=\"{:.3}\">",
        escape(&model.model),
        s.cases,
        s.error,
        s.xfail,
        model_seconds(model)
    );
    for case in &model.cases {
        testcase(xml, &model.model, case, strict);
    }
    xml.push_str("  </testsuite>\n");
}

fn testcase(xml: &mut String, model: &str, case: &CaseResult, strict: bool) {
    let seconds: f64 = case.runs.iter().map(|r| r.latency_ms as f64 / 1000.0).sum();
    let _ = writeln!(
        xml,
        "    <testcase name=\"{}\" classname=\"eval.{}\" time=\"{seconds:.3}\">",
        escape(&case.id),
        escape(model)
    );
    let details = case_details(case);
    match case.status {
        Status::Fail => element(xml, "failure", "FAIL", &first_line(&details), &details),
        Status::Xpass if strict => {
            let message = "XPASS: passed though marked xfail; remove the marker";
            element(xml, "failure", "XPASS", message, message);
        }
        Status::Error => element(xml, "error", "ERROR", &first_line(&details), &details),
        Status::Xfail => {
            let reason = case.xfail.as_deref().unwrap_or_default();
            let _ = writeln!(
                xml,
                "      <skipped message=\"{}\"/>",
                escape(&format!("XFAIL: {reason}"))
            );
        }
        Status::Pass | Status::Xpass => {}
    }
    if let Some(run) = case.runs.last() {
        let answer: String = run.answer.chars().take(MAX_OUTPUT_CHARS).collect();
        let _ = writeln!(xml, "      <system-out>{}</system-out>", escape(&answer));
    }
    xml.push_str("    </testcase>\n");
}

fn element(xml: &mut String, name: &str, kind: &str, message: &str, body: &str) {
    let _ = writeln!(
        xml,
        "      <{name} type=\"{kind}\" message=\"{}\">{}</{name}>",
        escape(message),
        escape(body)
    );
}

/// Each failing assertion and error of a case, one a line.
pub fn case_details(case: &CaseResult) -> String {
    let mut lines: Vec<String> = case
        .errors()
        .into_iter()
        .map(|e| format!("error: {e}"))
        .collect();
    lines.extend(case.failed_assertions().into_iter().map(|a| {
        format!(
            "{}: expected {}, got {}",
            a.kind.as_str(),
            a.expected,
            a.got
        )
    }));
    if case.flaky {
        lines.push(format!(
            "flaky: {:.0}% of {} runs behaved",
            case.pass_rate * 100.0,
            case.runs.len()
        ));
    }
    lines.join("\n")
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_string()
}

/// XML text and attribute escaping; characters XML 1.0 cannot hold are dropped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{FFFE}' || c == '\u{FFFF}' => {}
            c => out.push(c),
        }
    }
    out
}

/// A Markdown summary: one row per model, the failing cases with their assertions, the
/// cases that differ between models, and the change against the baseline when given.
pub fn markdown(report: &Report, baseline: Option<&BaselineDiff>) -> String {
    let mut md = String::from("## crowdvision-agent eval\n\n");
    md.push_str(
        "| model | pass rate | PASS | FAIL | ERROR | XFAIL | XPASS | flaky | mean latency | p95 latency | tokens | cost |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for model in &report.models {
        let s = &model.summary;
        let _ = writeln!(
            md,
            "| {} | {:.1}% | {} | {} | {} | {} | {} | {} | {:.0} ms | {} ms | {} | {} |",
            cell(&model.model),
            s.pass_rate * 100.0,
            s.pass,
            s.fail,
            s.error,
            s.xfail,
            s.xpass,
            s.flaky,
            s.latency_ms_mean,
            s.latency_ms_p95,
            s.usage.total_tokens,
            usd(s.cost_usd)
        );
    }
    md.push_str(&rates_markdown(report));
    for model in &report.models {
        let failing: Vec<&CaseResult> = model
            .cases
            .iter()
            .filter(|c| c.status.fails_run(report.strict))
            .collect();
        if failing.is_empty() {
            continue;
        }
        let _ = writeln!(md, "\n### Failing with `{}`\n", model.model);
        for case in failing {
            let _ = writeln!(md, "- **{}** `{}`", case.status.as_str(), case.id);
            for line in case_details(case).lines() {
                let _ = writeln!(md, "  - {}", cell(line));
            }
        }
    }
    if !report.differing.is_empty() {
        md.push_str("\n### Cases that differ between models\n\n");
        for case in &report.differing {
            let statuses: Vec<String> = case
                .statuses
                .iter()
                .map(|(m, s)| format!("{m}: {}", s.as_str()))
                .collect();
            let _ = writeln!(md, "- `{}`: {}", case.id, statuses.join(", "));
        }
    }
    if let Some(diff) = baseline {
        md.push_str(&baseline_markdown(diff));
    }
    md
}

/// Pass rates per tag (runs that behaved) and per assertion kind (assertions that held), one
/// column per model.
fn rates_markdown(report: &Report) -> String {
    let mut md = String::new();
    let header: Vec<String> = report.models.iter().map(|m| cell(&m.model)).collect();
    let rule = "|---".to_string() + &"|---:".repeat(header.len()) + "|\n";
    let mut tags: Vec<&String> = report
        .models
        .iter()
        .flat_map(|m| m.summary.by_tag.keys())
        .collect();
    tags.sort();
    tags.dedup();
    if !tags.is_empty() {
        let _ = write!(
            md,
            "\n### By tag\n\n| tag | {} |\n{rule}",
            header.join(" | ")
        );
        for tag in tags {
            let cells: Vec<String> = report
                .models
                .iter()
                .map(|m| rate_cell(m.summary.by_tag.get(tag)))
                .collect();
            let _ = writeln!(md, "| {} | {} |", cell(tag), cells.join(" | "));
        }
    }
    let mut kinds: Vec<_> = report
        .models
        .iter()
        .flat_map(|m| m.summary.by_assertion.keys().copied())
        .collect();
    kinds.sort();
    kinds.dedup();
    if !kinds.is_empty() {
        let _ = write!(
            md,
            "\n### By assertion kind\n\n| assertion | {} |\n{rule}",
            header.join(" | ")
        );
        for kind in kinds {
            let cells: Vec<String> = report
                .models
                .iter()
                .map(|m| rate_cell(m.summary.by_assertion.get(&kind)))
                .collect();
            let _ = writeln!(md, "| `{}` | {} |", kind.as_str(), cells.join(" | "));
        }
    }
    md
}

fn rate_cell(rate: Option<&super::report::Rate>) -> String {
    match rate {
        Some(rate) => format!(
            "{}/{} ({:.0}%)",
            rate.passed,
            rate.total,
            rate.share() * 100.0
        ),
        None => "–".to_string(),
    }
}

fn baseline_markdown(diff: &BaselineDiff) -> String {
    let mut md = String::from("\n### Against the baseline\n\n");
    for rate in &diff.pass_rates {
        let _ = writeln!(
            md,
            "- `{}` pass rate {:.1}% → {:.1}% ({:+.1} points)",
            rate.model,
            rate.before * 100.0,
            rate.after * 100.0,
            (rate.after - rate.before) * 100.0
        );
    }
    for (title, changes) in [
        ("New failures", &diff.new_failures),
        ("Fixed", &diff.fixed),
        ("Other changes", &diff.other_changes),
    ] {
        if changes.is_empty() {
            continue;
        }
        let _ = writeln!(md, "\n{title}:");
        for change in changes.iter() {
            let _ = writeln!(
                md,
                "- `{}` ({}): {} → {}",
                change.id,
                change.model,
                change.before.as_str(),
                change.after.as_str()
            );
        }
    }
    if !diff.new_cases.is_empty() {
        let _ = writeln!(md, "\nNew cases: {}", diff.new_cases.join(", "));
    }
    if !diff.gone_cases.is_empty() {
        let _ = writeln!(md, "\nCases no longer run: {}", diff.gone_cases.join(", "));
    }
    md
}

/// Text safe inside a Markdown table cell or list item.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

pub fn usd(cost: Option<f64>) -> String {
    match cost {
        Some(usd) => format!("${usd:.4}"),
        None => "n/a".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_xml_well_formed() {
        assert_eq!(escape("a<b & \"c\"\u{1}"), "a&lt;b &amp; &quot;c&quot;");
        assert_eq!(cell("a|b\nc"), "a\\|b c");
    }
}
