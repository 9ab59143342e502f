//! Ingest: Markdown sources → the store, idempotently.
//!
//! For each source: read, parse front matter, resolve permissions, hash (content, permissions
//! and chunker settings). A hash the source already holds is skipped before any chunking or
//! embedding; a hash another source holds is a duplicate and skipped too. Anything else is
//! chunked, embedded and written as one transaction that also replaces the source's previous
//! document. `prune` then deletes stored documents whose sources this run did not find.
//! Progress is reported through [`Progress`]; nothing here prints.

use super::chunk::{count_tokens, split_front_matter, Chunker, FrontMatter};
use super::embed::{EmbedError, Embedder};
use super::source::{
    discover_under, validate_permissions, Discovery, Scope, SourceError, SourceFile,
};
use super::store::{check_embedding, ChunkStore, NewChunk, NewDocument, StoreError, WriteOutcome};
use crate::config::SizeUnit;
use crate::observe;
use futures::{FutureExt, StreamExt};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tracing::Instrument;

/// Documents prepared (read, chunked, embedded) ahead of the writer.
const PREPARE_AHEAD: usize = 4;

/// An empty store receiving at least this many sources is loaded in bulk (see
/// `ChunkStore::begin_bulk_load`).
const BULK_LOAD_SOURCES: usize = 100;

#[derive(Debug, Clone)]
pub struct IngestOptions {
    pub roots: Vec<PathBuf>,
    pub prune: bool,
    pub dry_run: bool,
    pub require_permissions: bool,
    /// The configured knowledge-base root (`DOCS_ROOT`); roots earlier runs used count too.
    pub docs_root: Option<PathBuf>,
    /// Largest source read; larger ones fail with a clear error.
    pub max_source_bytes: u64,
}

