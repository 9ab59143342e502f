//! The keyword index's terms and its BM25 arithmetic, the same for both stores: one tokenizer
//! here (runs of letters and digits, lowercased, Snowball English stems) writes each chunk's
//! postings at ingest, turns a question's terms into index terms, and weighs them. Each store
//! keeps the postings, each chunk's length and the corpus totals, and ranks in its own SQL by
//! the formula below with the weights computed here, so a laptop (SQLite) and production
//! (PostgreSQL) rank a question's passages alike. Pure.
//!
//! BM25 as SQLite's FTS5 computes it: k1 = 1.2, b = 0.75; a chunk's term frequency counts a
//! heading word twice ([`SECTION_WEIGHT`]); its length is every word of heading and text; a
//! term's IDF is `ln((N − df + 0.5) / (df + 0.5))`, at least [`MIN_IDF`].
//!
//! Which chunks are ranked at all is decided by the question's less common terms
//! ([`selects`]): a term held by a large share of a large corpus still adds to the score of the
//! chunks that are ranked, but does not bring every chunk that holds it into the ranking. Its
//! weight there is small anyway, and ranking every chunk that holds it was most of the time of a
//! search at 10k chunks. A corpus of up to [`ALWAYS_SELECTS`] chunks is ranked exactly.

use rust_stemmers::{Algorithm, Stemmer};
use std::collections::BTreeMap;
use std::sync::OnceLock;

pub const K1: f64 = 1.2;
pub const B: f64 = 0.75;

/// A heading word counts this many times a text word.
pub const SECTION_WEIGHT: f32 = 2.0;

/// The weight of a term found in most chunks: small, never zero or negative.
pub const MIN_IDF: f64 = 1e-6;

/// A term held by at most this many chunks brings them all into the ranking.
pub const ALWAYS_SELECTS: u64 = 100;

/// ... as does a term held by at most this share of the chunks.
pub const SELECTING_SHARE: f64 = 0.01;

/// Longer words are cut to this many characters before stemming.
const MAX_TERM_CHARS: usize = 64;

/// One chunk's postings: each index term with its weighted frequency, and its length in words.
#[derive(Debug, Clone, PartialEq)]
pub struct Postings {
    pub terms: Vec<(String, f32)>,
    pub length: u32,
}

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// The index terms of `text`, in order, repeats kept.
pub fn index_terms(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(|word| {
            let lower: String = word
                .chars()
                .take(MAX_TERM_CHARS)
                .flat_map(char::to_lowercase)
                .filter(|c| c.is_alphanumeric())
                .collect();
            stemmer().stem(&lower).into_owned()
        })
        .filter(|term| !term.is_empty())
}

/// A chunk's postings from its heading path and text.
pub fn postings(section: &str, text: &str) -> Postings {
    let mut weights: BTreeMap<String, f32> = BTreeMap::new();
    let mut length = 0u32;
    for (part, weight) in [(section, SECTION_WEIGHT), (text, 1.0)] {
        for term in index_terms(part) {
            *weights.entry(term).or_default() += weight;
            length += 1;
        }
    }
    Postings {
        terms: weights.into_iter().collect(),
        length,
    }
}

/// A question's keyword terms (`query::keyword_terms`) as index terms, each once.
pub fn query_terms(keywords: &[String]) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for term in keywords
        .iter()
        .flat_map(|k| index_terms(k).collect::<Vec<_>>())
    {
        if !terms.contains(&term) {
            terms.push(term);
        }
    }
    terms
}

/// The weight of a term found in `df` of `chunks` chunks.
pub fn idf(chunks: u64, df: u64) -> f64 {
    let (n, df) = (chunks as f64, df as f64);
    ((n - df + 0.5) / (df + 0.5)).ln().max(MIN_IDF)
}

/// A question term as both stores rank by it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WeightedTerm {
    pub term: String,
    pub idf: f64,
    /// Whether the chunks holding it are ranked (see the module's notes).
    pub selects: bool,
}

/// Whether a term held by `df` of `chunks` chunks selects the chunks to rank.
pub fn selects(chunks: u64, df: u64) -> bool {
    df <= ALWAYS_SELECTS || (df as f64) <= SELECTING_SHARE * chunks as f64
}

