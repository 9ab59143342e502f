//! The passages `search_docs` returned: read back by the runner (what a citation may point
//! at, what attribution compares), and written into a request as plain text. Pure.
//!
//! Markdown tables are written row by row as `header: cell` lines: a small model reading a
//! table's grid picks the wrong row ("poor" from the "very poor" row below it), while each
//! row spelled out with its headers is read right.

use crate::agent::text::{lowercase, paragraphs};
use crate::citations::ChunkOrigin;
use std::borrow::Cow;

/// One passage of a `search_docs` result, borrowed from it.
pub struct Passage<'a> {
    pub chunk_id: &'a str,
    pub source: &'a str,
    pub section: &'a str,
    pub text: &'a str,
}

impl Passage<'_> {
    pub fn origin(&self) -> ChunkOrigin {
        ChunkOrigin {
            source: self.source.to_string(),
            section: self.section.to_string(),
        }
    }
}

/// The passages of a `search_docs` result (those with a chunk id).
pub fn returned(content: &serde_json::Value) -> Vec<Passage<'_>> {
    let Some(results) = content.get("results").and_then(|r| r.as_array()) else {
        return Vec::new();
    };
    results
        .iter()
        .filter_map(|passage| {
            let field = |name: &str| text_field(passage, name).unwrap_or("");
            Some(Passage {
                chunk_id: text_field(passage, "chunk_id")?,
                source: field("source"),
                section: field("section"),
                text: field("text"),
            })
        })
        .collect()
}

/// A passage's field that holds text, by name. Its few fields are scanned: cheaper than
/// hashing the name, which every passage of every request would pay.
fn text_field<'a>(passage: &'a serde_json::Value, name: &str) -> Option<&'a str> {
    let (_, value) = passage.as_object()?.iter().find(|(key, _)| *key == name)?;
    value.as_str()
}

/// Passages written whole, best ranked first; the others keep only their paragraphs that
/// share a word with the question, and are left out when none does.
pub const WHOLE_PASSAGES: usize = 3;

/// ... for a question in another language than the documentation's English: its words match
/// no paragraph, so every passage it is given is given whole ("Quelle plage d'humidité …"
/// found the humidity comfort range fifth, and it was left out).
pub const WHOLE_PASSAGES_ACROSS_LANGUAGES: usize = 5;

/// The passages of a `search_docs` result as plain text for the request, each headed by its
/// marker, page and section; past the first `whole`, only what matches `question`.
/// Every prompt token costs time on a small local model, and the lower-ranked passages are
/// mostly about something else.
pub fn as_prompt_text_for(
    content: &serde_json::Value,
    question: &str,
    whole: usize,
) -> Option<String> {
    // The question's words only once a passage is cut to them (none when nothing was found).
    let asked = std::cell::OnceCell::new();
    write_passages(content, |rank, text| {
        if rank < whole {
            Some(Cow::Borrowed(text))
        } else {
            matching_paragraphs(text, asked.get_or_init(|| question_words(question)))
        }
    })
}

/// Words of four letters or more (or holding a digit: `co2`) of `question`, lowercased.
fn question_words(question: &str) -> Vec<String> {
    const COMMON: &[&str] = &[
        "what", "which", "does", "there", "with", "from", "about", "have", "this", "that", "when",
        "where", "many", "much", "right", "into", "your", "should",
    ];
    words_of(question)
        .filter(|w| !COMMON.contains(&w.as_ref()))
        .map(Cow::into_owned)
        .collect()
}

fn words_of(text: &str) -> impl Iterator<Item = Cow<'_, str>> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| {
            w.chars().count() >= 4 || (w.len() >= 2 && w.chars().any(|c| c.is_ascii_digit()))
        })
        .map(lowercase)
}

/// Two words match when equal, or when both are long and share their first five letters
/// ("humid" in "humidity" and "humid").
fn same_word(a: &str, b: &str) -> bool {
    a == b
        || (a.chars().nth(4).is_some()
            && b.chars().nth(4).is_some()
            && a.chars().take(5).eq(b.chars().take(5)))
}

