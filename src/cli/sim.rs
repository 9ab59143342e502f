//! `sim --fixture FILE --bind ADDR`: twin-service and sensor-service from a YAML fixture on one
//! port, until Ctrl-C. Point `TWIN_SERVICE_URL` and `SENSOR_SERVICE_URL` at it.

use anyhow::{Context, Result};
use clap::Args;
use crowdvision_agent::sim::{self, Fixture};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct SimArgs {
    /// The world to serve: buildings, rooms, occupancy, sensors, readings [default: the built-in
    /// campus of datasets/sim/campus.yaml]
    #[arg(long, value_name = "FILE")]
    fixture: Option<PathBuf>,
    /// Address to listen on.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:4010")]
    bind: SocketAddr,
}

pub async fn run(args: SimArgs) -> Result<ExitCode> {
    let fixture = Fixture::load_or_campus(args.fixture.as_deref())?;
    let rooms: usize = fixture.buildings.iter().map(|b| b.rooms.len()).sum();
    let summary = format!(
        "{} buildings, {rooms} rooms, {} sensors",
        fixture.buildings.len(),
        fixture.sensors.len()
    );
    let mut handle = sim::start(fixture, args.bind)
        .await
        .with_context(|| format!("cannot listen on {}", args.bind))?;
    let url = &handle.url;
    eprintln!(
        "sim: serving {} ({summary}) at {url}\n  TWIN_SERVICE_URL={url} SENSOR_SERVICE_URL={url}\n  \
         request log: GET {url}/_sim/requests · faults: PUT {url}/_sim/faults · Ctrl-C stops",
        args.fixture
            .as_deref()
            .map_or("the built-in campus".into(), |p| p.display().to_string()),
    );
    tokio::select! {
        _ = handle.wait() => {}
        _ = tokio::signal::ctrl_c() => eprintln!("sim: stopped"),
    }
    Ok(ExitCode::SUCCESS)
}
