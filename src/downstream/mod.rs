//! PORTS `TwinService` and `SensorService`: the live data of buildings, rooms, occupancy and
//! sensors (contracts §4), and their HTTP adapters ([`http`]).
//!
//! Both services are untrusted. Responses are parsed entry by entry: an entry that does not have
//! the documented shape is dropped (and counted), never trusted in part. Which entries belong to
//! the building or room the caller is authorized for is decided by the tools, which know what
//! was asked; this module only guarantees shapes and sizes.

pub mod http;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BuildingSummary {
    pub id: String,
    pub name: String,
    pub domain: String,
    #[serde(default)]
    pub address: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Building {
    pub id: String,
    pub name: String,
    pub domain: String,
    #[serde(default)]
    pub address: Option<String>,
    #[serde(default)]
    pub rooms: Vec<Room>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Room {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub floor: Option<i64>,
    #[serde(default)]
    pub capacity: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RoomOccupancy {
    pub room_id: String,
    pub count: u32,
    #[serde(default)]
    pub capacity: Option<u32>,
    #[serde(default)]
    pub updated_at: Option<DateTime<Utc>>,
}

/// One installed sensor (the device registry), never a measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SensorInfo {
    pub building_id: String,
    pub room_id: String,
    pub sensor_id: String,
    pub sensor_type: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Reading {
    pub sensor_id: String,
    pub sensor_type: String,
    pub value: f64,
    #[serde(default)]
    pub unit: Option<String>,
    pub ts: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryPoint {
    pub ts: DateTime<Utc>,
    pub value: f64,
    #[serde(default)]
    pub unit: Option<String>,
}

/// The sensor and window of a history request.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryQuery<'a> {
    pub building_id: &'a str,
    pub room_id: &'a str,
    pub sensor_type: &'a str,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

/// A list from a downstream service: the entries of the documented shape, and how many were
/// dropped for another shape.
#[derive(Debug, Clone, PartialEq)]
pub struct Checked<T> {
    pub items: Vec<T>,
    pub dropped: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Service {
    #[serde(rename = "twin-service")]
    Twin,
    #[serde(rename = "sensor-service")]
    Sensor,
}

impl std::fmt::Display for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Service::Twin => "twin-service",
            Service::Sensor => "sensor-service",
        })
    }
}

/// What went wrong downstream, in words that carry nothing from the response body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DownstreamError {
    #[error("{0} does not know it, or does not show it to this caller")]
    NotFound(Service),
    #[error("{0} did not answer in time")]
    Timeout(Service),
    #[error("{service} is unavailable{}", .status.map(|s| format!(" (HTTP {s})")).unwrap_or_default())]
    Unavailable {
        service: Service,
        status: Option<u16>,
    },
    #[error("{0} sent a response of the wrong shape")]
    Malformed(Service),
    #[error("{0} sent a response larger than allowed")]
    TooLarge(Service),
}

#[async_trait]
pub trait TwinService: Send + Sync {
    /// `GET /buildings`, as the caller whose claims header is `claims`.
    async fn buildings(&self, claims: &str) -> Result<Checked<BuildingSummary>, DownstreamError>;
    /// `GET /buildings/{id}`, rooms included.
    async fn building(&self, claims: &str, building_id: &str) -> Result<Building, DownstreamError>;
    /// `GET /buildings/{id}/occupancy`.
    async fn occupancy(
        &self,
        claims: &str,
        building_id: &str,
    ) -> Result<Checked<RoomOccupancy>, DownstreamError>;
}

#[async_trait]
pub trait SensorService: Send + Sync {
    /// The device registry of a building, or of one of its rooms.
    async fn sensors(
        &self,
        claims: &str,
        building_id: &str,
        room_id: Option<&str>,
    ) -> Result<Checked<SensorInfo>, DownstreamError>;
    /// The latest reading of each sensor of a room.
    async fn latest(
        &self,
        claims: &str,
        building_id: &str,
        room_id: &str,
    ) -> Result<Checked<Reading>, DownstreamError>;
    /// The readings of one sensor type of a room within a window.
    async fn history(
        &self,
        claims: &str,
        query: &HistoryQuery<'_>,
    ) -> Result<Checked<HistoryPoint>, DownstreamError>;
}

/// Parses a JSON array entry by entry, keeping the entries of type `T` with non-empty ids.
pub fn checked_list<T: serde::de::DeserializeOwned + HasIds>(
    value: serde_json::Value,
    service: Service,
) -> Result<Checked<T>, DownstreamError> {
    let serde_json::Value::Array(entries) = value else {
        return Err(DownstreamError::Malformed(service));
    };
    let total = entries.len();
    let items: Vec<T> = entries
        .into_iter()
        .filter_map(|entry| serde_json::from_value::<T>(entry).ok())
        .filter(|item| item.ids().iter().all(|id| !id.trim().is_empty()))
        .collect();
    Ok(Checked {
        dropped: total - items.len(),
        items,
    })
}

