//! Reciprocal Rank Fusion: merges ranked lists by position only, `1 / (k + rank)` summed over
//! the lists an item appears in (ranks from 1). Pure.

use std::collections::HashMap;

/// One item of the fused ranking, its id borrowed from the lists it was fused from.
#[derive(Debug, Clone, PartialEq)]
pub struct Fused<'a> {
    pub id: &'a str,
    pub vector_rank: Option<usize>,
    pub keyword_rank: Option<usize>,
    pub score: f64,
}

/// Fuses the vector and keyword rankings (ids best first). Ties keep the better best rank, then
/// the id, so the order is deterministic.
pub fn fuse<'a>(vector: &[&'a str], keyword: &[&'a str], k: u32) -> Vec<Fused<'a>> {
    let mut by_id: HashMap<&str, Fused> = HashMap::with_capacity(vector.len() + keyword.len());
    let contribution = |rank: usize| 1.0 / (f64::from(k) + rank as f64);
    for (index, &id) in vector.iter().enumerate() {
        let entry = by_id.entry(id).or_insert_with(|| empty(id));
        entry.vector_rank.get_or_insert(index + 1);
        entry.score += contribution(index + 1);
    }
    for (index, &id) in keyword.iter().enumerate() {
        let entry = by_id.entry(id).or_insert_with(|| empty(id));
        if entry.keyword_rank.is_none() {
            entry.keyword_rank = Some(index + 1);
            entry.score += contribution(index + 1);
        }
    }
    let mut fused: Vec<Fused> = by_id.into_values().collect();
    fused.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| best_rank(a).cmp(&best_rank(b)))
            .then_with(|| a.id.cmp(b.id))
    });
    fused
}

fn empty(id: &str) -> Fused<'_> {
    Fused {
        id,
        vector_rank: None,
        keyword_rank: None,
        score: 0.0,
    }
}

fn best_rank(f: &Fused) -> usize {
    f.vector_rank
        .unwrap_or(usize::MAX)
        .min(f.keyword_rank.unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_in_both_lists_rise() {
        let fused = fuse(&["a", "b", "c"], &["c", "d"], 60);
        assert_eq!(fused[0].id, "c");
        assert_eq!(
            (fused[0].vector_rank, fused[0].keyword_rank),
            (Some(3), Some(1))
        );
        assert!((fused[0].score - (1.0 / 63.0 + 1.0 / 61.0)).abs() < 1e-12);
        assert_eq!(fused.len(), 4);
    }

    #[test]
    fn ties_break_on_best_rank_then_id() {
        let fused = fuse(&["a"], &["b"], 60);
        assert_eq!(fused[0].id, "a");
        assert_eq!(fused[1].keyword_rank, Some(1));
    }

    #[test]
    fn empty_lists_fuse_to_nothing() {
        assert!(fuse(&[], &[], 60).is_empty());
    }
}
