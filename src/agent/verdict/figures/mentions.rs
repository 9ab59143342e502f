//! Figures read out of text: numbers with the form a text gives them (a point, a bound, one
//! end of a range) and their unit, in the languages the agent answers in. Pure.

use crate::agent::text::{read_number, singular, WordHasher};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Token {
    Number(String),
    Word(String),
    Mark(char),
}

/// `text` as numbers, words (lowercase; ids such as `hq-201` or `pm2.5` are words) and marks.
pub(super) fn tokens(text: &str) -> Vec<Token> {
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
            let word = &chars[start..i];
            out.push(Token::Word(if word.iter().all(char::is_ascii) {
                word.iter().map(char::to_ascii_lowercase).collect()
            } else {
                word.iter().collect::<String>().to_lowercase()
            }));
        } else {
            out.push(Token::Mark(c));
            i += 1;
        }
    }
    out
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Above,
    Below,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Form {
    Point,
    Bound(Side),
    /// One end of a range, with both ends.
    Range(String, String),
}

#[derive(Debug, Clone)]
pub(super) struct Mention {
    pub(super) value: String,
    pub(super) form: Form,
    pub(super) unit: Option<&'static str>,
    /// The number of a numbered list item (`1.` at the start of a line).
    pub(super) listed: bool,
}

impl Mention {
    /// Whether this mention (of a passage) states `stated` (of the answer's `sentence`).
    pub(super) fn states(&self, stated: &Mention, sentence: &str) -> bool {
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
pub(super) fn mentions(tokens: &[Token]) -> Vec<Mention> {
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
pub(super) const UNITS: &[(&str, &[&str])] = &[
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

type Names = HashMap<&'static str, (usize, &'static str), WordHasher>;

/// Each name of [`UNITS`] with the place of its unit there and the unit (the first place when a
/// name were listed twice).
static UNIT_NAMES: LazyLock<Names> = LazyLock::new(|| {
    let mut names = Names::default();
    for (place, (unit, unit_names)) in UNITS.iter().enumerate() {
        for name in *unit_names {
            names.entry(*name).or_insert((place, *unit));
        }
    }
    names
});

/// The unit a word names, singular or plural: the first unit of [`UNITS`] that names the word
/// or its singular. Looked up, not scanned: the figure check asks for every word of every
/// passage (a linear scan of the names was a quarter of an answer's CPU in `agent_overhead`).
pub(super) fn unit(word: &str) -> Option<&'static str> {
    let lower: Cow<str> = if word
        .bytes()
        .any(|b| !b.is_ascii() || b.is_ascii_uppercase())
    {
        Cow::Owned(word.to_lowercase())
    } else {
        Cow::Borrowed(word)
    };
    let single = singular(&lower, 2);
    let named = |name: &str| UNIT_NAMES.get(name).copied();
    match (named(&lower), named(single)) {
        (Some(a), Some(b)) => Some(a.min(b).1),
        (found, None) | (None, found) => found.map(|(_, unit)| unit),
    }
}

/// The same value, however written (`1,000` and `1000.0`).
pub(super) fn same(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (a.parse::<f64>(), b.parse::<f64>()),
            (Ok(x), Ok(y)) if x == y
        )
}
