//! Per-caller admission as data and as a PORT: the limits one caller (`sub`) lives under, why a
//! request is refused, and [`SharedQuota`], the admission that every replica of `serve` reads
//! and writes in one store so that a caller's quota holds however many replicas serve it. The
//! in-process limiter (`server::limits`) and the PostgreSQL adapter
//! (`retrieval::store::quota`) both speak these types.

use async_trait::async_trait;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitSettings {
    /// Answers one caller may have in flight (0: no limit).
    pub in_flight_per_caller: usize,
    /// Requests one caller may start per minute (0: no limit).
    pub requests_per_minute: u32,
    /// Model tokens one caller may spend per hour (0: no limit).
    pub tokens_per_hour: u64,
}

impl LimitSettings {
    /// Nothing is limited: no admission needs recording.
    pub fn unlimited(&self) -> bool {
        self.in_flight_per_caller == 0 && self.requests_per_minute == 0 && self.tokens_per_hour == 0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Too many of this caller's answers are running.
    Busy,
    /// Over the request rate: retry after this long.
    RateLimited(Duration),
    /// The hour's token budget is spent: retry after this long.
    BudgetSpent(Duration),
}

impl Refusal {
    /// Whole seconds to wait, at least one.
    pub fn retry_after_seconds(&self) -> u64 {
        match self {
            Refusal::Busy => 1,
            Refusal::RateLimited(wait) | Refusal::BudgetSpent(wait) => {
                wait.as_secs_f64().ceil().max(1.0) as u64
            }
        }
    }
}

/// The shared store could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("the shared caller limits are unavailable: {0}")]
pub struct QuotaError(pub String);

/// An admitted answer's place among its caller's answers in flight, handed back when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease(pub Option<i64>);

/// PORT: admission held in a store all replicas share, one round trip per admission.
#[async_trait]
pub trait SharedQuota: Send + Sync {
    /// Admits one answer of `caller` under `limits`, or says why not and for how long. The
    /// answer's place in flight is given up by [`SharedQuota::finish`], or by itself after
    /// `lease` (a replica that died mid-answer).
    async fn admit(
        &self,
        caller: &str,
        limits: &LimitSettings,
        lease: Duration,
    ) -> Result<Result<Lease, Refusal>, QuotaError>;

    /// The answer ended, having spent `tokens` model tokens.
    async fn finish(&self, caller: &str, lease: Lease, tokens: u64) -> Result<(), QuotaError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_waits_whole_seconds_and_at_least_one() {
        assert_eq!(Refusal::Busy.retry_after_seconds(), 1);
        assert_eq!(
            Refusal::RateLimited(Duration::from_millis(100)).retry_after_seconds(),
            1
        );
        assert_eq!(
            Refusal::BudgetSpent(Duration::from_millis(2500)).retry_after_seconds(),
            3
        );
    }
}
