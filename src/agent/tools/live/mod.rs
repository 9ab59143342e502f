//! The seven live-data tools over twin-service and sensor-service. They share [`LiveData`]:
//! the two downstream ports, the Cedar authorizer, and the one way to reach a building.
//!
//! Every tool starts with [`LiveData::building`]: a caller who could see no domain at all is
//! answered without any downstream call; otherwise the building is fetched as the caller, and
//! the Cedar `ViewBuilding` decision on its domain is taken before anything else is asked about
//! it. An unknown building, a building of another domain, one the twin refuses to show and an
//! answer about a different building all end in the same [`not_found`] result from the same
//! place. A room must be one of the building's rooms before any sensor-service request.

mod buildings;
mod history;
mod reads;
mod sensors;

pub use buildings::{GetBuilding, GetOccupancy, GetRoom, ListBuildings};
pub use history::{summarise, GetSensorHistory, HistorySummary, MAX_WINDOW_DAYS};
pub use reads::BuildingReads;
pub use sensors::{GetLatestSensorData, ListSensors};

use super::{ToolContext, ToolError, ToolErrorKind};
use crate::auth::authz::Authorizer;
use crate::downstream::{Building, DownstreamError, Room, SensorService, TwinService};
use std::sync::Arc;

/// What every live tool reads through.
#[derive(Clone)]
pub struct LiveData {
    pub twin: Arc<dyn TwinService>,
    pub sensors: Arc<dyn SensorService>,
    pub authz: Arc<Authorizer>,
}

/// A building the caller may see, with the caller's claims header for the requests about it.
pub struct Reached<'a> {
    pub building: Building,
    pub claims: &'a str,
}

impl LiveData {
    /// The building `building_id` when the caller may see it; otherwise [`not_found`].
    pub async fn building<'a>(
        &self,
        context: ToolContext<'a>,
        building_id: &str,
    ) -> Result<Reached<'a>, ToolError> {
        let claims = self.claims_of(context, building_id)?;
        let building = match context.reads.and_then(|reads| reads.get(building_id)) {
            Some(read_before) => read_before,
            None => self.read_building(context, claims, building_id).await?,
        };
        if !self.authz.can_access_domain(context.user, &building.domain) {
            return Err(not_found(building_id));
        }
        Ok(Reached { building, claims })
    }

    /// The building from the twin service as `claims` sees it, kept for the rest of the
    /// answer when it is the one asked for.
    async fn read_building(
        &self,
        context: ToolContext<'_>,
        claims: &str,
        building_id: &str,
    ) -> Result<Building, ToolError> {
        let building = match self.twin.building(claims, building_id).await {
            Ok(building) => building,
            Err(DownstreamError::NotFound(_)) => return Err(not_found(building_id)),
            Err(other) => return Err(unavailable(other)),
        };
        if building.id != building_id {
            return Err(not_found(building_id));
        }
        if let Some(reads) = context.reads {
            reads.keep(&building);
        }
        Ok(building)
    }

    /// As [`LiveData::building`], and when `room_id` is given, that room must be one of the
    /// building's (checked before any further request).
    pub async fn building_with_room<'a>(
        &self,
        context: ToolContext<'a>,
        building_id: &str,
        room_id: Option<&str>,
    ) -> Result<Reached<'a>, ToolError> {
        let reached = self.building(context, building_id).await?;
        if let Some(room_id) = room_id {
            room(&reached.building, room_id)?;
        }
        Ok(reached)
    }

    /// The caller's claims header, when the caller could see any building at all.
    pub fn claims_of<'a>(
        &self,
        context: ToolContext<'a>,
        building_id: &str,
    ) -> Result<&'a str, ToolError> {
        match context.claims {
            Some(claims) if self.authz.can_access_any_domain(context.user) => Ok(claims),
            _ => Err(not_found(building_id)),
        }
    }
}

/// The sensor types the tools describe. A type outside them is not echoed back.
pub const SENSOR_TYPES: &[&str] = &[
    "occupancy",
    "co2",
    "temperature",
    "humidity",
    "noise",
    "light",
    "pm25",
];

/// The note for no sensor of type `wanted` (any type when `None`) installed in `place`. A type
/// the tools do not know is not written back: "no electricity sensor is installed" put the
/// question's subject into the results, and an answer about last month's electricity passed
/// for one drawn from them.
pub fn no_sensor_note(wanted: Option<&str>, place: &str) -> String {
    match wanted {
        None => format!("no sensor is installed in {place}"),
        Some(kind) if SENSOR_TYPES.contains(&kind) => {
            format!("no {kind} sensor is installed in {place}")
        }
        Some(_) => format!(
            "no sensor of the type asked for is installed in {place}; sensor types are {}",
            SENSOR_TYPES.join(", ")
        ),
    }
}

/// The one answer for a building the caller may not see, whether or not it exists. It does not
/// even repeat the id, so two such answers are identical.
pub fn not_found(_building_id: &str) -> ToolError {
    ToolError::new(
        ToolErrorKind::NotFound,
        "no building with that id is available to you; do not guess ids: list_buildings shows \
         the ones that are",
    )
}

/// The room `room_id` of `building`, or an error naming the building's rooms.
pub fn room<'a>(building: &'a Building, room_id: &str) -> Result<&'a Room, ToolError> {
    building
        .rooms
        .iter()
        .find(|room| room.id == room_id)
        .ok_or_else(|| {
            ToolError::new(
                ToolErrorKind::NotFound,
                format!(
                    "building {:?} has no room with id {:?}; get_building lists its rooms",
                    building.id,
                    shorten(room_id)
                ),
            )
        })
}

/// A downstream failure as the model may read it: which service, and what kind of failure.
pub fn unavailable(error: DownstreamError) -> ToolError {
    let kind = match error {
        DownstreamError::Timeout(_) => ToolErrorKind::Timeout,
        _ => ToolErrorKind::Unavailable,
    };
    ToolError::new(kind, error.to_string())
}

/// Identifiers echoed to the model are cut short: they came from the model, not from data.
fn shorten(id: &str) -> String {
    id.chars().take(80).collect()
}

fn room_name<'a>(building: &'a Building, room_id: &str) -> Option<&'a str> {
    building
        .rooms
        .iter()
        .find(|room| room.id == room_id)
        .map(|room| room.name.as_str())
}

/// Logs entries dropped from a downstream answer: the model is not told (they are not data the
/// caller may have), operators are.
fn note_dropped(what: &str, building_id: &str, dropped: usize) {
    if dropped > 0 {
        tracing::warn!(
            what,
            building_id,
            dropped,
            "dropped downstream entries that do not belong to the building or have the wrong shape"
        );
    }
}

#[cfg(test)]
mod note_tests {
    use super::*;

    #[test]
    fn a_sensor_type_the_tools_do_not_know_is_not_written_back() {
        assert_eq!(
            no_sensor_note(Some("co2"), "Storage"),
            "no co2 sensor is installed in Storage"
        );
        assert_eq!(
            no_sensor_note(None, "Storage"),
            "no sensor is installed in Storage"
        );
        let unknown = no_sensor_note(Some("electricity"), "Acme Headquarters");
        assert!(!unknown.contains("electricity"), "{unknown}");
        assert!(unknown.contains("pm25"), "{unknown}");
    }
}
