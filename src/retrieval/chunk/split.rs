//! Cutting one block that is larger than the limit into pieces that fit.
//!
//! Every unit (line, sentence, word) is measured once and pieces are sized by summing, so the
//! cost is one pass of the tokenizer over the block, whatever the number of cuts.
//! - code and other line-based blocks are cut between lines; a cut inside a fence closes it and
//!   re-opens it (same indentation and info string) in the next piece;
//! - tables are cut between rows, every piece repeating the header and delimiter rows;
//! - lists are cut between items when an item boundary is near enough;
//! - paragraphs are cut between sentences, and a sentence that is still too large between words.

use super::size::Sizer;
use std::borrow::Cow;
use std::ops::Range;

/// One piece of a split block, with its measured size.
#[derive(Debug, Clone)]
pub struct Piece<'a> {
    pub text: Cow<'a, str>,
    pub size: usize,
}

/// How a block should be cut.
pub enum Strategy<'b> {
    /// Code, tables, quotes, HTML: between lines.
    Lines,
    List {
        item_starts: &'b [usize],
    },
    Sentences,
}

/// Pieces aim at `limit`; a single line that cannot fit there is kept whole up to `hard_limit`
/// (the chunker's maximum) before it is cut between words.
pub fn split_block<'a>(
    text: &'a str,
    strategy: Strategy,
    sizer: &Sizer,
    limit: usize,
    hard_limit: usize,
) -> Vec<Piece<'a>> {
    match strategy {
        Strategy::Sentences => pack_units(text, sentences(text), sizer, limit),
        Strategy::Lines => split_lines(text, &[], sizer, limit, hard_limit),
        Strategy::List { item_starts } => split_lines(text, item_starts, sizer, limit, hard_limit),
    }
}

/// The opening line of a fence that is open before some line, and the line that closes it.
#[derive(Clone)]
pub(super) struct OpenFence<'a> {
    opener: &'a str,
    pub(super) closer: String,
    marker: char,
    len: usize,
    indent: usize,
}

/// What must be re-opened at the head of a piece that starts at some line: the header and
/// delimiter rows of a table the line belongs to.
fn table_headers(lines: &[(usize, &str)]) -> Vec<Option<String>> {
    let mut headers = vec![None; lines.len()];
    let mut current: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].1;
        if !is_table_row(line) {
            current = None;
        } else if current.is_some() {
            headers[i] = current.clone();
        } else if i + 1 < lines.len() && is_delimiter_row(lines[i + 1].1) {
            current = Some(format!("{}{}", line, compact_delimiter(lines[i + 1].1)));
            i += 1; // the delimiter row travels with its header
        }
        i += 1;
    }
    headers
}

/// The delimiter row with each cell shortened to `---` (alignment colons kept): the repeated
/// header then costs little, however wide the source padded its columns.
fn compact_delimiter(line: &str) -> String {
    let (_, content) = content_of(line);
    let prefix = &line[..line.len() - content.len()];
    let cells: Vec<String> = content
        .trim_end()
        .split('|')
        .map(|cell| {
            let cell = cell.trim();
            if cell.is_empty() {
                return String::new();
            }
            let left = if cell.starts_with(':') { ":" } else { "" };
            let right = if cell.len() > 1 && cell.ends_with(':') {
                ":"
            } else {
                ""
            };
            format!("{left}---{right}")
        })
        .collect();
    format!("{prefix}{}\n", cells.join("|"))
}

fn is_table_row(line: &str) -> bool {
    content_of(line).1.starts_with('|')
}

fn is_delimiter_row(line: &str) -> bool {
    let t = content_of(line).1.trim();
    t.contains('-')
        && t.contains('|')
        && t.chars().all(|c| matches!(c, '|' | '-' | ':' | ' ' | '\t'))
}

