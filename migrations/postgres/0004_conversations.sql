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
    at_ms           bigint NOT NULL,
    live            jsonb
);
CREATE INDEX IF NOT EXISTS conversation_turns_by_conversation ON conversation_turns (conversation_id, id);

-- Share links: only the token's SHA-256 is kept. Revoking deletes the row.
CREATE TABLE IF NOT EXISTS conversation_shares (
    id              text PRIMARY KEY,
    token_digest    text NOT NULL UNIQUE,
    conversation_id text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    owner           text NOT NULL,
    created_ms      bigint NOT NULL,
    expires_ms      bigint NOT NULL,
    public          boolean NOT NULL
);
CREATE INDEX IF NOT EXISTS conversation_shares_by_owner ON conversation_shares (owner, created_ms DESC);

-- Feedback on an answer: one per turn and caller, with the caller's roles and domains.
CREATE TABLE IF NOT EXISTS answer_feedback (
    owner           text NOT NULL,
    turn_id         bigint NOT NULL REFERENCES conversation_turns (id) ON DELETE CASCADE,
    conversation_id text NOT NULL,
    rating          text NOT NULL,
    reason          text,
    comment         text,
    expected        text,
    roles           jsonb NOT NULL,
    domains         jsonb NOT NULL,
    at_ms           bigint NOT NULL,
    PRIMARY KEY (owner, turn_id)
);
CREATE INDEX IF NOT EXISTS answer_feedback_by_time ON answer_feedback (at_ms);
