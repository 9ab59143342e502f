//! The local answer log: every `ask` and `chat` answer appended as one JSON line to a file in the
//! data directory (`HISTORY=false` turns it off), read back by `crowdvision-agent history`.
//!
//! Appends are single `write` calls on a file opened for appending, so two processes answering
//! at once each add whole lines. A line that does not parse (a file edited by hand, a write cut
//! short by a crash) is skipped when reading, never fatal.

use crate::contract::AskResponse;
use crate::contract::Decision;
use crate::contract::Usage;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("cannot write the history at {path}: {message}")]
    Write { path: String, message: String },
    #[error("cannot read the history at {path}: {message}")]
    Read { path: String, message: String },
}

/// One answer as the log keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Its position in the log, from 1 (set when read, not stored).
    #[serde(default, skip_serializing)]
    pub id: usize,
    pub at: DateTime<Utc>,
    /// `ask` or `chat`.
    pub command: String,
    pub question: String,
    pub answer: String,
    pub decision: Decision,
    /// `source › section` of each citation.
    pub citations: Vec<String>,
    pub model: String,
    pub usage: Usage,
    /// The provider's reported cost, else the price-table estimate.
    pub cost_usd: Option<f64>,
    pub milliseconds: u64,
}

impl Entry {
    pub fn new(command: &str, question: &str, response: &AskResponse, milliseconds: u64) -> Entry {
        Entry {
            id: 0,
            at: Utc::now(),
            command: command.to_string(),
            question: question.to_string(),
            answer: response.answer.clone(),
            decision: response.decision,
            citations: response
                .citations
                .iter()
                .map(|c| format!("{} › {}", c.source, c.section))
                .collect(),
            model: response.model.clone(),
            usage: response.usage,
            cost_usd: response.cost.provider_usd.or(response.cost.estimated_usd),
            milliseconds,
        }
    }

    /// Whether `text` occurs in the question or the answer, ignoring case.
    pub fn mentions(&self, text: &str) -> bool {
        let needle = text.to_lowercase();
        self.question.to_lowercase().contains(&needle)
            || self.answer.to_lowercase().contains(&needle)
    }
}

pub struct History {
    path: PathBuf,
}

impl History {
    pub fn at(path: impl Into<PathBuf>) -> History {
        History { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn append(&self, entry: &Entry) -> Result<(), HistoryError> {
        let error = |e: std::io::Error| HistoryError::Write {
            path: self.path.display().to_string(),
            message: e.to_string(),
        };
        if let Some(folder) = self.path.parent() {
            std::fs::create_dir_all(folder).map_err(error)?;
        }
        let mut line = serde_json::to_string(entry).expect("an entry serialises");
        line.push('\n');
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .and_then(|mut file| file.write_all(line.as_bytes()))
            .map_err(error)
    }

    /// Every entry, oldest first, numbered from 1; no file yet is an empty history.
    pub fn read(&self) -> Result<Vec<Entry>, HistoryError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => {
                return Err(HistoryError::Read {
                    path: self.path.display().to_string(),
                    message: e.to_string(),
                })
            }
        };
        Ok(text
            .lines()
            .enumerate()
            .filter_map(|(i, line)| {
                let mut entry: Entry = serde_json::from_str(line).ok()?;
                entry.id = i + 1;
                Some(entry)
            })
            .collect())
    }
}

pub use crate::config::default_history_path as default_path;

#[cfg(test)]
mod tests {
    use super::*;

    fn response(answer: &str) -> AskResponse {
        serde_json::from_value(serde_json::json!({
            "answer": answer, "citations": [], "trace": [],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
            "cost": {"estimated_usd": 0.001, "provider_usd": null},
            "idk": false, "decision": "answered", "model": "m",
            "retrieval": {"hallucinated_citations": 0}
        }))
        .unwrap()
    }

    #[test]
    fn entries_come_back_numbered_and_a_broken_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let history = History::at(dir.path().join("sub/history.jsonl"));
        assert!(history.read().unwrap().is_empty());
        history
            .append(&Entry::new("ask", "CO2?", &response("1000 ppm"), 5))
            .unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(history.path())
            .unwrap()
            .write_all(b"{\"cut short\n")
            .unwrap();
        history
            .append(&Entry::new("chat", "Humidity?", &response("40 to 60 %"), 7))
            .unwrap();
        let entries = history.read().unwrap();
        assert_eq!(entries.len(), 2);
        assert_eq!((entries[0].id, entries[1].id), (1, 3));
        assert_eq!(entries[1].command, "chat");
        assert_eq!(entries[0].cost_usd, Some(0.001));
        assert!(entries[1].mentions("HUMIDITY"));
        assert!(!entries[0].mentions("humidity"));
    }
}