/// The identifiers of an entry, none of which may be blank.
pub trait HasIds {
    fn ids(&self) -> Vec<&str>;
}

impl HasIds for BuildingSummary {
    fn ids(&self) -> Vec<&str> {
        vec![&self.id, &self.domain]
    }
}

impl HasIds for RoomOccupancy {
    fn ids(&self) -> Vec<&str> {
        vec![&self.room_id]
    }
}

impl HasIds for SensorInfo {
    fn ids(&self) -> Vec<&str> {
        vec![
            &self.building_id,
            &self.room_id,
            &self.sensor_id,
            &self.sensor_type,
        ]
    }
}

impl HasIds for Reading {
    fn ids(&self) -> Vec<&str> {
        vec![&self.sensor_id, &self.sensor_type]
    }
}

impl HasIds for HistoryPoint {
    fn ids(&self) -> Vec<&str> {
        Vec::new()
    }
}

/// A building response: its own fields must have the documented shape; rooms of another shape,
/// with blank ids or repeating an id are dropped.
pub fn checked_building(value: serde_json::Value) -> Result<Building, DownstreamError> {
    let malformed = || DownstreamError::Malformed(Service::Twin);
    let serde_json::Value::Object(mut object) = value else {
        return Err(malformed());
    };
    let rooms = object
        .remove("rooms")
        .unwrap_or(serde_json::Value::Array(vec![]));
    let mut building: Building =
        serde_json::from_value(serde_json::Value::Object(object)).map_err(|_| malformed())?;
    if building.id.trim().is_empty() || building.domain.trim().is_empty() {
        return Err(malformed());
    }
    let serde_json::Value::Array(rooms) = rooms else {
        return Err(malformed());
    };
    let mut seen = std::collections::HashSet::new();
    building.rooms = rooms
        .into_iter()
        .filter_map(|room| serde_json::from_value::<Room>(room).ok())
        .filter(|room| !room.id.trim().is_empty() && seen.insert(room.id.clone()))
        .collect();
    Ok(building)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn entries_of_another_shape_are_dropped_and_counted() {
        let list = json!([
            {"buildingId": "b", "roomId": "r", "sensorId": "s1", "sensorType": "co2"},
            {"buildingId": "b", "roomId": "r", "sensorId": "", "sensorType": "co2"},
            {"buildingId": "b", "roomId": "r", "sensorId": 7, "sensorType": "co2"},
            "not an object",
        ]);
        let checked: Checked<SensorInfo> = checked_list(list, Service::Sensor).unwrap();
        assert_eq!(checked.items.len(), 1);
        assert_eq!(checked.dropped, 3);
        assert_eq!(
            checked_list::<SensorInfo>(json!({"sensors": []}), Service::Sensor),
            Err(DownstreamError::Malformed(Service::Sensor))
        );
    }

    #[test]
    fn readings_need_a_number_and_a_timestamp() {
        let list = json!([
            {"sensorId": "s", "sensorType": "co2", "value": 612.0, "unit": "ppm", "ts": "2026-11-30T08:00:00Z"},
            {"sensorId": "s", "sensorType": "co2", "value": "612", "ts": "2026-11-30T08:00:00Z"},
            {"sensorId": "s", "sensorType": "co2", "value": 612.0, "ts": "yesterday"},
        ]);
        let checked: Checked<Reading> = checked_list(list, Service::Sensor).unwrap();
        assert_eq!(checked.items.len(), 1);
        assert_eq!(checked.dropped, 2);
    }

    #[test]
    fn a_building_keeps_only_well_formed_distinct_rooms() {
        let building = checked_building(json!({
            "id": "hq", "name": "HQ", "domain": "acme", "address": "1 Main St",
            "rooms": [
                {"id": "r1", "name": "Lobby", "floor": 0, "capacity": 40},
                {"id": "r1", "name": "Lobby again"},
                {"id": "", "name": "Blank"},
                {"name": "No id"},
            ],
        }))
        .unwrap();
        assert_eq!(building.rooms.len(), 1);
        assert_eq!(building.rooms[0].capacity, Some(40));
        assert!(checked_building(json!({"id": "hq", "name": "HQ"})).is_err());
        assert!(
            checked_building(json!({"id": "hq", "name": "HQ", "domain": "acme", "rooms": {}}))
                .is_err()
        );
        assert!(checked_building(json!([])).is_err());
    }

    #[test]
    fn error_texts_name_the_service_only() {
        let error = DownstreamError::Unavailable {
            service: Service::Sensor,
            status: Some(500),
        };
        assert_eq!(
            error.to_string(),
            "sensor-service is unavailable (HTTP 500)"
        );
    }
}