/// The paragraphs of `text` (blocks between blank lines) sharing a word with `asked`; `None`
/// when none does.
fn matching_paragraphs<'a>(text: &'a str, asked: &[String]) -> Option<Cow<'a, str>> {
    let mut blocks = 0;
    let kept: Vec<&str> = paragraphs(text)
        .inspect(|_| blocks += 1)
        .filter(|block| words_of(block).any(|w| asked.iter().any(|a| same_word(a, &w))))
        .collect();
    match kept.len() {
        0 => None,
        // Every block kept: the text as it is, not a copy joined back together.
        all if all == blocks => Some(Cow::Borrowed(text)),
        _ => Some(Cow::Owned(kept.join("\n\n"))),
    }
}

/// The passages of a `search_docs` result as plain text for the request, each headed by its
/// marker, page and section.
pub fn as_prompt_text(content: &serde_json::Value) -> Option<String> {
    write_passages(content, |_, text| Some(Cow::Borrowed(text)))
}

/// Writes the passages of `content`, each passage's text as `keep` returns it (by rank, from
/// 0), and leaves out those for which it returns `None`.
fn write_passages<'a>(
    content: &'a serde_json::Value,
    keep: impl Fn(usize, &'a str) -> Option<Cow<'a, str>>,
) -> Option<String> {
    let results = content.get("results")?.as_array()?;
    if results.is_empty() {
        return Some("No documentation passage was found for this question.".to_string());
    }
    // Sized once for the passages and their headings, instead of grown passage by passage.
    let room: usize = results
        .iter()
        .map(|passage| text_field(passage, "text").map_or(0, str::len) + 160)
        .sum();
    let mut text = String::with_capacity(room);
    text.push_str(
        "Documentation passages found for this question. After a sentence that uses one, \
         write its marker.\n",
    );
    for (rank, passage) in results.iter().enumerate() {
        let field = |name: &str| text_field(passage, name).unwrap_or("");
        let Some(kept) = keep(rank, field("text").trim()) else {
            continue;
        };
        // Pieces pushed one by one: `format!` would copy each passage twice.
        for piece in [
            "\n[^",
            field("chunk_id"),
            "] (",
            field("source"),
            " › ",
            field("section"),
            ")\n",
            &tables_as_rows(&kept),
            "\n",
        ] {
            text.push_str(piece);
        }
    }
    Some(text)
}

/// Markdown tables in `text` rewritten as one line per row, each cell after its header
/// (`- ppm: 1000 to 1400; band: poor`); everything else is kept as it is.
pub fn tables_as_rows(text: &str) -> Cow<'_, str> {
    if memchr::memchr(b'|', text.as_bytes()).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = Vec::new();
    let mut header: Option<Vec<String>> = None;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(cells) = table_cells(line) else {
            header = None;
            out.push(line.to_string());
            continue;
        };
        if is_delimiter_row(&cells) {
            continue;
        }
        match &header {
            None if lines
                .get(i + 1)
                .and_then(|l| table_cells(l))
                .is_some_and(|c| is_delimiter_row(&c)) =>
            {
                header = Some(cells);
            }
            Some(names) => {
                let pairs: Vec<String> = names
                    .iter()
                    .zip(&cells)
                    .filter(|(_, cell)| !cell.is_empty())
                    .map(|(name, cell)| format!("{name}: {cell}"))
                    .collect();
                out.push(format!("- {}", pairs.join("; ")));
            }
            None => out.push(line.to_string()),
        }
    }
    Cow::Owned(out.join("\n"))
}

/// The cells of a table line (`| a | b |`), or `None` for any other line.
fn table_cells(line: &str) -> Option<Vec<String>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    Some(inner.split('|').map(|c| c.trim().to_string()).collect())
}

