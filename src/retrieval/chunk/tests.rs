use super::*;
use crate::config::SizeUnit;
use proptest::prelude::*;
use proptest::strategy::Strategy;

fn chunker(unit: SizeUnit, target: usize, max: usize) -> Chunker {
    Chunker::new(ChunkingConfig { unit, target, max })
}

fn tokens(target: usize, max: usize) -> Chunker {
    chunker(SizeUnit::Tokens, target, max)
}

fn chunks(c: &Chunker, text: &str) -> Vec<Chunk> {
    c.chunk(text).unwrap().chunks
}

/// Every word of `body`, as a multiset, is found in the chunks.
fn lost_words(body: &str, chunks: &[Chunk]) -> Vec<String> {
    let mut remaining: std::collections::HashMap<&str, i64> = std::collections::HashMap::new();
    for w in words(body) {
        *remaining.entry(w).or_default() += 1;
    }
    for chunk in chunks {
        for w in words(&chunk.text) {
            if let Some(n) = remaining.get_mut(w) {
                *n -= 1;
            }
        }
    }
    remaining
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(w, _)| w.to_string())
        .collect()
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// True when a fence opened in the chunk is still open at its end (backticks or tildes,
/// closer indented at most three columns more than the opener).
fn fence_left_open(text: &str) -> bool {
    let mut open: Option<(char, usize, usize)> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let Some(marker) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') else {
            continue;
        };
        let run = trimmed.chars().take_while(|c| *c == marker).count();
        if run < 3 {
            continue;
        }
        let rest = &trimmed[run..];
        match open {
            None if !(marker == '`' && rest.contains('`')) => open = Some((marker, run, indent)),
            Some((m, len, at))
                if m == marker && run >= len && rest.trim().is_empty() && indent <= at + 3 =>
            {
                open = None
            }
            _ => {}
        }
    }
    open.is_some()
}

#[test]
fn heading_path_follows_nesting() {
    let text = "# Guide\n\nIntro.\n\n## Sensors\n\nAbout sensors.\n\n### CO2\n\nParts per million.\n\n## Rooms\n\nRooms.\n";
    let got: Vec<String> = chunks(&tokens(8, 16), text)
        .iter()
        .map(Chunk::section_path)
        .collect();
    assert_eq!(
        got,
        [
            "Guide",
            "Guide > Sensors",
            "Guide > Sensors > CO2",
            "Guide > Rooms"
        ]
    );
}

#[test]
fn small_blocks_under_one_heading_are_packed() {
    let text = "# A\n\none.\n\ntwo.\n\nthree.\n\n# B\n\nfour.\n";
    let got = chunks(&tokens(100, 200), text);
    assert_eq!(got.len(), 2);
    assert!(got[0].text.contains("one.") && got[0].text.contains("three."));
}

#[test]
fn heading_with_nothing_under_it_joins_the_next_section() {
    let got = chunks(&tokens(100, 200), "# Guide\n\n## Sensors\n\nText.\n");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].section_path(), "Guide > Sensors");
    assert!(got[0].text.starts_with("# Guide"));
}

#[test]
fn kinds_are_reported() {
    let c = tokens(20, 40);
    let one = |text: &str| chunks(&c, text)[0].kind;
    assert_eq!(one("Just prose here.\n"), ChunkKind::Prose);
    assert_eq!(one("```rust\nfn main() {}\n```\n"), ChunkKind::Code);
    assert_eq!(one("| a | b |\n|---|---|\n| 1 | 2 |\n"), ChunkKind::Table);
    assert_eq!(one("- one\n- two\n"), ChunkKind::List);
    assert_eq!(one("Text.\n\n```\ncode\n```\n"), ChunkKind::Mixed);
}

#[test]
fn a_code_block_that_fits_is_never_split() {
    let code: String = (0..30).map(|i| format!("let x{i} = {i};\n")).collect();
    let text = format!("# Code\n\nBefore.\n\n```rust\n{code}```\n\nAfter.\n");
    let got = chunks(&tokens(100, 400), &text);
    let holder: Vec<&Chunk> = got.iter().filter(|c| c.text.contains("let x0")).collect();
    assert_eq!(holder.len(), 1);
    assert!(holder[0].text.contains("let x29"));
}

#[test]
fn a_large_code_block_reopens_its_fence_in_every_piece() {
    let code: String = (0..200)
        .map(|i| format!("let value_{i} = compute({i});\n"))
        .collect();
    let text = format!("```rust\n{code}```\n");
    let got = chunks(&tokens(100, 150), &text);
    assert!(got.len() > 3);
    for chunk in &got {
        assert!(chunk.text.starts_with("```rust\n"), "{}", chunk.text);
        assert!(chunk.text.trim_end().ends_with("```"));
        assert!(!fence_left_open(&chunk.text));
        assert_eq!(chunk.kind, ChunkKind::Code);
    }
    assert!(lost_words(&text, &got).is_empty());
}

