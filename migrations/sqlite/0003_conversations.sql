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
    at_ms           INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS conversation_turns_by_conversation ON conversation_turns (conversation_id, id);
