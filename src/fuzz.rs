//! Property-based fuzzing of every parser that reads text from outside: gateway claims, dev
//! tokens, front matter, `_permissions.yaml`, the keyword-query sanitiser and the answer's link
//! neutraliser (the chunker's and the citation parser's properties live beside them). Each
//! property holds for any input: no panic, and the guarantee the parser exists for.
//!
//! The suite runs a few hundred cases per property; `scripts/fuzz` runs many thousands
//! (`FUZZ_CASES`). Findings are recorded in `SECURITY.md`.

use crate::agent::verdict::links::neutralise;
use crate::auth::jwt::{sign_hs256, verify_hs256, LEEWAY_SECONDS, MAX_LIFETIME_SECONDS};
use crate::auth::AuthUser;
use crate::retrieval::chunk::split_front_matter;
use crate::retrieval::query::{keyword_terms, MAX_TERMS};
use crate::retrieval::source::parse_permissions_file;
use base64::Engine;
use proptest::prelude::*;

const SECRET: &[u8] = b"fuzzing-secret-of-at-least-32-bytes";
const NOW: f64 = 1_800_000_000.0;

/// Small JSON values built from the names the parsers look for.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let key = prop_oneof![
        Just("sub"),
        Just("roles"),
        Just("domains"),
        Just("memberships"),
        Just("domain"),
        Just("role"),
        Just("exp"),
        Just("nbf"),
        Just("iat"),
        Just("iss"),
        Just("aud"),
        Just("x"),
    ]
    .prop_map(str::to_string);
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        (NOW - 1e5..NOW + 2e5).prop_map(serde_json::Value::from),
        prop_oneof![
            Just("admin"),
            Just("acme"),
            Just("business_staff"),
            Just(""),
            Just("crowdvision-agent")
        ]
        .prop_map(serde_json::Value::from),
        ".{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(3, 24, 6, move |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            prop::collection::btree_map(key.clone(), inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Front-matter-like text: `---` lines, keys the parser cares about, YAML noise, a body.
fn front_matter_text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("---".to_string()),
        Just("--- ".to_string()),
        Just("...".to_string()),
        Just("permissions: [admin]".to_string()),
        Just("permissions:".to_string()),
        Just("permissions: ~".to_string()),
        Just("Permissions: [admin]".to_string()),
        Just("permission: [business_staff]".to_string()),
        Just("title: x".to_string()),
        Just("tags: [a, b]".to_string()),
        Just("# Heading".to_string()),
        Just("\u{FEFF}---".to_string()),
        ".{0,20}",
    ];
    prop::collection::vec(line, 0..10).prop_map(|lines| lines.join("\n"))
}

fn markdownish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("![x](http://evil.example/c?d=1)".to_string()),
        Just("![](//evil.example/p)".to_string()),
        Just("[t](https://evil.example)".to_string()),
        Just("<https://evil.example/a>".to_string()),
        Just("<img src=\"http://evil.example\">".to_string()),
        Just("[r][1]\n\n[1]: http://evil.example/x".to_string()),
        Just("`![c](http://e/c)`".to_string()),
        Just("```\n![c](http://e/c)\n```".to_string()),
        Just("[ok](user/rooms.md)".to_string()),
        Just("![".to_string()),
        Just("](".to_string()),
        "[a-z !\\[\\]()<>:/.\\n]{0,16}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|p| p.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(256)))]

    #[test]
    fn claims_never_panic_and_always_name_a_subject(value in json_value(), raw in ".{0,200}") {
        let json = value.to_string();
        let encoded = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&json);
        for text in [json.as_str(), encoded.as_str(), raw.as_str()] {
            if let Ok(user) = AuthUser::from_claims(text) {
                prop_assert!(!user.sub.trim().is_empty());
                prop_assert!(user.roles.iter().all(|r| !r.trim().is_empty()));
                prop_assert!(user.domains.iter().all(|d| !d.trim().is_empty()));
            }
        }
    }

    #[test]
    fn tokens_never_panic_and_only_good_ones_pass(claims in json_value(), raw in ".{0,300}") {
        prop_assert!(verify_hs256(&raw, SECRET, NOW).is_err());
        let token = sign_hs256(&claims, SECRET);
        prop_assert!(verify_hs256(&token, b"another-secret-of-at-least-32-bytes", NOW).is_err());
        if verify_hs256(&token, SECRET, NOW).is_ok() {
            let exp = claims["exp"].as_f64().unwrap();
            prop_assert!(exp + LEEWAY_SECONDS > NOW);
            prop_assert!(exp - NOW <= MAX_LIFETIME_SECONDS + LEEWAY_SECONDS);
        }
    }

    #[test]
    fn front_matter_never_hides_permissions(text in front_matter_text()) {
        if let Ok((front, body)) = split_front_matter(&text) {
            let unmarked = text.strip_prefix('\u{FEFF}').unwrap_or(&text);
            prop_assert!(unmarked.ends_with(body));
            // A block that parsed without permissions holds no key that could have meant them.
            let block = &unmarked[..unmarked.len() - body.len()];
            if front.permissions.is_none() {
                prop_assert!(!block.lines().any(|l| l.trim_start().to_lowercase().starts_with("perm")));
            }
        }
    }

    #[test]
    fn permissions_files_are_a_list_or_an_error(text in front_matter_text()) {
        if let Ok(list) = parse_permissions_file(&text) {
            prop_assert!(text.contains("permissions:"));
            prop_assert!(list.iter().all(|p| !p.contains('\n')));
        }
    }

    #[test]
    fn keyword_terms_are_plain_words(question in ".{0,400}") {
        let terms = keyword_terms(&question);
        prop_assert!(terms.len() <= MAX_TERMS);
        for term in &terms {
            prop_assert!(!term.is_empty() && term.chars().count() <= 64);
            prop_assert!(term.chars().all(char::is_alphanumeric));
        }
    }

    #[test]
    fn no_remote_image_survives(text in markdownish()) {
        use pulldown_cmark::{Event, Parser, Tag};
        let out = neutralise(&text, &[]);
        for event in Parser::new(&out) {
            match event {
                Event::Start(Tag::Image { dest_url, .. }) => {
                    prop_assert!(!dest_url.contains("//"), "{} in {:?}", dest_url, out);
                }
                Event::Html(html) | Event::InlineHtml(html) => {
                    prop_assert!(!html.contains('<'), "{}", html);
                }
                _ => {}
            }
        }
    }
}
