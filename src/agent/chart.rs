//! What a page may draw from a tool result: a sensor's history as a series, occupancy against
//! capacity as bars. Pure; read from the result the caller was given, nothing added.

use crate::agent::tools::live::{GetOccupancy, GetRoom, GetSensorHistory};
use crate::agent::tools::Tool;
use crate::contract::{Chart, RoomLoad, SeriesPoint};
use serde_json::Value;

/// Points sent at most (a page draws a small chart).
const MAX_POINTS: usize = 500;

/// The chart of `tool`'s result, `None` for tools that have none or results without data.
pub fn from_result(tool: &str, content: &Value) -> Option<Chart> {
    match tool {
        GetSensorHistory::NAME => series(content),
        GetOccupancy::NAME => occupancy(content["rooms"].as_array()?, content),
        GetRoom::NAME => {
            let room = &content["occupancy"];
            room.get("count")?;
            occupancy(std::slice::from_ref(room), content)
        }
        _ => None,
    }
}

fn text(value: &Value) -> Option<String> {
    value.as_str().map(str::to_string)
}

fn series(content: &Value) -> Option<Chart> {
    let raw = content["points"].as_array().into_iter().flatten().map(|p| {
        Some(SeriesPoint {
            at: text(&p["ts"])?,
            value: p["value"].as_f64()?,
            min: None,
            max: None,
        })
    });
    let buckets = content["summary"]["buckets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|b| {
            Some(SeriesPoint {
                at: text(&b["start"])?,
                value: b["mean"].as_f64()?,
                min: b["min"].as_f64(),
                max: b["max"].as_f64(),
            })
        });
    let points: Vec<SeriesPoint> = raw.chain(buckets).flatten().take(MAX_POINTS).collect();
    if points.is_empty() {
        return None;
    }
    let place = text(&content["room_name"])
        .or_else(|| text(&content["room_id"]))
        .unwrap_or_default();
    let sensor = text(&content["sensor_type"]).unwrap_or_default();
    Some(Chart::Series {
        title: format!("{sensor} in {place}"),
        unit: text(&content["unit"]),
        from: text(&content["from"])?,
        to: text(&content["to"])?,
        points,
    })
}

fn occupancy(rooms: &[Value], content: &Value) -> Option<Chart> {
    let rooms: Vec<RoomLoad> = rooms
        .iter()
        .take(MAX_POINTS)
        .filter_map(|r| {
            Some(RoomLoad {
                room: text(&r["room_name"]).or_else(|| text(&r["room_id"]))?,
                count: r["count"].as_u64()?,
                capacity: r["capacity"].as_u64(),
            })
        })
        .collect();
    if rooms.is_empty() {
        return None;
    }
    let building = text(&content["building_name"])
        .or_else(|| text(&content["building_id"]))
        .unwrap_or_default();
    Some(Chart::Occupancy {
        title: format!("People in {building}"),
        rooms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_history_becomes_one_point_per_reading_or_bucket() {
        let raw = json!({"room_name": "Board Room", "sensor_type": "co2", "unit": "ppm",
            "from": "2026-12-01T00:00:00Z", "to": "2026-12-02T00:00:00Z",
            "points": [{"ts": "2026-12-01T01:00:00Z", "value": 612.0},
                       {"ts": "2026-12-01T02:00:00Z", "value": 640.5}]});
        let Some(Chart::Series {
            title,
            unit,
            points,
            ..
        }) = from_result("get_sensor_history", &raw)
        else {
            panic!("a series");
        };
        assert_eq!(title, "co2 in Board Room");
        assert_eq!(unit.as_deref(), Some("ppm"));
        assert_eq!(points.len(), 2);
        let summarised = json!({"room_id": "hq-101", "sensor_type": "temperature", "unit": "°C",
            "from": "a", "to": "b", "summary": {"buckets": [
                {"start": "s1", "end": "e1", "count": 3, "min": 20.0, "max": 22.0, "mean": 21.0},
                {"start": "s2", "end": "e2", "count": 3, "min": 21.0, "max": 23.0, "mean": 22.0},
                {"start": "s3", "end": "e3", "count": 3, "min": 19.0, "max": 20.0, "mean": 19.5}]}});
        let Some(Chart::Series { points, .. }) = from_result("get_sensor_history", &summarised)
        else {
            panic!("a series");
        };
        assert_eq!(points.len(), 3);
        assert_eq!(points[2].min, Some(19.0));
        assert_eq!(
            from_result("get_sensor_history", &json!({"points": []})),
            None
        );
    }

    #[test]
    fn occupancy_becomes_bars_and_other_tools_nothing() {
        let listed = json!({"building_name": "Acme HQ", "rooms": [
            {"room_id": "hq-101", "room_name": "Board Room", "count": 7, "capacity": 12},
            {"room_id": "hq-102", "count": 0, "capacity": null}]});
        let Some(Chart::Occupancy { title, rooms }) = from_result("get_occupancy", &listed) else {
            panic!("bars");
        };
        assert_eq!(title, "People in Acme HQ");
        assert_eq!(rooms[0].capacity, Some(12));
        assert_eq!(rooms[1].room, "hq-102");
        assert_eq!(from_result("list_buildings", &listed), None);
        let room = json!({"building_name": "Acme HQ",
            "occupancy": {"room_id": "hq-101", "count": 3, "capacity": 8}});
        assert!(matches!(
            from_result("get_room", &room),
            Some(Chart::Occupancy { .. })
        ));
        assert_eq!(from_result("get_room", &json!({"occupancy": null})), None);
    }
}
