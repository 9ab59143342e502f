//! ADAPTERS for [`TwinService`] and [`SensorService`] over HTTP: one pooled reqwest client, the
//! caller's claims header forwarded on every request, `TWIN_TIMEOUT_SECONDS` per request, and
//! bodies read up to [`MAX_BODY_BYTES`]. Identifiers from the model are path segments,
//! percent-encoded, so they can never reach another endpoint.

use super::{
    checked_building, checked_list, Building, BuildingSummary, Checked, DownstreamError,
    HistoryPoint, HistoryQuery, Reading, RoomOccupancy, SensorInfo, SensorService, Service,
    TwinService,
};
use crate::config::DownstreamConfig;
use async_trait::async_trait;
use std::time::Duration;
use url::Url;

/// The header carrying the caller's claims to the downstream services.
pub const CLAIMS_HEADER: &str = "x-gateway-claims";

/// Responses larger than this are refused.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

#[derive(Clone)]
struct Endpoint {
    client: reqwest::Client,
    base: Url,
    service: Service,
}

pub struct HttpTwinService {
    endpoint: Endpoint,
}

pub struct HttpSensorService {
    endpoint: Endpoint,
}

/// Both adapters over one connection pool.
pub fn from_config(config: &DownstreamConfig) -> (HttpTwinService, HttpSensorService) {
    let client = crate::http::client_builder()
        .timeout(config.timeout)
        .connect_timeout(config.timeout.min(Duration::from_secs(5)))
        .build()
        .expect("a reqwest client with timeouts always builds");
    (
        HttpTwinService {
            endpoint: Endpoint {
                client: client.clone(),
                base: config.twin_service_url.clone(),
                service: Service::Twin,
            },
        },
        HttpSensorService {
            endpoint: Endpoint {
                client,
                base: config.sensor_service_url.clone(),
                service: Service::Sensor,
            },
        },
    )
}

/// Whether an identifier can be a path segment: `.` and `..` would be resolved away by URL
/// normalisation and so could address another endpoint; such an identifier names nothing.
fn is_safe_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment != "."
        && segment != ".."
        && segment.len() <= 256
        && !segment.chars().any(char::is_control)
}

impl Endpoint {
    /// The URL of `segments` under the base, or `NotFound` when an identifier cannot be one.
    fn url(&self, segments: &[&str], query: &[(&str, String)]) -> Result<Url, DownstreamError> {
        if !segments.iter().all(|s| is_safe_segment(s)) {
            return Err(DownstreamError::NotFound(self.service));
        }
        let mut url = self.base.clone();
        {
            let mut path = url
                .path_segments_mut()
                .expect("http and https URLs (checked at load) have paths");
            path.pop_if_empty();
            for segment in segments {
                path.push(segment);
            }
        }
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        Ok(url)
    }

    async fn get(&self, claims: &str, url: Url) -> Result<serde_json::Value, DownstreamError> {
        let service = self.service;
        let response = self
            .client
            .get(url)
            .header(CLAIMS_HEADER, claims)
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| transport_error(service, &self.base, e))?;
        let status = response.status();
        if matches!(status.as_u16(), 401 | 403 | 404) {
            return Err(DownstreamError::NotFound(service));
        }
        if !status.is_success() {
            return Err(DownstreamError::Unavailable {
                service,
                status: Some(status.as_u16()),
            });
        }
        let body = crate::http::read_capped(response, MAX_BODY_BYTES)
            .await
            .map_err(|failed| match failed {
                crate::http::CappedBody::TooLarge => DownstreamError::TooLarge(service),
                crate::http::CappedBody::Transport(e) => transport_error(service, &self.base, e),
            })?;
        serde_json::from_slice(&body).map_err(|_| DownstreamError::Malformed(service))
    }
}

