//! The past window a history question asks for, read from its words; and the library's answer
//! when that window is longer than the history tool gives. Pure.
//!
//! "How did CO2 develop in room hq-201 over the last 24 hours?" asks for 24 hours ending now;
//! "… in den letzten 3 Tagen" for three days. A question that names no window at all gets the
//! history tool's default (the last 24 hours). Anything else that reads like a time ("since
//! Monday", "yesterday", "last month", a date) is [`AskedWindow::Unclear`]: the model writes
//! that window, not the library.

use super::language::Language;
use super::words::words;
use crate::agent::tools::live::MAX_WINDOW_DAYS;

/// A span of time counted back from now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub count: i64,
    pub unit: Unit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Minutes,
    Hours,
    Days,
    Weeks,
}

/// What a question says about the window it asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AskedWindow {
    /// No time at all: the history tool's default window.
    NotSaid,
    /// "the last 24 hours", "the past week", "les 3 derniers jours".
    Last(Span),
    /// A time the library does not read (a date, "yesterday", "since Monday", two windows).
    Unclear,
}

/// Words that open a window counted back from now ("last", "letzten", "dernières", …).
const LAST_WORDS: &[&str] = &[
    "last",
    "past",
    "letzten",
    "letzte",
    "vergangenen",
    "dernières",
    "derniers",
    "dernière",
    "dernier",
    "últimas",
    "últimos",
    "última",
    "último",
    "ultime",
    "ultimi",
    "ultima",
    "ultimo",
    "laatste",
    "afgelopen",
    "passadas",
    "passados",
];

/// Words of time the library does not turn into a window.
const OTHER_TIME_WORDS: &[&str] = &[
    "yesterday",
    "today",
    "tonight",
    "morning",
    "afternoon",
    "evening",
    "night",
    "since",
    "between",
    "until",
    "month",
    "months",
    "year",
    "years",
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
    "weekend",
    "gestern",
    "heute",
    "seit",
    "monat",
    "monate",
    "monaten",
    "jahr",
    "morgen",
    "nacht",
    "hier",
    "aujourd",
    "depuis",
    "mois",
    "année",
    "matin",
    "nuit",
    "ayer",
    "hoy",
    "desde",
    "mes",
    "meses",
    "año",
    "mañana",
    "noche",
    "ieri",
    "oggi",
    "mese",
    "gisteren",
    "vandaag",
    "maand",
    "ontem",
    "hoje",
];

/// The unit a word names, if it names one.
fn unit_of(word: &str) -> Option<Unit> {
    let unit = match word {
        "minute" | "minutes" | "minuten" | "minuto" | "minutos" | "minuti" | "min" => Unit::Minutes,
        "hour" | "hours" | "stunde" | "stunden" | "heure" | "heures" | "hora" | "horas" | "ora"
        | "ore" | "uur" | "uren" => Unit::Hours,
        "day" | "days" | "tag" | "tage" | "tagen" | "jour" | "jours" | "journée" | "día"
        | "días" | "dia" | "dias" | "giorno" | "giorni" | "dag" | "dagen" => Unit::Days,
        "week" | "weeks" | "woche" | "wochen" | "semaine" | "semaines" | "semana" | "semanas"
        | "settimana" | "settimane" | "weken" => Unit::Weeks,
        _ => return None,
    };
    Some(unit)
}

/// "24h", "7d", "2w", "30min": a count and its unit written as one word.
fn compact(word: &str) -> Option<Span> {
    let digits = word.chars().take_while(|c| c.is_ascii_digit()).count();
    let count = word[..digits].parse().ok()?;
    let unit = match &word[digits..] {
        "min" | "m" => Unit::Minutes,
        "h" => Unit::Hours,
        "d" => Unit::Days,
        "w" => Unit::Weeks,
        _ => return None,
    };
    Some(Span { count, unit })
}

/// A number, a date or a time of day ("12", "2026-11-30"), which only a window may hold.
fn is_number_or_date(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit()) && word.chars().all(|c| c.is_ascii_digit() || c == '-')
}

/// The window `question` asks for.
pub fn asked_window(question: &str) -> AskedWindow {
    let words = words(&question.replace("2.5", "25").replace("2,5", "25"));
    let mut found = Vec::new();
    let mut used = vec![false; words.len()];
    for (at, word) in words.iter().enumerate() {
        if !LAST_WORDS.contains(&word.as_str()) {
            continue;
        }
        if let Some((span, taken)) = span_around(&words, at) {
            found.push(span);
            for index in taken {
                used[index] = true;
            }
        }
    }
    let other_time = words.iter().enumerate().any(|(at, word)| {
        !used[at]
            && (OTHER_TIME_WORDS.contains(&word.as_str())
                || unit_of(word).is_some()
                || compact(word).is_some()
                || is_number_or_date(word))
    });
    match (found.as_slice(), other_time) {
        ([], false) => AskedWindow::NotSaid,
        ([span], false) => AskedWindow::Last(*span),
        _ => AskedWindow::Unclear,
    }
}

