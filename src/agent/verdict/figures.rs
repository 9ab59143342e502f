//! Figures of a documentation answer held to how the passages state them. Pure.
//!
//! A figure of an answer is stated as the documentation states it when some passage line (a
//! table row, or a sentence of prose) holds the same value
//!
//! - **about the same thing**: a row whose label (a short cell without digits, "very poor") is
//!   in the answer's sentence or the question, or a sentence sharing a content word with them;
//! - **in the same form**: a value a passage gives as one end of a range ("1000 to 1400") is
//!   stated with the range's other end; one it gives as a bound ("above 1400") with a bound
//!   the same way;
//! - **in the same unit**, when both name one ("10 minutes" does not state "10 sensors").
//!
//! An answer whose every figure is in no passage invented them. Figures the question holds are
//! not judged (a room id, a value asked about), nor the numbers of a list.

mod mentions;

use crate::agent::text::{is_stopword, sentences, singular, strip_markers};
use mentions::{mentions, same, tokens, unit, Form, Mention, Token};
use std::cell::OnceCell;

/// A figure of the answer that no passage states as the answer does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Misstated {
    pub figure: String,
    /// The passage lines that hold the value, as written; empty when no passage does.
    pub stated_as: Vec<String>,
    /// Of those, the table rows whose label the question names ("poor"): the line the
    /// question is about, when the passages make it plain.
    pub asked_about: Vec<String>,
}

/// The figures of `answer` that no passage states about the same thing, in the same form and
/// unit; empty when every figure is (or the answer states none). `passages` are (chunk id,
/// text).
pub fn misstated(answer: &str, question: &str, passages: &[(String, String)]) -> Vec<Misstated> {
    // The question and the passages are read only once a sentence states a figure: most
    // answers state none, and reading them is most of what this check costs.
    let question_reading: OnceCell<QuestionReading> = OnceCell::new();
    let passage_reading: OnceCell<Vec<Line>> = OnceCell::new();
    let answer = strip_markers(answer);
    let mut found: Vec<Misstated> = Vec::new();
    let mut any_in_passages = false;
    let mut stated = 0;
    for sentence in sentences(&answer) {
        if !may_state_a_figure(sentence) {
            continue;
        }
        let stated_here = mentions(&tokens(sentence));
        if stated_here.is_empty() {
            continue;
        }
        let asked = question_reading.get_or_init(|| QuestionReading::of(question));
        let (question_words, quantity) = (&asked.words, asked.quantity);
        let judged = |mention: &Mention| asked.judges(mention);
        if !stated_here.iter().any(judged) {
            continue;
        }
        let lines = passage_reading.get_or_init(|| {
            passages
                .iter()
                .flat_map(|(_, text)| passage_lines(text))
                .collect()
        });
        let sentence_words = content_words(sentence);
        let about: Vec<&Line> = lines
            .iter()
            .filter(|line| line.is_about(sentence, question, &sentence_words, question_words))
            .collect();
        // A sentence stating a figure in the asked quantity's unit may add another ("420 ppm,
        // about 0.042 percent").
        let quantity = quantity.filter(|asked| !stated_here.iter().any(|m| m.unit == Some(asked)));
        for mention in stated_here {
            if !judged(&mention) {
                continue;
            }
            stated += 1;
            let holding: Vec<&Line> = lines
                .iter()
                .filter(|line| line.mentions.iter().any(|m| same(&m.value, &mention.value)))
                .collect();
            any_in_passages |= !holding.is_empty();
            if let Some(asked) = quantity.filter(|asked| of_other_quantity(&mention, asked)) {
                // "Which humidity is comfortable?" answered in °C: the figure is about the
                // temperature line above the humidity one, however well that line states it.
                found.push(Misstated {
                    figure: mention.value.clone(),
                    stated_as: holding.iter().map(|line| line.text.clone()).collect(),
                    asked_about: lines_in_unit(lines, asked, question_words),
                });
                continue;
            }
            // A range stated with both its ends, or a figure with the same unit, needs no
            // shared word: an answer in another language than the passages names the thing
            // in its own words.
            let supported = holding.iter().any(|line| {
                let about = about.iter().any(|a| std::ptr::eq(*a, *line));
                line.mentions.iter().any(|m| {
                    same(&m.value, &mention.value)
                        && m.states(&mention, sentence)
                        && (about
                            || matches!(m.form, Form::Range(..)) && m.form == mention.form
                            || m.unit.is_some() && m.unit == mention.unit)
                })
            });
            if !supported && !holding.is_empty() {
                found.push(Misstated {
                    figure: mention.value.clone(),
                    stated_as: holding.iter().map(|line| line.text.clone()).collect(),
                    asked_about: holding
                        .iter()
                        .filter(|line| line.is_row && line.is_labelled_in(question))
                        .map(|line| line.text.clone())
                        .collect(),
                });
            }
        }
    }
    if let Some(asked) = question_reading
        .get()
        .filter(|_| stated > 0 && !any_in_passages)
    {
        // Nothing the answer states is in the passages: invented, not merely misread.
        return mentions(&tokens(&answer))
            .into_iter()
            .filter(|mention| asked.judges(mention))
            .map(|m| Misstated {
                figure: m.value,
                stated_as: Vec::new(),
                asked_about: Vec::new(),
            })
            .collect();
    }
    found.dedup_by(|a, b| a.figure == b.figure);
    found
}

