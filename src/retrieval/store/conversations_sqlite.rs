//! ADAPTER: conversations in the SQLite store's database (migration 0003).

use crate::auth::AuthUser;
use crate::conversations::{
    decision_of, from_json, title_of, to_json, Conversation, ConversationError, ConversationStore,
    Feedback, FeedbackRecord, ListQuery, NewShare, Rating, Reason, Share, Shared, Summary, Turn,
};
use async_trait::async_trait;
use sqlx::sqlite::{SqlitePool, SqliteRow};
use sqlx::Row;

pub struct SqliteConversations {
    pool: SqlitePool,
}

impl SqliteConversations {
    pub fn new(pool: SqlitePool) -> SqliteConversations {
        SqliteConversations { pool }
    }
}

fn failed(error: sqlx::Error) -> ConversationError {
    ConversationError(match error {
        sqlx::Error::Database(error) => {
            format!("database error {}", error.code().unwrap_or_default())
        }
        other => other.to_string(),
    })
}

const SUMMARY_COLUMNS: &str = "c.id, c.title, c.created_ms, c.updated_ms, \
     (SELECT count(*) FROM conversation_turns t WHERE t.conversation_id = c.id) AS turns";

fn summary(row: &SqliteRow) -> Result<Summary, sqlx::Error> {
    Ok(Summary {
        id: row.try_get("id")?,
        title: row.try_get("title")?,
        created_ms: row.try_get("created_ms")?,
        updated_ms: row.try_get("updated_ms")?,
        turn_count: row.try_get("turns")?,
    })
}

fn turn(row: &SqliteRow) -> Result<Turn, sqlx::Error> {
    Ok(Turn {
        id: row.try_get("id")?,
        question: row.try_get("question")?,
        answer: row.try_get("answer")?,
        citations: from_json(row.try_get::<&str, _>("citations")?),
        decision: decision_of(row.try_get("decision")?),
        model: row.try_get("model")?,
        usage: from_json(row.try_get::<&str, _>("usage")?),
        trace_id: row.try_get("trace_id")?,
        language: row.try_get("language")?,
        at_ms: row.try_get("at_ms")?,
        live: row
            .try_get::<Option<&str>, _>("live")?
            .and_then(|text| serde_json::from_str(text).ok()),
    })
}

fn share(row: &SqliteRow) -> Result<Share, sqlx::Error> {
    Ok(Share {
        id: row.try_get("id")?,
        conversation_id: row.try_get("conversation_id")?,
        created_ms: row.try_get("created_ms")?,
        expires_ms: row.try_get("expires_ms")?,
        public: row.try_get("public")?,
    })
}

async fn turns_of(pool: &SqlitePool, conversation_id: &str) -> Result<Vec<Turn>, sqlx::Error> {
    let rows =
        sqlx::query("SELECT * FROM conversation_turns WHERE conversation_id = ? ORDER BY id")
            .bind(conversation_id)
            .fetch_all(pool)
            .await?;
    rows.iter().map(turn).collect()
}

/// The tables holding a conversation's parts, deleted explicitly with it (whatever the
/// connection's foreign-key setting), feedback before the turns it names.
const DEPENDENTS: [&str; 3] = [
    "answer_feedback",
    "conversation_shares",
    "conversation_turns",
];

