//! The process's telemetry, started once the configuration is known and stopped (sending
//! the last spans) when the command ends.

use anyhow::Result;
use crowdvision_agent::config::{LogFormat, ObservabilityConfig};
use crowdvision_agent::observe::telemetry::{Telemetry, TelemetrySettings, SUMMARY_TARGET};
use std::sync::Mutex;

static STARTED: Mutex<Option<Telemetry>> = Mutex::new(None);
static TRIED: std::sync::Once = std::sync::Once::new();

/// Starts logs and span export from the loaded settings (once per process). `serve` logs one
/// line per request by default; the other commands only warnings.
pub fn start(settings: &ObservabilityConfig, serving: bool) -> Result<()> {
    let default_filter = if serving {
        format!("warn,{SUMMARY_TARGET}=info")
    } else {
        "warn".to_string()
    };
    install(TelemetrySettings {
        log_format: settings.log_format,
        otlp_endpoint: settings.otlp_endpoint.as_ref(),
        payloads: settings.observe_payloads,
        default_filter: &default_filter,
    })
}

/// Logs only, for commands that load no configuration (`LOG_FORMAT` read as is).
pub fn start_from_environment() -> Result<()> {
    let json = std::env::var("LOG_FORMAT").is_ok_and(|v| v.eq_ignore_ascii_case("json"));
    install(TelemetrySettings {
        log_format: if json {
            LogFormat::Json
        } else {
            LogFormat::Pretty
        },
        otlp_endpoint: None,
        payloads: false,
        default_filter: "warn",
    })
}

fn install(settings: TelemetrySettings<'_>) -> Result<()> {
    let mut outcome = Ok(());
    TRIED.call_once(|| match Telemetry::init(settings) {
        Ok(telemetry) => {
            *STARTED.lock().unwrap_or_else(|e| e.into_inner()) = Some(telemetry);
        }
        Err(error) => outcome = Err(error.into()),
    });
    outcome
}

/// Sends what is queued and stops the exporter (bounded wait).
pub fn finish() {
    let started = STARTED.lock().unwrap_or_else(|e| e.into_inner()).take();
    if let Some(telemetry) = started {
        telemetry.shutdown();
    }
}
