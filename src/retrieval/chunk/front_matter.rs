//! YAML front matter: the `---` block at the very top of a document. Its fields describe the
//! document (title, permissions, tags); it is never indexed as text.

use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct FrontMatter {
    pub title: Option<String>,
    /// `None` when the field is absent, so a directory default can apply; `Some(vec![])` is an
    /// explicit "public".
    #[serde(deserialize_with = "string_or_list_opt")]
    pub permissions: Option<Vec<String>>,
    #[serde(deserialize_with = "string_or_list")]
    pub tags: Vec<String>,
    #[serde(flatten)]
    pub extra: BTreeMap<String, serde_yaml::Value>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("invalid front matter: {0}")]
pub struct FrontMatterError(pub String);

/// Splits `text` into its front matter (parsed) and the body after it. The body is a suffix of
/// `text`, so offsets into it stay meaningful. A leading byte-order mark and trailing spaces
/// on the `---` lines are allowed. Anything that could leave the page's permissions in doubt
/// is an error naming the line: a block that is never closed, a `permissions` key without a
/// value, or a key that looks like `permissions` but is not spelt so.
pub fn split_front_matter(text: &str) -> Result<(FrontMatter, &str), FrontMatterError> {
    let text = text.strip_prefix('\u{FEFF}').unwrap_or(text);
    let Some(rest) = after_opening_line(text) else {
        return Ok((FrontMatter::default(), text));
    };
    let Some((yaml, body)) = closed_block(rest) else {
        return Err(FrontMatterError(
            "line 1: the front matter opened here is never closed by a `---` line".to_string(),
        ));
    };
    if yaml.trim().is_empty() {
        return Ok((FrontMatter::default(), body));
    }
    check_keys(yaml)?;
    let parsed: FrontMatter = serde_yaml::from_str(yaml).map_err(|e| {
        let line = e.location().map_or(0, |l| l.line()) + 1;
        FrontMatterError(format!("line {line}: {e}"))
    })?;
    Ok((parsed, body))
}

/// The text after an opening `---` line, when there is one.
fn after_opening_line(text: &str) -> Option<&str> {
    let (first, rest) = match text.split_once('\n') {
        Some((first, rest)) => (first, rest),
        None => (text, ""),
    };
    (first.trim_end() == "---").then_some(rest)
}

/// The raw YAML and the body, when a `---` or `...` line closes the block.
fn closed_block(rest: &str) -> Option<(&str, &str)> {
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end();
        if bare == "---" || bare == "..." {
            return Some((&rest[..offset], &rest[offset + line.len()..]));
        }
        offset += line.len();
    }
    None
}

/// Refuses a `permissions` key without a value and keys that look like a misspelt
/// `permissions`, each with its line in the file (the opening `---` is line 1).
fn check_keys(yaml: &str) -> Result<(), FrontMatterError> {
    let value = serde_yaml::from_str::<serde_yaml::Value>(yaml).map_err(|e| {
        // Duplicate keys among them: the typed parse alone would let one through.
        let line = e.location().map_or(0, |l| l.line()) + 1;
        FrontMatterError(format!("line {line}: {e}"))
    })?;
    let serde_yaml::Value::Mapping(mapping) = value else {
        return Ok(()); // not a mapping: the typed parse reports it
    };
    for (key, value) in &mapping {
        let Some(key) = key.as_str() else { continue };
        let line = key_line(yaml, key);
        if key == "permissions" {
            if value.is_null() {
                return Err(FrontMatterError(format!(
                    "line {line}: `permissions` has no value; expected a list of roles or \
                     domain:NAME, or [] for a public page"
                )));
            }
        } else if looks_like_permissions(key) {
            return Err(FrontMatterError(format!(
                "line {line}: unknown key `{key}`; did you mean `permissions` (lower case)?"
            )));
        }
    }
    Ok(())
}

