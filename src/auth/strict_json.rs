//! JSON read the strict way wherever identity is read (token headers and claims, gateway
//! claims, a JWKS): an object that names one key twice is refused. A parser that keeps the first
//! value and one that keeps the last would see two different callers in the same text (RFC 7519
//! §4, RFC 8725 §3.2); refusing both leaves nothing to disagree about. Pure.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StrictJsonError {
    #[error("the JSON names the key `{0}` twice in one object")]
    DuplicateKey(String),
    #[error("the text is not JSON")]
    Malformed,
}

/// `bytes` as a JSON value, refused when any object in it repeats a key.
pub fn parse(bytes: &[u8]) -> Result<Value, StrictJsonError> {
    let mut reader = serde_json::Deserializer::from_slice(bytes);
    let value = reader
        .deserialize_any(StrictVisitor)
        .and_then(|value| reader.end().map(|()| value))
        .map_err(|error| {
            duplicate_key_of(&error)
                .map_or(StrictJsonError::Malformed, StrictJsonError::DuplicateKey)
        })?;
    Ok(value)
}

/// Marks the serde error that carries a repeated key, so it can be told from bad syntax.
const DUPLICATE: &str = "duplicate key: ";

fn duplicate_key_of(error: &serde_json::Error) -> Option<String> {
    let text = error.to_string();
    let start = text.find(DUPLICATE)? + DUPLICATE.len();
    let key = &text[start..];
    Some(key[..key.rfind(" at line").unwrap_or(key.len())].to_string())
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("JSON")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_string()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<Value, A::Error> {
        let mut values = Vec::new();
        while let Some(Strict(value)) = items.next_element()? {
            values.push(value);
        }
        Ok(Value::Array(values))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut entries: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = entries.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!("{DUPLICATE}{key}")));
            }
            let Strict(value) = entries.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

struct Strict(Value);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Strict, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(Strict)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_without_repeated_keys_reads_as_serde_json_reads_it() {
        let text = r#"{"sub":"ana","roles":["a","b"],"n":1.5,"m":-3,"big":18446744073709551615,"x":null,"t":true,"o":{"k":[{"a":1},{"a":2}]}}"#;
        assert_eq!(
            parse(text.as_bytes()).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    #[test]
    fn a_key_named_twice_anywhere_is_refused() {
        let cases = [
            (
                r#"{"roles":["standard_customer"],"roles":["admin"]}"#,
                "roles",
            ),
            (
                r#"{"sub":"a","memberships":[{"domain":"acme","domain":"globex"}]}"#,
                "domain",
            ),
            (r#"{"a":{"b":{"c":1,"c":1}}}"#, "c"),
            (r#"{"alg":"RS256","alg":"none"}"#, "alg"),
        ];
        for (text, key) in cases {
            assert_eq!(
                parse(text.as_bytes()),
                Err(StrictJsonError::DuplicateKey(key.to_string())),
                "{text}"
            );
        }
    }

    #[test]
    fn bad_syntax_and_trailing_text_are_malformed() {
        for text in ["{", "{\"a\":1} x", "", "{\"a\":}"] {
            assert_eq!(
                parse(text.as_bytes()),
                Err(StrictJsonError::Malformed),
                "{text}"
            );
        }
        assert_eq!(parse(b" {\"a\":1} \n").unwrap(), json!({"a": 1}));
    }
}
