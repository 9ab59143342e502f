//! The simulator's HTTP side: the six downstream routes, the request log and the fault switch.

use super::fixture::{Fixture, Sample, Sensor};
use crate::auth::AuthUser;
use crate::downstream::http::CLAIMS_HEADER;
use crate::downstream::Building;
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The routes faults can be attached to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    Buildings,
    Building,
    Occupancy,
    Sensors,
    Latest,
    History,
    /// Every route.
    All,
}

/// A misbehaviour of one route: applied in this order (wait, then fail, else mangle).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    pub route: Option<Route>,
    /// Wait this long before answering.
    #[serde(default)]
    pub latency_ms: u64,
    /// Answer with this status (and a body naming another tenant, which must never reach a
    /// model).
    #[serde(default)]
    pub status: Option<u16>,
    /// Answer 200 with a body that is not JSON.
    #[serde(default)]
    pub malformed: bool,
    /// Add entries of another building (or, for a building, answer with another building).
    #[serde(default)]
    pub foreign: bool,
}

impl Fault {
    fn applies_to(&self, route: Route) -> bool {
        matches!(self.route, None | Some(Route::All)) || self.route == Some(route)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoggedRequest {
    pub method: String,
    /// Path and query, as received.
    pub path: String,
    /// The caller named by the claims header, when it had a usable one.
    pub sub: Option<String>,
}

/// What the log and the caller check need from a request.
struct Incoming {
    method: String,
    /// Path and query, as received.
    path: String,
    claims: Option<String>,
}

impl<S: Send + Sync> FromRequestParts<S> for Incoming {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Incoming {
            method: parts.method.to_string(),
            path: parts
                .uri
                .path_and_query()
                .map_or(parts.uri.path().to_string(), |p| p.to_string()),
            claims: parts
                .headers
                .get(CLAIMS_HEADER)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string),
        })
    }
}

struct SimState {
    fixture: Fixture,
    faults: Mutex<Vec<Fault>>,
    log: Mutex<Vec<LoggedRequest>>,
}

/// A running simulator.
pub struct SimHandle {
    /// `http://ADDR`, the value for `TWIN_SERVICE_URL` and `SENSOR_SERVICE_URL`.
    pub url: String,
    pub addr: SocketAddr,
    state: Arc<SimState>,
    task: tokio::task::JoinHandle<()>,
}

impl SimHandle {
    pub fn requests(&self) -> Vec<LoggedRequest> {
        self.state.log.lock().expect("log lock").clone()
    }

    pub fn clear_requests(&self) {
        self.state.log.lock().expect("log lock").clear();
    }

    pub fn set_faults(&self, faults: Vec<Fault>) {
        *self.state.faults.lock().expect("faults lock") = faults;
    }

    /// Serves until the server stops (the process is interrupted).
    pub async fn wait(&mut self) {
        let _ = (&mut self.task).await;
    }
}

impl Drop for SimHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Binds `addr` and serves `fixture` in the background.
pub async fn start(fixture: Fixture, addr: SocketAddr) -> std::io::Result<SimHandle> {
    let state = Arc::new(SimState {
        fixture,
        faults: Mutex::new(Vec::new()),
        log: Mutex::new(Vec::new()),
    });
    let app = Router::new()
        .route("/buildings", get(buildings))
        .route("/buildings/{building}", get(building))
        .route("/buildings/{building}/occupancy", get(occupancy))
        .route("/sensors/buildings/{building}", get(building_sensors))
        .route(
            "/sensors/buildings/{building}/rooms/{room}",
            get(room_sensors),
        )
        .route(
            "/sensors/buildings/{building}/rooms/{room}/latest",
            get(latest),
        )
        .route(
            "/sensors/buildings/{building}/rooms/{room}/history",
            get(history),
        )
        .route("/_sim/requests", get(request_log).delete(clear_log))
        .route("/_sim/faults", get(list_faults).put(put_faults))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        if let Err(error) = axum::serve(listener, app).await {
            tracing::error!(%error, "the simulator stopped");
        }
    });
    Ok(SimHandle {
        url: format!("http://{addr}"),
        addr,
        state,
        task,
    })
}

/// What a route answers: its body, and what the `foreign` fault adds to it.
struct Answer {
    body: Value,
    foreign: Foreign,
}

enum Foreign {
    /// Entries appended to a list body.
    Append(Vec<Value>),
    /// A whole other body.
    Replace(Value),
}

type Outcome = Result<Answer, StatusCode>;

