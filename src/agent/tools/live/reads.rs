//! The buildings one answer has already read from the twin service. The tools of one answer
//! read a building once: the planned `get_building` that resolves the caller's places and
//! `get_occupancy`'s own check of the same building were two identical requests (BENCHMARKS.md,
//! the live path). A memo lives for one answer only: its reads were made with that answer's
//! caller's claims, and the next answer reads afresh.

use crate::downstream::Building;
use std::sync::Mutex;

/// The most buildings one answer keeps; reads past it go to the service every time.
const MAX_KEPT: usize = 32;

#[derive(Debug, Default)]
pub struct BuildingReads {
    kept: Mutex<Vec<Building>>,
}

impl BuildingReads {
    /// The building `building_id` as this answer read it before, if it did.
    pub fn get(&self, building_id: &str) -> Option<Building> {
        self.lock().iter().find(|b| b.id == building_id).cloned()
    }

    /// Keeps `building` for the rest of the answer (once; the first read wins).
    pub fn keep(&self, building: &Building) {
        let mut kept = self.lock();
        if kept.len() < MAX_KEPT && !kept.iter().any(|b| b.id == building.id) {
            kept.push(building.clone());
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Building>> {
        // A panic elsewhere cannot leave the list half-written: use it as it is.
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn building(id: &str, name: &str) -> Building {
        Building {
            id: id.to_string(),
            name: name.to_string(),
            domain: "acme".to_string(),
            address: None,
            rooms: Vec::new(),
        }
    }

    #[test]
    fn a_kept_building_is_found_by_its_id_and_the_first_read_wins() {
        let reads = BuildingReads::default();
        assert_eq!(reads.get("hq"), None);
        reads.keep(&building("hq", "Headquarters"));
        reads.keep(&building("hq", "Renamed"));
        assert_eq!(reads.get("hq").unwrap().name, "Headquarters");
        assert_eq!(reads.get("lab"), None);
    }

    #[test]
    fn no_more_than_the_limit_is_kept() {
        let reads = BuildingReads::default();
        for n in 0..MAX_KEPT + 5 {
            reads.keep(&building(&format!("b{n}"), "B"));
        }
        assert!(reads.get(&format!("b{}", MAX_KEPT - 1)).is_some());
        assert_eq!(reads.get(&format!("b{MAX_KEPT}")), None);
    }
}
