//! The body as a flat list of top-level blocks (pulldown-cmark), covering every byte.
//!
//! Each block runs from its own start to the next block's start, so text that produces no
//! parser event (link reference definitions, stray whitespace) stays with the block before it
//! and nothing of the source is dropped.

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use std::ops::Range;

#[derive(Debug, Clone, PartialEq)]
pub enum BlockKind {
    Heading {
        level: u8,
        title: String,
    },
    Paragraph,
    /// A fenced code block (`fenced = true`) or an indented one.
    Code {
        fenced: bool,
    },
    /// A pipe table; `header_lines` is how many lines open it (header row and delimiter row).
    Table,
    /// A list, with the byte offsets (relative to the block) where its items start.
    List {
        item_starts: Vec<usize>,
    },
    /// Block quotes, HTML blocks, rules, footnote definitions, and text with no event.
    Other,
}

#[derive(Debug, Clone)]
pub struct Block {
    pub kind: BlockKind,
    pub range: Range<usize>,
}

pub fn parser_options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
}

/// Splits `body` into top-level blocks whose ranges tile `body` from the first block onwards;
/// leading text that opens no block becomes an `Other` block.
pub fn top_level_blocks(body: &str) -> Vec<Block> {
    let mut starts: Vec<(usize, BlockKind)> = Vec::new();
    let mut depth = 0usize;
    let mut heading: Option<(u8, String)> = None;
    let mut list_items: Vec<usize> = Vec::new();

    for (event, range) in Parser::new_ext(body, parser_options()).into_offset_iter() {
        match event {
            Event::Start(tag) => {
                if depth == 0 {
                    let kind = match &tag {
                        Tag::Heading { level, .. } => {
                            heading = Some((heading_level(*level), String::new()));
                            BlockKind::Heading {
                                level: heading_level(*level),
                                title: String::new(),
                            }
                        }
                        Tag::Paragraph => BlockKind::Paragraph,
                        Tag::CodeBlock(CodeBlockKind::Fenced(_)) => {
                            BlockKind::Code { fenced: true }
                        }
                        Tag::CodeBlock(CodeBlockKind::Indented) => {
                            BlockKind::Code { fenced: false }
                        }
                        Tag::Table(_) => BlockKind::Table,
                        Tag::List(_) => {
                            list_items.clear();
                            BlockKind::List {
                                item_starts: Vec::new(),
                            }
                        }
                        _ => BlockKind::Other,
                    };
                    starts.push((line_start(body, range.start), kind));
                } else if depth == 1 && matches!(tag, Tag::Item) {
                    list_items.push(line_start(body, range.start));
                }
                depth += 1;
            }
            Event::End(end) => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    finish_block(&mut starts, end, &mut heading, &mut list_items);
                }
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some((_, title)) = heading.as_mut() {
                    title.push_str(&text);
                }
            }
            _ if depth == 0 => starts.push((line_start(body, range.start), BlockKind::Other)),
            _ => {}
        }
    }
    glue_table_continuations(body, tile(body, starts))
}

/// Rows that the parser left out of a table (after a bare `|` line, say) but that readers see
/// as part of it stay with the table, so they are never cut off from its header.
fn glue_table_continuations(body: &str, blocks: Vec<Block>) -> Vec<Block> {
    let mut glued: Vec<Block> = Vec::with_capacity(blocks.len());
    for block in blocks {
        let continues_table = block.kind != BlockKind::Table
            && body[block.range.clone()].starts_with('|')
            && glued.last().is_some_and(|b| b.kind == BlockKind::Table);
        match glued.last_mut() {
            Some(previous) if continues_table => previous.range.end = block.range.end,
            _ => glued.push(block),
        }
    }
    glued
}

fn finish_block(
    starts: &mut [(usize, BlockKind)],
    end: TagEnd,
    heading: &mut Option<(u8, String)>,
    list_items: &mut Vec<usize>,
) {
    let Some((start, kind)) = starts.last_mut() else {
        return;
    };
    match (end, kind) {
        (TagEnd::Heading(_), BlockKind::Heading { title, .. }) => {
            if let Some((_, text)) = heading.take() {
                *title = text.split_whitespace().collect::<Vec<_>>().join(" ");
            }
        }
        (TagEnd::List(_), BlockKind::List { item_starts }) => {
            *item_starts = list_items.drain(..).map(|s| s - *start).collect();
        }
        _ => {}
    }
}

/// Turns block start offsets into ranges that cover `body` without gaps or overlaps.
fn tile(body: &str, mut starts: Vec<(usize, BlockKind)>) -> Vec<Block> {
    starts.dedup_by(|later, earlier| later.0 == earlier.0);
    let mut blocks = Vec::with_capacity(starts.len() + 1);
    let first = starts.first().map_or(body.len(), |(s, _)| *s);
    if !body[..first].trim().is_empty() {
        blocks.push(Block {
            kind: BlockKind::Other,
            range: 0..first,
        });
    }
    let ends: Vec<usize> = starts
        .iter()
        .skip(1)
        .map(|(s, _)| *s)
        .chain(std::iter::once(body.len()))
        .collect();
    for ((start, kind), end) in starts.into_iter().zip(ends) {
        if end > start {
            blocks.push(Block {
                kind,
                range: start..end,
            });
        }
    }
    blocks
}

/// Moves an offset back to the start of its line when only whitespace precedes it there, so an
/// indented block keeps its indentation.
fn line_start(body: &str, offset: usize) -> usize {
    let line_begin = body[..offset].rfind('\n').map_or(0, |i| i + 1);
    if body[line_begin..offset]
        .chars()
        .all(|c| c == ' ' || c == '\t')
    {
        line_begin
    } else {
        offset
    }
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(body: &str) -> Vec<BlockKind> {
        top_level_blocks(body).into_iter().map(|b| b.kind).collect()
    }

    #[test]
    fn blocks_tile_the_body() {
        let body = "intro\n\n# A\n\ntext\n\n[ref]: http://x\n\n```rs\ncode\n```\n";
        let blocks = top_level_blocks(body);
        let mut covered = 0;
        for b in &blocks {
            assert_eq!(b.range.start, covered);
            covered = b.range.end;
        }
        assert_eq!(covered, body.len());
    }

    #[test]
    fn heading_titles_include_inline_code() {
        let got = kinds("## The `co2` sensor\n");
        assert_eq!(
            got,
            [BlockKind::Heading {
                level: 2,
                title: "The co2 sensor".into()
            }]
        );
    }

    #[test]
    fn setext_headings_are_headings() {
        let got = kinds("Title\n=====\n\nbody\n");
        assert!(matches!(got[0], BlockKind::Heading { level: 1, .. }));
    }

    #[test]
    fn list_items_are_recorded() {
        let body = "- a\n- b\n  - nested\n- c\n";
        match &top_level_blocks(body)[0].kind {
            BlockKind::List { item_starts } => assert_eq!(item_starts, &[0, 4, 19]),
            other => panic!("expected a list, got {other:?}"),
        }
    }

    #[test]
    fn rows_after_a_bare_pipe_stay_with_their_table() {
        let body = "| a | b |\n|---|---|\n| 1 | 2 |\n|\n| 3 | 4 |\n";
        let blocks = top_level_blocks(body);
        assert_eq!(blocks.len(), 1);
        assert_eq!(blocks[0].kind, BlockKind::Table);
    }

    #[test]
    fn indented_code_keeps_its_indentation() {
        let body = "para\n\n    code line\n";
        let blocks = top_level_blocks(body);
        assert_eq!(&body[blocks[1].range.clone()], "    code line\n");
    }
}
