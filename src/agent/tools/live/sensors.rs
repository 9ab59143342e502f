//! `list_sensors` (what is installed) and `get_latest_sensor_data` (what it reads now). Both
//! check the inventory against the building's rooms, so that "no sensor installed" and "no
//! reading right now" are different answers.

use super::{no_sensor_note, note_dropped, room_name, unavailable, LiveData, Reached};
use crate::agent::tools::{result_schema, Tool, ToolContext, ToolError};
use crate::downstream::{Building, Reading, SensorInfo};
use async_trait::async_trait;
use chrono::Utc;
use futures::{StreamExt, TryStreamExt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::HashSet;

/// A reading older than this is marked stale.
const STALE_AFTER_MINUTES: i64 = 60;

/// Rooms read at once for a building-wide request.
const ROOMS_IN_FLIGHT: usize = 4;

/// Rooms read for one building-wide request at most; the rest are named as not read.
const MAX_ROOMS_READ: usize = 40;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSensorsArgs {
    /// Building id (from list_buildings).
    pub building_id: String,
    /// Room id; omit for every room.
    #[serde(default)]
    pub room_id: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatestArgs {
    /// Building id (from list_buildings).
    pub building_id: String,
    /// Room id; omit for every room with sensors.
    #[serde(default)]
    pub room_id: Option<String>,
    /// Only this type: occupancy, co2, temperature, humidity, noise, light or pm25.
    #[serde(default)]
    pub sensor_type: Option<String>,
}

pub struct ListSensors(pub LiveData);
pub struct GetLatestSensorData(pub LiveData);

/// The building's installed sensors (of one room when given) that really are in its rooms.
async fn inventory(
    live: &LiveData,
    claims: &str,
    building: &Building,
    room_id: Option<&str>,
) -> Result<Vec<SensorInfo>, ToolError> {
    let listed = live
        .sensors
        .sensors(claims, &building.id, room_id)
        .await
        .map_err(unavailable)?;
    let (kept, foreign): (Vec<SensorInfo>, Vec<SensorInfo>) =
        listed.items.into_iter().partition(|sensor| {
            sensor.building_id == building.id
                && room_name(building, &sensor.room_id).is_some()
                && room_id.is_none_or(|id| id == sensor.room_id)
        });
    note_dropped("sensors", &building.id, listed.dropped + foreign.len());
    Ok(kept)
}

fn sensor_json(building: &Building, sensor: &SensorInfo) -> Value {
    json!({
        "sensor_id": sensor.sensor_id,
        "sensor_type": sensor.sensor_type,
        "room_id": sensor.room_id,
        "room_name": room_name(building, &sensor.room_id),
    })
}

#[async_trait]
impl Tool for ListSensors {
    type Args = ListSensorsArgs;

    const NAME: &'static str = "list_sensors";

    fn output_schema(&self) -> Option<Value> {
        Some(result_schema(
            &[
                ("building_id", "string"),
                ("sensors", "array"),
                ("rooms_without_sensors", "array"),
            ],
            &["building_id", "sensors", "rooms_without_sensors"],
        ))
    }

    fn description(&self) -> &'static str {
        "Sensors installed in a building or room (id, type, room), without values: tells 'no \
         sensor installed' from 'no reading'."
    }

    async fn run(
        &self,
        args: ListSensorsArgs,
        context: ToolContext<'_>,
    ) -> Result<(Value, String), ToolError> {
        let live = &self.0;
        let Reached { building, claims } = live
            .building_with_room(context, &args.building_id, args.room_id.as_deref())
            .await?;
        let sensors = inventory(live, claims, &building, args.room_id.as_deref()).await?;
        let equipped: HashSet<&str> = sensors.iter().map(|s| s.room_id.as_str()).collect();
        let without: Vec<Value> = building
            .rooms
            .iter()
            .filter(|r| args.room_id.as_ref().is_none_or(|id| *id == r.id))
            .filter(|r| !equipped.contains(r.id.as_str()))
            .map(|r| json!({"room_id": r.id, "room_name": r.name}))
            .collect();
        let listed: Vec<Value> = sensors.iter().map(|s| sensor_json(&building, s)).collect();
        let summary = format!(
            "{} sensors; {} rooms without sensors",
            listed.len(),
            without.len()
        );
        Ok((
            json!({"building_id": building.id, "sensors": listed, "rooms_without_sensors": without}),
            summary,
        ))
    }
}

#[async_trait]
impl Tool for GetLatestSensorData {
    type Args = LatestArgs;

    const NAME: &'static str = "get_latest_sensor_data";

    fn output_schema(&self) -> Option<Value> {
        Some(result_schema(
            &[
                ("building_id", "string"),
                ("readings", "array"),
                ("sensors_without_reading", "array"),
                ("rooms_not_read", "array"),
                ("note", "string"),
            ],
            &["building_id", "readings", "sensors_without_reading"],
        ))
    }

    fn description(&self) -> &'static str {
        "Latest reading of each sensor of a room or building (value, unit, time, age), \
         optionally of one type."
    }

    async fn run(
        &self,
        args: LatestArgs,
        context: ToolContext<'_>,
    ) -> Result<(Value, String), ToolError> {
        let live = &self.0;
        let Reached { building, claims } = live
            .building_with_room(context, &args.building_id, args.room_id.as_deref())
            .await?;
        let wanted_type = args.sensor_type.as_deref().map(str::to_ascii_lowercase);
        let installed = inventory(live, claims, &building, args.room_id.as_deref()).await?;
        let sensors: Vec<SensorInfo> = installed
            .iter()
            .filter(|s| {
                wanted_type
                    .as_deref()
                    .is_none_or(|t| s.sensor_type.eq_ignore_ascii_case(t))
            })
            .cloned()
            .collect();
        if sensors.is_empty() {
            let place = args
                .room_id
                .as_deref()
                .and_then(|id| room_name(&building, id))
                .unwrap_or(&building.name);
            let note = no_sensor_note(wanted_type.as_deref(), place);
            // `not_installed` tells "no such sensor" apart from "no recent reading".
            return Ok((
                json!({"building_id": building.id, "readings": [], "sensors_without_reading": [],
                       "not_installed": {"sensor_type": wanted_type, "room_id": args.room_id,
                                         "room_name": place},
                       "note": note}),
                note,
            ));
        }
        let mut rooms: Vec<&str> = Vec::new();
        for sensor in &sensors {
            if !rooms.contains(&sensor.room_id.as_str()) {
                rooms.push(&sensor.room_id);
            }
        }
        let not_read: Vec<&str> = rooms.split_off(rooms.len().min(MAX_ROOMS_READ));
        let reads: Vec<_> = rooms
            .iter()
            // Checked against every installed sensor: a reading of another type is not foreign,
            // only not wanted (latest_json keeps the wanted type).
            .map(|room_id| room_readings(live, claims, &building, room_id, &installed))
            .collect();
        let per_room: Vec<Vec<Reading>> = futures::stream::iter(reads)
            .buffered(ROOMS_IN_FLIGHT)
            .try_collect()
            .await?;
        Ok(latest_json(
            &building, &sensors, &rooms, per_room, &not_read,
        ))
    }
}

