//! ADAPTER: conversations in the SQLite store's database (migration 0003).

use crate::conversations::{
    decision_of, from_json, to_json, Conversation, ConversationError, ConversationStore, ListQuery,
    Summary, Turn,
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
        turns: row.try_get("turns")?,
    })
}

fn turn(row: &SqliteRow) -> Result<Turn, sqlx::Error> {
    Ok(Turn {
        question: row.try_get("question")?,
        answer: row.try_get("answer")?,
        citations: from_json(row.try_get::<&str, _>("citations")?),
        decision: decision_of(row.try_get("decision")?),
        model: row.try_get("model")?,
        usage: from_json(row.try_get::<&str, _>("usage")?),
        trace_id: row.try_get("trace_id")?,
        language: row.try_get("language")?,
        at_ms: row.try_get("at_ms")?,
    })
}

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
            turns: 0,
        })
    }

    async fn append(
        &self,
        owner: &str,
        id: &str,
        turn: &Turn,
        since_ms: i64,
    ) -> Result<bool, ConversationError> {
        let mut tx = self.pool.begin().await.map_err(failed)?;
        let touched = sqlx::query(
            "UPDATE conversations SET updated_ms = max(updated_ms, ?) \
             WHERE id = ? AND owner = ? AND updated_ms >= ?",
        )
        .bind(turn.at_ms)
        .bind(id)
        .bind(owner)
        .bind(since_ms)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        if touched.rows_affected() == 0 {
            return Ok(false);
        }
        sqlx::query(
            "INSERT INTO conversation_turns (conversation_id, question, answer, citations, \
             decision, model, usage, trace_id, language, at_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        Ok(true)
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
        let rows =
            sqlx::query("SELECT * FROM conversation_turns WHERE conversation_id = ? ORDER BY id")
                .bind(id)
                .fetch_all(&self.pool)
                .await
                .map_err(failed)?;
        let turns = rows
            .iter()
            .map(turn)
            .collect::<Result<_, _>>()
            .map_err(failed)?;
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
        let deleted = sqlx::query("DELETE FROM conversations WHERE id = ? AND owner = ?")
            .bind(id)
            .bind(owner)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        if deleted.rows_affected() > 0 {
            // Explicitly, whatever the connection's foreign-key setting.
            sqlx::query("DELETE FROM conversation_turns WHERE conversation_id = ?")
                .bind(id)
                .execute(&mut *tx)
                .await
                .map_err(failed)?;
        }
        tx.commit().await.map_err(failed)?;
        Ok(deleted.rows_affected() > 0)
    }

    async fn purge_before(&self, cutoff_ms: i64) -> Result<u64, ConversationError> {
        let mut tx = self.pool.begin().await.map_err(failed)?;
        sqlx::query(
            "DELETE FROM conversation_turns WHERE conversation_id IN \
             (SELECT id FROM conversations WHERE updated_ms < ?)",
        )
        .bind(cutoff_ms)
        .execute(&mut *tx)
        .await
        .map_err(failed)?;
        let purged = sqlx::query("DELETE FROM conversations WHERE updated_ms < ?")
            .bind(cutoff_ms)
            .execute(&mut *tx)
            .await
            .map_err(failed)?;
        tx.commit().await.map_err(failed)?;
        Ok(purged.rows_affected())
    }
}