fn is_delimiter_row(cells: &[String]) -> bool {
    cells
        .iter()
        .all(|c| !c.is_empty() && c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passages_past_the_first_keep_only_what_matches_the_question() {
        let passage = |id: &str, text: &str| serde_json::json!({"chunk_id": id, "source": "s.md", "section": "S", "text": text});
        let content = serde_json::json!({"results": [
            passage("p1", "Whole one.\n\nAbout nothing asked."),
            passage("p2", "Whole two."),
            passage("p3", "Whole three."),
            passage("p4", "Kept: relative humidity of 40 to 60 %.\n\nDropped: door counters."),
            passage("p5", "Nothing in common here at all."),
        ]});
        let text =
            as_prompt_text_for(&content, "Which humidity is comfortable?", WHOLE_PASSAGES).unwrap();
        let across = as_prompt_text_for(&content, "Quelle humidité ?", 5).unwrap();
        assert!(across.contains("Dropped: door counters") && across.contains("Nothing in common"));
        for kept in [
            "About nothing asked.",
            "Whole two.",
            "Whole three.",
            "Kept: relative humidity",
        ] {
            assert!(text.contains(kept), "{kept} in {text}");
        }
        for dropped in ["Dropped: door counters", "[^p5]", "Nothing in common"] {
            assert!(!text.contains(dropped), "{dropped} in {text}");
        }
    }

    #[test]
    fn passages_are_read_from_search_results() {
        let content = serde_json::json!({"results": [
            {"chunk_id": "c1", "source": "user/a.md", "section": "A > B", "text": "…"},
            {"source": "no id"},
        ]});
        let passages = returned(&content);
        assert_eq!(passages.len(), 1);
        assert_eq!(passages[0].chunk_id, "c1");
        assert_eq!(passages[0].section, "A > B");
        assert!(returned(&serde_json::json!({"error": {}})).is_empty());
    }

    #[test]
    fn table_rows_are_written_with_their_headers() {
        let text = "Bands:\n\n| ppm | band |\n|---|:---:|\n| 800 to 1000 | fair |\n| 1000 to 1400 | poor |\n\nAfter.";
        assert_eq!(
            tables_as_rows(text),
            "Bands:\n\n- ppm: 800 to 1000; band: fair\n- ppm: 1000 to 1400; band: poor\n\nAfter."
        );
        let not_a_table = "a | b\n| only one line |";
        assert_eq!(tables_as_rows(not_a_table), not_a_table);
    }

    /// The paragraph filter as first written (a lowercased copy of every word, a stem copied
    /// per comparison), the reference the faster one must agree with.
    fn matching_paragraphs_as_first_written(text: &str, asked: &[String]) -> Option<String> {
        let words = |text: &str| {
            text.split(|c: char| !c.is_alphanumeric())
                .filter(|w| {
                    w.chars().count() >= 4
                        || (w.len() >= 2 && w.chars().any(|c| c.is_ascii_digit()))
                })
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        };
        let stem = |w: &str| w.chars().take(5).collect::<String>();
        let same = |a: &str, b: &str| {
            a == b || (a.chars().count() >= 5 && b.chars().count() >= 5 && stem(a) == stem(b))
        };
        let kept: Vec<&str> = text
            .split("\n\n")
            .filter(|block| {
                words(block)
                    .iter()
                    .any(|w| asked.iter().any(|a| same(a, w)))
            })
            .collect();
        (!kept.is_empty()).then(|| kept.join("\n\n"))
    }

    const WORDS: &[&str] = &[
        "Humidity",
        "humid",
        "humidité",
        "HUMIDITÉ",
        "CO2",
        "co2",
        "ǅemal",
        "Ǆ",
        "ΣΊΣΥΦΟΣ",
        "σίσυφος",
        "İstanbul",
        "sensor",
        "Sensors",
        "ppm",
        "20",
        "\n\n",
        "a",
        "Straße",
        "STRASSE",
    ];

    proptest::proptest! {
        #[test]
        fn the_paragraph_filter_agrees_with_the_first_one(
            text in proptest::collection::vec(proptest::sample::select(WORDS), 0..30),
            question in proptest::collection::vec(proptest::sample::select(WORDS), 0..6),
            free in "\\PC{0,40}",
        ) {
            let text = format!("{} {free}", text.join(" "));
            let asked = question_words(&format!("{} {free}", question.join(" ")));
            proptest::prop_assert_eq!(
                matching_paragraphs(&text, &asked).map(Cow::into_owned),
                matching_paragraphs_as_first_written(&text, &asked)
            );
        }

    }
}
