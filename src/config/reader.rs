//! Reads one setting at a time from the raw sources, with the default and bounds of its row in
//! [`super::settings::TABLE`]; errors name the variable. Every value read is noted as it takes
//! effect (given or default), for `doctor`.

use super::settings::{self, DefaultValue, Kind, Setting};
use super::sources::RawSettings;
use super::ConfigError;
use std::str::FromStr;
use url::Url;

pub(super) struct Reader<'a> {
    pub raw: &'a RawSettings,
    pub effective: std::cell::RefCell<std::collections::BTreeMap<&'static str, String>>,
}

/// The row of `name`; a name missing from the table is a mistake in this crate.
fn row(name: &'static str) -> &'static Setting {
    settings::find(name).unwrap_or_else(|| panic!("{name} is not in config::settings::TABLE"))
}

/// `text` read as a `T`; the table's own values always are.
fn table_value<T: FromStr>(name: &str, text: &str) -> T {
    text.parse()
        .unwrap_or_else(|_| panic!("{name}: {text:?} in the settings table is not a number"))
}

impl Reader<'_> {
    pub fn new(raw: &RawSettings) -> Reader<'_> {
        Reader {
            raw,
            effective: Default::default(),
        }
    }

    fn note(&self, var: &'static str, value: impl Into<String>) {
        self.effective.borrow_mut().insert(var, value.into());
    }

    /// The value given, if any.
    pub fn given(&self, var: &'static str) -> Option<&str> {
        self.raw.get(row(var).name)
    }

    /// A text with the table's default.
    pub fn string(&self, var: &'static str) -> String {
        let default = match row(var).default {
            DefaultValue::Value(value) => value,
            _ => "",
        };
        self.string_or(var, default)
    }

    /// A text whose default is worked out by the caller.
    pub fn string_or(&self, var: &'static str, default: &str) -> String {
        let value = self.given(var).unwrap_or(default).to_string();
        self.note(var, value.as_str());
        value
    }

    /// A text put before embedded inputs; `none` turns a default off.
    pub fn prefix(&self, var: &'static str, default: &str) -> String {
        let value = match self.given(var) {
            Some("none") => String::new(),
            Some(value) => value.to_string(),
            None => default.to_string(),
        };
        self.note(var, format!("{value:?}"));
        value
    }

    pub fn optional(&self, var: &'static str) -> Option<String> {
        let value = self.given(var).map(str::to_string);
        self.note(var, value.clone().unwrap_or_else(|| "(unset)".to_string()));
        value
    }

    /// A number within the table's bounds, with the table's default.
    pub fn number<T>(&self, var: &'static str) -> Result<T, ConfigError>
    where
        T: FromStr + PartialOrd + Copy + std::fmt::Display,
    {
        let DefaultValue::Value(default) = row(var).default else {
            panic!("{var} has no default in the settings table: read it with number_or");
        };
        self.number_or(var, table_value(var, default))
    }

    /// A number within the table's bounds, with a default worked out by the caller.
    pub fn number_or<T>(&self, var: &'static str, default: T) -> Result<T, ConfigError>
    where
        T: FromStr + PartialOrd + Copy + std::fmt::Display,
    {
        match self.optional_number(var)? {
            Some(value) => Ok(value),
            None => {
                self.note(var, default.to_string());
                Ok(default)
            }
        }
    }

    /// A number within the table's bounds, or `None` when it is not set.
    pub fn optional_number<T>(&self, var: &'static str) -> Result<Option<T>, ConfigError>
    where
        T: FromStr + PartialOrd + Copy + std::fmt::Display,
    {
        let Kind::Number { min, max } = row(var).kind else {
            panic!("{var} is not a number in the settings table");
        };
        let (min, max): (T, T) = (table_value(var, min), table_value(var, max));
        let Some(text) = self.given(var) else {
            self.note(var, "(unset)");
            return Ok(None);
        };
        let value: T = text
            .parse()
            .map_err(|_| invalid(var, text, "not a number"))?;
        // Written so that NaN, which compares false with everything, is refused.
        if !(value >= min && value <= max) {
            return Err(invalid(
                var,
                text,
                &format!("must be between {min} and {max}"),
            ));
        }
        self.note(var, value.to_string());
        Ok(Some(value))
    }

    /// The default of a yes/no setting whose table default is derived, noted for doctor.
    pub fn boolean_default(&self, var: &'static str, value: bool) -> bool {
        self.note(var, value.to_string());
        value
    }

    pub fn boolean(&self, var: &'static str) -> Result<bool, ConfigError> {
        let default = matches!(row(var).default, DefaultValue::Value("true"));
        let value = match self.given(var).map(str::to_ascii_lowercase).as_deref() {
            None => default,
            Some("1" | "true" | "yes" | "on") => true,
            Some("0" | "false" | "no" | "off") => false,
            Some(other) => return Err(invalid(var, other, "expected true or false")),
        };
        self.note(var, value.to_string());
        Ok(value)
    }

    /// A URL with the table's default.
    pub fn http_url(&self, var: &'static str) -> Result<Url, ConfigError> {
        let DefaultValue::Value(default) = row(var).default else {
            panic!("{var} has no default URL in the settings table");
        };
        let text = self.given(var).unwrap_or(default);
        let url = parse_http_url(var, text)?;
        self.note(var, url.as_str());
        Ok(url)
    }

    /// A URL, or `None` when it is not set.
    pub fn optional_url(&self, var: &'static str) -> Result<Option<Url>, ConfigError> {
        match self.optional(var) {
            Some(text) => parse_http_url(var, &text).map(Some),
            None => Ok(None),
        }
    }

    pub fn list(&self, var: &'static str) -> Vec<String> {
        let values: Vec<String> = self
            .given(var)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        self.note(var, values.join(","));
        values
    }
}

pub(super) fn invalid(variable: &'static str, value: &str, message: &str) -> ConfigError {
    ConfigError::Invalid {
        variable,
        value: value.to_string(),
        message: message.to_string(),
    }
}

pub(super) fn parse_http_url(var: &'static str, text: &str) -> Result<Url, ConfigError> {
    let url = Url::parse(text).map_err(|e| invalid(var, text, &format!("not a URL: {e}")))?;
    match url.scheme() {
        "http" | "https" if url.host().is_some() => Ok(url),
        "http" | "https" => Err(invalid(var, text, "the URL has no host")),
        _ => Err(invalid(var, text, "the scheme must be http or https")),
    }
}
