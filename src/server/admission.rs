//! One caller's admission for one answer. Over a store that every replica shares (PostgreSQL)
//! the caller's limits are read and written there, one round trip per admission, so a quota
//! holds whatever number of replicas serves the caller. Over SQLite, and whenever the shared
//! limits cannot be reached (logged as a warning), this replica's own limiter decides: a store
//! outage then limits each replica on its own instead of refusing everyone.

use super::AppState;
use crate::quota::{Lease, Refusal, SharedQuota};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long after its request deadline an answer's place in flight outlives a replica that
/// died before giving it back.
const LEASE_MARGIN: Duration = Duration::from_secs(30);

/// An admitted answer; its place among the caller's answers in flight is given back when this
/// is dropped, with the tokens it spent.
pub enum Admission {
    Local(super::limits::Admission),
    Shared(SharedAdmission),
}

pub struct SharedAdmission {
    quota: Arc<dyn SharedQuota>,
    caller: String,
    lease: Lease,
    tokens: AtomicU64,
}

impl Admission {
    /// The model tokens the admitted answer spent, charged to its caller's hour.
    pub fn spent(&self, tokens: u64) {
        match self {
            Admission::Local(admission) => admission.spent(tokens),
            Admission::Shared(admission) => {
                admission.tokens.fetch_add(tokens, Ordering::Relaxed);
            }
        }
    }
}

impl Drop for SharedAdmission {
    fn drop(&mut self) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return; // no runtime left: the lease runs out by itself
        };
        let quota = self.quota.clone();
        let caller = std::mem::take(&mut self.caller);
        let (lease, tokens) = (self.lease, self.tokens.load(Ordering::Relaxed));
        runtime.spawn(async move {
            if let Err(error) = quota.finish(&caller, lease, tokens).await {
                tracing::warn!(%error, "an answer's end could not be recorded in the shared limits");
            }
        });
    }
}

/// Admits one answer of `caller`, or says why not and for how long.
pub async fn admit(state: &AppState, caller: &str) -> Result<Admission, Refusal> {
    let limits = state.settings.limits;
    if let (Some(quota), false) = (&state.quota, limits.unlimited()) {
        let lease = state.settings.request_timeout + LEASE_MARGIN;
        match quota.admit(caller, &limits, lease).await {
            Ok(Ok(lease)) => {
                return Ok(Admission::Shared(SharedAdmission {
                    quota: quota.clone(),
                    caller: caller.to_string(),
                    lease,
                    tokens: AtomicU64::new(0),
                }))
            }
            Ok(Err(refusal)) => return Err(refusal),
            Err(error) => {
                tracing::warn!(%error, "shared caller limits unavailable: this replica's own apply")
            }
        }
    }
    state
        .limits
        .admit(caller, std::time::Instant::now())
        .map(Admission::Local)
}
