//! The Markdown-aware chunker: a document's text → its front matter and a list of chunks.
//!
//! Pure: no I/O, no store, no embedder. Top-level blocks come from pulldown-cmark
//! ([`blocks`]); each block is measured once; blocks that fit are never cut, and small blocks
//! under one heading are packed together up to the target size. Blocks larger than the maximum
//! are cut by [`split`] along the lines their kind allows. Every chunk carries the path of
//! headings above it.

mod blocks;
mod front_matter;
mod size;
mod split;

pub use front_matter::{split_front_matter, FrontMatter, FrontMatterError};
// `normalize` is public so tests can read a source exactly as the chunker does.
pub use size::{count_tokens, Sizer};

use crate::config::ChunkingConfig;
use blocks::{top_level_blocks, Block, BlockKind};
use serde::Serialize;
use split::{split_block, Piece, Strategy};
use std::borrow::Cow;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    Prose,
    Code,
    Table,
    List,
    Mixed,
}

impl ChunkKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkKind::Prose => "prose",
            ChunkKind::Code => "code",
            ChunkKind::Table => "table",
            ChunkKind::List => "list",
            ChunkKind::Mixed => "mixed",
        }
    }

    pub fn parse(text: &str) -> Option<ChunkKind> {
        [
            ChunkKind::Prose,
            ChunkKind::Code,
            ChunkKind::Table,
            ChunkKind::List,
            ChunkKind::Mixed,
        ]
        .into_iter()
        .find(|k| k.as_str() == text)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    pub ordinal: usize,
    /// Heading titles from the outermost to the innermost; empty before the first heading.
    pub section: Vec<String>,
    pub kind: ChunkKind,
    /// Size in the chunker's unit (tokens or characters), summed from measured blocks.
    pub size: usize,
    pub text: String,
}

impl Chunk {
    /// `Guide > Sensors > CO2`.
    pub fn section_path(&self) -> String {
        self.section.join(" > ")
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChunkedDocument {
    pub front_matter: FrontMatter,
    pub chunks: Vec<Chunk>,
}

#[derive(Debug, Clone)]
pub struct Chunker {
    config: ChunkingConfig,
    sizer: Sizer,
}

impl Chunker {
    pub fn new(config: ChunkingConfig) -> Chunker {
        Chunker {
            config,
            sizer: Sizer::new(config.unit),
        }
    }

    pub fn config(&self) -> &ChunkingConfig {
        &self.config
    }

    /// Chunks a whole document. Only malformed front matter is an error.
    pub fn chunk(&self, text: &str) -> Result<ChunkedDocument, FrontMatterError> {
        let normalized = normalize(text);
        let (front_matter, body) = split_front_matter(&normalized)?;
        Ok(ChunkedDocument {
            front_matter,
            chunks: self.chunk_body(body),
        })
    }

    /// Chunks Markdown that has no front matter.
    pub fn chunk_body(&self, body: &str) -> Vec<Chunk> {
        let mut packer = Packer::new(self.config.target, self.config.max);
        for block in top_level_blocks(body) {
            let text = &body[block.range.clone()];
            if text.trim().is_empty() {
                continue;
            }
            // Trailing blank lines are not content: a block that fits without them is whole.
            let size = self.sizer.measure(text.trim_end());
            match &block.kind {
                BlockKind::Heading { level, title } => packer.heading(*level, title, text, size),
                _ => {
                    let category = category(&block.kind);
                    for piece in self.pieces(&block, text, size) {
                        packer.content(piece, category);
                    }
                }
            }
        }
        packer.finish()
    }

    fn pieces<'a>(&self, block: &Block, text: &'a str, size: usize) -> Vec<Piece<'a>> {
        if size <= self.config.max {
            return vec![Piece {
                text: Cow::Borrowed(text),
                size,
            }];
        }
        let strategy = match &block.kind {
            BlockKind::Paragraph => Strategy::Sentences,
            BlockKind::List { item_starts } => Strategy::List { item_starts },
            _ => Strategy::Lines,
        };
        split_block(
            text,
            strategy,
            &self.sizer,
            self.config.target,
            self.config.max,
        )
    }
}

