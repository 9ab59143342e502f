-- The keyword index both stores share (src/retrieval/terms.rs): each chunk's postings, written at
-- ingest by the library's own tokenizer, its length in words (NULL until indexed), and the
-- corpus totals BM25 needs, kept by triggers. It replaces FTS5, whose tokenizer and ranking
-- PostgreSQL could not reproduce.
DROP TRIGGER chunks_fts_insert;
DROP TRIGGER chunks_fts_delete;
DROP TABLE chunks_fts;

ALTER TABLE chunks ADD COLUMN term_count INTEGER;

CREATE TABLE chunk_terms (
    term     TEXT NOT NULL,
    chunk_id INTEGER NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    weight   REAL NOT NULL,
    PRIMARY KEY (term, chunk_id)
) WITHOUT ROWID;
CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk_id);

CREATE TABLE keyword_stats (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    chunks INTEGER NOT NULL,
    tokens INTEGER NOT NULL
);
INSERT INTO keyword_stats (id, chunks, tokens) VALUES (1, 0, 0);

CREATE TRIGGER keyword_stats_insert AFTER INSERT ON chunks WHEN new.term_count IS NOT NULL BEGIN
    UPDATE keyword_stats SET chunks = chunks + 1, tokens = tokens + new.term_count;
END;
CREATE TRIGGER keyword_stats_delete AFTER DELETE ON chunks WHEN old.term_count IS NOT NULL BEGIN
    UPDATE keyword_stats SET chunks = chunks - 1, tokens = tokens - old.term_count;
END;
CREATE TRIGGER keyword_stats_indexed AFTER UPDATE OF term_count ON chunks
WHEN old.term_count IS NULL AND new.term_count IS NOT NULL BEGIN
    UPDATE keyword_stats SET chunks = chunks + 1, tokens = tokens + new.term_count;
END;
