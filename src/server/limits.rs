//! Per-caller admission, so that one principal cannot take the service or its provider budget:
//! at most `MAX_IN_FLIGHT_PER_CALLER` answers at once, `REQUESTS_PER_MINUTE` requests in any
//! sliding minute (exact: the start of each request of the last minute is kept) and
//! `TOKENS_PER_HOUR` model tokens (prompt and completion, counted as answers finish, in a
//! fixed hour window). Refusals
//! are 429 with the seconds until the caller may try again; the global bound on answers in
//! flight (503) stays separate.
//!
//! This is the limiter of one process: what `serve` uses over SQLite, and over PostgreSQL while
//! the shared limits in the store (`crate::quota::SharedQuota`) cannot be reached. Pure: the
//! clock is passed in.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Callers tracked at once; past it, idle callers are forgotten first.
const MAX_TRACKED_CALLERS: usize = 100_000;

const MINUTE: Duration = Duration::from_secs(60);
const HOUR: Duration = Duration::from_secs(3600);

pub use crate::quota::{LimitSettings, Refusal};

#[derive(Debug, Clone)]
struct CallerState {
    in_flight: usize,
    /// When each request of the last minute started, oldest first.
    started: VecDeque<Instant>,
    tokens: u64,
    tokens_since: Instant,
}

impl CallerState {
    fn new(now: Instant) -> CallerState {
        CallerState {
            in_flight: 0,
            started: VecDeque::new(),
            tokens: 0,
            tokens_since: now,
        }
    }

    /// Forgets requests older than a minute and a token window older than an hour.
    fn expire(&mut self, now: Instant) {
        while self
            .started
            .front()
            .is_some_and(|at| now.saturating_duration_since(*at) >= MINUTE)
        {
            self.started.pop_front();
        }
        if now.saturating_duration_since(self.tokens_since) >= HOUR {
            self.tokens = 0;
            self.tokens_since = now;
        }
    }

    /// Nothing running and nothing counted: the caller can be forgotten.
    fn idle(&self) -> bool {
        self.in_flight == 0 && self.started.is_empty() && self.tokens == 0
    }
}

/// The per-caller state of one replica.
#[derive(Debug)]
pub struct CallerLimits {
    settings: LimitSettings,
    callers: Mutex<HashMap<String, CallerState>>,
}

/// One admitted answer; the caller's count of answers in flight drops when it is dropped.
#[derive(Debug)]
pub struct Admission {
    limits: Arc<CallerLimits>,
    caller: String,
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut callers = self.limits.lock();
        if let Some(state) = callers.get_mut(&self.caller) {
            state.in_flight = state.in_flight.saturating_sub(1);
        }
    }
}

impl Admission {
    /// The model tokens the admitted answer spent, charged to its caller's hour.
    pub fn spent(&self, tokens: u64) {
        let mut callers = self.limits.lock();
        if let Some(state) = callers.get_mut(&self.caller) {
            state.tokens = state.tokens.saturating_add(tokens);
        }
    }
}

impl CallerLimits {
    pub fn new(settings: LimitSettings) -> Arc<CallerLimits> {
        Arc::new(CallerLimits {
            settings,
            callers: Mutex::new(HashMap::new()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, CallerState>> {
        self.callers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Admits one answer of `caller` at `now`, or says why not and for how long.
    pub fn admit(self: &Arc<Self>, caller: &str, now: Instant) -> Result<Admission, Refusal> {
        let settings = self.settings;
        let mut callers = self.lock();
        if callers.len() >= MAX_TRACKED_CALLERS && !callers.contains_key(caller) {
            for state in callers.values_mut() {
                state.expire(now);
            }
            callers.retain(|_, state| !state.idle());
        }
        let state = callers
            .entry(caller.to_string())
            .or_insert_with(|| CallerState::new(now));
        state.expire(now);
        if settings.in_flight_per_caller > 0 && state.in_flight >= settings.in_flight_per_caller {
            return Err(Refusal::Busy);
        }
        if settings.tokens_per_hour > 0 && state.tokens >= settings.tokens_per_hour {
            let left = HOUR.saturating_sub(now.saturating_duration_since(state.tokens_since));
            return Err(Refusal::BudgetSpent(left));
        }
        if settings.requests_per_minute > 0 {
            if state.started.len() >= settings.requests_per_minute as usize {
                let oldest = state.started.front().copied().unwrap_or(now);
                let wait = MINUTE.saturating_sub(now.saturating_duration_since(oldest));
                return Err(Refusal::RateLimited(wait));
            }
            state.started.push_back(now);
        }
        state.in_flight += 1;
        Ok(Admission {
            limits: self.clone(),
            caller: caller.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(in_flight: usize, per_minute: u32, tokens: u64) -> Arc<CallerLimits> {
        CallerLimits::new(LimitSettings {
            in_flight_per_caller: in_flight,
            requests_per_minute: per_minute,
            tokens_per_hour: tokens,
        })
    }

    #[test]
    fn a_caller_over_its_rate_waits_while_another_is_served() {
        let limits = limits(0, 6, 0);
        let now = Instant::now();
        for i in 0..6 {
            drop(limits.admit("flood", now + Duration::from_secs(i)).unwrap());
        }
        let at = now + Duration::from_secs(20);
        let refused = limits.admit("flood", at).unwrap_err();
        // The oldest of the six leaves the window 40 s later.
        assert_eq!(refused, Refusal::RateLimited(Duration::from_secs(40)));
        assert_eq!(refused.retry_after_seconds(), 40);
        assert!(limits.admit("quiet", at).is_ok());
        // Never more than six in any minute: one comes back as each leaves.
        assert!(limits.admit("flood", now + Duration::from_secs(60)).is_ok());
        assert!(limits
            .admit("flood", now + Duration::from_secs(60))
            .is_err());
        assert!(limits.admit("flood", now + Duration::from_secs(61)).is_ok());
    }

    #[test]
    fn answers_in_flight_are_counted_per_caller_until_dropped() {
        let limits = limits(2, 0, 0);
        let now = Instant::now();
        let first = limits.admit("a", now).unwrap();
        let _second = limits.admit("a", now).unwrap();
        assert_eq!(limits.admit("a", now).unwrap_err(), Refusal::Busy);
        assert!(limits.admit("b", now).is_ok());
        drop(first);
        assert!(limits.admit("a", now).is_ok());
    }

    #[test]
    fn a_spent_token_budget_refuses_until_the_hour_turns() {
        let limits = limits(0, 0, 1000);
        let now = Instant::now();
        limits.admit("a", now).unwrap().spent(600);
        limits.admit("a", now).unwrap().spent(600);
        let later = now + Duration::from_secs(600);
        assert_eq!(
            limits.admit("a", later).unwrap_err(),
            Refusal::BudgetSpent(Duration::from_secs(3000))
        );
        assert!(limits.admit("a", now + HOUR).is_ok());
    }

    #[test]
    fn zero_means_no_limit() {
        let limits = limits(0, 0, 0);
        let now = Instant::now();
        let held: Vec<_> = (0..1000).map(|_| limits.admit("a", now).unwrap()).collect();
        assert_eq!(held.len(), 1000);
    }
}
