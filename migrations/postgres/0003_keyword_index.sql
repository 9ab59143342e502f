-- The keyword index both stores share (src/retrieval/terms.rs): each chunk's postings, written at
-- ingest by the library's own tokenizer, its length in words (NULL until indexed), and the
-- corpus totals BM25 needs, kept by a trigger. It replaces the `tsvector` column, whose English
-- configuration and `ts_rank_cd` ranked differently from the embedded store.
ALTER TABLE chunks DROP COLUMN tsv;
ALTER TABLE chunks ADD COLUMN term_count integer;

CREATE TABLE chunk_terms (
    term     text NOT NULL,
    chunk_id bigint NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    weight   real NOT NULL,
    PRIMARY KEY (term, chunk_id)
);
CREATE INDEX chunk_terms_chunk ON chunk_terms (chunk_id);

CREATE TABLE keyword_stats (
    id     integer PRIMARY KEY CHECK (id = 1),
    chunks bigint NOT NULL,
    tokens bigint NOT NULL
);
INSERT INTO keyword_stats (id, chunks, tokens) VALUES (1, 0, 0);

CREATE FUNCTION keyword_stats_follow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.term_count IS NOT NULL THEN
            UPDATE keyword_stats SET chunks = chunks - 1, tokens = tokens - OLD.term_count;
        END IF;
        RETURN OLD;
    END IF;
    IF NEW.term_count IS NOT NULL AND (TG_OP = 'INSERT' OR OLD.term_count IS NULL) THEN
        UPDATE keyword_stats SET chunks = chunks + 1, tokens = tokens + NEW.term_count;
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER keyword_stats_follow AFTER INSERT OR DELETE OR UPDATE OF term_count ON chunks
    FOR EACH ROW EXECUTE FUNCTION keyword_stats_follow();
