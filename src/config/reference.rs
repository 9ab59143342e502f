//! The settings table written out for people: `documentation/developer/configuration.md` and the
//! ENVIRONMENT section of `--help` and the man pages. Pure; a test keeps the file current.

use super::settings::{DefaultValue, Group, Kind, Setting, TABLE};

/// Where the generated reference lives, from the repository root.
pub const REFERENCE_PATH: &str = "documentation/developer/configuration.md";

const INTRO: &str = "---
title: Configuration reference
tags: [developer, configuration]
---
# Configuration reference

<!-- Written from src/config/settings.rs by `UPDATE_REFERENCE=1 cargo test --lib reference`;
     edit the table there, not this file. -->

Settings are read once at start-up. Sources, strongest first: the process environment, the file
given with `--config FILE` (a YAML mapping whose keys are the variable names below, any case),
a `.env` file in the working directory, then the defaults. A blank value counts as unset.

Every value is validated when it is loaded. An invalid one stops the command with exit code 2
and a message that names the variable, the value and what was expected. So does a key in the
`--config` file that is not one of the settings below (a typo would otherwise be ignored
silently), and a `.env` line that is neither `NAME=value` nor a comment; both messages name the
file and the line. `crowdvision-agent doctor` prints every setting's effective value and where
it came from, then checks each part live.

Booleans accept `true/false`, `1/0`, `yes/no`, `on/off`; lists are comma-separated.
";

/// What follows a group's table.
fn notes(group: Group) -> &'static str {
    match group {
        Group::Provider => {
            "Commands that need the provider ask for the key when they start; `chunk`, `ingest` \
             with the local embedder and `db` never do."
        }
        Group::Chunking => {
            "The settings are part of each document's hash: changing them re-chunks every \
             document on the next ingest."
        }
        Group::Observability => {
            "The standard `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_EXPORTER_OTLP_TIMEOUT`, \
             `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` and `OTEL_BSP_*` variables are read \
             from the environment as the OpenTelemetry specification names them; `RUST_LOG` \
             filters the log."
        }
        _ => "",
    }
}

/// configuration.md as it should read.
pub fn markdown() -> String {
    let mut out = String::from(INTRO);
    for group in Group::ALL {
        out.push_str(&format!(
            "\n## {}\n\n| variable | default | accepted | what it does |\n|---|---|---|---|\n",
            group.title()
        ));
        for setting in TABLE.iter().filter(|s| s.group == group) {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                setting.name,
                default_text(setting),
                accepted(setting),
                setting.doc
            ));
        }
        let notes = notes(group);
        if !notes.is_empty() {
            out.push('\n');
            out.push_str(&wrap(notes, 96));
            out.push('\n');
        }
    }
    out
}

fn default_text(setting: &Setting) -> String {
    match setting.default {
        DefaultValue::Unset => "unset".to_string(),
        DefaultValue::Value(value) => format!("`{value}`"),
        DefaultValue::Derived(text) => text.to_string(),
    }
}

fn accepted(setting: &Setting) -> String {
    match setting.kind {
        Kind::Text => "text".to_string(),
        Kind::Secret => "text, shown masked".to_string(),
        Kind::Bool => "boolean".to_string(),
        Kind::Url => "http or https URL".to_string(),
        Kind::List => "list".to_string(),
        Kind::Choice(words) => words
            .iter()
            .map(|w| format!("`{w}`"))
            .collect::<Vec<_>>()
            .join(", "),
        Kind::Number { min, max } => format!("{min} to {max}"),
    }
}

/// The ENVIRONMENT section of `--help` and the man pages.
pub fn environment_help() -> String {
    let mut out = String::from(
        "Environment (also from --config FILE or a .env file; `crowdvision-agent doctor` lists them all):\n",
    );
    let lines = TABLE
        .iter()
        .filter_map(|setting| Some((setting.name, setting.help?)))
        .chain([
            (
                "RUST_LOG",
                "log filter; LOG_FORMAT pretty or json (with trace ids)",
            ),
            ("NO_COLOR", "no colour"),
        ]);
    for (name, help) in lines {
        // Names line up in a column; a longer one is followed by two spaces.
        let gap = 22usize.saturating_sub(name.len()).max(2);
        out.push_str(&format!("  {name}{:gap$}{help}\n", ""));
    }
    out
}

/// `text` broken into lines of at most `width` characters.
fn wrap(text: &str, width: usize) -> String {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The file in the repository is the one this table writes; `UPDATE_REFERENCE=1` rewrites
    /// it.
    #[test]
    fn the_configuration_reference_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(REFERENCE_PATH);
        let expected = markdown();
        if std::env::var_os("UPDATE_REFERENCE").is_some() {
            std::fs::write(&path, &expected).unwrap();
        }
        let written = std::fs::read_to_string(&path).unwrap();
        assert!(
            written == expected,
            "{REFERENCE_PATH} is stale: run `UPDATE_REFERENCE=1 cargo test --lib reference`"
        );
    }

    #[test]
    fn every_setting_is_documented_once() {
        let text = markdown();
        for setting in TABLE {
            assert!(!setting.doc.is_empty(), "{} has no doc", setting.name);
            assert_eq!(
                text.matches(&format!("\n| `{}` |", setting.name)).count(),
                1,
                "{}",
                setting.name
            );
        }
    }

    #[test]
    fn the_environment_help_names_the_key_settings() {
        let help = environment_help();
        for name in [
            "DATABASE_URL",
            "OPENROUTER_API_KEY",
            "REQUIRE_AUTH",
            "RUST_LOG",
        ] {
            assert!(help.contains(name), "{name}");
        }
        assert!(!help.contains("TOKENS_PER_HOUR"));
    }
}
