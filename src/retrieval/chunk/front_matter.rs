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
/// `text`, so offsets into it stay meaningful.
pub fn split_front_matter(text: &str) -> Result<(FrontMatter, &str), FrontMatterError> {
    let Some((yaml, body)) = front_matter_block(text) else {
        return Ok((FrontMatter::default(), text));
    };
    if yaml.trim().is_empty() {
        return Ok((FrontMatter::default(), body));
    }
    let parsed: FrontMatter =
        serde_yaml::from_str(yaml).map_err(|e| FrontMatterError(e.to_string()))?;
    Ok((parsed, body))
}

/// The raw YAML and the body, when the text opens with a `---` line closed by `---` or `...`.
fn front_matter_block(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
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
    fn unclosed_block_is_body() {
        let (_, body) = split_front_matter("---\nnot closed\n").unwrap();
        assert_eq!(body, "---\nnot closed\n");
    }

    #[test]
    fn invalid_yaml_is_an_error() {
        assert!(split_front_matter("---\npermissions: [a\n---\nbody").is_err());
    }
}