/// The terms worth ranking by, with their weights: those found in at least one chunk. When
/// every one is common, the rarest (the first of equals) still selects.
pub fn weighted(chunks: u64, frequencies: &[(String, u64)]) -> Vec<WeightedTerm> {
    let mut terms: Vec<WeightedTerm> = frequencies
        .iter()
        .filter(|(_, df)| *df > 0)
        .map(|(term, df)| WeightedTerm {
            term: term.clone(),
            idf: idf(chunks, *df),
            selects: selects(chunks, *df),
        })
        .collect();
    if !terms.iter().any(|t| t.selects) {
        let rarest = frequencies
            .iter()
            .filter(|(_, df)| *df > 0)
            .enumerate()
            .min_by_key(|(i, (_, df))| (*df, *i))
            .map(|(i, _)| i);
        if let Some(i) = rarest {
            terms[i].selects = true;
        }
    }
    terms
}

/// [`weighted`] over what a store read for each question term: (chunks in the corpus, the term,
/// chunks holding it).
pub fn weighted_counts(counts: Vec<(i64, String, i64)>) -> Vec<WeightedTerm> {
    let chunks = counts.first().map_or(0, |(n, _, _)| (*n).max(0) as u64);
    let frequencies: Vec<(String, u64)> = counts
        .into_iter()
        .map(|(_, term, df)| (term, df.max(0) as u64))
        .collect();
    weighted(chunks, &frequencies)
}

/// A chunk's score for one term: PostgreSQL's ranking SQL computes it the same way, and the
/// embedded store sums it in `store::sqlite_bm25`.
pub fn term_score(idf: f64, weight: f64, length: f64, average_length: f64) -> f64 {
    idf * weight * (K1 + 1.0) / (weight + K1 * (1.0 - B + B * length / average_length))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_lowercased_split_and_stemmed() {
        let terms: Vec<String> = index_terms("Sensors: CO2-readings, ventilating ROOMS!").collect();
        assert_eq!(terms, ["sensor", "co2", "read", "ventil", "room"]);
        let query = query_terms(&["sensor".into(), "sensors".into(), "rooms".into()]);
        assert_eq!(query, ["sensor", "room"]);
    }

    #[test]
    fn heading_words_count_twice_and_every_word_counts_for_length() {
        let p = postings("CO2 › Levels", "CO2 above 1000 ppm is poor.");
        let weight = |t: &str| p.terms.iter().find(|(term, _)| term == t).map(|(_, w)| *w);
        assert_eq!(weight("co2"), Some(3.0));
        assert_eq!(weight("level"), Some(2.0));
        assert_eq!(weight("ppm"), Some(1.0));
        assert_eq!(p.length, 8);
    }

    #[test]
    fn rare_terms_weigh_more_and_common_ones_almost_nothing() {
        assert!(idf(1000, 1) > idf(1000, 100));
        assert_eq!(idf(10, 9), MIN_IDF);
        assert_eq!(
            weighted(100, &[("co2".into(), 3), ("zebra".into(), 0)]).len(),
            1
        );
        let short = term_score(2.0, 1.0, 50.0, 100.0);
        let long = term_score(2.0, 1.0, 200.0, 100.0);
        assert!(short > long, "a shorter chunk with the term ranks higher");
    }

    #[test]
    fn common_terms_rank_but_only_less_common_ones_select() {
        let selecting = |chunks: u64, frequencies: &[(&str, u64)]| -> Vec<(String, bool)> {
            let owned: Vec<(String, u64)> = frequencies
                .iter()
                .map(|(t, df)| (t.to_string(), *df))
                .collect();
            weighted(chunks, &owned)
                .into_iter()
                .map(|t| (t.term, t.selects))
                .collect()
        };
        // (chunks in the corpus, each term's chunks, whether each kept term selects)
        type Row = (
            u64,
            &'static [(&'static str, u64)],
            &'static [(&'static str, bool)],
        );
        let table: [Row; 4] = [
            // A small corpus is ranked exactly: every term selects.
            (
                100,
                &[("sensor", 95), ("co2", 12)],
                &[("sensor", true), ("co2", true)],
            ),
            // At 100k, a term in 20k chunks ranks but does not select; one in 900 does.
            (
                100_000,
                &[("sensor", 20_000), ("co2", 900), ("zebra", 0)],
                &[("sensor", false), ("co2", true)],
            ),
            // Every term common: the rarest selects, the first of equals.
            (
                100_000,
                &[("room", 30_000), ("sensor", 20_000), ("level", 20_000)],
                &[("room", false), ("sensor", true), ("level", false)],
            ),
            (100_000, &[("zebra", 0)], &[]),
        ];
        for (chunks, frequencies, want) in table {
            let want: Vec<(String, bool)> = want.iter().map(|(t, s)| (t.to_string(), *s)).collect();
            assert_eq!(selecting(chunks, frequencies), want, "{frequencies:?}");
        }
    }
}