/// Cuts between lines. A cut inside a fence closes and re-opens it; a cut inside a table
/// repeats its header and delimiter rows. `preferred` are byte offsets (into `text`) where a cut
/// is better, such as list items.
fn split_lines<'a>(
    text: &'a str,
    preferred: &[usize],
    sizer: &Sizer,
    limit: usize,
    hard_limit: usize,
) -> Vec<Piece<'a>> {
    let lines: Vec<(usize, &str)> = line_offsets(text, 0);
    let tables = table_headers(&lines);
    let sizes: Vec<usize> = lines.iter().map(|(_, l)| sizer.measure(l)).collect();
    let mut prefix = vec![0usize; lines.len() + 1];
    for (i, size) in sizes.iter().enumerate() {
        prefix[i + 1] = prefix[i] + size;
    }
    // fences[i] is the fence open before line i; fences[n] the one open after the last line.
    let mut fences: Vec<Option<OpenFence>> = Vec::with_capacity(lines.len() + 1);
    fences.push(None);
    for (_, line) in &lines {
        let next = track_fence(fences.last().cloned().flatten(), line);
        fences.push(next);
    }
    let units = atomic_units(&lines, &fences);
    let measure_closer = |f: &Option<OpenFence>| f.as_ref().map_or(0, |f| sizer.measure(&f.closer));
    let measure_opener = |f: &Option<OpenFence>| f.as_ref().map_or(0, |f| sizer.measure(f.opener));

    let mut pieces = Vec::new();
    let mut start = 0;
    while start < lines.len() {
        let header: &str = tables[start].as_deref().unwrap_or("");
        let header_size = if header.is_empty() {
            0
        } else {
            sizer.measure(header)
        };
        let base = header_size + measure_opener(&fences[start]);
        let mut end = start;
        let mut boundary = None;
        while end < lines.len() {
            let with_line =
                base + prefix[end + 1] - prefix[start] + measure_closer(&fences[end + 1]);
            // A fence or table that began in this piece may run on to the hard limit, so that
            // one which fits the chunker's maximum is never cut.
            let cap = match units[end] {
                Some((a, b)) if a >= start && base + prefix[b] - prefix[start] <= hard_limit => {
                    hard_limit
                }
                _ => limit,
            };
            if with_line > cap {
                break;
            }
            end += 1;
            if end < lines.len() && preferred.binary_search(&lines[end].0).is_ok() {
                boundary = Some(end);
            }
        }
        if end == start {
            let alone = base + sizes[start] + measure_closer(&fences[start + 1]);
            if alone > hard_limit {
                pieces.extend(split_long_line(
                    header,
                    header_size,
                    lines[start].1,
                    sizer,
                    hard_limit,
                ));
                start += 1;
                continue;
            }
            end = start + 1;
        }
        if end < lines.len() {
            let unit_start = units[end]
                .map(|(a, _)| a)
                .filter(|a| *a > start && *a < end);
            if let Some(b) = boundary.filter(|b| (prefix[*b] - prefix[start] + base) * 2 >= limit) {
                end = b;
            } else if let Some(a) = unit_start {
                // Cut before the fence or table rather than inside it.
                end = a;
            }
        }
        pieces.push(assemble(
            text,
            header,
            &fences[start],
            &lines[start..end],
            &fences[end],
            sizer,
            base + prefix[end] - prefix[start],
        ));
        start = end;
    }
    pieces
}

/// For each line inside a fenced block or a table, the line range `[first, end)` of that unit.
fn atomic_units(
    lines: &[(usize, &str)],
    fences: &[Option<OpenFence>],
) -> Vec<Option<(usize, usize)>> {
    let mut units = vec![None; lines.len()];
    let mut i = 0;
    while i < lines.len() {
        let opens_fence = fences[i].is_none() && fences[i + 1].is_some();
        let opens_table =
            is_table_row(lines[i].1) && lines.get(i + 1).is_some_and(|(_, l)| is_delimiter_row(l));
        let end = if opens_fence {
            (i + 1..lines.len())
                .find(|j| fences[j + 1].is_none())
                .map_or(lines.len(), |j| j + 1)
        } else if opens_table {
            (i + 2..lines.len())
                .find(|j| !is_table_row(lines[*j].1))
                .unwrap_or(lines.len())
        } else {
            i += 1;
            continue;
        };
        for unit in &mut units[i..end] {
            *unit = Some((i, end));
        }
        i = end;
    }
    units
}

/// One piece: the repeated header, the re-opened fence, the lines, the closing fence.
fn assemble<'a>(
    parent: &'a str,
    header: &str,
    reopen: &Option<OpenFence>,
    lines: &[(usize, &'a str)],
    still_open: &Option<OpenFence>,
    sizer: &Sizer,
    size: usize,
) -> Piece<'a> {
    let (first_start, _) = lines[0];
    let (last_start, last_line) = lines[lines.len() - 1];
    let body = &parent[first_start..last_start + last_line.len()];
    if header.is_empty() && reopen.is_none() && still_open.is_none() {
        return Piece {
            text: Cow::Borrowed(body),
            size,
        };
    }
    let mut text = String::with_capacity(header.len() + body.len() + 16);
    text.push_str(header);
    if let Some(fence) = reopen {
        text.push_str(fence.opener);
    }
    text.push_str(body);
    let mut size = size;
    if let Some(fence) = still_open {
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&fence.closer);
        size += sizer.measure(&fence.closer);
    }
    Piece {
        text: Cow::Owned(text),
        size,
    }
}

fn split_long_line<'a>(
    header: &str,
    header_size: usize,
    line: &'a str,
    sizer: &Sizer,
    limit: usize,
) -> Vec<Piece<'a>> {
    let room = limit.saturating_sub(header_size).max(1);
    pack_units(line, words(line), sizer, room)
        .into_iter()
        .map(|piece| {
            if header.is_empty() {
                piece
            } else {
                Piece {
                    text: Cow::Owned(format!("{header}{}", piece.text)),
                    size: piece.size + header_size,
                }
            }
        })
        .collect()
}

/// Lines of `text` from byte `from` on, each with its offset in `text`.
fn line_offsets(text: &str, from: usize) -> Vec<(usize, &str)> {
    let mut start = from;
    text[from..]
        .split_inclusive('\n')
        .map(|line| {
            let item = (start, line);
            start += line.len();
            item
        })
        .collect()
}

