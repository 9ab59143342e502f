//! The live-data tools against the simulator on loopback: latency of each tool through the
//! registry (argument check, Cedar, HTTP to the sim, validation, JSON for the model), and the
//! time an unknown building and a building of another domain take, which should not tell them
//! apart.
//!
//! `cargo bench --bench live_tools` (`CALLS=300` per case).

use crowdvision_agent::agent::tools::live::LiveData;
use crowdvision_agent::agent::tools::registry::ToolRegistry;
use crowdvision_agent::agent::tools::{register_live_tools, ToolContext};
use crowdvision_agent::auth::authz::Authorizer;
use crowdvision_agent::auth::identity::Caller;
use crowdvision_agent::auth::AuthUser;
use crowdvision_agent::config::{Config, RawSettings};
use crowdvision_agent::downstream::http;
use crowdvision_agent::sim::{self, Fixture};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

async fn measure(
    registry: &ToolRegistry,
    caller: &Caller,
    tool: &str,
    arguments: &Value,
    calls: usize,
) -> (Vec<Duration>, bool) {
    let mut times = Vec::with_capacity(calls);
    let mut ok = true;
    for i in 0..calls + calls / 10 {
        let started = Instant::now();
        let outcome = registry
            .call(tool, arguments.clone(), ToolContext::for_caller(caller))
            .await;
        let elapsed = started.elapsed();
        ok &= outcome.ok;
        if i >= calls / 10 {
            times.push(elapsed);
        }
    }
    times.sort();
    (times, ok)
}

fn quantile(times: &[Duration], q: f64) -> f64 {
    times[((times.len() as f64 * q) as usize).min(times.len() - 1)].as_secs_f64() * 1e3
}

#[tokio::main]
async fn main() {
    let calls: usize = std::env::var("CALLS").map_or(300, |v| v.parse().unwrap());
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let fixture = Fixture::load(&root.join("datasets/sim/campus.yaml")).unwrap();
    let sim = sim::start(fixture, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let config = Config::from_raw(&RawSettings::from_pairs([
        ("TWIN_SERVICE_URL", sim.url.as_str()),
        ("SENSOR_SERVICE_URL", sim.url.as_str()),
    ]))
    .unwrap();
    let (twin, sensors) = http::from_config(&config.downstream);
    let data = LiveData {
        twin: Arc::new(twin),
        sensors: Arc::new(sensors),
        authz: Arc::new(Authorizer::from_config(&config)),
    };
    let mut registry = ToolRegistry::new(Duration::from_secs(10));
    register_live_tools(&mut registry, &data);
    let ana = Caller::minted(
        AuthUser::from_claims(
            r#"{"sub":"ana","memberships":[{"domain":"acme","role":"business_staff"}]}"#,
        )
        .unwrap(),
    );
    let cases: Vec<(&str, &str, Value)> = vec![
        ("list_buildings", "list_buildings", json!({})),
        (
            "get_building",
            "get_building",
            json!({"building_id": "acme-hq"}),
        ),
        (
            "get_room",
            "get_room",
            json!({"building_id": "acme-hq", "room_id": "hq-101"}),
        ),
        (
            "get_occupancy",
            "get_occupancy",
            json!({"building_id": "acme-hq"}),
        ),
        (
            "list_sensors",
            "list_sensors",
            json!({"building_id": "acme-hq"}),
        ),
        (
            "get_latest_sensor_data (room)",
            "get_latest_sensor_data",
            json!({"building_id": "acme-hq", "room_id": "hq-101"}),
        ),
        (
            "get_latest_sensor_data (building, 11 rooms)",
            "get_latest_sensor_data",
            json!({"building_id": "acme-hq"}),
        ),
        (
            "get_sensor_history (24 h, summarised)",
            "get_sensor_history",
            json!({"building_id": "acme-hq", "room_id": "hq-101", "sensor_type": "co2"}),
        ),
        (
            "get_building, other domain",
            "get_building",
            json!({"building_id": "globex-tower"}),
        ),
        (
            "get_building, unknown",
            "get_building",
            json!({"building_id": "globex-tower-x"}),
        ),
    ];
    println!("| case | calls | ok | p50 | p90 | p99 |");
    println!("|---|---:|---|---:|---:|---:|");
    for (label, tool, arguments) in cases {
        let (times, ok) = measure(&registry, &ana, tool, &arguments, calls).await;
        println!(
            "| {label} | {} | {} | {:.2} ms | {:.2} ms | {:.2} ms |",
            times.len(),
            if ok { "yes" } else { "no" },
            quantile(&times, 0.5),
            quantile(&times, 0.9),
            quantile(&times, 0.99),
        );
    }
}
