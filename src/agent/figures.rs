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

use super::grounding::{is_stopword, read_number, sentences, singular, strip_markers};

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
    let asked: Vec<String> = mentions(&tokens(question))
        .into_iter()
        .map(|m| m.value)
        .collect();
    let lines: Vec<Line> = passages
        .iter()
        .flat_map(|(_, text)| passage_lines(text))
        .collect();
    let question_words = content_words(question);
    let quantity = quantity_named(question);
    let answer = strip_markers(answer);
    let mut found: Vec<Misstated> = Vec::new();
    let mut any_in_passages = false;
    let mut stated = 0;
    for sentence in sentences(&answer) {
        let sentence_words = content_words(sentence);
        let about: Vec<&Line> = lines
            .iter()
            .filter(|line| line.is_about(sentence, question, &sentence_words, &question_words))
            .collect();
        let stated_here = mentions(&tokens(sentence));
        // A sentence stating a figure in the asked quantity's unit may add another ("420 ppm,
        // about 0.042 percent").
        let quantity = quantity.filter(|asked| !stated_here.iter().any(|m| m.unit == Some(asked)));
        for mention in stated_here {
            if asked.contains(&mention.value) || mention.listed {
                continue;
            }
            stated += 1;
            let holding: Vec<&Line> = lines
                .iter()
                .filter(|line| line.mentions.iter().any(|m| same(&m.value, &mention.value)))
                .collect();
            any_in_passages |= !holding.is_empty();
            if let Some(asked) = quantity.filter(|asked| mention.is_of_other_quantity(asked)) {
                // "Which humidity is comfortable?" answered in °C: the figure is about the
                // temperature line above the humidity one, however well that line states it.
                found.push(Misstated {
                    figure: mention.value.clone(),
                    stated_as: holding.iter().map(|line| line.text.clone()).collect(),
                    asked_about: lines_in_unit(&lines, asked, &question_words),
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
    if stated > 0 && !any_in_passages {
        // Nothing the answer states is in the passages: invented, not merely misread.
        return mentions(&tokens(&answer))
            .into_iter()
            .filter(|m| !asked.contains(&m.value) && !m.listed)
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

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Number(String),
    Word(String),
    Mark(char),
}

/// `text` as numbers, words (lowercase; ids such as `hq-201` or `pm2.5` are words) and marks.
fn tokens(text: &str) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let joins = |at: usize| {
        at > 0
            && at + 1 < chars.len()
            && chars[at - 1].is_alphanumeric()
            && chars[at + 1].is_alphanumeric()
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_digit()
                    || (matches!(chars[i], '.' | ',')
                        && chars.get(i + 1).is_some_and(char::is_ascii_digit)))
            {
                i += 1;
            }
            let raw: String = chars[start..i].iter().collect();
            out.push(Token::Number(read_number(&raw)));
        } else if c.is_alphabetic() {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric()
                    || chars[i] == '_'
                    || (matches!(chars[i], '-' | '.') && joins(i) && {
                        // `hq-201`, `pm2.5` are ids; `1000-1400` stays two numbers.
                        chars[start..i].iter().any(|ch| ch.is_alphabetic())
                            && (chars[i] == '-'
                                || chars[start..i].iter().any(|ch| ch.is_ascii_digit()))
                    }))
            {
                i += 1;
            }
            out.push(Token::Word(
                chars[start..i].iter().collect::<String>().to_lowercase(),
            ));
        } else {
            out.push(Token::Mark(c));
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Above,
    Below,
}

#[derive(Debug, Clone, PartialEq)]
enum Form {
    Point,
    Bound(Side),
    /// One end of a range, with both ends.
    Range(String, String),
}

#[derive(Debug, Clone)]
struct Mention {
    value: String,
    form: Form,
    unit: Option<&'static str>,
    /// The number of a numbered list item (`1.` at the start of a line).
    listed: bool,
}

impl Mention {
    /// Whether this figure is in the unit of a measured quantity other than the one `asked`.
    fn is_of_other_quantity(&self, asked: &str) -> bool {
        self.unit.is_some_and(|unit| {
            unit != asked && QUANTITIES.iter().any(|(quantity, _)| *quantity == unit)
        })
    }

    /// Whether this mention (of a passage) states `stated` (of the answer's `sentence`).
    fn states(&self, stated: &Mention, sentence: &str) -> bool {
        if let (Some(here), Some(there)) = (self.unit, stated.unit) {
            if here != there {
                return false;
            }
        }
        match &self.form {
            Form::Point => true,
            Form::Bound(side) => stated.form == Form::Bound(*side),
            Form::Range(low, high) => {
                let ends = |form: &Form| matches!(form, Form::Range(l, h) if same(l, low) && same(h, high));
                ends(&stated.form) || {
                    // Both ends in the sentence, however joined ("from 1000 ppm up to 1400").
                    let said = mentions(&tokens(sentence));
                    [low, high]
                        .iter()
                        .all(|end| said.iter().any(|m| same(&m.value, end)))
                }
            }
        }
    }
}

/// Words that join the two ends of a range.
const RANGE_JOINS: &[&str] = &["to", "bis", "à", "a", "al", "tot", "até", "au"];
/// Words before a range whose ends are joined by "and".
const BETWEEN: &[&str] = &["between", "zwischen", "entre", "tra", "fra", "tussen"];
const AND: &[&str] = &["and", "und", "et", "y", "e", "en"];
/// What may stand before a figure to make it a lower bound, as word sequences.
const ABOVE_BEFORE: &[&str] = &[
    "above",
    "over",
    "more than",
    "greater than",
    "higher than",
    "exceeds",
    "exceeding",
    "exceed",
    "beyond",
    "at least",
    "über",
    "oberhalb von",
    "mehr als",
    "au-dessus de",
    "plus de",
    "supérieur à",
    "supérieure à",
    "más de",
    "por encima de",
    "superior a",
    "sopra",
    "oltre",
    "più di",
    "boven",
    "meer dan",
    "acima de",
    "mais de",
];
const BELOW_BEFORE: &[&str] = &[
    "below",
    "under",
    "less than",
    "fewer than",
    "lower than",
    "at most",
    "up to",
    "unter",
    "unterhalb von",
    "weniger als",
    "bis zu",
    "moins de",
    "en dessous de",
    "inférieur à",
    "inférieure à",
    "jusqu'à",
    "menos de",
    "por debajo de",
    "inferior a",
    "hasta",
    "sotto",
    "meno di",
    "fino a",
    "onder",
    "minder dan",
    "tot",
    "abaixo de",
];
const ABOVE_AFTER: &[&str] = &["or more", "or above", "and above", "or higher", "and more"];
const BELOW_AFTER: &[&str] = &["or less", "or fewer", "or below", "and below", "or lower"];

/// The figures of a token run, each with its form and unit.
fn mentions(tokens: &[Token]) -> Vec<Mention> {
    let mut found: Vec<Mention> = Vec::new();
    let mut range_end: Option<(usize, Form)> = None;
    for (i, token) in tokens.iter().enumerate() {
        let Token::Number(value) = token else {
            continue;
        };
        let unit = unit_after(tokens, i + 1).map(|(u, _)| u);
        let listed = i == 0 && matches!(tokens.get(1), Some(Token::Mark('.' | ')')));
        let form = match range_end.take() {
            Some((end, form)) if end == i => form,
            _ => match range_from(tokens, i) {
                Some((other, high)) => {
                    let form = Form::Range(value.clone(), high);
                    range_end = Some((other, form.clone()));
                    form
                }
                None => bound_of(tokens, i).map_or(Form::Point, Form::Bound),
            },
        };
        found.push(Mention {
            value: value.clone(),
            form,
            unit,
            listed,
        });
    }
    found
}

/// The index and value of the number that closes a range opened by the number at `at`.
fn range_from(tokens: &[Token], at: usize) -> Option<(usize, String)> {
    let mut next = at + 1;
    if let Some((_, used)) = unit_after(tokens, next) {
        next += used;
    }
    let joined = match tokens.get(next)? {
        Token::Mark('-' | '–' | '—') => true,
        Token::Word(w) if RANGE_JOINS.contains(&w.as_str()) => true,
        Token::Word(w) if AND.contains(&w.as_str()) => {
            let before = words_before(tokens, at, 2);
            before.iter().any(|w| BETWEEN.contains(&w.as_str()))
        }
        _ => false,
    };
    match (joined, tokens.get(next + 1)?) {
        (true, Token::Number(high)) => Some((next + 1, high.clone())),
        _ => None,
    }
}

/// Which way the number at `at` is bounded by the words or marks around it, if it is.
fn bound_of(tokens: &[Token], at: usize) -> Option<Side> {
    match at.checked_sub(1).and_then(|i| tokens.get(i)) {
        Some(Token::Mark('>' | '≥')) => return Some(Side::Above),
        Some(Token::Mark('<' | '≤')) => return Some(Side::Below),
        Some(Token::Mark('=')) => {
            if let Some(Token::Mark(c)) = at.checked_sub(2).and_then(|i| tokens.get(i)) {
                match c {
                    '>' => return Some(Side::Above),
                    '<' => return Some(Side::Below),
                    _ => {}
                }
            }
        }
        _ => {}
    }
    let before = words_before(tokens, at, 3).join(" ");
    let ends = |phrases: &[&str]| {
        phrases
            .iter()
            .any(|p| before == *p || before.ends_with(&format!(" {p}")))
    };
    if ends(ABOVE_BEFORE) {
        return Some(Side::Above);
    }
    if ends(BELOW_BEFORE) {
        return Some(Side::Below);
    }
    let mut next = at + 1;
    if let Some((_, used)) = unit_after(tokens, next) {
        next += used;
    }
    if matches!(tokens.get(next), Some(Token::Mark('+'))) {
        return Some(Side::Above);
    }
    let after = words_after(tokens, next, 2).join(" ");
    if ABOVE_AFTER.contains(&after.as_str()) {
        Some(Side::Above)
    } else if BELOW_AFTER.contains(&after.as_str()) {
        Some(Side::Below)
    } else {
        None
    }
}

/// Up to `count` words right before `at` (an apostrophe between them kept as in "jusqu'à").
fn words_before(tokens: &[Token], at: usize, count: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut i = at;
    while i > 0 && words.len() < count {
        i -= 1;
        match &tokens[i] {
            Token::Word(w) => words.push(w.clone()),
            Token::Mark('\'' | '’') if !words.is_empty() => {
                let last = words.pop().unwrap_or_default();
                match i.checked_sub(1).map(|j| &tokens[j]) {
                    Some(Token::Word(w)) => {
                        words.push(format!("{w}'{last}"));
                        i -= 1;
                    }
                    _ => words.push(last),
                }
            }
            _ => break,
        }
    }
    words.reverse();
    words
}

fn words_after(tokens: &[Token], at: usize, count: usize) -> Vec<String> {
    tokens[at.min(tokens.len())..]
        .iter()
        .map_while(|t| match t {
            Token::Word(w) => Some(w.clone()),
            _ => None,
        })
        .take(count)
        .collect()
}

/// The unit at `at` and how many tokens it takes (`°` `C` are two).
fn unit_after(tokens: &[Token], at: usize) -> Option<(&'static str, usize)> {
    match tokens.get(at)? {
        Token::Mark('%') => Some(("%", 1)),
        Token::Mark('°') => match tokens.get(at + 1) {
            Some(Token::Word(w)) if w == "c" || w == "f" => {
                Some((if w == "c" { "°c" } else { "°f" }, 2))
            }
            _ => Some(("°c", 1)),
        },
        Token::Word(w) => unit(w).map(|u| (u, 1)),
        _ => None,
    }
}

/// Units, each with the words that name it.
const UNITS: &[(&str, &[&str])] = &[
    ("%", &["percent", "prozent", "pourcent"]),
    (
        "°c",
        &["celsius", "degree", "grad", "degré", "grado", "graden"],
    ),
    ("ppm", &["ppm"]),
    ("lux", &["lux", "lx"]),
    ("db", &["db", "dba", "decibel"]),
    (
        "second",
        &["second", "sec", "sekunde", "sekunden", "seconde", "segundo"],
    ),
    ("minute", &["minute", "min", "minuten", "minuto", "minuut"]),
    (
        "hour",
        &["hour", "stunde", "stunden", "heure", "hora", "ora", "uur"],
    ),
    (
        "day",
        &["day", "tag", "tage", "jour", "día", "dia", "giorno", "dag"],
    ),
    ("week", &["week", "woche", "wochen", "semaine", "semana"]),
    ("month", &["month", "monat", "monate", "moi", "mes"]),
    ("year", &["year", "jahr", "jahre", "année", "año", "anno"]),
    ("sensor", &["sensor", "sensoren", "capteur", "sensore"]),
    ("room", &["room", "raum", "räume", "salle", "pièce", "sala"]),
    (
        "person",
        &["person", "people", "personen", "personne", "persona"],
    ),
    ("building", &["building", "gebäude", "bâtiment", "edificio"]),
    (
        "floor",
        &["floor", "etage", "stockwerk", "étage", "planta", "piano"],
    ),
    (
        "user",
        &["user", "nutzer", "benutzer", "utilisateur", "usuario"],
    ),
    ("request", &["request", "anfrage", "requête", "petición"]),
    ("reading", &["reading", "messwert", "messwerte", "mesure"]),
];

/// The unit a word names, singular or plural.
fn unit(word: &str) -> Option<&'static str> {
    let lower = word.to_lowercase();
    let single = singular(&lower, 2);
    UNITS
        .iter()
        .find(|(_, names)| names.contains(&lower.as_str()) || names.contains(&single))
        .map(|(unit, _)| *unit)
}

/// The same value, however written (`1,000` and `1000.0`).
fn same(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (a.parse::<f64>(), b.parse::<f64>()),
            (Ok(x), Ok(y)) if x == y
        )
}

#[cfg(test)]
mod tests;
