//! The simulator's world, read from YAML: buildings with their rooms (the shape twin-service
//! returns), occupancy, the sensor registry, latest readings and histories. Times may be
//! absolute (RFC 3339) or relative to when the fixture is loaded (`-5m`, `-2h`, `-3d`), so a
//! fixture stays "live" whenever it is served. Histories are written out or generated from a
//! deterministic daily curve.

use crate::downstream::{Building, Room};
use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;
use std::collections::{HashMap, HashSet};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum FixtureError {
    #[error("cannot read {path}: {message}")]
    Read { path: String, message: String },
    #[error("the fixture is not valid: {0}")]
    Invalid(String),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFixture {
    buildings: Vec<Building>,
    #[serde(default)]
    occupancy: Vec<RawOccupancy>,
    #[serde(default)]
    sensors: Vec<RawSensor>,
    #[serde(default)]
    latest: Vec<RawLatest>,
    #[serde(default)]
    history: Vec<RawSeries>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawOccupancy {
    building_id: String,
    room_id: String,
    count: u32,
    updated_at: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawSensor {
    building_id: String,
    room_id: String,
    sensor_id: String,
    sensor_type: String,
    unit: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawLatest {
    sensor_id: String,
    value: f64,
    ts: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawSeries {
    sensor_id: String,
    /// When the series starts; it runs until the fixture is loaded.
    start: String,
    every_minutes: i64,
    /// Written-out values, repeated to fill the series; or else the curve below.
    #[serde(default)]
    values: Vec<f64>,
    #[serde(default)]
    base: f64,
    #[serde(default)]
    amplitude: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Occupancy {
    pub building_id: String,
    pub room_id: String,
    pub count: u32,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Sensor {
    pub building_id: String,
    pub room_id: String,
    pub sensor_id: String,
    pub sensor_type: String,
    pub unit: String,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub ts: DateTime<Utc>,
    pub value: f64,
}

/// A loaded fixture, times resolved.
#[derive(Debug, Clone)]
pub struct Fixture {
    pub buildings: Vec<Building>,
    pub occupancy: Vec<Occupancy>,
    pub sensors: Vec<Sensor>,
    /// Sensor id → its latest reading.
    pub latest: HashMap<String, Sample>,
    /// Sensor id → its history, oldest first.
    pub history: HashMap<String, Vec<Sample>>,
}

/// The shipped campus, as YAML.
pub const CAMPUS_YAML: &str = include_str!("../../datasets/sim/campus.yaml");

impl Fixture {
    /// The campus the project ships (`datasets/sim/campus.yaml`), built into the binary so that
    /// `sim` and `eval --sim` work from any folder.
    pub fn campus() -> Fixture {
        Fixture::parse(CAMPUS_YAML, Utc::now()).expect("the shipped campus fixture parses")
    }

    /// The fixture at `path`, or the built-in campus when `path` is `None`.
    pub fn load_or_campus(path: Option<&Path>) -> Result<Fixture, FixtureError> {
        match path {
            Some(path) => Fixture::load(path),
            None => Ok(Fixture::campus()),
        }
    }

    pub fn load(path: &Path) -> Result<Fixture, FixtureError> {
        let text = std::fs::read_to_string(path).map_err(|e| FixtureError::Read {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Fixture::parse(&text, Utc::now())
    }

    /// Parses fixture YAML, resolving relative times against `now`.
    pub fn parse(text: &str, now: DateTime<Utc>) -> Result<Fixture, FixtureError> {
        let raw: RawFixture =
            serde_yaml::from_str(text).map_err(|e| FixtureError::Invalid(e.to_string()))?;
        let fixture = Fixture {
            occupancy: raw
                .occupancy
                .into_iter()
                .map(|o| {
                    Ok(Occupancy {
                        updated_at: time(&o.updated_at, now)?,
                        building_id: o.building_id,
                        room_id: o.room_id,
                        count: o.count,
                    })
                })
                .collect::<Result<_, FixtureError>>()?,
            sensors: raw
                .sensors
                .into_iter()
                .map(|s| Sensor {
                    building_id: s.building_id,
                    room_id: s.room_id,
                    sensor_id: s.sensor_id,
                    sensor_type: s.sensor_type,
                    unit: s.unit,
                })
                .collect(),
            latest: raw
                .latest
                .into_iter()
                .map(|l| {
                    Ok((
                        l.sensor_id,
                        Sample {
                            ts: time(&l.ts, now)?,
                            value: l.value,
                        },
                    ))
                })
                .collect::<Result<_, FixtureError>>()?,
            history: raw
                .history
                .into_iter()
                .map(|s| Ok((s.sensor_id.clone(), series(&s, now)?)))
                .collect::<Result<_, FixtureError>>()?,
            buildings: raw.buildings,
        };
        fixture.check()?;
        Ok(fixture)
    }

    pub fn building(&self, id: &str) -> Option<&Building> {
        self.buildings.iter().find(|b| b.id == id)
    }

    pub fn room(&self, building_id: &str, room_id: &str) -> Option<&Room> {
        self.building(building_id)?
            .rooms
            .iter()
            .find(|r| r.id == room_id)
    }

    pub fn sensor(&self, sensor_id: &str) -> Option<&Sensor> {
        self.sensors.iter().find(|s| s.sensor_id == sensor_id)
    }

    /// Every reference must point at something that exists, and ids must be unique.
    fn check(&self) -> Result<(), FixtureError> {
        let invalid = |message: String| Err(FixtureError::Invalid(message));
        let mut building_ids = HashSet::new();
        for building in &self.buildings {
            if !building_ids.insert(&building.id) {
                return invalid(format!("building {} appears twice", building.id));
            }
            let mut room_ids = HashSet::new();
            for room in &building.rooms {
                if !room_ids.insert(&room.id) {
                    return invalid(format!("room {} appears twice in {}", room.id, building.id));
                }
            }
        }
        for o in &self.occupancy {
            if self.room(&o.building_id, &o.room_id).is_none() {
                return invalid(format!(
                    "occupancy of unknown room {}/{}",
                    o.building_id, o.room_id
                ));
            }
        }
        let mut sensor_ids = HashSet::new();
        for s in &self.sensors {
            if !sensor_ids.insert(&s.sensor_id) {
                return invalid(format!("sensor {} appears twice", s.sensor_id));
            }
            if self.room(&s.building_id, &s.room_id).is_none() {
                return invalid(format!(
                    "sensor {} is in unknown room {}/{}",
                    s.sensor_id, s.building_id, s.room_id
                ));
            }
        }
        for id in self.latest.keys().chain(self.history.keys()) {
            if self.sensor(id).is_none() {
                return invalid(format!("readings for unknown sensor {id}"));
            }
        }
        Ok(())
    }
}

/// RFC 3339, or `-<n><m|h|d>` before `now`.
fn time(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, FixtureError> {
    let text = text.trim();
    if let Some(relative) = text.strip_prefix('-') {
        let (number, unit) = relative.split_at(relative.len().saturating_sub(1));
        let n: i64 = number
            .parse()
            .map_err(|_| FixtureError::Invalid(format!("bad relative time {text:?}")))?;
        let span = match unit {
            "m" => Duration::minutes(n),
            "h" => Duration::hours(n),
            "d" => Duration::days(n),
            _ => return Err(FixtureError::Invalid(format!("bad relative time {text:?}"))),
        };
        return Ok(now - span);
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| FixtureError::Invalid(format!("bad time {text:?}")))
}

/// A series from `start` to `now`: the written values repeated, or a daily curve (low at 04:00,
/// high at 16:00) with a small deterministic wobble.
fn series(raw: &RawSeries, now: DateTime<Utc>) -> Result<Vec<Sample>, FixtureError> {
    if raw.every_minutes < 1 {
        return Err(FixtureError::Invalid(format!(
            "{}: everyMinutes must be at least 1",
            raw.sensor_id
        )));
    }
    let start = time(&raw.start, now)?;
    let step = Duration::minutes(raw.every_minutes);
    let mut samples = Vec::new();
    let mut ts = start;
    let mut i = 0usize;
    while ts <= now && samples.len() < 100_000 {
        let value = if raw.values.is_empty() {
            let hours = ts.timestamp() as f64 / 3600.0;
            let daily = (std::f64::consts::TAU * (hours - 10.0) / 24.0).sin();
            let wobble = ((i * 7919) % 13) as f64 / 13.0 - 0.5;
            raw.base + raw.amplitude * (daily + 0.1 * wobble)
        } else {
            raw.values[i % raw.values.len()]
        };
        samples.push(Sample {
            ts,
            value: (value * 10.0).round() / 10.0,
        });
        ts += step;
        i += 1;
    }
    Ok(samples)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = r#"
buildings:
  - {id: hq, name: HQ, domain: acme, address: 1 Main St, rooms: [{id: r1, name: Lobby, floor: 0, capacity: 10}]}
occupancy:
  - {buildingId: hq, roomId: r1, count: 3, updatedAt: -2m}
sensors:
  - {buildingId: hq, roomId: r1, sensorId: co2-r1, sensorType: co2, unit: ppm}
latest:
  - {sensorId: co2-r1, value: 612, ts: "2026-11-30T08:00:00Z"}
history:
  - {sensorId: co2-r1, start: -1h, everyMinutes: 15, base: 600, amplitude: 100}
"#;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-30T09:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn relative_times_resolve_against_now() {
        let fixture = Fixture::parse(SMALL, now()).unwrap();
        assert_eq!(
            fixture.occupancy[0].updated_at,
            now() - Duration::minutes(2)
        );
        assert_eq!(fixture.latest["co2-r1"].value, 612.0);
        let history = &fixture.history["co2-r1"];
        assert_eq!(history.len(), 5);
        assert_eq!(history[4].ts, now());
        assert!(history.iter().all(|s| (400.0..=800.0).contains(&s.value)));
    }

    #[test]
    fn dangling_references_and_duplicates_are_refused() {
        let dangling = SMALL.replace("roomId: r1, sensorId", "roomId: r9, sensorId");
        assert!(
            matches!(Fixture::parse(&dangling, now()), Err(FixtureError::Invalid(m)) if m.contains("r9"))
        );
        let unknown_field = format!("{SMALL}\nsurprise: 1\n");
        assert!(Fixture::parse(&unknown_field, now()).is_err());
        let bad_time = SMALL.replace("-2m", "-2w");
        assert!(Fixture::parse(&bad_time, now()).is_err());
    }

    #[test]
    fn the_shipped_campus_fixture_loads_and_has_what_tests_need() {
        let fixture = Fixture::campus();
        let domains: HashSet<&str> = fixture
            .buildings
            .iter()
            .map(|b| b.domain.as_str())
            .collect();
        assert!(domains.len() >= 2);
        assert!(fixture.buildings.len() >= 5);
        let rooms: usize = fixture.buildings.iter().map(|b| b.rooms.len()).sum();
        assert!(rooms >= 40, "{rooms} rooms");
        let types: HashSet<&str> = fixture
            .sensors
            .iter()
            .map(|s| s.sensor_type.as_str())
            .collect();
        for documented in crate::agent::tools::live::SENSOR_TYPES {
            assert!(types.contains(documented), "no {documented} sensor");
        }
        let equipped: HashSet<(&str, &str)> = fixture
            .sensors
            .iter()
            .map(|s| (s.building_id.as_str(), s.room_id.as_str()))
            .collect();
        assert!(fixture.buildings.iter().any(|b| b
            .rooms
            .iter()
            .any(|r| !equipped.contains(&(b.id.as_str(), r.id.as_str())))));
        let now = Utc::now();
        assert!(fixture.sensors.iter().any(|s| fixture
            .latest
            .get(&s.sensor_id)
            .is_none_or(|l| now - l.ts > Duration::hours(2))));
        assert!(fixture.history.values().any(|h| h.len() > 100));
    }
}