/// What a block contributes to its chunk's kind.
fn category(kind: &BlockKind) -> ChunkKind {
    match kind {
        BlockKind::Code { .. } => ChunkKind::Code,
        BlockKind::Table => ChunkKind::Table,
        BlockKind::List { .. } => ChunkKind::List,
        _ => ChunkKind::Prose,
    }
}

/// CRLF and lone CR become LF, a byte-order mark is dropped, and a line that is only a code
/// fence loses its trailing blanks (CommonMark allows them on a closing fence; pulldown-cmark
/// 0.13 does not recognise a closer followed by a tab, and would run the block on).
pub fn normalize(text: &str) -> Cow<'_, str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut text = if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    };
    if text.contains("``\t")
        || text.contains("~~\t")
        || text.contains("`` \n")
        || text.contains("~~ \n")
    {
        text = Cow::Owned(text.split_inclusive('\n').map(trim_fence_line).collect());
    }
    text
}

fn trim_fence_line(line: &str) -> Cow<'_, str> {
    let bare = line.trim_end();
    let marker = bare.trim_start();
    let is_fence = marker.len() >= 3
        && (marker.bytes().all(|b| b == b'`') || marker.bytes().all(|b| b == b'~'));
    if is_fence && bare.len() + 1 < line.len() {
        Cow::Owned(format!("{bare}\n"))
    } else {
        Cow::Borrowed(line)
    }
}

/// Accumulates pieces into chunks under the current heading path.
struct Packer {
    target: usize,
    max: usize,
    headings: Vec<(u8, String)>,
    chunks: Vec<Chunk>,
    open: OpenChunk,
}

#[derive(Default)]
struct OpenChunk {
    text: String,
    size: usize,
    section: Vec<String>,
    kind: Option<ChunkKind>,
}

impl OpenChunk {
    fn has_content(&self) -> bool {
        self.kind.is_some()
    }

    fn push(&mut self, text: &str, size: usize) {
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push('\n');
        }
        self.text.push_str(text);
        self.size += size;
    }
}

impl Packer {
    fn new(target: usize, max: usize) -> Packer {
        Packer {
            target,
            max,
            headings: Vec::new(),
            chunks: Vec::new(),
            open: OpenChunk::default(),
        }
    }

    fn heading(&mut self, level: u8, title: &str, text: &str, size: usize) {
        if self.open.has_content() || self.open.size + size > self.max {
            self.flush();
        }
        while self.headings.last().is_some_and(|(l, _)| *l >= level) {
            self.headings.pop();
        }
        let title = if title.is_empty() {
            "(untitled)"
        } else {
            title
        };
        self.headings.push((level, title.to_string()));
        self.open.section = self.section();
        self.open.push(text, size);
    }

    fn content(&mut self, piece: Piece, category: ChunkKind) {
        let over_target = self.open.size + piece.size > self.target;
        let heading_only_overflow =
            !self.open.has_content() && self.open.size + piece.size > self.max;
        if (self.open.has_content() && over_target) || heading_only_overflow {
            self.flush();
        }
        if self.open.text.is_empty() {
            self.open.section = self.section();
        }
        self.open.push(&piece.text, piece.size);
        self.open.kind = Some(match self.open.kind {
            None => category,
            Some(kind) if kind == category => kind,
            Some(_) => ChunkKind::Mixed,
        });
    }

    fn section(&self) -> Vec<String> {
        self.headings.iter().map(|(_, t)| t.clone()).collect()
    }

    fn flush(&mut self) {
        let open = std::mem::take(&mut self.open);
        let mut text = open.text.trim_end().to_string();
        if text.trim().is_empty() {
            return;
        }
        // A fence the parser closed implicitly (its list item or the document ended) is closed
        // explicitly, so the chunk is balanced Markdown on its own.
        if let Some(closer) = split::fence_open_at_end(&text) {
            text.push('\n');
            text.push_str(closer.trim_end());
        }
        self.chunks.push(Chunk {
            ordinal: self.chunks.len(),
            section: open.section,
            kind: open.kind.unwrap_or(ChunkKind::Prose),
            size: open.size,
            text,
        });
    }

    fn finish(mut self) -> Vec<Chunk> {
        self.flush();
        self.chunks
    }
}

#[cfg(test)]
mod tests;
