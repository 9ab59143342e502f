//! Chunker throughput over the shared corpus (`../shared/corpus`, 35.8 MB of real Markdown),
//! files held in memory, one thread, median of three runs; beside it, the bare pulldown-cmark
//! parse of the same bytes as the floor.
//!
//! `cargo bench --bench chunker` (set `CORPUS=...` to point elsewhere).

use crowdvision_agent::config::{ChunkingConfig, SizeUnit};
use crowdvision_agent::retrieval::chunk::Chunker;
use crowdvision_agent::retrieval::source::discover;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn main() {
    let corpus = std::env::var("CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"));
    let (files, _) = discover(std::slice::from_ref(&corpus));
    let texts: Vec<String> = files
        .iter()
        .filter_map(|f| std::fs::read_to_string(&f.path).ok())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();
    println!(
        "corpus: {} ({} files, {:.1} MB)",
        corpus.display(),
        texts.len(),
        bytes as f64 / 1e6
    );

    let floor = median(|| {
        let mut events = 0usize;
        for text in &texts {
            let options = pulldown_cmark::Options::ENABLE_TABLES;
            events += pulldown_cmark::Parser::new_ext(text, options).count();
        }
        std::hint::black_box(events);
        0
    });
    report("pulldown-cmark parse only (floor)", bytes, floor, None);

    for (label, config) in [
        (
            "chunker, tokens 350/512 (cl100k)",
            ChunkingConfig {
                unit: SizeUnit::Tokens,
                target: 350,
                max: 512,
            },
        ),
        (
            "chunker, chars 1200/1500",
            ChunkingConfig {
                unit: SizeUnit::Chars,
                target: 1200,
                max: 1500,
            },
        ),
    ] {
        let chunker = Chunker::new(config);
        let mut chunks = 0;
        let elapsed = median(|| {
            chunks = 0;
            for text in &texts {
                if let Ok(document) = chunker.chunk(text) {
                    chunks += document.chunks.len();
                }
            }
            chunks
        });
        report(label, bytes, elapsed, Some(chunks));
    }
}

fn median(mut run: impl FnMut() -> usize) -> Duration {
    let mut times: Vec<Duration> = (0..3)
        .map(|_| {
            let started = Instant::now();
            std::hint::black_box(run());
            started.elapsed()
        })
        .collect();
    times.sort();
    times[1]
}

fn report(label: &str, bytes: usize, elapsed: Duration, chunks: Option<usize>) {
    let seconds = elapsed.as_secs_f64();
    let chunks = chunks.map_or(String::new(), |c| format!(", {c} chunks"));
    println!(
        "{label}: {seconds:.3} s, {:.1} MB/s{chunks}",
        bytes as f64 / 1e6 / seconds
    );
}