/// Follows fence openers and closers line by line (backtick or tilde runs of three or more,
/// at any indentation, as in lists and block quotes).
pub(super) fn track_fence<'a>(open: Option<OpenFence<'a>>, line: &'a str) -> Option<OpenFence<'a>> {
    let (indent, trimmed) = content_of(line);
    let Some(marker) = trimmed.chars().next().filter(|c| *c == '`' || *c == '~') else {
        return open;
    };
    let run = trimmed.chars().take_while(|c| *c == marker).count();
    if run < 3 {
        return open;
    }
    let rest = &trimmed[run..];
    match open {
        // CommonMark: a closer indented more than three columns past its opener is content.
        Some(fence)
            if marker == fence.marker
                && run >= fence.len
                && rest.trim().is_empty()
                && indent <= fence.indent + 3 =>
        {
            None
        }
        Some(fence) => Some(fence),
        None if marker == '`' && rest.contains('`') => None,
        None => Some(OpenFence {
            opener: line,
            closer: format!("{}{}\n", " ".repeat(indent), marker.to_string().repeat(run)),
            marker,
            len: run,
            indent,
        }),
    }
}

/// The column where a line's content starts and the content, past indentation, block-quote
/// markers and list markers (`- `, `* `, `+ `, `1. `, `1) `).
fn content_of(line: &str) -> (usize, &str) {
    let mut rest = line;
    let mut column = 0;
    loop {
        let trimmed = rest.trim_start_matches([' ', '\t', '>']);
        column += rest[..rest.len() - trimmed.len()]
            .chars()
            .map(|c| if c == '\t' { 4 } else { 1 })
            .sum::<usize>();
        rest = trimmed;
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let marker_len = match rest.as_bytes() {
            [b'-' | b'*' | b'+', b' ', ..] => 2,
            bytes
                if (1..=9).contains(&digits)
                    && matches!(bytes.get(digits), Some(b'.' | b')'))
                    && bytes.get(digits + 1) == Some(&b' ') =>
            {
                digits + 2
            }
            _ => return (column, rest),
        };
        column += marker_len;
        rest = &rest[marker_len..];
    }
}

/// Greedily packs consecutive units (adjacent ranges of `parent`) into pieces of at most
/// `limit`; a unit larger than the limit is cut between words, and a single word larger than
/// the limit stands alone rather than being cut inside.
fn pack_units<'a>(
    parent: &'a str,
    units: Vec<Range<usize>>,
    sizer: &Sizer,
    limit: usize,
) -> Vec<Piece<'a>> {
    let mut pieces: Vec<Piece<'a>> = Vec::new();
    let mut open: Option<(Range<usize>, usize)> = None;
    let flush = |open: &mut Option<(Range<usize>, usize)>, pieces: &mut Vec<Piece<'a>>| {
        if let Some((range, size)) = open.take() {
            pieces.push(Piece {
                text: Cow::Borrowed(&parent[range]),
                size,
            });
        }
    };
    for unit in units {
        let size = sizer.measure(&parent[unit.clone()]);
        if size > limit {
            let inner = words(&parent[unit.clone()]);
            if inner.len() > 1 {
                flush(&mut open, &mut pieces);
                let shifted = inner
                    .into_iter()
                    .map(|r| r.start + unit.start..r.end + unit.start)
                    .collect();
                pieces.extend(pack_units(parent, shifted, sizer, limit));
                continue;
            }
        }
        match open.as_mut() {
            Some((range, so_far)) if *so_far + size <= limit => {
                range.end = unit.end;
                *so_far += size;
            }
            _ => {
                flush(&mut open, &mut pieces);
                open = Some((unit, size));
            }
        }
    }
    flush(&mut open, &mut pieces);
    pieces
}

/// Sentence ranges with their trailing whitespace: a sentence ends after `.`, `!` or `?`
/// (and any closing quotes or brackets) when whitespace follows.
fn sentences(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let mut end = i + c.len_utf8();
        while let Some(&(j, next)) = chars.peek() {
            if !matches!(next, '"' | '\'' | ')' | ']' | '”' | '’') {
                break;
            }
            end = j + next.len_utf8();
            chars.next();
        }
        let mut saw_space = false;
        while let Some(&(j, next)) = chars.peek() {
            if !next.is_whitespace() {
                break;
            }
            saw_space = true;
            end = j + next.len_utf8();
            chars.next();
        }
        if saw_space {
            out.push(start..end);
            start = end;
        }
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

/// Word ranges with their trailing whitespace, so consecutive words join back into the text.
fn words(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut in_space = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            in_space = true;
        } else if in_space {
            out.push(start..i);
            start = i;
            in_space = false;
        }
    }
    if start < text.len() {
        out.push(start..text.len());
    }
    out
}

/// The fence a text leaves open at its end, if any.
pub(super) fn fence_open_at_end(text: &str) -> Option<String> {
    text.split_inclusive('\n')
        .fold(None, track_fence)
        .map(|fence| fence.closer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delimiter_rows_are_compacted_with_alignment() {
        assert_eq!(
            compact_delimiter("|:-------|------:|:----:|\n"),
            "|:---|---:|:---:|\n"
        );
        assert_eq!(compact_delimiter("  | --- | --- |"), "  |---|---|\n");
    }
}
