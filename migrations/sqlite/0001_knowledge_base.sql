-- The embedded knowledge base. Vectors are little-endian f32 blobs searched exactly;
-- FTS5 (porter stemming) indexes section and text; permissions get their own indexed table.
CREATE TABLE store_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE documents (
    id           INTEGER PRIMARY KEY,
    source       TEXT NOT NULL UNIQUE,
    content_hash TEXT NOT NULL UNIQUE,
    title        TEXT,
    permissions  TEXT NOT NULL DEFAULT '[]',
    metadata     TEXT NOT NULL DEFAULT '{}',
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE chunks (
    id          INTEGER PRIMARY KEY,
    chunk_id    TEXT NOT NULL UNIQUE,
    document_id INTEGER NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    ordinal     INTEGER NOT NULL,
    section     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    text        TEXT NOT NULL,
    tokens      INTEGER NOT NULL,
    embedding   BLOB NOT NULL,
    permissions TEXT NOT NULL DEFAULT '[]',
    metadata    TEXT NOT NULL DEFAULT '{}',
    UNIQUE (document_id, ordinal)
);
CREATE INDEX chunks_document_id ON chunks (document_id);

CREATE TABLE chunk_permissions (
    permission TEXT NOT NULL,
    chunk_id   INTEGER NOT NULL REFERENCES chunks (id) ON DELETE CASCADE,
    PRIMARY KEY (permission, chunk_id)
) WITHOUT ROWID;
CREATE INDEX chunk_permissions_chunk ON chunk_permissions (chunk_id);

CREATE VIRTUAL TABLE chunks_fts USING fts5 (
    section, text,
    content = 'chunks', content_rowid = 'id',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
    INSERT INTO chunks_fts (rowid, section, text) VALUES (new.id, new.section, new.text);
END;
CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
    INSERT INTO chunks_fts (chunks_fts, rowid, section, text) VALUES ('delete', old.id, old.section, old.text);
END;
