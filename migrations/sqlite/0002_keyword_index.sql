-- The keyword index both stores share (src/retrieval/terms.rs): each chunk's postings and its
-- length in words, written at ingest by the library's own tokenizer, and the corpus totals BM25
-- needs, kept by triggers. It replaces FTS5, whose tokenizer and ranking PostgreSQL could not
-- reproduce. How many chunks hold a term is counted from `chunk_terms` when asked: on SQLite
-- that is a short walk of the primary key.
DROP TRIGGER chunks_fts_insert;
DROP TRIGGER chunks_fts_delete;
DROP TABLE chunks_fts;

CREATE TABLE chunk_terms (
    term     TEXT NOT NULL,
    chunk_id INTEGER NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    weight   REAL NOT NULL,
    PRIMARY KEY (term, chunk_id)
) WITHOUT ROWID;
CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk_id);

CREATE TABLE chunk_lengths (
    chunk_id INTEGER PRIMARY KEY REFERENCES chunks (id) ON DELETE CASCADE,
    words    INTEGER NOT NULL
);

CREATE TABLE keyword_stats (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    chunks INTEGER NOT NULL,
    words  INTEGER NOT NULL
);
INSERT INTO keyword_stats (id, chunks, words) VALUES (1, 0, 0);

CREATE TRIGGER keyword_stats_add AFTER INSERT ON chunk_lengths BEGIN
    UPDATE keyword_stats SET chunks = chunks + 1, words = words + new.words;
END;
CREATE TRIGGER keyword_stats_remove AFTER DELETE ON chunk_lengths BEGIN
    UPDATE keyword_stats SET chunks = chunks - 1, words = words - old.words;
END;