/// The latest readings of one room, keeping only sensors the inventory places in that room.
async fn room_readings(
    live: &LiveData,
    claims: &str,
    building: &Building,
    room_id: &str,
    sensors: &[SensorInfo],
) -> Result<Vec<Reading>, ToolError> {
    let listed = live
        .sensors
        .latest(claims, &building.id, room_id)
        .await
        .map_err(unavailable)?;
    let (kept, foreign): (Vec<Reading>, Vec<Reading>) =
        listed.items.into_iter().partition(|reading| {
            sensors
                .iter()
                .any(|s| s.room_id == room_id && s.sensor_id == reading.sensor_id)
        });
    note_dropped("readings", &building.id, listed.dropped + foreign.len());
    Ok(kept)
}

fn latest_json(
    building: &Building,
    sensors: &[SensorInfo],
    rooms: &[&str],
    per_room: Vec<Vec<Reading>>,
    not_read: &[&str],
) -> (Value, String) {
    let now = Utc::now();
    let mut readings = Vec::new();
    let mut read_sensors: HashSet<(&str, &str)> = HashSet::new();
    for (room_id, room_readings) in rooms.iter().zip(&per_room) {
        for reading in room_readings {
            let Some(sensor) = sensors
                .iter()
                .find(|s| s.room_id == *room_id && s.sensor_id == reading.sensor_id)
            else {
                continue;
            };
            read_sensors.insert((room_id, &sensor.sensor_id));
            let age = (now - reading.ts).num_minutes();
            readings.push(json!({
                "room_id": room_id,
                "room_name": room_name(building, room_id),
                "sensor_id": reading.sensor_id,
                "sensor_type": sensor.sensor_type,
                "value": reading.value,
                "unit": reading.unit,
                "ts": reading.ts,
                "age_minutes": age,
                "stale": age > STALE_AFTER_MINUTES,
            }));
        }
    }
    let without: Vec<Value> = sensors
        .iter()
        .filter(|s| rooms.contains(&s.room_id.as_str()))
        .filter(|s| !read_sensors.contains(&(s.room_id.as_str(), s.sensor_id.as_str())))
        .map(|s| sensor_json(building, s))
        .collect();
    let summary = format!(
        "{} readings; {} sensors without a reading",
        readings.len(),
        without.len()
    );
    let mut body = json!({
        "building_id": building.id,
        "readings": readings,
        "sensors_without_reading": without,
    });
    if !not_read.is_empty() {
        body["rooms_not_read"] = json!(not_read);
    }
    (body, summary)
}
