-- The keyword index both stores share (src/retrieval/terms.rs), beside the chunks rather than in
-- them: each chunk's postings and its length in words, written at ingest by the library's own
-- tokenizer, and what BM25 needs of the whole corpus (how many chunks hold each term, how many
-- chunks and words there are), kept by statement triggers. It replaces the `tsvector` column,
-- whose English configuration and `ts_rank_cd` ranked differently from the embedded store.
--
-- Nothing here updates a row of `chunks`: an update of every chunk would leave a dead copy of
-- each one in the HNSW index until a vacuum, and vector search would wade through them.
ALTER TABLE chunks DROP COLUMN tsv;

CREATE TABLE chunk_terms (
    term     text NOT NULL,
    chunk_id bigint NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    weight   real NOT NULL,
    PRIMARY KEY (term, chunk_id)
);
CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk_id);

CREATE TABLE chunk_lengths (
    chunk_id bigint PRIMARY KEY REFERENCES chunks (id) ON DELETE CASCADE,
    words    integer NOT NULL
);

CREATE TABLE term_stats (
    term   text PRIMARY KEY,
    chunks bigint NOT NULL
);

CREATE TABLE keyword_stats (
    id     integer PRIMARY KEY CHECK (id = 1),
    chunks bigint NOT NULL,
    words  bigint NOT NULL
);
INSERT INTO keyword_stats (id, chunks, words) VALUES (1, 0, 0);

CREATE FUNCTION term_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO term_stats (term, chunks)
    SELECT term, count(*) FROM added GROUP BY term
    ON CONFLICT (term) DO UPDATE SET chunks = term_stats.chunks + excluded.chunks;
    RETURN NULL;
END
$$;
CREATE TRIGGER term_stats_add AFTER INSERT ON chunk_terms
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION term_stats_add();

CREATE FUNCTION term_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE term_stats s SET chunks = s.chunks - g.n
    FROM (SELECT term, count(*) AS n FROM removed GROUP BY term) g
    WHERE s.term = g.term;
    RETURN NULL;
END
$$;
CREATE TRIGGER term_stats_remove AFTER DELETE ON chunk_terms
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION term_stats_remove();

CREATE FUNCTION keyword_stats_add() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE keyword_stats
    SET chunks = chunks + (SELECT count(*) FROM added),
        words = words + (SELECT coalesce(sum(words), 0) FROM added);
    RETURN NULL;
END
$$;
CREATE TRIGGER keyword_stats_add AFTER INSERT ON chunk_lengths
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION keyword_stats_add();

CREATE FUNCTION keyword_stats_remove() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE keyword_stats
    SET chunks = chunks - (SELECT count(*) FROM removed),
        words = words - (SELECT coalesce(sum(words), 0) FROM removed);
    RETURN NULL;
END
$$;
CREATE TRIGGER keyword_stats_remove AFTER DELETE ON chunk_lengths
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION keyword_stats_remove();
