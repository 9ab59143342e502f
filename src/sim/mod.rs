//! `sim`: twin-service and sensor-service (contracts §4) served from one fixture on one port,
//! for trying the agent locally, for evaluations and for tests. It is a stand-in for two other
//! services, so it behaves as they would rather than as this project's own code: it requires the
//! `x-gateway-claims` header (401 without a usable one), shows a building only to members of its
//! domain and to admins (404 otherwise, exactly as for an unknown building), logs every request,
//! and can be told to misbehave per route (latency, an error status, malformed JSON, entries of
//! another building in a response) through `PUT /_sim/faults`.

pub mod fixture;
mod server;

pub use fixture::{Fixture, FixtureError};
pub use server::{start, Fault, LoggedRequest, Route, SimHandle};
