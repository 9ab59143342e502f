//! The whole shared corpus (2,046 real Markdown files) through the chunker, judged with
//! pulldown-cmark's own reading of each source: no fenced code block or table that fits the
//! maximum is split, oversized ones are cut into balanced pieces, no word is lost, and every
//! chunk after a document's first heading carries a heading path.

use crate::util::shared_corpus;
use crowdvision_agent::config::ChunkingConfig;
use crowdvision_agent::retrieval::chunk::{
    count_tokens, normalize, split_front_matter, Chunk, Chunker,
};
use crowdvision_agent::retrieval::source::discover;
use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use std::collections::HashMap;

#[derive(Default, Debug)]
struct Violations {
    split_blocks: Vec<String>,
    lost_words: Vec<String>,
    no_heading: Vec<String>,
}

/// Fenced code blocks and tables, at any depth, as source text.
fn whole_blocks(body: &str) -> Vec<&str> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS;
    let mut out = Vec::new();
    let mut open: Vec<usize> = Vec::new();
    for (event, range) in Parser::new_ext(body, options).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(_)) | Tag::Table(_)) => {
                open.push(range.start)
            }
            Event::End(TagEnd::CodeBlock | TagEnd::Table) => {
                if let Some(start) = open.pop() {
                    out.push(&body[start..range.end]);
                }
            }
            _ => {}
        }
    }
    out
}

/// A line without its container prefix (list indentation, block-quote markers).
fn bare(line: &str) -> &str {
    line.trim_start_matches(|c: char| c == '>' || c.is_whitespace())
        .trim_end()
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

fn judge(source: &str, body: &str, chunks: &[Chunk], max: usize, v: &mut Violations) {
    for block in whole_blocks(body) {
        let block = block.trim_end();
        // Blocks nested in list items and quotes carry a prefix on every line; compare bare lines.
        let first = block.lines().next().unwrap_or("").trim();
        let lines: Vec<&str> = block.lines().map(bare).collect();
        if count_tokens(block) > max || block.lines().count() < 2 {
            continue;
        }
        let whole = chunks.iter().any(|c| {
            let chunk_lines: Vec<&str> = c.text.lines().map(bare).collect();
            // A block opening on a list item's line shares that line with the item marker.
            chunk_lines.windows(lines.len()).any(|w| {
                w.iter()
                    .zip(&lines)
                    .all(|(have, want)| have.ends_with(want))
            })
        });
        if !whole {
            v.split_blocks
                .push(format!("{source}: block starting {first:?}"));
        }
    }
    let mut remaining: HashMap<&str, i64> = HashMap::new();
    for w in words(body) {
        *remaining.entry(w).or_default() += 1;
    }
    for c in chunks {
        for w in words(&c.text) {
            if let Some(n) = remaining.get_mut(w) {
                *n -= 1;
            }
        }
    }
    let lost: Vec<&str> = remaining
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(w, _)| *w)
        .collect();
    if !lost.is_empty() {
        v.lost_words
            .push(format!("{source}: {:?}", &lost[..lost.len().min(5)]));
    }
    let mut after_heading = false;
    for c in chunks {
        after_heading |= !c.section.is_empty();
        if after_heading && c.section.is_empty() {
            v.no_heading.push(format!("{source}#{}", c.ordinal));
        }
    }
}

#[test]
fn the_shared_corpus_chunks_without_violations() {
    let Some(corpus) = shared_corpus() else {
        return;
    };
    let config = ChunkingConfig::default();
    let chunker = Chunker::new(config);
    let (files, errors) = discover(&[corpus]);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(files.len() > 2000, "{} files", files.len());
    let mut violations = Violations::default();
    let mut invalid_front_matter = Vec::new();
    let mut chunk_count = 0;
    for file in &files {
        let raw = std::fs::read_to_string(&file.path).unwrap();
        let text = normalize(&raw);
        let document = match chunker.chunk(&text) {
            Ok(document) => document,
            Err(_) => {
                invalid_front_matter.push(file.source.clone());
                continue;
            }
        };
        let (_, body) = split_front_matter(&text).unwrap();
        chunk_count += document.chunks.len();
        judge(
            &file.source,
            body,
            &document.chunks,
            config.max,
            &mut violations,
        );
    }
    // Four argo-cd proposals open with YAML that does not parse; they are refused, not guessed.
    assert_eq!(invalid_front_matter.len(), 4, "{invalid_front_matter:?}");
    assert!(invalid_front_matter
        .iter()
        .all(|s| s.starts_with("argo-cd/docs/proposals/")));
    assert!(chunk_count > 40_000);
    assert!(
        violations.split_blocks.is_empty(),
        "{} split: {:?}",
        violations.split_blocks.len(),
        &violations.split_blocks[..violations.split_blocks.len().min(10)]
    );
    assert!(
        violations.lost_words.is_empty(),
        "{:?}",
        &violations.lost_words[..violations.lost_words.len().min(10)]
    );
    assert!(
        violations.no_heading.is_empty(),
        "{:?}",
        &violations.no_heading[..violations.no_heading.len().min(10)]
    );
}
