//! Where raw settings come from: the process environment, a `--config` YAML file and `.env`,
//! merged so that a stronger source always wins, each value remembering its origin.

use super::settings;
use super::ConfigError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Environment,
    File(PathBuf),
    DotEnv,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Environment => write!(f, "environment"),
            Origin::File(path) => write!(f, "{}", path.display()),
            Origin::DotEnv => write!(f, ".env"),
        }
    }
}

/// Raw settings: variable name → value and where it came from, merged from every source.
#[derive(Debug, Default, Clone)]
pub struct RawSettings(HashMap<String, (String, Origin)>);

impl RawSettings {
    /// Settings as if from the environment.
    pub fn from_pairs<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        RawSettings::from_origin(pairs, Origin::Environment)
    }

    fn from_origin<I, K, V>(pairs: I, origin: Origin) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        RawSettings(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into().to_ascii_uppercase(), (v.into(), origin.clone())))
                .collect(),
        )
    }

    /// Merges every source; a key set in a stronger source is never overwritten by a weaker one.
    pub fn gather(config_file: Option<&Path>) -> Result<Self, ConfigError> {
        let mut merged = RawSettings::from_pairs(std::env::vars());
        if let Some(path) = config_file {
            merged.fill_from(read_config_file(path)?);
        }
        let dotenv = Path::new(".env");
        if dotenv.is_file() {
            merged.fill_from(read_dotenv(dotenv)?);
        }
        Ok(merged)
    }

    pub(super) fn fill_from(&mut self, weaker: RawSettings) {
        for (key, value) in weaker.0 {
            self.0.entry(key).or_insert(value);
        }
    }

    /// A set, non-blank value; blank counts as unset, as most shells' `VAR=` means "no value".
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .get(key)
            .map(|(v, _)| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// Where `key`'s value came from; `None` when it is unset (its default applies).
    pub fn origin(&self, key: &str) -> Option<&Origin> {
        self.get(key)?;
        self.0.get(key).map(|(_, origin)| origin)
    }
}

/// `.env` as settings; a line that is not `NAME=value` (or a comment) is an error naming it.
fn read_dotenv(path: &Path) -> Result<RawSettings, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::File {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mut pairs = Vec::new();
    for item in dotenvy::from_read_iter(text.as_bytes()) {
        match item {
            Ok(pair) => pairs.push(pair),
            Err(error) => {
                let line = match &error {
                    dotenvy::Error::LineParse(content, _) => text
                        .lines()
                        .position(|l| l == content)
                        .map(|n| format!("line {}: ", n + 1))
                        .unwrap_or_default(),
                    _ => String::new(),
                };
                return Err(ConfigError::File {
                    path: path.to_path_buf(),
                    message: format!("{line}{error}; write NAME=value, or # for a comment"),
                });
            }
        }
    }
    Ok(RawSettings::from_origin(pairs, Origin::DotEnv))
}

pub(super) fn read_config_file(path: &Path) -> Result<RawSettings, ConfigError> {
    let file_error = |message: String| ConfigError::File {
        path: path.to_path_buf(),
        message,
    };
    let text = std::fs::read_to_string(path).map_err(|e| file_error(e.to_string()))?;
    let mapping: HashMap<String, serde_yaml::Value> =
        serde_yaml::from_str(&text).map_err(|e| file_error(e.to_string()))?;
    let mut pairs = Vec::new();
    for (key, value) in mapping {
        if settings::find(&key.to_ascii_uppercase()).is_none() {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with(key.as_str()))
                .map(|n| format!("line {}: ", n + 1))
                .unwrap_or_default();
            return Err(file_error(format!(
                "{line}unknown setting {key} (the settings are listed in `crowdvision-agent \
                 doctor` and documentation/developer/configuration.md)"
            )));
        }
        let text = match value {
            serde_yaml::Value::String(s) => s,
            serde_yaml::Value::Number(n) => n.to_string(),
            serde_yaml::Value::Bool(b) => b.to_string(),
            serde_yaml::Value::Sequence(items) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect::<Vec<_>>()
                .join(","),
            serde_yaml::Value::Null => continue,
            _ => return Err(file_error(format!("{key}: expected a scalar or a list"))),
        };
        pairs.push((key, text));
    }
    Ok(RawSettings::from_origin(
        pairs,
        Origin::File(path.to_path_buf()),
    ))
}
