-- Conversations that outlast a request (src/conversations/). Times are milliseconds since the
-- epoch. A conversation belongs to one caller (`owner`, the token's `sub`).
-- They survive `db reset` (which rebuilds the knowledge base): hence IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS conversations (
    id         TEXT PRIMARY KEY,
    owner      TEXT NOT NULL,
    title      TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_by_owner ON conversations (owner, updated_ms DESC);

CREATE TABLE IF NOT EXISTS conversation_turns (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    question        TEXT NOT NULL,
    answer          TEXT NOT NULL,
    citations       TEXT NOT NULL,
    decision        TEXT NOT NULL,
    model           TEXT NOT NULL,
    usage           TEXT NOT NULL,
    trace_id        TEXT,
    language        TEXT,
    at_ms           INTEGER NOT NULL,
    live            TEXT
);
CREATE INDEX IF NOT EXISTS conversation_turns_by_conversation ON conversation_turns (conversation_id, id);

-- Share links: only the token's SHA-256 is kept. Revoking deletes the row.
CREATE TABLE IF NOT EXISTS conversation_shares (
    id              TEXT PRIMARY KEY,
    token_digest    TEXT NOT NULL UNIQUE,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    owner           TEXT NOT NULL,
    created_ms      INTEGER NOT NULL,
    expires_ms      INTEGER NOT NULL,
    public          INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS conversation_shares_by_owner ON conversation_shares (owner, created_ms DESC);

-- Feedback on an answer: one per turn and caller, with the caller's roles and domains.
CREATE TABLE IF NOT EXISTS answer_feedback (
    owner           TEXT NOT NULL,
    turn_id         INTEGER NOT NULL REFERENCES conversation_turns (id) ON DELETE CASCADE,
    conversation_id TEXT NOT NULL,
    rating          TEXT NOT NULL,
    reason          TEXT,
    comment         TEXT,
    expected        TEXT,
    roles           TEXT NOT NULL,
    domains         TEXT NOT NULL,
    at_ms           INTEGER NOT NULL,
    PRIMARY KEY (owner, turn_id)
);
CREATE INDEX IF NOT EXISTS answer_feedback_by_time ON answer_feedback (at_ms);
