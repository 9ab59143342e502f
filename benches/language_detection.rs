//! How long detecting a question's language takes, over the questions of
//! `datasets/languages.yaml` (each detected `ROUNDS` times, 20 by default), and how many it
//! gets right. `cargo bench --bench language_detection`.

use crowdvision_agent::agent::question::language::{detect, Language};
use std::collections::BTreeMap;
use std::time::Instant;

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/languages.yaml");
    let questions: BTreeMap<String, Vec<String>> =
        serde_yaml::from_str(&std::fs::read_to_string(path).expect("the dataset")).expect("YAML");
    let rounds: usize = std::env::var("ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    let labelled: Vec<(Language, &str)> = questions
        .iter()
        .flat_map(|(code, texts)| {
            let language = Language::from_code(code).expect("a supported language");
            texts.iter().map(move |text| (language, text.as_str()))
        })
        .collect();
    // The lexicon is built on first use; not part of a question's cost.
    let right = labelled
        .iter()
        .filter(|(language, text)| detect(text) == Some(*language))
        .count();
    let mut per_question = Vec::with_capacity(labelled.len() * rounds);
    for _ in 0..rounds {
        for (_, text) in &labelled {
            let started = Instant::now();
            std::hint::black_box(detect(std::hint::black_box(text)));
            per_question.push(started.elapsed().as_nanos() as f64 / 1000.0);
        }
    }
    per_question.sort_by(f64::total_cmp);
    let at = |q: f64| per_question[((per_question.len() - 1) as f64 * q) as usize];
    let mean = per_question.iter().sum::<f64>() / per_question.len() as f64;
    println!("| questions | right | mean | p50 | p99 |");
    println!("|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {right} | {mean:.2} µs | {:.2} µs | {:.2} µs |",
        labelled.len(),
        at(0.5),
        at(0.99)
    );
}