/// Logs, applies faults, checks the caller, then runs `answer`.
async fn serve(
    state: &SimState,
    route: Route,
    incoming: Incoming,
    answer: impl FnOnce(&Fixture, &AuthUser) -> Outcome,
) -> Response {
    let caller = incoming
        .claims
        .as_deref()
        .and_then(|v| AuthUser::from_claims(v).ok());
    let entry = LoggedRequest {
        method: incoming.method,
        path: incoming.path,
        sub: caller.as_ref().map(|c| c.sub.clone()),
    };
    tracing::info!(method = %entry.method, path = %entry.path, sub = ?entry.sub, "sim request");
    state.log.lock().expect("log lock").push(entry);

    let faults: Vec<Fault> = state
        .faults
        .lock()
        .expect("faults lock")
        .iter()
        .filter(|f| f.applies_to(route))
        .cloned()
        .collect();
    let latency: u64 = faults.iter().map(|f| f.latency_ms).sum();
    if latency > 0 {
        tokio::time::sleep(Duration::from_millis(latency)).await;
    }
    if let Some(status) = faults.iter().find_map(|f| f.status) {
        let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let leak = json!({"error": "injected failure", "debug": "tenant globex: invoice 4711, room gt-3a badge log"});
        return (status, Json(leak)).into_response();
    }
    let Some(caller) = caller else {
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({"error": "unauthorized"})),
        )
            .into_response();
    };
    let answer = match answer(&state.fixture, &caller) {
        Ok(answer) => answer,
        Err(status) => return (status, Json(json!({"error": "not found"}))).into_response(),
    };
    if faults.iter().any(|f| f.malformed) {
        return (
            StatusCode::OK,
            [("content-type", "application/json")],
            "{\"items\": [",
        )
            .into_response();
    }
    let body = if faults.iter().any(|f| f.foreign) {
        match (answer.body, answer.foreign) {
            (Value::Array(mut items), Foreign::Append(extra)) => {
                items.extend(extra);
                Value::Array(items)
            }
            (_, Foreign::Replace(other)) => other,
            (body, _) => body,
        }
    } else {
        answer.body
    };
    Json(body).into_response()
}

fn may_see(caller: &AuthUser, building: &Building) -> bool {
    caller.roles.iter().any(|r| r == "admin") || caller.domains.contains(&building.domain)
}

/// The building when the caller may see it; 404 exactly as for an unknown one otherwise.
fn visible<'a>(
    fixture: &'a Fixture,
    caller: &AuthUser,
    id: &str,
) -> Result<&'a Building, StatusCode> {
    fixture
        .building(id)
        .filter(|b| may_see(caller, b))
        .ok_or(StatusCode::NOT_FOUND)
}

fn other_building<'a>(fixture: &'a Fixture, id: &str) -> Option<&'a Building> {
    fixture.buildings.iter().find(|b| b.id != id)
}

fn summary(b: &Building) -> Value {
    json!({"id": b.id, "name": b.name, "domain": b.domain, "address": b.address})
}

async fn buildings(State(state): State<Arc<SimState>>, incoming: Incoming) -> Response {
    serve(&state, Route::Buildings, incoming, |fixture, caller| {
        let (shown, hidden): (Vec<&Building>, Vec<&Building>) =
            fixture.buildings.iter().partition(|b| may_see(caller, b));
        Ok(Answer {
            body: Value::Array(shown.into_iter().map(summary).collect()),
            foreign: Foreign::Append(hidden.into_iter().map(summary).collect()),
        })
    })
    .await
}

async fn building(
    State(state): State<Arc<SimState>>,
    Path(id): Path<String>,
    incoming: Incoming,
) -> Response {
    serve(&state, Route::Building, incoming, |fixture, caller| {
        let building = visible(fixture, caller, &id)?;
        let other = other_building(fixture, &id).unwrap_or(building);
        Ok(Answer {
            body: json!(building),
            foreign: Foreign::Replace(json!(other)),
        })
    })
    .await
}

fn occupancy_json(fixture: &Fixture, building_id: &str) -> Vec<Value> {
    fixture
        .occupancy
        .iter()
        .filter(|o| o.building_id == building_id)
        .map(|o| {
            json!({
                "roomId": o.room_id,
                "count": o.count,
                "capacity": fixture.room(building_id, &o.room_id).and_then(|r| r.capacity),
                "updatedAt": o.updated_at,
            })
        })
        .collect()
}

async fn occupancy(
    State(state): State<Arc<SimState>>,
    Path(id): Path<String>,
    incoming: Incoming,
) -> Response {
    serve(&state, Route::Occupancy, incoming, |fixture, caller| {
        let building = visible(fixture, caller, &id)?;
        let other =
            other_building(fixture, &id).map_or(Vec::new(), |b| occupancy_json(fixture, &b.id));
        Ok(Answer {
            body: Value::Array(occupancy_json(fixture, &building.id)),
            foreign: Foreign::Append(other),
        })
    })
    .await
}

fn sensor_json(sensor: &Sensor) -> Value {
    json!({
        "buildingId": sensor.building_id,
        "roomId": sensor.room_id,
        "sensorId": sensor.sensor_id,
        "sensorType": sensor.sensor_type,
    })
}

fn sensors_of<'a>(fixture: &'a Fixture, building: &str, room: Option<&str>) -> Vec<&'a Sensor> {
    fixture
        .sensors
        .iter()
        .filter(|s| s.building_id == building && room.is_none_or(|r| r == s.room_id))
        .collect()
}

