//! Language detection measured on questions written for it: `datasets/languages.yaml` (at
//! least 100 per language, half under six words) and `datasets/languages-held-out.yaml`
//! (written after the lexicon was settled). A question detected as no language counts as
//! wrong.

use crowdvision_agent::agent::question::language::{detect, Language};
use std::collections::BTreeMap;

type Questions = BTreeMap<String, Vec<String>>;

fn questions(file: &str) -> Questions {
    let path = format!("{}/datasets/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_yaml::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn is_short(question: &str) -> bool {
    let words = question
        .split_whitespace()
        .filter(|w| w.chars().any(char::is_alphanumeric));
    words.count() < 6
}

#[derive(Default)]
struct Tally {
    right: usize,
    all: usize,
    short_right: usize,
    short: usize,
}

impl Tally {
    fn share(right: usize, all: usize) -> f64 {
        right as f64 / all.max(1) as f64
    }
}

/// Per language: the tally, and the questions it got wrong.
fn measure(questions: &Questions) -> Vec<(Language, Tally, Vec<String>)> {
    questions
        .iter()
        .map(|(code, texts)| {
            let language = Language::from_code(code).expect("a supported language code");
            let mut tally = Tally::default();
            let mut wrong = Vec::new();
            for text in texts {
                let right = detect(text) == Some(language);
                tally.all += 1;
                tally.right += usize::from(right);
                if is_short(text) {
                    tally.short += 1;
                    tally.short_right += usize::from(right);
                }
                if !right {
                    wrong.push(format!("{text} → {:?}", detect(text)));
                }
            }
            (language, tally, wrong)
        })
        .collect()
}

fn report(name: &str, measured: &[(Language, Tally, Vec<String>)]) {
    println!("{name}: language | right | under six words");
    for (language, tally, wrong) in measured {
        println!(
            "  {} | {}/{} | {}/{} | wrong: {wrong:?}",
            language.code(),
            tally.right,
            tally.all,
            tally.short_right,
            tally.short
        );
    }
}

#[test]
fn language_accuracy_on_questions_written_for_it() {
    let measured = measure(&questions("languages.yaml"));
    report("languages.yaml", &measured);
    assert_eq!(
        measured.len(),
        Language::ALL.len(),
        "every language has questions"
    );
    let (right, all) = measured
        .iter()
        .fold((0, 0), |(r, a), (_, t, _)| (r + t.right, a + t.all));
    assert!(Tally::share(right, all) >= 0.99, "{right}/{all} overall");
    for (language, tally, wrong) in &measured {
        assert!(
            tally.all >= 100 && tally.short * 2 >= tally.all,
            "{language:?}: too few"
        );
        let short = Tally::share(tally.short_right, tally.short);
        assert!(short >= 0.97, "{language:?} short {short}: {wrong:?}");
    }
}

#[test]
fn language_accuracy_on_questions_written_later() {
    let measured = measure(&questions("languages-held-out.yaml"));
    report("languages-held-out.yaml", &measured);
    let (right, all) = measured
        .iter()
        .fold((0, 0), |(r, a), (_, t, _)| (r + t.right, a + t.all));
    assert!(Tally::share(right, all) >= 0.95, "{right}/{all} overall");
}

#[test]
fn short_english_requests_are_english() {
    for text in [
        "Write me a poem about autumn",
        "Tell me a joke about cats",
        "Write a story about a dragon",
        "Hello! What can you help me with?",
        "Sing me a song",
    ] {
        assert_eq!(detect(text), Some(Language::English), "{text}");
    }
}