/// The model is told only which service failed; the operator's log names where it was looked
/// for and how to get one for trying things out.
fn transport_error(service: Service, base: &Url, error: reqwest::Error) -> DownstreamError {
    if error.is_timeout() {
        DownstreamError::Timeout(service)
    } else {
        let hint = if error.is_connect() {
            "nothing answers there: is it running? `crowdvision-agent sim` serves both \
             services from a built-in campus for trying things out"
        } else {
            "the request failed"
        };
        tracing::warn!(
            %service,
            url = %base,
            error = %error.without_url(),
            "cannot reach {service} at {base}: {hint}"
        );
        DownstreamError::Unavailable {
            service,
            status: None,
        }
    }
}

#[async_trait]
impl TwinService for HttpTwinService {
    async fn buildings(&self, claims: &str) -> Result<Checked<BuildingSummary>, DownstreamError> {
        let url = self.endpoint.url(&["buildings"], &[])?;
        checked_list(self.endpoint.get(claims, url).await?, Service::Twin)
    }

    async fn building(&self, claims: &str, building_id: &str) -> Result<Building, DownstreamError> {
        let url = self.endpoint.url(&["buildings", building_id], &[])?;
        checked_building(self.endpoint.get(claims, url).await?)
    }

    async fn occupancy(
        &self,
        claims: &str,
        building_id: &str,
    ) -> Result<Checked<RoomOccupancy>, DownstreamError> {
        let url = self
            .endpoint
            .url(&["buildings", building_id, "occupancy"], &[])?;
        checked_list(self.endpoint.get(claims, url).await?, Service::Twin)
    }
}

#[async_trait]
impl SensorService for HttpSensorService {
    async fn sensors(
        &self,
        claims: &str,
        building_id: &str,
        room_id: Option<&str>,
    ) -> Result<Checked<SensorInfo>, DownstreamError> {
        let url = match room_id {
            Some(room) => self
                .endpoint
                .url(&["sensors", "buildings", building_id, "rooms", room], &[])?,
            None => self
                .endpoint
                .url(&["sensors", "buildings", building_id], &[])?,
        };
        checked_list(self.endpoint.get(claims, url).await?, Service::Sensor)
    }

    async fn latest(
        &self,
        claims: &str,
        building_id: &str,
        room_id: &str,
    ) -> Result<Checked<Reading>, DownstreamError> {
        let url = self.endpoint.url(
            &[
                "sensors",
                "buildings",
                building_id,
                "rooms",
                room_id,
                "latest",
            ],
            &[],
        )?;
        checked_list(self.endpoint.get(claims, url).await?, Service::Sensor)
    }

    async fn history(
        &self,
        claims: &str,
        query: &HistoryQuery<'_>,
    ) -> Result<Checked<HistoryPoint>, DownstreamError> {
        let url = self.endpoint.url(
            &[
                "sensors",
                "buildings",
                query.building_id,
                "rooms",
                query.room_id,
                "history",
            ],
            &[
                ("sensorType", query.sensor_type.to_string()),
                ("from", query.from.to_rfc3339()),
                ("to", query.to.to_rfc3339()),
            ],
        )?;
        checked_list(self.endpoint.get(claims, url).await?, Service::Sensor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_encoded_as_single_segments() {
        let endpoint = Endpoint {
            client: crate::http::client_builder().build().unwrap(),
            base: Url::parse("http://twin.local:4010/api/").unwrap(),
            service: Service::Twin,
        };
        let url = endpoint
            .url(&["buildings", "../sensors/x?y#z", "occupancy"], &[])
            .unwrap();
        assert_eq!(
            url.as_str(),
            "http://twin.local:4010/api/buildings/..%2Fsensors%2Fx%3Fy%23z/occupancy"
        );
        for unsafe_id in ["..", ".", "", "a\nb"] {
            assert_eq!(
                endpoint.url(&["buildings", unsafe_id], &[]),
                Err(DownstreamError::NotFound(Service::Twin))
            );
        }
        let with_query = endpoint
            .url(&["history"], &[("sensorType", "co2&x=1".into())])
            .unwrap();
        assert_eq!(with_query.query(), Some("sensorType=co2%26x%3D1"));
    }
}
