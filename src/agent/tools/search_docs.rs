//! `search_docs`: the knowledge base through hybrid retrieval, as the asking user. The model
//! cites a passage with `[^chunk_id]`.

use super::{Tool, ToolContext, ToolError, ToolErrorKind};
use crate::retrieval::search::{Retriever, SearchMode};
use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::BTreeSet;
use std::sync::Arc;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchDocsArgs {
    /// What to look for in the CrowdVision documentation, in plain words.
    pub query: String,
}

pub struct SearchDocs {
    retriever: Arc<Retriever>,
}

impl SearchDocs {
    pub fn new(retriever: Arc<Retriever>) -> SearchDocs {
        SearchDocs { retriever }
    }
}

#[async_trait]
impl Tool for SearchDocs {
    type Args = SearchDocsArgs;

    const NAME: &'static str = "search_docs";

    fn output_schema(&self) -> Option<serde_json::Value> {
        Some(super::result_schema(&[("results", "array")], &["results"]))
    }

    fn description(&self) -> &'static str {
        "Search the CrowdVision documentation (setup, sensors, units, roles, troubleshooting). \
         Cite a passage you use with [^chunk_id]."
    }

    async fn run(
        &self,
        args: SearchDocsArgs,
        context: ToolContext<'_>,
    ) -> Result<(serde_json::Value, String), ToolError> {
        if args.query.trim().is_empty() {
            return Err(ToolError::new(
                ToolErrorKind::BadArguments,
                "query must not be empty",
            ));
        }
        let results = self
            .retriever
            .search(&args.query, context.user, context.top_k, SearchMode::Hybrid)
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "search_docs failed");
                ToolError::new(
                    ToolErrorKind::Unavailable,
                    "the documentation search is unavailable",
                )
            })?;
        let pages: BTreeSet<&str> = results.iter().map(|r| r.chunk.source.as_str()).collect();
        let summary = if results.is_empty() {
            "nothing relevant found".to_string()
        } else {
            format!("{} passages from {} pages", results.len(), pages.len())
        };
        let passages: Vec<serde_json::Value> = results
            .iter()
            .map(|r| {
                serde_json::json!({
                    "chunk_id": r.chunk.chunk_id,
                    "source": r.chunk.source,
                    "section": r.chunk.section,
                    "text": r.chunk.text,
                })
            })
            .collect();
        Ok((serde_json::json!({ "results": passages }), summary))
    }
}