/// The default of `MAX_SOURCE_BYTES`.
pub const DEFAULT_MAX_SOURCE_BYTES: u64 = 5 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no such file or folder: {0}")]
    MissingRoot(PathBuf),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    Added,
    Replaced,
    Unchanged,
    Duplicate,
    Pruned,
    Failed,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Added => "added",
            Action::Replaced => "replaced",
            Action::Unchanged => "unchanged",
            Action::Duplicate => "duplicate",
            Action::Pruned => "pruned",
            Action::Failed => "failed",
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceReport {
    pub source: String,
    pub action: Action,
    pub chunks: usize,
    /// No permissions anywhere: visible to every authenticated caller.
    pub public: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct IngestSummary {
    pub dry_run: bool,
    pub added: usize,
    pub replaced: usize,
    pub skipped: usize,
    pub pruned: usize,
    pub failed: usize,
    pub public: usize,
    pub chunks_written: usize,
    pub sources: Vec<SourceReport>,
}

impl IngestSummary {
    fn record(&mut self, report: SourceReport) {
        match report.action {
            Action::Added => self.added += 1,
            Action::Replaced => self.replaced += 1,
            Action::Unchanged | Action::Duplicate => self.skipped += 1,
            Action::Pruned => self.pruned += 1,
            Action::Failed => self.failed += 1,
        }
        if report.public && matches!(report.action, Action::Added | Action::Replaced) {
            self.public += 1;
        }
        if matches!(report.action, Action::Added | Action::Replaced) {
            self.chunks_written += report.chunks;
        }
        self.sources.push(report);
    }
}

/// Receives progress; the CLI draws a bar, tests and the server ignore it.
pub trait Progress: Send + Sync {
    fn start(&self, _total: usize) {}
    fn advance(&self, _source: &str) {}
    fn finish(&self) {}
}

pub struct NoProgress;
impl Progress for NoProgress {}

pub struct Ingestor {
    pub store: Arc<dyn ChunkStore>,
    pub embedder: Arc<dyn Embedder>,
    pub chunker: Chunker,
}

/// A source read and parsed, before any chunking.
struct ReadSource {
    file: SourceFile,
    text: String,
    front_matter: FrontMatter,
    permissions: Vec<String>,
    /// Whether the front matter or a `_permissions.yaml` stated the permissions (an empty list
    /// stated is public on purpose).
    declared: bool,
    hash: String,
}

impl Ingestor {
    pub async fn run(
        &self,
        options: &IngestOptions,
        progress: &dyn Progress,
    ) -> Result<IngestSummary, IngestError> {
        self.run_with(options, Vec::new(), progress).await
    }

    /// As [`Ingestor::run`], with `inline` documents ingested beside the roots' files (they are
    /// never pruned: pruning follows the roots).
    pub async fn run_with(
        &self,
        options: &IngestOptions,
        inline: Vec<SourceFile>,
        progress: &dyn Progress,
    ) -> Result<IngestSummary, IngestError> {
        let span = observe::ingest_run_span(options.roots.len());
        let result = self
            .run_in_span(options, inline, progress)
            .instrument(span.clone())
            .await;
        match &result {
            Ok(summary) => {
                span.record("written", summary.added + summary.replaced);
                span.record("skipped", summary.skipped);
                span.record("failed", summary.failed);
                span.record("chunks", summary.chunks_written);
            }
            Err(_) => observe::record_error(&span, "ingest"),
        }
        result
    }

    async fn run_in_span(
        &self,
        options: &IngestOptions,
        inline: Vec<SourceFile>,
        progress: &dyn Progress,
    ) -> Result<IngestSummary, IngestError> {
        // A missing path among others is one failed source (the others are still ingested);
        // when nothing at all could be read, the run is refused as a whole.
        let all_missing = options.roots.iter().all(|r| !r.exists());
        if all_missing && inline.is_empty() {
            if let Some(missing) = options.roots.first() {
                return Err(IngestError::MissingRoot(missing.clone()));
            }
        }
        self.check_embedding(options.dry_run).await?;
        let stored = self.store.documents().await?;
        let by_source: HashMap<String, String> = stored
            .iter()
            .map(|d| (d.source.clone(), d.content_hash.clone()))
            .collect();
        let held_hashes: HashSet<String> = stored.iter().map(|d| d.content_hash.clone()).collect();

        let mut kb_roots: Vec<PathBuf> = options.docs_root.iter().cloned().collect();
        kb_roots.extend(self.store.knowledge_base_roots().await?);
        let Discovery {
            mut files,
            errors: discovery_errors,
            scopes,
            new_roots,
        } = discover_under(&options.roots, &kb_roots);
        if !options.dry_run {
            self.store.record_knowledge_base_roots(&new_roots).await?;
        }
        files.extend(inline);
        let mut summary = IngestSummary {
            dry_run: options.dry_run,
            ..IngestSummary::default()
        };
        for error in &discovery_errors {
            summary.record(failure(&error_source(error), error.to_string()));
        }
        let seen: HashSet<String> = files.iter().map(|f| f.source.clone()).collect();
        let bulk = !options.dry_run && stored.is_empty() && files.len() >= BULK_LOAD_SOURCES;
        if bulk {
            self.store.begin_bulk_load().await?;
        }
        progress.start(files.len());

        let mut prepared = futures::stream::iter(files)
            .map(|file| {
                let span = observe::ingest_document_span(&file.source);
                self.prepare(file, options, &by_source, &held_hashes)
                    .instrument(span.clone())
                    .map(move |step| (step, span))
            })
            .buffered(PREPARE_AHEAD);
        while let Some((step, span)) = prepared.next().await {
            let report = match step {
                Step::Done(report) => report,
                Step::Write(document, public) => {
                    self.write(&document, public).instrument(span.clone()).await
                }
            };
            span.record("outcome", report.action.as_str());
            span.record("chunks", report.chunks);
            if report.action == Action::Failed {
                observe::record_error(&span, "failed");
            }
            progress.advance(&report.source);
            summary.record(report);
        }
        progress.finish();
        if bulk {
            self.store.finish_bulk_load().await?;
        }

        if options.prune {
            self.prune(
                &stored,
                &seen,
                &scopes,
                &discovery_errors,
                options.dry_run,
                &mut summary,
            )
            .await?;
        }
        Ok(summary)
    }

    async fn check_embedding(&self, dry_run: bool) -> Result<(), StoreError> {
        let (model, dim) = (self.embedder.model(), self.embedder.dim());
        if dry_run {
            let status = self.store.status().await?;
            if !status.pending_migrations.is_empty() {
                return Err(StoreError::NotMigrated);
            }
            check_embedding(status.embedding_model, status.embedding_dim, model, dim)?;
            Ok(())
        } else {
            self.store.ensure_embedding(model, dim).await
        }
    }

    /// Everything up to the write: read, decide, chunk and embed when needed.
    async fn prepare(
        &self,
        file: SourceFile,
        options: &IngestOptions,
        by_source: &HashMap<String, String>,
        held_hashes: &HashSet<String>,
    ) -> Step {
        let source = file.source.clone();
        let settings = self.chunker_fingerprint();
        let max_bytes = options.max_source_bytes;
        let read = match tokio::task::spawn_blocking(move || {
            read_source(file, &settings, max_bytes)
        })
        .await
        {
            Ok(Ok(read)) => read,
            Ok(Err(message)) => return Step::Done(failure(&source, message)),
            Err(join) => return Step::Done(failure(&source, format!("reading panicked: {join}"))),
        };
        let public = read.permissions.is_empty();
        if !read.declared && options.require_permissions {
            return Step::Done(failure(
                &source,
                "declares no permissions (front matter or _permissions.yaml; `permissions: []` for public) and --require-permissions is set".into(),
            ));
        }
        let action = if by_source.get(&source) == Some(&read.hash) {
            Some(Action::Unchanged)
        } else if held_hashes.contains(&read.hash) {
            Some(Action::Duplicate)
        } else if options.dry_run {
            Some(if by_source.contains_key(&source) {
                Action::Replaced
            } else {
                Action::Added
            })
        } else {
            None
        };
        if let Some(action) = action {
            return Step::Done(SourceReport {
                source,
                action,
                chunks: 0,
                public,
                error: None,
            });
        }
        match self.build_document(read).await {
            Ok(document) => Step::Write(document, public),
            Err(message) => Step::Done(failure(&source, message)),
        }
    }

    async fn build_document(&self, read: ReadSource) -> Result<NewDocument, String> {
        let chunker = self.chunker.clone();
        let ReadSource {
            file,
            text,
            front_matter,
            permissions,
            hash,
            ..
        } = read;
        let chunks = tokio::task::spawn_blocking(move || {
            // `chunk` normalises the text first, exactly as the `chunk` command shows it.
            Ok::<_, String>(chunker.chunk(&text).map_err(|e| e.to_string())?.chunks)
        })
        .await
        .map_err(|e| format!("chunking panicked: {e}"))??;
        let inputs: Vec<String> = chunks
            .iter()
            .map(|c| {
                let section = c.section_path();
                if section.is_empty() {
                    c.text.clone()
                } else {
                    format!("{section}\n\n{}", c.text)
                }
            })
            .collect();
        let inputs = crate::retrieval::embed::prefixed(self.embedder.prefixes().1, inputs);
        let vectors = self
            .embedder
            .embed(&inputs)
            .await
            .map_err(|e: EmbedError| e.to_string())?;
        let unit = self.chunker.config().unit;
        let title = front_matter
            .title
            .clone()
            .or_else(|| chunks.iter().find_map(|c| c.section.first().cloned()));
        let chunks = chunks
            .into_iter()
            .zip(vectors)
            .map(|(chunk, embedding)| NewChunk {
                chunk_id: chunk_id(&hash, chunk.ordinal),
                ordinal: chunk.ordinal,
                section: chunk.section_path(),
                kind: chunk.kind.as_str().to_string(),
                tokens: match unit {
                    SizeUnit::Tokens => chunk.size,
                    SizeUnit::Chars => count_tokens(&chunk.text),
                },
                text: chunk.text,
                embedding,
            })
            .collect();
        Ok(NewDocument {
            source: file.source,
            content_hash: hash,
            title,
            permissions,
            metadata: serde_json::json!({ "tags": front_matter.tags }),
            chunks,
        })
    }

    async fn write(&self, document: &NewDocument, public: bool) -> SourceReport {
        let source = document.source.clone();
        match self.store.write_document(document).await {
            Ok(outcome) => SourceReport {
                source,
                action: match outcome {
                    WriteOutcome::Added => Action::Added,
                    WriteOutcome::Replaced => Action::Replaced,
                    WriteOutcome::Unchanged => Action::Unchanged,
                    WriteOutcome::Duplicate => Action::Duplicate,
                },
                chunks: document.chunks.len(),
                public,
                error: None,
            },
            Err(error) => failure(&source, error.to_string()),
        }
    }

    async fn prune(
        &self,
        stored: &[super::store::StoredDocument],
        seen: &HashSet<String>,
        scopes: &[Scope],
        discovery_errors: &[SourceError],
        dry_run: bool,
        summary: &mut IngestSummary,
    ) -> Result<(), StoreError> {
        if !discovery_errors.is_empty() {
            // A folder we could not read would look like deleted sources: prune nothing.
            tracing::warn!("not pruning: some sources could not be listed");
            return Ok(());
        }
        // Only documents this run spoke for: under its folders, or its single files.
        let gone = stored.iter().filter(|d| {
            !seen.contains(&d.source) && scopes.iter().any(|scope| scope.covers(&d.source))
        });
        for document in gone {
            if !dry_run {
                self.store.delete_document(&document.source).await?;
            }
            summary.record(SourceReport {
                source: document.source.clone(),
                action: Action::Pruned,
                chunks: document.chunks as usize,
                public: false,
                error: None,
            });
        }
        Ok(())
    }

    /// The chunker settings that shape chunks: part of the hash, so changing them re-chunks.
    fn chunker_fingerprint(&self) -> String {
        let c = self.chunker.config();
        format!("{:?}:{}:{}", c.unit, c.target, c.max)
    }
}

enum Step {
    Done(SourceReport),
    Write(NewDocument, bool),
}

fn failure(source: &str, message: String) -> SourceReport {
    SourceReport {
        source: source.to_string(),
        action: Action::Failed,
        chunks: 0,
        public: false,
        error: Some(message),
    }
}

fn error_source(error: &SourceError) -> String {
    match error {
        SourceError::Unreadable { path, .. } | SourceError::InvalidPermission { path, .. } => {
            path.display().to_string()
        }
    }
}

fn read_source(
    file: SourceFile,
    chunker_settings: &str,
    max_bytes: u64,
) -> Result<ReadSource, String> {
    let text = match &file.inline {
        Some(content) if content.len() as u64 > max_bytes => {
            return Err(format!("larger than MAX_SOURCE_BYTES ({max_bytes} bytes)"))
        }
        Some(content) => content.clone(),
        None => {
            let bytes = read_bounded(&file.path, max_bytes)?;
            String::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"))?
        }
    };
    let text = crate::text::strip_invisible(&text).into_owned();
    let (front_matter, _) = split_front_matter(&text).map_err(|e| e.to_string())?;
    if file.inline.is_some() && front_matter.permissions.is_some() {
        return Err(
            "an inline document states its permissions in the request, not in front matter".into(),
        );
    }
    let declared = front_matter.permissions.is_some() || file.default_permissions.is_some();
    let permissions = match front_matter.permissions.clone() {
        Some(list) => list,
        None => file.default_permissions.clone().unwrap_or_default(),
    };
    validate_permissions(&file.path, &permissions).map_err(|e| e.to_string())?;
    let mut permissions = permissions;
    permissions.sort();
    permissions.dedup();
    let hash = content_hash(&text, &permissions, chunker_settings);
    Ok(ReadSource {
        file,
        text,
        front_matter,
        permissions,
        declared,
        hash,
    })
}

/// The file's bytes, refused when there are more than `max_bytes` (counted while reading:
/// some files report no size).
fn read_bounded(path: &Path, max_bytes: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > max_bytes {
        return Err(format!(
            "larger than MAX_SOURCE_BYTES ({max_bytes} bytes); split the page or raise the limit"
        ));
    }
    Ok(bytes)
}

/// SHA-256 over the text, the effective permissions and the chunker settings, in hex.
pub fn content_hash(text: &str, permissions: &[String], chunker_settings: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(text.as_bytes());
    hasher.update([0]);
    hasher.update(permissions.join(",").as_bytes());
    hasher.update([0]);
    hasher.update(chunker_settings.as_bytes());
    hex::encode(hasher.finalize())
}

/// A short id, stable for the same content and position: what a model copies into `[^id]`.
pub fn chunk_id(content_hash: &str, ordinal: usize) -> String {
    let digest = Sha256::digest(format!("{content_hash}:{ordinal}").as_bytes());
    hex::encode(&digest[..6])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunk_ids_are_short_and_stable() {
        let a = chunk_id("abc", 3);
        assert_eq!(a.len(), 12);
        assert_eq!(a, chunk_id("abc", 3));
        assert_ne!(a, chunk_id("abc", 4));
    }

    #[test]
    fn permissions_and_settings_change_the_hash() {
        let base = content_hash("text", &[], "Tokens:350:512");
        assert_ne!(
            base,
            content_hash("text", &["admin".into()], "Tokens:350:512")
        );
        assert_ne!(base, content_hash("text", &[], "Tokens:300:512"));
        assert_eq!(base, content_hash("text", &[], "Tokens:350:512"));
    }
}