/// Whether `text` may hold a figure: a digit that starts a number, not one inside a word
/// (`CO2`, `hq-201` after its letters). A sentence without one is not tokenised at all.
fn may_state_a_figure(text: &str) -> bool {
    let mut previous: Option<char> = None;
    for c in text.chars() {
        if c.is_ascii_digit() && !previous.is_some_and(|p| p.is_alphabetic() || p.is_ascii_digit())
        {
            return true;
        }
        previous = Some(c);
    }
    false
}

/// What the figure check reads of the question.
struct QuestionReading {
    /// The figures the question holds: not judged (a room id, a value asked about).
    figures: Vec<String>,
    words: Vec<String>,
    /// The measured quantity the question names, when it names one.
    quantity: Option<&'static str>,
}

impl QuestionReading {
    fn of(question: &str) -> Self {
        QuestionReading {
            figures: mentions(&tokens(question))
                .into_iter()
                .map(|m| m.value)
                .collect(),
            words: content_words(question),
            quantity: quantity_named(question),
        }
    }

    /// Figures the question holds and the numbers of a list are not judged.
    fn judges(&self, mention: &Mention) -> bool {
        !self.figures.contains(&mention.value) && !mention.listed
    }
}

/// The one table row of `passages` that the question names by a label ("What CO2 level is
/// poor?" names the "poor" row, not "very poor"), as (chunk id, row as written); `None` when no
/// row with figures is named, or several are as closely. A row named by a longer label wins
/// over one named by a part of it ("very poor" over "poor").
pub fn row_asked_about(question: &str, passages: &[(String, String)]) -> Option<(String, String)> {
    let mut best: Vec<(usize, &str, String)> = Vec::new();
    for (id, text) in passages {
        for line in passage_lines(text) {
            if !line.is_row || line.mentions.is_empty() {
                continue;
            }
            let Some(named) = line
                .labels
                .iter()
                .filter(|label| has_phrase(question, label))
                .map(String::len)
                .max()
            else {
                continue;
            };
            if best.first().is_some_and(|(longest, ..)| named < *longest) {
                continue;
            }
            if best.first().is_some_and(|(longest, ..)| named > *longest) {
                best.clear();
            }
            if !best.iter().any(|(_, _, row)| *row == line.text) {
                best.push((named, id.as_str(), line.text));
            }
        }
    }
    match best.as_slice() {
        [(_, id, row)] => Some((id.to_string(), row.clone())),
        _ => None,
    }
}

/// The measured quantities a question may name, by the unit of their figures; names in the
/// languages the agent answers in (German compounds hold them: "Luftfeuchtigkeit").
const QUANTITIES: &[(&str, &[&str])] = &[
    (
        "%",
        &[
            "humidity",
            "humidité",
            "humedad",
            "feuchte",
            "feuchtigkeit",
            "umidità",
            "vochtigheid",
            "humidade",
        ],
    ),
    (
        "°c",
        &[
            "temperature",
            "température",
            "temperatura",
            "temperatur",
            "warm",
            "kalt",
            "chaud",
            "froid",
        ],
    ),
    ("ppm", &["co2", "carbon"]),
    (
        "db",
        &[
            "noise", "loud", "bruit", "ruido", "lärm", "laut", "rumore", "geluid", "ruído",
        ],
    ),
    (
        "lux",
        &[
            "light",
            "illuminance",
            "lumière",
            "luz",
            "licht",
            "luce",
            "helligkeit",
        ],
    ),
];

/// The unit of the one quantity `question` names ("Which humidity …" → `%`); `None` when it
/// names none or several.
fn quantity_named(question: &str) -> Option<&'static str> {
    let words: Vec<String> = tokens(question)
        .into_iter()
        .filter_map(|token| match token {
            Token::Word(word) => Some(word),
            _ => None,
        })
        .collect();
    let mut named = QUANTITIES.iter().filter(|(_, names)| {
        words
            .iter()
            .any(|word| names.iter().any(|name| word.contains(name)))
    });
    match (named.next(), named.next()) {
        (Some((unit, _)), None) => Some(unit),
        _ => None,
    }
}

/// Whether `mention` is in the unit of a measured quantity other than the one `asked`.
fn of_other_quantity(mention: &Mention, asked: &str) -> bool {
    mention.unit.is_some_and(|unit| {
        unit != asked && QUANTITIES.iter().any(|(quantity, _)| *quantity == unit)
    })
}

