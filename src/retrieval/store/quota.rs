//! ADAPTER: the shared per-caller limits on PostgreSQL. One admission is one call of
//! `admit_caller` (migration 0002), which decides under the caller's row lock; one finished
//! answer is one statement that gives its place back and charges its tokens.

use crate::quota::{Lease, LimitSettings, QuotaError, Refusal, SharedQuota};
use async_trait::async_trait;
use sqlx::postgres::PgPool;
use sqlx::Row;
use std::time::Duration;

pub struct PostgresQuota {
    pool: PgPool,
}

impl PostgresQuota {
    pub fn new(pool: PgPool) -> PostgresQuota {
        PostgresQuota { pool }
    }
}

/// The refusal `admit_caller` named, waiting `seconds`.
fn refusal(reason: &str, seconds: f64) -> Refusal {
    let wait = Duration::from_secs_f64(seconds.max(0.0));
    match reason {
        "busy" => Refusal::Busy,
        "budget" => Refusal::BudgetSpent(wait),
        _ => Refusal::RateLimited(wait),
    }
}

fn unavailable(error: sqlx::Error) -> QuotaError {
    QuotaError(match error {
        sqlx::Error::Database(error) => {
            format!("database error {}", error.code().unwrap_or_default())
        }
        other => other.to_string(),
    })
}

#[async_trait]
impl SharedQuota for PostgresQuota {
    async fn admit(
        &self,
        caller: &str,
        limits: &LimitSettings,
        lease: Duration,
    ) -> Result<Result<Lease, Refusal>, QuotaError> {
        let row = sqlx::query(
            "SELECT admitted, refusal, retry_after, lease FROM admit_caller($1, $2, $3, $4, $5)",
        )
        .bind(caller)
        .bind(i32::try_from(limits.in_flight_per_caller).unwrap_or(i32::MAX))
        .bind(i32::try_from(limits.requests_per_minute).unwrap_or(i32::MAX))
        .bind(i64::try_from(limits.tokens_per_hour).unwrap_or(i64::MAX))
        .bind(lease.as_secs_f64())
        .fetch_one(&self.pool)
        .await
        .map_err(unavailable)?;
        let admitted: bool = row.try_get("admitted").map_err(unavailable)?;
        if admitted {
            return Ok(Ok(Lease(row.try_get("lease").map_err(unavailable)?)));
        }
        let reason: Option<String> = row.try_get("refusal").map_err(unavailable)?;
        let seconds: f64 = row.try_get("retry_after").map_err(unavailable)?;
        Ok(Err(refusal(reason.as_deref().unwrap_or("rate"), seconds)))
    }

    async fn finish(&self, caller: &str, lease: Lease, tokens: u64) -> Result<(), QuotaError> {
        sqlx::query(
            "WITH ended AS (DELETE FROM caller_answers WHERE id = $1)
             UPDATE caller_limits SET tokens = tokens + $3 WHERE sub = $2 AND $3 > 0",
        )
        .bind(lease.0)
        .bind(caller)
        .bind(i64::try_from(tokens).unwrap_or(i64::MAX))
        .execute(&self.pool)
        .await
        .map_err(unavailable)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_of_the_store_reads_as_its_kind() {
        assert_eq!(refusal("busy", 1.0), Refusal::Busy);
        assert_eq!(
            refusal("budget", 30.0),
            Refusal::BudgetSpent(Duration::from_secs(30))
        );
        assert_eq!(
            refusal("rate", 1.5),
            Refusal::RateLimited(Duration::from_millis(1500))
        );
        assert_eq!(refusal("rate", -0.1), Refusal::RateLimited(Duration::ZERO));
    }
}
