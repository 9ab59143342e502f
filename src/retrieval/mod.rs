//! The knowledge base: Markdown sources → chunks → embeddings → a store that searches them.
//!
//! - [`chunk`]: pure Markdown chunker (no I/O).
//! - [`embed`]: the `Embedder` port and its adapters (OpenAI-compatible HTTP, local hashing).
//! - [`store`]: the `ChunkStore` port and its adapters (Postgres + pgvector, embedded SQLite).
//! - [`source`]: finding source files and their permissions on disk.
//! - [`ingest`]: the diff between sources and store, and the per-document writes.
//! - [`search`]: hybrid retrieval ([`query`] terms, [`rrf`] fusion, [`rerank`] port).

pub mod chunk;
pub mod embed;
pub mod ingest;
pub mod query;
pub mod rerank;
pub mod rrf;
pub mod search;
pub mod source;
pub mod store;
pub mod terms;