/// The passage lines with a figure in `unit`, those sharing a word with the question first:
/// what an answer about that quantity is read from.
fn lines_in_unit(lines: &[Line], unit: &str, question_words: &[String]) -> Vec<String> {
    let in_unit: Vec<&Line> = lines
        .iter()
        .filter(|line| line.mentions.iter().any(|m| m.unit == Some(unit)))
        .collect();
    let (sharing, others): (Vec<&Line>, Vec<&Line>) = in_unit
        .into_iter()
        .partition(|line| line.words.iter().any(|w| question_words.contains(w)));
    sharing
        .into_iter()
        .chain(others)
        .map(|line| line.text.clone())
        .collect()
}

/// One line of a passage: a table row or a sentence of prose.
struct Line {
    text: String,
    /// A row's short cells without digits ("very poor"); empty for prose.
    labels: Vec<String>,
    is_row: bool,
    words: Vec<String>,
    mentions: Vec<Mention>,
}

impl Line {
    fn new(text: String, labels: Vec<String>, is_row: bool) -> Line {
        Line {
            words: content_words(&text),
            mentions: mentions(&tokens(&text)),
            text,
            labels,
            is_row,
        }
    }

    /// Whether one of this row's labels is in `text`.
    fn is_labelled_in(&self, text: &str) -> bool {
        self.labels.iter().any(|label| has_phrase(text, label))
    }

    /// Whether this line is about what `sentence` (of the answer) says, for `question`.
    fn is_about(
        &self,
        sentence: &str,
        question: &str,
        sentence_words: &[String],
        question_words: &[String],
    ) -> bool {
        if self.is_row && !self.labels.is_empty() {
            return self.is_labelled_in(sentence) || self.is_labelled_in(question);
        }
        self.words
            .iter()
            .any(|w| sentence_words.contains(w) || question_words.contains(w))
    }
}

/// The lines of a passage: each table row (separator rows left out) and each sentence of the
/// prose between them, a paragraph's lines joined.
fn passage_lines(text: &str) -> Vec<Line> {
    let mut lines = Vec::new();
    let mut paragraph = String::new();
    let mut header: Option<Vec<String>> = None;
    let flush = |paragraph: &mut String, lines: &mut Vec<Line>| {
        for sentence in sentences(paragraph) {
            if !sentence.trim().is_empty() {
                lines.push(Line::new(sentence.trim().to_string(), Vec::new(), false));
            }
        }
        paragraph.clear();
    };
    for raw in text.lines() {
        let line = raw.trim();
        if line.starts_with('|') {
            flush(&mut paragraph, &mut lines);
            let cells: Vec<&str> = line
                .split('|')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect();
            let separator = cells
                .iter()
                .all(|c| c.chars().all(|ch| matches!(ch, '-' | ':' | ' ')));
            if separator {
                continue;
            }
            let labels = cells
                .iter()
                .filter(|c| !c.chars().any(|ch| ch.is_ascii_digit()))
                .filter(|c| c.split_whitespace().count() <= 3)
                .map(|c| c.to_lowercase())
                .collect();
            let written = match &header {
                // A row as the model reads it: each cell after its header.
                Some(names) => names
                    .iter()
                    .zip(&cells)
                    .map(|(name, cell)| format!("{name}: {cell}"))
                    .collect::<Vec<_>>()
                    .join("; "),
                None => {
                    header = Some(cells.iter().map(|c| c.to_string()).collect());
                    line.to_string()
                }
            };
            lines.push(Line::new(written, labels, true));
        } else if line.is_empty() || line.starts_with('#') {
            header = None;
            flush(&mut paragraph, &mut lines);
        } else {
            header = None;
            paragraph.push_str(line);
            paragraph.push(' ');
        }
    }
    flush(&mut paragraph, &mut lines);
    lines
}

/// Whether `phrase` is in `text` as whole words, case aside.
fn has_phrase(text: &str, phrase: &str) -> bool {
    let text = text.to_lowercase();
    let mut from = 0;
    while let Some(at) = text[from..].find(phrase) {
        let start = from + at;
        let end = start + phrase.len();
        let before = text[..start].chars().next_back();
        let after = text[end..].chars().next();
        if !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric) {
            return true;
        }
        from = end;
    }
    false
}

/// Content words of `text`: lowercase, singular, four letters or more, not stopwords nor units
/// of measure (what is counted, "sensors", stays a word).
fn content_words(text: &str) -> Vec<String> {
    let mut words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 4 && !w.chars().any(|c| c.is_ascii_digit()))
        .map(|w| singular(&w.to_lowercase(), 4).to_string())
        .filter(|w| !is_stopword(w) && !matches!(unit(w), Some("%" | "°c" | "ppm" | "lux" | "db")))
        .collect();
    words.sort_unstable();
    words.dedup();
    words
}

#[cfg(test)]
mod tests;
