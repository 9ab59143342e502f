//! `list_buildings`, `get_building`, `get_room` and `get_occupancy`: twin-service data.

use super::{note_dropped, room, room_name, unavailable, LiveData, Reached};
use crate::agent::tools::{result_schema, Tool, ToolContext, ToolError};
use crate::downstream::{Building, RoomOccupancy};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value};

// What a tool that takes nothing reads: fields sent are ignored, not refused. Small models
// fill an empty parameter list with something (qwen2.5-coder-0.5b sends the schema itself,
// `{"type": "object"}`), and nothing they send changes what the call means. (Not a doc
// comment: it would become the schema's description, which the model reads.)
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoArgs {}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BuildingArgs {
    /// Building id (from list_buildings).
    pub building_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RoomArgs {
    /// Building id (from list_buildings).
    pub building_id: String,
    /// Room id (from get_building).
    pub room_id: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OccupancyArgs {
    /// Building id (from list_buildings).
    pub building_id: String,
    /// Room id; omit for every room.
    #[serde(default)]
    pub room_id: Option<String>,
}

pub struct ListBuildings(pub LiveData);
pub struct GetBuilding(pub LiveData);
pub struct GetRoom(pub LiveData);
pub struct GetOccupancy(pub LiveData);

#[async_trait]
impl Tool for ListBuildings {
    type Args = NoArgs;

    const NAME: &'static str = "list_buildings";

    fn output_schema(&self) -> Option<Value> {
        Some(result_schema(&[("buildings", "array")], &["buildings"]))
    }

    fn description(&self) -> &'static str {
        "The buildings the user may see (id, name, domain, address): finds a building's id."
    }

    async fn run(&self, _: NoArgs, context: ToolContext<'_>) -> Result<(Value, String), ToolError> {
        let live = &self.0;
        let claims = match live.claims_of(context, "") {
            Ok(claims) => claims,
            Err(_) => return Ok((json!({"buildings": []}), "0 buildings".into())),
        };
        let listed = live.twin.buildings(claims).await.map_err(unavailable)?;
        let total = listed.items.len();
        let visible: Vec<Value> = listed
            .items
            .into_iter()
            .filter(|b| live.authz.can_access_domain(context.user, &b.domain))
            .map(|b| json!({"id": b.id, "name": b.name, "domain": b.domain, "address": b.address}))
            .collect();
        note_dropped("buildings", "*", listed.dropped + total - visible.len());
        let summary = format!("{} buildings", visible.len());
        Ok((json!({ "buildings": visible }), summary))
    }
}

fn building_json(building: &Building) -> Value {
    json!({
        "id": building.id,
        "name": building.name,
        "domain": building.domain,
        "address": building.address,
        "rooms": building.rooms,
    })
}

#[async_trait]
impl Tool for GetBuilding {
    type Args = BuildingArgs;

    const NAME: &'static str = "get_building";

    fn output_schema(&self) -> Option<Value> {
        Some(result_schema(
            &[
                ("id", "string"),
                ("name", "string"),
                ("domain", "string"),
                ("address", "string|null"),
                ("rooms", "array"),
            ],
            &["id", "name", "rooms"],
        ))
    }

    fn description(&self) -> &'static str {
        "A building's rooms (id, name, floor, capacity)."
    }

    async fn run(
        &self,
        args: BuildingArgs,
        context: ToolContext<'_>,
    ) -> Result<(Value, String), ToolError> {
        let building = self.0.building(context, &args.building_id).await?.building;
        let summary = format!("{} with {} rooms", building.name, building.rooms.len());
        Ok((building_json(&building), summary))
    }
}

#[async_trait]
impl Tool for GetRoom {
    type Args = RoomArgs;

    const NAME: &'static str = "get_room";

    fn output_schema(&self) -> Option<Value> {
        Some(result_schema(
            &[
                ("building_id", "string"),
                ("building_name", "string"),
                ("room", "object"),
                ("occupancy", "object|null"),
            ],
            &["building_id", "room"],
        ))
    }

    fn description(&self) -> &'static str {
        "One room: name, floor, capacity, current occupancy."
    }

    async fn run(
        &self,
        args: RoomArgs,
        context: ToolContext<'_>,
    ) -> Result<(Value, String), ToolError> {
        let live = &self.0;
        let Reached { building, claims } = live.building(context, &args.building_id).await?;
        let found = room(&building, &args.room_id)?.clone();
        // Occupancy is extra: the room is still described when it cannot be had.
        let occupancy = match live.twin.occupancy(claims, &building.id).await {
            Ok(listed) => listed
                .items
                .into_iter()
                .find(|o| o.room_id == found.id)
                .map(|o| occupancy_json(&building, &o)),
            Err(error) => Some(json!({"unavailable": error.to_string()})),
        };
        let summary = format!("{} in {}", found.name, building.name);
        Ok((
            json!({"building_id": building.id, "building_name": building.name, "room": found, "occupancy": occupancy}),
            summary,
        ))
    }
}

fn occupancy_json(building: &Building, occupancy: &RoomOccupancy) -> Value {
    let capacity = occupancy.capacity.or_else(|| {
        building
            .rooms
            .iter()
            .find(|r| r.id == occupancy.room_id)
            .and_then(|r| r.capacity)
    });
    let age_minutes = occupancy
        .updated_at
        .map(|at| (chrono::Utc::now() - at).num_minutes());
    json!({
        "room_id": occupancy.room_id,
        "room_name": room_name(building, &occupancy.room_id),
        "count": occupancy.count,
        "capacity": capacity,
        "updated_at": occupancy.updated_at,
        "age_minutes": age_minutes,
    })
}

#[async_trait]
impl Tool for GetOccupancy {
    type Args = OccupancyArgs;

    const NAME: &'static str = "get_occupancy";

    fn output_schema(&self) -> Option<Value> {
        Some(result_schema(
            &[
                ("building_id", "string"),
                ("building_name", "string"),
                ("rooms", "array"),
                ("total_people", "integer"),
            ],
            &["building_id", "rooms", "total_people"],
        ))
    }

    fn description(&self) -> &'static str {
        "Live people count per room against capacity, for a building or one room."
    }

    async fn run(
        &self,
        args: OccupancyArgs,
        context: ToolContext<'_>,
    ) -> Result<(Value, String), ToolError> {
        let live = &self.0;
        let Reached { building, claims } = live
            .building_with_room(context, &args.building_id, args.room_id.as_deref())
            .await?;
        let listed = live
            .twin
            .occupancy(claims, &building.id)
            .await
            .map_err(unavailable)?;
        let rooms: Vec<Value> = listed
            .items
            .iter()
            .filter(|o| room_name(&building, &o.room_id).is_some())
            .filter(|o| args.room_id.as_ref().is_none_or(|id| *id == o.room_id))
            .map(|o| occupancy_json(&building, o))
            .collect();
        let foreign = listed
            .items
            .iter()
            .filter(|o| room_name(&building, &o.room_id).is_none())
            .count();
        note_dropped("occupancy", &building.id, listed.dropped + foreign);
        let people: u64 = rooms.iter().filter_map(|r| r["count"].as_u64()).sum();
        let summary = format!("{people} people in {} rooms", rooms.len());
        Ok((
            json!({"building_id": building.id, "building_name": building.name, "rooms": rooms, "total_people": people}),
            summary,
        ))
    }
}