#[async_trait]
impl ConversationStore for SqliteConversations {
    async fn create(
        &self,
        owner: &str,
        id: &str,
        title: &str,
        now_ms: i64,
    ) -> Result<Summary, ConversationError> {
        sqlx::query(
            "INSERT INTO conversations (id, owner, title, created_ms, updated_ms) VALUES (?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(owner)
        .bind(title)
        .bind(now_ms)
        .bind(now_ms)
        .execute(&self.pool)
        .await
        .map_err(failed)?;
        Ok(Summary {
            id: id.to_string(),
            title: title.to_string(),
            created_ms: now_ms,
            updated_ms: now_ms,
            turn_count: 0,
        })
    }

    async fn append(
        &self,
        owner: &str,
        id: &str,
        turn: &Turn,
        since_ms: i64,
    ) -> Result<Option<i64>, ConversationError> {
        let mut tx = self.pool.begin().await.map_err(failed)?;
        let touched = sqlx::query(
            "UPDATE conversations SET updated_ms = max(updated_ms, ?), \
             title = CASE WHEN title = '' THEN ? ELSE title END \
             WHERE id = ? AND owner = ? AND updated_ms >= ?",
        )
        .bind(turn.at_ms)
        .bind(title_of(&turn.question))
        .bind(id)
        .bind(owner)
        .bind(since_ms)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        if touched.rows_affected() == 0 {
            return Ok(None);
        }
        let inserted = sqlx::query(
            "INSERT INTO conversation_turns (conversation_id, question, answer, citations, \
             decision, model, usage, trace_id, language, at_ms, live) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(id)
        .bind(&turn.question)
        .bind(&turn.answer)
        .bind(to_json(&turn.citations))
        .bind(turn.decision.as_str())
        .bind(&turn.model)
        .bind(to_json(&turn.usage))
        .bind(&turn.trace_id)
        .bind(&turn.language)
        .bind(turn.at_ms)
        .bind(turn.live.as_ref().map(to_json))
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        Ok(Some(inserted.last_insert_rowid()))
    }

    async fn get(
        &self,
        owner: &str,
        id: &str,
        since_ms: i64,
    ) -> Result<Option<Conversation>, ConversationError> {
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM conversations c \
             WHERE c.id = ? AND c.owner = ? AND c.updated_ms >= ?"
        );
        let Some(row) = sqlx::query(&sql)
            .bind(id)
            .bind(owner)
            .bind(since_ms)
            .fetch_optional(&self.pool)
            .await
            .map_err(failed)?
        else {
            return Ok(None);
        };
        let turns = turns_of(&self.pool, id).await.map_err(failed)?;
        Ok(Some(Conversation {
            summary: summary(&row).map_err(failed)?,
            turns,
        }))
    }

    async fn list(
        &self,
        owner: &str,
        query: &ListQuery,
    ) -> Result<Vec<Summary>, ConversationError> {
        let matches = " AND (lower(c.title) LIKE ? ESCAPE '\\' OR EXISTS (SELECT 1 FROM \
             conversation_turns t WHERE t.conversation_id = c.id AND (lower(t.question) LIKE ? \
             ESCAPE '\\' OR lower(t.answer) LIKE ? ESCAPE '\\')))";
        let sql = format!(
            "SELECT {SUMMARY_COLUMNS} FROM conversations c WHERE c.owner = ? AND c.updated_ms >= ?{} \
             ORDER BY c.updated_ms DESC, c.id LIMIT ? OFFSET ?",
            matches.repeat(query.words.len())
        );
        let mut select = sqlx::query(&sql).bind(owner).bind(query.since_ms);
        for word in &query.words {
            select = select.bind(word).bind(word).bind(word);
        }
        let rows = select
            .bind(i64::from(query.limit))
            .bind(i64::from(query.offset))
            .fetch_all(&self.pool)
            .await
            .map_err(failed)?;
        rows.iter()
            .map(summary)
            .collect::<Result<_, _>>()
            .map_err(failed)
    }

    async fn rename(
        &self,
        owner: &str,
        id: &str,
        title: &str,
        since_ms: i64,
    ) -> Result<bool, ConversationError> {
        let renamed = sqlx::query(
            "UPDATE conversations SET title = ? WHERE id = ? AND owner = ? AND updated_ms >= ?",
        )
        .bind(title)
        .bind(id)
        .bind(owner)
        .bind(since_ms)
        .execute(&self.pool)
        .await
        .map_err(failed)?;
        Ok(renamed.rows_affected() > 0)
    }

    async fn delete(&self, owner: &str, id: &str) -> Result<bool, ConversationError> {
        let mut tx = self.pool.begin().await.map_err(failed)?;
        let owned = sqlx::query("SELECT 1 FROM conversations WHERE id = ? AND owner = ?")
            .bind(id)
            .bind(owner)
            .fetch_optional(&mut *tx)
            .await
            .map_err(failed)?;
        if owned.is_none() {
            return Ok(false);
        }
        for table in DEPENDENTS {
            sqlx::query(&format!("DELETE FROM {table} WHERE conversation_id = ?"))
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(failed)?;
        }
        let deleted = sqlx::query("DELETE FROM conversations WHERE id = ? AND owner = ?")
            .bind(id)
            .bind(owner)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        Ok(deleted.rows_affected() > 0)
    }

    async fn purge_before(&self, cutoff_ms: i64) -> Result<u64, ConversationError> {
        let mut tx = self.pool.begin().await.map_err(failed)?;
        for table in DEPENDENTS {
            sqlx::query(&format!(
                "DELETE FROM {table} WHERE conversation_id IN \
                 (SELECT id FROM conversations WHERE updated_ms < ?)"
            ))
            .bind(cutoff_ms)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        }
        let purged = sqlx::query("DELETE FROM conversations WHERE updated_ms < ?")
            .bind(cutoff_ms)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        Ok(purged.rows_affected())
    }

    async fn share(
        &self,
        owner: &str,
        new: &NewShare,
        since_ms: i64,
    ) -> Result<bool, ConversationError> {
        let share = &new.share;
        let kept = sqlx::query(
            "INSERT INTO conversation_shares (id, token_digest, conversation_id, owner, \
             created_ms, expires_ms, public) SELECT ?, ?, id, owner, ?, ?, ? FROM conversations \
             WHERE id = ? AND owner = ? AND updated_ms >= ?",
        )
        .bind(&share.id)
        .bind(&new.token_digest)
        .bind(share.created_ms)
        .bind(share.expires_ms)
        .bind(share.public)
        .bind(&share.conversation_id)
        .bind(owner)
        .bind(since_ms)
        .execute(&self.pool)
        .await
        .map_err(failed)?;
        Ok(kept.rows_affected() > 0)
    }

    async fn shares(&self, owner: &str, now_ms: i64) -> Result<Vec<Share>, ConversationError> {
        let rows = sqlx::query(
            "SELECT * FROM conversation_shares WHERE owner = ? AND expires_ms > ? \
             ORDER BY created_ms DESC, id",
        )
        .bind(owner)
        .bind(now_ms)
        .fetch_all(&self.pool)
        .await
        .map_err(failed)?;
        rows.iter()
            .map(share)
            .collect::<Result<_, _>>()
            .map_err(failed)
    }

    async fn revoke(&self, owner: &str, share_id: &str) -> Result<bool, ConversationError> {
        let revoked = sqlx::query("DELETE FROM conversation_shares WHERE id = ? AND owner = ?")
            .bind(share_id)
            .bind(owner)
            .execute(&self.pool)
            .await
            .map_err(failed)?;
        Ok(revoked.rows_affected() > 0)
    }

    async fn open_share(
        &self,
        token_digest: &str,
        now_ms: i64,
    ) -> Result<Option<Shared>, ConversationError> {
        let Some(row) = sqlx::query(
            "SELECT s.*, c.title FROM conversation_shares s JOIN conversations c \
             ON c.id = s.conversation_id WHERE s.token_digest = ? AND s.expires_ms > ?",
        )
        .bind(token_digest)
        .bind(now_ms)
        .fetch_optional(&self.pool)
        .await
        .map_err(failed)?
        else {
            return Ok(None);
        };
        let share = share(&row).map_err(failed)?;
        let turns = turns_of(&self.pool, &share.conversation_id)
            .await
            .map_err(failed)?;
        Ok(Some(Shared {
            title: row.try_get("title").map_err(failed)?,
            owner: row.try_get("owner").map_err(failed)?,
            share,
            turns,
        }))
    }

    async fn give_feedback(
        &self,
        giver: &AuthUser,
        feedback: &Feedback,
        now_ms: i64,
    ) -> Result<bool, ConversationError> {
        let kept = sqlx::query(
            "INSERT INTO answer_feedback (owner, turn_id, conversation_id, rating, reason, \
             comment, expected, roles, domains, at_ms) \
             SELECT c.owner, t.id, c.id, ?, ?, ?, ?, ?, ?, ? FROM conversation_turns t \
             JOIN conversations c ON c.id = t.conversation_id \
             WHERE t.id = ? AND c.id = ? AND c.owner = ? \
             ON CONFLICT (owner, turn_id) DO UPDATE SET rating = excluded.rating, \
             reason = excluded.reason, comment = excluded.comment, \
             expected = excluded.expected, roles = excluded.roles, \
             domains = excluded.domains, at_ms = excluded.at_ms",
        )
        .bind(feedback.rating.as_str())
        .bind(feedback.reason.map(|reason| reason.as_str()))
        .bind(&feedback.comment)
        .bind(&feedback.expected)
        .bind(to_json(&giver.roles))
        .bind(to_json(&giver.domains))
        .bind(now_ms)
        .bind(feedback.turn_id)
        .bind(&feedback.conversation_id)
        .bind(&giver.sub)
        .execute(&self.pool)
        .await
        .map_err(failed)?;
        Ok(kept.rows_affected() > 0)
    }

    async fn feedback_since(
        &self,
        since_ms: i64,
        rating: Option<Rating>,
    ) -> Result<Vec<FeedbackRecord>, ConversationError> {
        let rows = sqlx::query(
            "SELECT f.*, t.question, t.answer, t.language FROM answer_feedback f \
             JOIN conversation_turns t ON t.id = f.turn_id \
             WHERE f.at_ms >= ? AND (? IS NULL OR f.rating = ?) ORDER BY f.at_ms, f.turn_id",
        )
        .bind(since_ms)
        .bind(rating.map(Rating::as_str))
        .bind(rating.map(Rating::as_str))
        .fetch_all(&self.pool)
        .await
        .map_err(failed)?;
        rows.iter()
            .map(|row| {
                Ok(FeedbackRecord {
                    feedback: Feedback {
                        conversation_id: row.try_get("conversation_id")?,
                        turn_id: row.try_get("turn_id")?,
                        rating: Rating::parse(row.try_get("rating")?).unwrap_or(Rating::Down),
                        reason: row
                            .try_get::<Option<&str>, _>("reason")?
                            .and_then(Reason::parse),
                        comment: row.try_get("comment")?,
                        expected: row.try_get("expected")?,
                    },
                    roles: from_json(row.try_get::<&str, _>("roles")?),
                    domains: from_json(row.try_get::<&str, _>("domains")?),
                    question: row.try_get("question")?,
                    answer: row.try_get("answer")?,
                    language: row.try_get("language")?,
                    at_ms: row.try_get("at_ms")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(failed)
    }
}
