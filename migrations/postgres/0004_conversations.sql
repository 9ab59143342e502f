-- Conversations that outlast a request, shared by every replica (src/conversations/). Times
-- are milliseconds since the epoch. A conversation belongs to one caller (`owner`, the
-- token's `sub`).
-- They survive `db reset` (which rebuilds the knowledge base): hence IF NOT EXISTS.
CREATE TABLE IF NOT EXISTS conversations (
    id         text PRIMARY KEY,
    owner      text NOT NULL,
    title      text NOT NULL,
    created_ms bigint NOT NULL,
    updated_ms bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_by_owner ON conversations (owner, updated_ms DESC);

CREATE TABLE IF NOT EXISTS conversation_turns (
    id              bigserial PRIMARY KEY,
    conversation_id text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    question        text NOT NULL,
    answer          text NOT NULL,
    citations       jsonb NOT NULL,
    decision        text NOT NULL,
    model           text NOT NULL,
    usage           jsonb NOT NULL,
    trace_id        text,
    language        text,
    at_ms           bigint NOT NULL
);
CREATE INDEX IF NOT EXISTS conversation_turns_by_conversation ON conversation_turns (conversation_id, id);
