//! The embedded store's BM25 sums, worked out in Rust from the postings SQLite reads (pure).
//!
//! SQLite ran the sums itself until 2026-12-08: 1.26 million instructions for the benchmark
//! question's 41 candidates, against 0.66 million now (BENCHMARKS.md). The arithmetic here is the one SQLite did, step for step, so the
//! scores are the same to the bit: each term's score as `terms::term_score` writes it, added
//! in the question's term order with the compensated (Kahan–Babuška–Neumaier) sum of SQLite's
//! `sum()`. Rounding to 9 decimals stays SQLite's own `round()`, which PostgreSQL matches.

use crate::retrieval::terms::{term_score, WeightedTerm};
use std::cmp::Ordering;
use std::collections::HashMap;

/// One posting of a question term: the term's place among the weighted terms, the chunk's row
/// id, the term's weight in the chunk and the chunk's length in words.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Posting {
    pub place: usize,
    pub chunk: i64,
    pub weight: f64,
    pub words: i64,
}

/// Every chunk that holds a selecting term, with its unrounded BM25 score over all the
/// question's terms it holds, by chunk row id.
pub fn candidate_sums(
    terms: &[WeightedTerm],
    average_length: f64,
    postings: &[Posting],
) -> Vec<(i64, f64)> {
    let mut by_chunk: HashMap<i64, Vec<&Posting>> = HashMap::with_capacity(postings.len());
    for posting in postings {
        by_chunk.entry(posting.chunk).or_default().push(posting);
    }
    let mut sums: Vec<(i64, f64)> = by_chunk
        .into_iter()
        .filter(|(_, held)| held.iter().any(|p| terms[p.place].selects))
        .map(|(chunk, mut held)| {
            held.sort_by_key(|p| p.place);
            let scores = held
                .iter()
                .map(|p| term_score(terms[p.place].idf, p.weight, p.words as f64, average_length));
            (chunk, sqlite_sum(scores))
        })
        .collect();
    sums.sort_unstable_by_key(|(chunk, _)| *chunk);
    sums
}

/// The sum SQLite's `sum()` returns for these floating-point values, in this order: a running
/// sum and an error term, compensated as Kahan–Babuška–Neumaier (SQLite 3.43 and later).
pub fn sqlite_sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let (mut sum, mut error) = (0.0f64, 0.0f64);
    for value in values {
        let next = sum + value;
        error += if sum.abs() > value.abs() {
            (sum - next) + value
        } else {
            (value - next) + sum
        };
        sum = next;
    }
    if error.is_finite() {
        sum + error
    } else {
        sum
    }
}

/// A visible candidate with its rounded score and its chunk's id.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    pub row: i64,
    pub chunk_id: String,
    pub score: f64,
}

/// The best `limit` of `ranked`, as the SQL ranking ordered them: higher score first (scores
/// compared as SQLite compares numbers), then chunk id.
pub fn best(mut ranked: Vec<Ranked>, limit: usize) -> Vec<Ranked> {
    ranked.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.chunk_id.cmp(&b.chunk_id))
    });
    ranked.truncate(limit);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    fn term(idf: f64, selects: bool) -> WeightedTerm {
        WeightedTerm {
            term: String::new(),
            idf,
            selects,
        }
    }

    fn posting(place: usize, chunk: i64, weight: f64, words: i64) -> Posting {
        Posting {
            place,
            chunk,
            weight,
            words,
        }
    }

    #[test]
    fn only_chunks_holding_a_selecting_term_are_candidates_and_all_their_terms_count() {
        let terms = [term(2.0, true), term(0.1, false)];
        let postings = [
            posting(1, 7, 1.0, 10),
            posting(0, 7, 2.0, 10),
            posting(1, 8, 1.0, 12),
        ];
        let sums = candidate_sums(&terms, 11.0, &postings);
        let expected = sqlite_sum([
            term_score(2.0, 2.0, 10.0, 11.0),
            term_score(0.1, 1.0, 10.0, 11.0),
        ]);
        assert_eq!(sums, [(7, expected)]);
    }

    /// SQLite's own `sum()` over `values` in their order (the bundled SQLite, in memory).
    fn summed_by_sqlite(values: &[f64]) -> f64 {
        let connection = rusqlite::Connection::open_in_memory().unwrap();
        rusqlite::vtab::array::load_module(&connection).unwrap();
        let values: rusqlite::vtab::array::Array = std::rc::Rc::new(
            values
                .iter()
                .copied()
                .map(rusqlite::types::Value::Real)
                .collect(),
        );
        connection
            .query_row("SELECT sum(value) FROM rarray(?1)", [values], |row| {
                row.get(0)
            })
            .unwrap()
    }

    proptest::proptest! {
        #[test]
        fn the_sum_is_sqlites_to_the_bit(
            values in proptest::collection::vec(
                proptest::prop_oneof![0.0f64..30.0, 1e-9f64..1e-3, -1e6f64..1e6], 1..12),
        ) {
            proptest::prop_assert_eq!(sqlite_sum(values.iter().copied()).to_bits(),
                summed_by_sqlite(&values).to_bits());
        }
    }

    #[test]
    fn the_compensated_sum_keeps_what_one_running_sum_loses() {
        assert_eq!(sqlite_sum([1e16, 1.0, -1e16]), 1.0);
        assert_eq!(sqlite_sum([]), 0.0);
        assert_eq!(sqlite_sum([0.1, 0.2]), 0.1 + 0.2);
    }

    #[test]
    fn ties_on_score_go_to_the_smaller_chunk_id_and_the_limit_cuts_after_ordering() {
        let ranked = |chunk_id: &str, score: f64| Ranked {
            row: 0,
            chunk_id: chunk_id.to_string(),
            score,
        };
        let order: Vec<String> = best(
            vec![ranked("b", 1.0), ranked("c", 2.0), ranked("a", 1.0)],
            2,
        )
        .into_iter()
        .map(|r| r.chunk_id)
        .collect();
        assert_eq!(order, ["c", "a"]);
    }
}