fn sensor_answer(fixture: &Fixture, caller: &AuthUser, id: &str, room: Option<&str>) -> Outcome {
    let building = visible(fixture, caller, id)?;
    if let Some(room) = room {
        fixture
            .room(&building.id, room)
            .ok_or(StatusCode::NOT_FOUND)?;
    }
    let other = other_building(fixture, id).map_or(Vec::new(), |b| {
        sensors_of(fixture, &b.id, None)
            .into_iter()
            .map(sensor_json)
            .collect()
    });
    Ok(Answer {
        body: Value::Array(
            sensors_of(fixture, &building.id, room)
                .into_iter()
                .map(sensor_json)
                .collect(),
        ),
        foreign: Foreign::Append(other),
    })
}

async fn building_sensors(
    State(state): State<Arc<SimState>>,
    Path(id): Path<String>,
    incoming: Incoming,
) -> Response {
    serve(&state, Route::Sensors, incoming, |fixture, caller| {
        sensor_answer(fixture, caller, &id, None)
    })
    .await
}

async fn room_sensors(
    State(state): State<Arc<SimState>>,
    Path((id, room)): Path<(String, String)>,
    incoming: Incoming,
) -> Response {
    serve(&state, Route::Sensors, incoming, |fixture, caller| {
        sensor_answer(fixture, caller, &id, Some(&room))
    })
    .await
}

fn reading_json(sensor: &Sensor, sample: &Sample) -> Value {
    json!({
        "sensorId": sensor.sensor_id,
        "sensorType": sensor.sensor_type,
        "value": sample.value,
        "unit": sensor.unit,
        "ts": sample.ts,
    })
}

fn latest_of(fixture: &Fixture, sensors: &[&Sensor]) -> Vec<Value> {
    sensors
        .iter()
        .filter_map(|s| fixture.latest.get(&s.sensor_id).map(|l| reading_json(s, l)))
        .collect()
}

async fn latest(
    State(state): State<Arc<SimState>>,
    Path((id, room)): Path<(String, String)>,
    incoming: Incoming,
) -> Response {
    serve(&state, Route::Latest, incoming, |fixture, caller| {
        let building = visible(fixture, caller, &id)?;
        fixture
            .room(&building.id, &room)
            .ok_or(StatusCode::NOT_FOUND)?;
        let other = other_building(fixture, &id).map_or(Vec::new(), |b| {
            latest_of(fixture, &sensors_of(fixture, &b.id, None))
        });
        Ok(Answer {
            body: Value::Array(latest_of(
                fixture,
                &sensors_of(fixture, &building.id, Some(&room)),
            )),
            foreign: Foreign::Append(other),
        })
    })
    .await
}

fn parse_time(text: Option<&String>) -> Result<Option<DateTime<Utc>>, StatusCode> {
    text.map(|t| {
        DateTime::parse_from_rfc3339(t)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|_| StatusCode::BAD_REQUEST)
    })
    .transpose()
}

async fn history(
    State(state): State<Arc<SimState>>,
    Path((id, room)): Path<(String, String)>,
    Query(query): Query<HashMap<String, String>>,
    incoming: Incoming,
) -> Response {
    serve(&state, Route::History, incoming, |fixture, caller| {
        let building = visible(fixture, caller, &id)?;
        fixture.room(&building.id, &room).ok_or(StatusCode::NOT_FOUND)?;
        let from = parse_time(query.get("from"))?.unwrap_or(DateTime::<Utc>::MIN_UTC);
        let to = parse_time(query.get("to"))?.unwrap_or(DateTime::<Utc>::MAX_UTC);
        let sensor_type = query.get("sensorType").map(String::as_str).unwrap_or("");
        let point = |s: &Sensor, sample: &Sample| json!({"ts": sample.ts, "value": sample.value, "unit": s.unit});
        let mut inside = Vec::new();
        let mut outside = Vec::new();
        for sensor in sensors_of(fixture, &building.id, Some(&room))
            .into_iter()
            .filter(|s| s.sensor_type == sensor_type)
        {
            for sample in fixture.history.get(&sensor.sensor_id).into_iter().flatten() {
                if sample.ts >= from && sample.ts <= to {
                    inside.push(point(sensor, sample));
                } else {
                    outside.push(point(sensor, sample));
                }
            }
        }
        // For histories, "foreign" means points outside the window asked for.
        Ok(Answer {
            body: Value::Array(inside),
            foreign: Foreign::Append(outside),
        })
    })
    .await
}

async fn request_log(State(state): State<Arc<SimState>>) -> Json<Vec<LoggedRequest>> {
    Json(state.log.lock().expect("log lock").clone())
}

async fn clear_log(State(state): State<Arc<SimState>>) -> StatusCode {
    state.log.lock().expect("log lock").clear();
    StatusCode::NO_CONTENT
}

async fn list_faults(State(state): State<Arc<SimState>>) -> Json<Vec<Fault>> {
    Json(state.faults.lock().expect("faults lock").clone())
}

async fn put_faults(
    State(state): State<Arc<SimState>>,
    Json(faults): Json<Vec<Fault>>,
) -> StatusCode {
    tracing::info!(?faults, "sim faults set");
    *state.faults.lock().expect("faults lock") = faults;
    StatusCode::NO_CONTENT
}