fn key_line(yaml: &str, key: &str) -> usize {
    yaml.lines()
        .position(|line| {
            let line = line.trim_start().trim_start_matches(['"', '\'']);
            line.starts_with(key)
        })
        .map_or(1, |index| index + 2)
}

/// `Permissions`, `permission`, `PERMISSIONS`, `permisions`, … but not `permissions`.
pub fn looks_like_permissions(key: &str) -> bool {
    let folded: String = key
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    folded.starts_with("perm") || edit_distance(&folded, "permissions") <= 2
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// Accepts `tags: a` as well as `tags: [a, b]`.
fn string_or_list<'de, D>(de: D) -> Result<Vec<String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    Ok(string_or_list_opt(de)?.unwrap_or_default())
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

fn string_or_list_opt<'de, D>(de: D) -> Result<Option<Vec<String>>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let value: Option<OneOrMany> = Option::deserialize(de)?;
    Ok(value.map(|v| match v {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(list) => list,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_title_permissions_and_tags() {
        let text = "---\ntitle: CO2\npermissions: [business_staff, domain:acme]\ntags: sensors\n---\n# Body\n";
        let (fm, body) = split_front_matter(text).unwrap();
        assert_eq!(fm.title.as_deref(), Some("CO2"));
        assert_eq!(
            fm.permissions,
            Some(vec![
                "business_staff".to_string(),
                "domain:acme".to_string()
            ])
        );
        assert_eq!(fm.tags, ["sensors"]);
        assert_eq!(body, "# Body\n");
    }

    #[test]
    fn absent_and_empty_permissions_differ() {
        let (fm, _) = split_front_matter("---\ntitle: x\n---\nbody").unwrap();
        assert_eq!(fm.permissions, None);
        let (fm, _) = split_front_matter("---\npermissions: []\n---\nbody").unwrap();
        assert_eq!(fm.permissions, Some(vec![]));
    }

    #[test]
    fn no_front_matter_leaves_text_alone() {
        let (fm, body) = split_front_matter("# Title\n---\n").unwrap();
        assert_eq!(fm, FrontMatter::default());
        assert_eq!(body, "# Title\n---\n");
    }

    #[test]
    fn an_unclosed_block_is_an_error_not_body_text() {
        let error = split_front_matter("---\npermissions: [admin]\n# Secret\n").unwrap_err();
        assert!(error.0.contains("line 1"), "{error}");
        assert!(error.0.contains("never closed"), "{error}");
    }

    #[test]
    fn a_byte_order_mark_and_trailing_spaces_still_open_the_block() {
        let (fm, body) =
            split_front_matter("\u{FEFF}---\npermissions: [admin]\n---\nbody").unwrap();
        assert_eq!(fm.permissions, Some(vec!["admin".to_string()]));
        assert_eq!(body, "body");
        let (fm, body) = split_front_matter("--- \npermissions: [admin]\n---  \nbody").unwrap();
        assert_eq!(fm.permissions, Some(vec!["admin".to_string()]));
        assert_eq!(body, "body");
    }

    #[test]
    fn permissions_without_a_value_or_misspelt_are_refused_with_their_line() {
        for (yaml, line) in [
            ("permissions: null", 2),
            ("permissions: ~", 2),
            ("permissions:", 2),
            ("title: x\nPermissions: [admin]", 3),
            ("title: x\ntags: [a]\npermission: [admin]", 4),
            ("PERMISSIONS: [admin]", 2),
            ("permisions: [admin]", 2),
            ("permission: [a]\npermission: [a]", 2),
        ] {
            let text = format!("---\n{yaml}\n---\nbody");
            let error = split_front_matter(&text).unwrap_err();
            assert!(
                error.0.starts_with(&format!("line {line}:")),
                "{yaml}: {error}"
            );
        }
        assert!(!looks_like_permissions("title"));
        assert!(!looks_like_permissions("tags"));
        assert!(!looks_like_permissions("author"));
    }

    #[test]
    fn invalid_yaml_is_an_error() {
        assert!(split_front_matter("---\npermissions: [a\n---\nbody").is_err());
    }
}
