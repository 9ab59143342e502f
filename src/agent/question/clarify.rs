//! A room named in words that several of the caller's buildings have. Pure.
//!
//! "How many people are in the Lobby right now?" from someone who sees two buildings with a
//! lobby names no room: picking one answers a question that was not asked. Such a question
//! is answered by the library with a question back, listing the rooms it could mean, in the
//! language it was asked in; no model call is made.

use super::language::Language;
use super::places::{KnownBuilding, KnownRoom, NamedPlaces};

/// The rooms a question could mean when it names a room by a name that rooms of more than one
/// building have, and names no building; `None` when the question is not ambiguous.
pub fn ambiguous_rooms(named: &NamedPlaces) -> Option<&[KnownRoom]> {
    if !named.buildings.is_empty() || named.rooms.len() < 2 {
        return None;
    }
    let first = &named.rooms[0].building_id;
    let several_buildings = named.rooms.iter().any(|room| &room.building_id != first);
    several_buildings.then_some(named.rooms.as_slice())
}

/// "Which Lobby do you mean: Lobby in Acme Headquarters (acme-hq, room hq-lobby) or …?" in
/// `language` (English when it is not known).
pub fn which_one(
    rooms: &[KnownRoom],
    buildings: &[KnownBuilding],
    language: Option<Language>,
) -> String {
    let language = language.unwrap_or(Language::English);
    let phrases = crate::agent::phrases::phrases(language);
    let (opening, inside, or) = (phrases.which_room, phrases.room_in, phrases.or);
    let options: Vec<String> = rooms
        .iter()
        .map(|room| {
            let building = buildings
                .iter()
                .find(|b| b.id == room.building_id)
                .map_or(room.building_id.as_str(), |b| b.name.as_str());
            format!(
                "{} {inside} {building} ({}, {})",
                room.name, room.building_id, room.id
            )
        })
        .collect();
    let listed = match options.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} {or} {last}", rest.join(", ")),
        None => String::new(),
    };
    let name = rooms.first().map_or("", |room| room.name.as_str());
    format!("{}: {listed}?", opening.replace("{name}", name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn room(building_id: &str, id: &str, name: &str) -> KnownRoom {
        KnownRoom {
            building_id: building_id.into(),
            id: id.into(),
            name: name.into(),
            floor: Some(0),
            capacity: None,
        }
    }

    fn building(id: &str, name: &str) -> KnownBuilding {
        KnownBuilding {
            id: id.into(),
            name: name.into(),
            address: String::new(),
        }
    }

    fn lobbies() -> NamedPlaces {
        NamedPlaces {
            rooms: vec![
                room("acme-hq", "hq-lobby", "Lobby"),
                room("globex-tower", "gt-lobby", "Lobby"),
            ],
            ..NamedPlaces::default()
        }
    }

    #[test]
    fn a_room_name_in_several_buildings_is_ambiguous_unless_a_building_is_named() {
        assert_eq!(ambiguous_rooms(&lobbies()).map(<[_]>::len), Some(2));
        let mut with_building = lobbies();
        with_building.buildings = vec![building("acme-hq", "Acme Headquarters")];
        assert_eq!(ambiguous_rooms(&with_building), None);
        let one_building = NamedPlaces {
            rooms: vec![
                room("acme-hq", "hq-101", "Board Room"),
                room("acme-hq", "hq-102", "Board Room"),
            ],
            ..NamedPlaces::default()
        };
        assert_eq!(ambiguous_rooms(&one_building), None);
        assert_eq!(ambiguous_rooms(&NamedPlaces::default()), None);
    }

    #[test]
    fn the_question_back_lists_every_candidate_in_the_asked_language() {
        let buildings = [
            building("acme-hq", "Acme Headquarters"),
            building("globex-tower", "Globex Tower"),
        ];
        let rooms = lobbies().rooms;
        let english = which_one(&rooms, &buildings, None);
        assert_eq!(
            english,
            "Several of your buildings have a Lobby. Which one do you mean: Lobby in Acme \
             Headquarters (acme-hq, hq-lobby) or Lobby in Globex Tower (globex-tower, gt-lobby)?"
        );
        let german = which_one(&rooms, &buildings, Some(Language::German));
        assert!(german.starts_with("Mehrere Ihrer Gebäude"), "{german}");
        assert!(german.contains(" oder Lobby in Globex Tower"), "{german}");
    }
}