/// The span a window word at `at` opens, and the indexes of the words it took: "last 24 hours",
/// "last day", "24 dernières heures" (the count before the word, as French and Italian have it).
fn span_around(words: &[String], at: usize) -> Option<(Span, Vec<usize>)> {
    let count_at = |i: usize| words.get(i).and_then(|w| w.parse::<i64>().ok());
    let unit_at = |i: usize| words.get(i).and_then(|w| unit_of(w));
    if let Some(span) = words.get(at + 1).and_then(|w| compact(w)) {
        return Some((span, vec![at, at + 1]));
    }
    if let (Some(count), Some(unit)) = (count_at(at + 1), unit_at(at + 2)) {
        return Some((Span { count, unit }, vec![at, at + 1, at + 2]));
    }
    if let Some(unit) = unit_at(at + 1) {
        let before = at.checked_sub(1).and_then(count_at);
        let taken = match before {
            Some(_) => vec![at - 1, at, at + 1],
            None => vec![at, at + 1],
        };
        let count = before.unwrap_or(1);
        return Some((Span { count, unit }, taken));
    }
    None
}

impl Span {
    pub fn hours(self) -> i64 {
        match self.unit {
            Unit::Minutes => (self.count + 59) / 60,
            Unit::Hours => self.count,
            Unit::Days => self.count * 24,
            Unit::Weeks => self.count * 24 * 7,
        }
    }

    /// The window's start as the history tool reads it: "24 hours ago".
    pub fn start(self) -> String {
        let unit = match self.unit {
            Unit::Minutes => "minute",
            Unit::Hours => "hour",
            Unit::Days => "day",
            Unit::Weeks => "week",
        };
        let plural = if self.count == 1 { "" } else { "s" };
        format!("{} {unit}{plural} ago", self.count)
    }

    /// Longer than one history call may cover.
    pub fn too_long(self) -> bool {
        self.hours() > MAX_WINDOW_DAYS * 24
    }

    /// Whole days, rounded up.
    fn days(self) -> i64 {
        (self.hours() + 23) / 24
    }
}

/// The answer to a question whose window is longer than the history tool covers: the limit,
/// what was asked, and the shorter window to ask for, in `language` (English when not known).
pub fn too_long_answer(span: Span, language: Option<Language>) -> String {
    let max = MAX_WINDOW_DAYS;
    let asked = span.days();
    crate::agent::phrases::phrases(language.unwrap_or(Language::English))
        .window_too_long
        .replace("{max}", &max.to_string())
        .replace("{asked}", &asked.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last(count: i64, unit: Unit) -> AskedWindow {
        AskedWindow::Last(Span { count, unit })
    }

    #[test]
    fn windows_counted_back_from_now_are_read_in_each_language() {
        let table = [
            (
                "How did CO2 develop in room hq-201 of building acme-hq over the last 24 hours?",
                last(24, Unit::Hours),
            ),
            (
                "How did the temperature develop in Meeting Room Aurora over the last day?",
                last(1, Unit::Days),
            ),
            (
                "Show me the CO2 history of room hq-201 over the past week.",
                last(1, Unit::Weeks),
            ),
            (
                "Show me the CO2 history of room hq-201 over the last 14 days.",
                last(14, Unit::Days),
            ),
            (
                "Wie hat sich die Temperatur im Raum hq-101 in den letzten 3 Tagen entwickelt?",
                last(3, Unit::Days),
            ),
            (
                "Comment le CO2 a-t-il évolué dans la salle hq-201 au cours des 24 dernières heures ?",
                last(24, Unit::Hours),
            ),
            (
                "¿Cómo evolucionó el CO2 en la sala hq-201 en las últimas 12 horas?",
                last(12, Unit::Hours),
            ),
            (
                "How did PM2.5 develop in room hq-102 in the last 30 minutes?",
                last(30, Unit::Minutes),
            ),
            (
                "What was the lowest humidity in room hq-101 in the past 48h?",
                last(48, Unit::Hours),
            ),
            (
                "What was the highest temperature in room hq-101?",
                AskedWindow::NotSaid,
            ),
            (
                "How did PM2.5 develop in room hq-102?",
                AskedWindow::NotSaid,
            ),
        ];
        for (question, window) in table {
            assert_eq!(asked_window(question), window, "{question}");
        }
    }

    #[test]
    fn other_times_are_left_to_the_model() {
        for question in [
            "How did CO2 develop in room hq-201 since yesterday?",
            "What was the average temperature in room hq-101 last month?",
            "How did CO2 develop in room hq-201 between 8 and 12?",
            "Show the CO2 history of room hq-201 on 2026-11-30.",
            "How did CO2 develop over the last 2 days and the last 24 hours?",
            "Wie war die Temperatur gestern im Raum hq-101?",
        ] {
            assert_eq!(asked_window(question), AskedWindow::Unclear, "{question}");
        }
    }

    #[test]
    fn a_span_is_written_as_the_tool_reads_it_and_checked_against_the_limit() {
        let day = Span {
            count: 1,
            unit: Unit::Days,
        };
        let fortnight = Span {
            count: 14,
            unit: Unit::Days,
        };
        let week = Span {
            count: 1,
            unit: Unit::Weeks,
        };
        assert_eq!(day.start(), "1 day ago");
        assert_eq!(fortnight.start(), "14 days ago");
        assert_eq!(week.hours(), 168);
        assert!(!day.too_long() && !week.too_long() && fortnight.too_long());
    }

    #[test]
    fn the_too_long_answer_says_the_limit_and_what_was_asked_in_the_askers_language() {
        let fortnight = Span {
            count: 2,
            unit: Unit::Weeks,
        };
        for language in Language::ALL {
            let answer = too_long_answer(fortnight, Some(language));
            assert!(answer.contains(" 7 ") && answer.contains("14"), "{answer}");
            let detected = crate::agent::question::language::detect(&answer);
            assert_eq!(detected, Some(language), "{answer}");
        }
    }
}