#[test]
fn a_large_table_repeats_its_header_in_every_piece() {
    let rows: String = (0..120)
        .map(|i| format!("| sensor-{i} | {i} ppm |\n"))
        .collect();
    let text = format!("| Sensor | Value |\n|---|---|\n{rows}");
    let got = chunks(&tokens(80, 120), &text);
    assert!(got.len() > 3);
    for chunk in &got {
        assert!(
            chunk.text.starts_with("| Sensor | Value |\n|---|---|\n"),
            "{}",
            chunk.text
        );
    }
    assert!(lost_words(&text, &got).is_empty());
}

#[test]
fn a_large_paragraph_is_cut_between_sentences() {
    let text: String = (0..80)
        .map(|i| format!("Sentence number {i} is here. "))
        .collect();
    let got = chunks(&tokens(50, 80), &text);
    assert!(got.len() > 3);
    for chunk in &got {
        assert!(chunk.text.trim_end().ends_with('.'), "{}", chunk.text);
    }
}

#[test]
fn a_sentence_larger_than_the_limit_is_cut_between_words() {
    let text: String = (0..300).map(|i| format!("word{i} ")).collect();
    let got = chunks(&tokens(40, 60), &text);
    assert!(got.len() > 3);
    let original: Vec<&str> = text.split_whitespace().collect();
    let rebuilt: Vec<&str> = got.iter().flat_map(|c| c.text.split_whitespace()).collect();
    assert_eq!(original, rebuilt, "no word is cut in two");
}

#[test]
fn a_large_list_is_cut_between_items() {
    let items: String = (0..60)
        .map(|i| format!("- item {i} has a short description\n"))
        .collect();
    let got = chunks(&tokens(60, 90), &items);
    assert!(got.len() > 2);
    for chunk in &got {
        assert!(chunk.text.starts_with("- item"), "{}", chunk.text);
    }
}

#[test]
fn front_matter_is_parsed_and_not_indexed() {
    let text = "---\ntitle: Secret page\npermissions: [admin]\ntags: [ops]\n---\n# Body\n\nVisible text.\n";
    let doc = tokens(100, 200).chunk(text).unwrap();
    assert_eq!(doc.front_matter.title.as_deref(), Some("Secret page"));
    assert_eq!(
        doc.front_matter.permissions,
        Some(vec!["admin".to_string()])
    );
    assert!(doc.chunks.iter().all(|c| !c.text.contains("permissions")));
}

#[test]
fn crlf_tabs_unicode_and_setext_headings() {
    let text =
        "Überschrift\r\n===========\r\n\r\n\tcode\twith tabs\r\n\r\nCO₂ liegt bei 420 ppm.\r\n";
    let got = chunks(&tokens(100, 200), text);
    assert_eq!(got[0].section_path(), "Überschrift");
    assert!(got.iter().all(|c| !c.text.contains('\r')));
    assert!(lost_words(text, &got).is_empty());
}

#[test]
fn nested_lists_with_fences_inside_stay_whole_and_balanced() {
    let text = "- outer\n  - inner\n    ```sh\n    echo hi\n    ```\n- next\n";
    let got = chunks(&tokens(100, 200), text);
    assert_eq!(got.len(), 1);
    assert!(!fence_left_open(&got[0].text));
}

#[test]
fn a_large_list_with_a_fence_inside_is_cut_with_the_fence_reopened() {
    let lines: String = (0..150)
        .map(|i| format!("   step {i} of the install\n"))
        .collect();
    let text = format!("1. Run:\n\n   ```sh\n{lines}   ```\n2. Done.\n");
    let got = chunks(&tokens(80, 120), &text);
    assert!(got.len() > 2);
    for chunk in &got {
        assert!(!fence_left_open(&chunk.text), "{}", chunk.text);
    }
}

#[test]
fn link_reference_definitions_are_kept() {
    let text = "See [the docs][d].\n\n[d]: https://example.com/docs\n";
    let got = chunks(&tokens(100, 200), text);
    assert!(got
        .iter()
        .any(|c| c.text.contains("https://example.com/docs")));
}

#[test]
fn characters_can_be_the_unit() {
    let text: String = (0..100)
        .map(|i| format!("Line {i} of prose.\n\n"))
        .collect();
    let got = chunks(&chunker(SizeUnit::Chars, 200, 300), &text);
    assert!(got.iter().all(|c| c.text.chars().count() <= 300));
    assert!(lost_words(&text, &got).is_empty());
}

// ---------------------------------------------------------------------------------------------
// properties over generated Markdown

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{1,10}",
        "[A-Z][a-z]{0,8}",
        "[0-9]{1,4}",
        Just("CO₂".to_string()),
        Just("naïve".to_string()),
    ]
}

fn sentence() -> impl Strategy<Value = String> {
    prop::collection::vec(word(), 1..14).prop_map(|w| format!("{}.", w.join(" ")))
}

