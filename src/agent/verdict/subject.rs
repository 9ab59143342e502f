//! Whether a documentation passage is about another building than the one a question names.
//! Pure.
//!
//! Asked "What is the capacity of the Board Room in Acme Headquarters?", the 1.5B model
//! answered 24, citing a page about the ACME headquarters in Berlin (`hq-berlin`): the page
//! shares the words of the name but is about another building, and the support check let it
//! through. A passage is about another building when it names a building id (in backticks,
//! as the documentation writes ids) or a building name other than the one asked about, and
//! never the asked one's id.

use crate::agent::question::places;

/// The building a question was resolved to among the caller's places.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskedBuilding {
    pub id: String,
    pub name: String,
}

/// Whether `passage` is about a building none of `asked` is.
pub fn about_another_building(passage: &str, asked: &[AskedBuilding]) -> bool {
    if asked.is_empty() {
        return false;
    }
    let lower = passage.to_lowercase();
    if asked.iter().any(|building| names_id(&lower, &building.id)) {
        return false;
    }
    let names_other_id = building_ids_in(passage).any(|id| asked.iter().all(|b| b.id != id));
    let names_other_name = places::building_names_in(passage)
        .iter()
        .any(|name| asked.iter().all(|b| !b.name.eq_ignore_ascii_case(name)));
    names_other_id || names_other_name
}

/// Whether `text` (lowercase) holds `id` as a whole token.
fn names_id(text: &str, id: &str) -> bool {
    let id = id.to_lowercase();
    let part_of_id = |c: char| c.is_alphanumeric() || c == '-' || c == '_';
    text.match_indices(&id).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + id.len()..].chars().next();
        !before.is_some_and(part_of_id) && !after.is_some_and(part_of_id)
    })
}

/// Ids in backticks shaped like a building's: lowercase words joined by hyphens, each with a
/// letter (`hq-berlin`, `acme-hq`; not a room's `hq-201`).
fn building_ids_in(passage: &str) -> impl Iterator<Item = &str> {
    passage.split('`').skip(1).step_by(2).filter(|token| {
        let parts: Vec<&str> = token.split('-').collect();
        parts.len() >= 2
            && parts.iter().all(|part| {
                !part.is_empty()
                    && part
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                    && part.chars().any(|c| c.is_ascii_lowercase())
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acme_hq() -> Vec<AskedBuilding> {
        vec![AskedBuilding {
            id: "acme-hq".into(),
            name: "Acme Headquarters".into(),
        }]
    }

    #[test]
    fn a_passage_naming_another_building_is_about_another_building() {
        let rows = [
            (
                "The ACME headquarters (`hq-berlin`) has six floors. The board room is room \
                 5.01 with a capacity of 24.",
                true,
            ),
            ("Globex Tower has a roof terrace for 40 people.", true),
            (
                "Acme Headquarters (`acme-hq`) has a board room for 16.",
                false,
            ),
            (
                "`acme-hq` and `hq-berlin` both close at 22:00.",
                false, // names the asked one too
            ),
            ("Rooms have a capacity; the occupancy tool gives it.", false),
            ("Room `hq-201` holds 16 people.", false),
            ("Acme Headquarters has a board room for 16.", false),
        ];
        for (passage, another) in rows {
            assert_eq!(
                about_another_building(passage, &acme_hq()),
                another,
                "{passage}"
            );
        }
    }

    #[test]
    fn without_an_asked_building_no_passage_is_about_another() {
        assert!(!about_another_building(
            "Globex Tower (`globex-tower`)",
            &[]
        ));
    }

    #[test]
    fn an_id_counts_only_as_a_whole_token() {
        assert!(names_id("see `acme-hq` for", "acme-hq"));
        assert!(!names_id("see `acme-hq-2` for", "acme-hq"));
        assert!(!names_id("big-acme-hq", "acme-hq"));
    }
}
