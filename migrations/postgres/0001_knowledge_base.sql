-- The knowledge base: documents, their chunks, and the indexes both searches use.
-- ${EMBEDDING_DIM} is replaced with the configured dimension when the migration is applied.
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE store_settings (
    key   text PRIMARY KEY,
    value text NOT NULL
);

CREATE TABLE documents (
    id           bigserial PRIMARY KEY,
    source       text NOT NULL UNIQUE,
    content_hash text NOT NULL UNIQUE,
    title        text,
    permissions  text[] NOT NULL DEFAULT '{}',
    metadata     jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE chunks (
    id          bigserial PRIMARY KEY,
    chunk_id    text NOT NULL UNIQUE,
    document_id bigint NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    ordinal     integer NOT NULL,
    section     text NOT NULL,
    kind        text NOT NULL,
    text        text NOT NULL,
    tokens      integer NOT NULL,
    embedding   vector(${EMBEDDING_DIM}) NOT NULL,
    tsv         tsvector GENERATED ALWAYS AS (
                    setweight(to_tsvector('english', section), 'A') ||
                    setweight(to_tsvector('english', text), 'B')
                ) STORED,
    permissions text[] NOT NULL DEFAULT '{}',
    metadata    jsonb NOT NULL DEFAULT '{}'::jsonb,
    UNIQUE (document_id, ordinal)
);

CREATE INDEX chunks_embedding_hnsw ON chunks USING hnsw (embedding vector_cosine_ops);
CREATE INDEX chunks_tsv_gin ON chunks USING gin (tsv);
CREATE INDEX chunks_permissions_gin ON chunks USING gin (permissions);
CREATE INDEX chunks_document_id ON chunks (document_id);