fn block() -> impl Strategy<Value = String> {
    prop_oneof![
        (1u8..4, prop::collection::vec(word(), 1..5)).prop_map(|(level, w)| format!(
            "{} {}\n",
            "#".repeat(level as usize),
            w.join(" ")
        )),
        prop::collection::vec(sentence(), 1..12).prop_map(|s| format!("{}\n", s.join(" "))),
        (
            prop::sample::select(vec!["", "rust", "sh", "yaml"]),
            prop::collection::vec(prop::collection::vec(word(), 1..6), 1..40)
        )
            .prop_map(|(info, lines)| {
                let body: String = lines
                    .iter()
                    .map(|l| format!("    {}\n", l.join(" ")))
                    .collect();
                format!("```{info}\n{body}```\n")
            }),
        prop::collection::vec((word(), word()), 1..40).prop_map(|rows| {
            let body: String = rows
                .iter()
                .map(|(a, b)| format!("| {a} | {b} |\n"))
                .collect();
            format!("| Name | Value |\n|------|-------|\n{body}")
        }),
        prop::collection::vec((prop::bool::ANY, sentence()), 1..20).prop_map(|items| {
            items
                .iter()
                .map(|(nested, s)| {
                    if *nested {
                        format!("  - {s}\n")
                    } else {
                        format!("- {s}\n")
                    }
                })
                .collect::<String>()
        }),
        sentence().prop_map(|s| format!("> {s}\n")),
    ]
}

fn document() -> impl Strategy<Value = String> {
    (prop::collection::vec(block(), 1..25), prop::bool::ANY).prop_map(|(blocks, crlf)| {
        let text = blocks.join("\n");
        let text = text.replace("\n#", "\n\n#");
        if crlf {
            text.replace('\n', "\r\n")
        } else {
            text
        }
    })
}

/// Every line of a chunk is text of the source (a whole line, or part of one that was cut), or a
/// table delimiter row repeated in compact form.
fn lines_come_from(source: &str, chunk: &str) -> bool {
    let is_delimiter =
        |l: &str| l.contains('-') && l.chars().all(|c| matches!(c, '|' | '-' | ':' | ' '));
    chunk
        .lines()
        .all(|l| source.contains(l.trim()) || is_delimiter(l))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(96)))]

    #[test]
    fn no_word_is_lost(doc in document(), target in 24usize..160) {
        let c = tokens(target, target + target / 2);
        let got = chunks(&c, &doc);
        prop_assert!(lost_words(&doc, &got).is_empty());
    }

    #[test]
    fn no_fence_is_left_open(doc in document(), target in 24usize..160) {
        let got = chunks(&tokens(target, target + target / 2), &doc);
        for chunk in &got {
            prop_assert!(!fence_left_open(&chunk.text), "chunk:\n{}", chunk.text);
        }
    }

    #[test]
    fn table_rows_travel_with_their_header(doc in document(), target in 24usize..160) {
        let got = chunks(&tokens(target, target + target / 2), &doc);
        for chunk in &got {
            let has_row = chunk.text.lines().any(|l| l.starts_with("| ") && !l.starts_with("| Name"));
            let in_table = chunk.text.lines().any(|l| l.starts_with("|---"));
            if has_row {
                prop_assert!(in_table, "rows without their header:\n{}", chunk.text);
            }
        }
    }

    #[test]
    fn chunks_fit_the_maximum(doc in document(), target in 24usize..160) {
        let max = target + target / 2;
        let got = chunks(&tokens(target, max), &doc);
        for chunk in &got {
            // Sizes are summed per block; allow the few tokens a re-count across joins can add.
            let exact = count_tokens(&chunk.text);
            prop_assert!(exact <= max + 8, "{} tokens > {}:\n{}", exact, max, chunk.text);
        }
    }

    #[test]
    fn blocks_that_fit_are_never_split(doc in document()) {
        let c = tokens(120, 400);
        let got = chunks(&c, &doc.replace("\r\n", "\n"));
        let normalized = doc.replace("\r\n", "\n");
        for block in normalized.split("\n\n") {
            let is_code_or_table = block.starts_with("```") || block.starts_with("| Name");
            if is_code_or_table && count_tokens(block) <= 400 {
                prop_assert!(
                    got.iter().any(|ch| ch.text.contains(block.trim_end())),
                    "block split although it fits:\n{}", block
                );
            }
        }
    }

    #[test]
    fn every_chunk_after_a_heading_has_a_section(doc in document()) {
        let got = chunks(&tokens(60, 90), &doc);
        let mut seen_heading = false;
        for chunk in &got {
            seen_heading |= chunk.text.lines().any(|l| l.starts_with('#'));
            if seen_heading {
                prop_assert!(!chunk.section.is_empty());
            }
        }
    }

    #[test]
    fn chunk_lines_come_from_the_source(doc in document()) {
        let normalized = doc.replace("\r\n", "\n");
        for chunk in chunks(&tokens(60, 90), &doc) {
            prop_assert!(lines_come_from(&normalized, &chunk.text));
        }
    }
}
