//! The wall clock as seconds since the Unix epoch, read in one place (tokens' `iat`/`exp`,
//! completion timestamps and ids). A clock before 1970 reads as 0.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn since_epoch() -> Duration {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
}

/// Seconds since the epoch, with their fraction (token times are checked with it).
pub fn unix_seconds() -> f64 {
    since_epoch().as_secs_f64()
}

/// Whole seconds since the epoch.
pub fn unix_secs() -> u64 {
    since_epoch().as_secs()
}

/// Nanoseconds since the epoch (for ids that should not repeat).
pub fn unix_nanos() -> u128 {
    since_epoch().as_nanos()
}
