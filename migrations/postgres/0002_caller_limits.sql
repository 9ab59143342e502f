-- Per-caller limits shared by every replica of `serve` (src/quota.rs, src/retrieval/store/quota.rs).
-- Times are seconds since the epoch read from this server's clock, so replicas whose clocks
-- differ still agree.
CREATE TABLE caller_limits (
    sub          text PRIMARY KEY,
    -- GCRA: when the caller's next request would be on schedule; a burst of the whole minute's
    -- quota is allowed, then one request every 60/N seconds.
    request_tat  double precision NOT NULL DEFAULT 0,
    tokens       bigint NOT NULL DEFAULT 0,
    tokens_since double precision NOT NULL DEFAULT 0
);

-- The caller's answers in flight, each until it finishes or its lease runs out (a replica that
-- died mid-answer gives its places back that way).
CREATE TABLE caller_answers (
    id         bigserial PRIMARY KEY,
    sub        text NOT NULL,
    expires_at double precision NOT NULL
);
CREATE INDEX caller_answers_by_sub ON caller_answers (sub, expires_at);

-- One admission in one round trip, under the caller's row lock: in flight, then the hour's
-- tokens, then the request rate. Returns whether it was admitted, and if not why ('busy',
-- 'budget', 'rate') and the seconds to wait; if so, the lease of its place in flight.
CREATE FUNCTION admit_caller(
    p_sub text, p_in_flight integer, p_per_minute integer, p_tokens_per_hour bigint,
    p_lease_seconds double precision)
RETURNS TABLE (admitted boolean, refusal text, retry_after double precision, lease bigint)
LANGUAGE plpgsql AS $$
DECLARE
    now_s   double precision := extract(epoch FROM clock_timestamp());
    caller  caller_limits%ROWTYPE;
    running integer;
    next_at double precision := NULL;
    placed  bigint := NULL;
BEGIN
    INSERT INTO caller_limits (sub, tokens_since) VALUES (p_sub, now_s)
        ON CONFLICT (sub) DO NOTHING;
    SELECT * INTO caller FROM caller_limits WHERE sub = p_sub FOR UPDATE;
    IF p_in_flight > 0 THEN
        DELETE FROM caller_answers WHERE sub = p_sub AND expires_at <= now_s;
        SELECT count(*) INTO running FROM caller_answers WHERE sub = p_sub;
        IF running >= p_in_flight THEN
            RETURN QUERY SELECT false, 'busy'::text, 1.0::float8, NULL::bigint;
            RETURN;
        END IF;
    END IF;
    IF now_s - caller.tokens_since >= 3600 THEN
        caller.tokens := 0;
        caller.tokens_since := now_s;
    END IF;
    IF p_tokens_per_hour > 0 AND caller.tokens >= p_tokens_per_hour THEN
        RETURN QUERY SELECT false, 'budget'::text, caller.tokens_since + 3600 - now_s, NULL::bigint;
        RETURN;
    END IF;
    IF p_per_minute > 0 THEN
        next_at := greatest(caller.request_tat, now_s) + 60.0 / p_per_minute;
        IF next_at - now_s > 60.0 + 1e-6 THEN
            RETURN QUERY SELECT false, 'rate'::text, next_at - 60.0 - now_s, NULL::bigint;
            RETURN;
        END IF;
    END IF;
    UPDATE caller_limits
        SET request_tat = coalesce(next_at, request_tat),
            tokens = caller.tokens,
            tokens_since = caller.tokens_since
        WHERE sub = p_sub;
    IF p_in_flight > 0 THEN
        INSERT INTO caller_answers (sub, expires_at) VALUES (p_sub, now_s + p_lease_seconds)
            RETURNING id INTO placed;
    END IF;
    RETURN QUERY SELECT true, NULL::text, 0.0::float8, placed;
END
$$;
