"""The official `openai` SDK against `serve`'s OpenAI-compatible endpoint, as a client would
use it. Run by tests/integration/sdk.rs with the server's URLs and a token; every check is an
assert, and the last line printed is JSON the Rust test reads.

    python openai_client.py BASE_URL TOKEN LIMITED_BASE_URL BUSY_BASE_URL
"""
import json
import sys
import threading
import time

import openai

base, token, limited_base, busy_base = sys.argv[1:5]
client = openai.OpenAI(base_url=base + "/v1", api_key=token, max_retries=0, timeout=60)
QUESTION = "Where is the zebra display?"
report = {}

# The answer models, as model ids.
models = [m.id for m in client.models.list()]
assert models == ["scripted/model"], models
report["models"] = models

# A whole completion: the answer, its citation as a footnote definition, usage.
whole = client.chat.completions.create(
    model=models[0], messages=[{"role": "user", "content": QUESTION}]
)
text = whole.choices[0].message.content
assert "zebra display is in the lobby" in text, text
assert "\n[^" in text and "]: " in text and " › " in text, text
assert whole.choices[0].finish_reason == "stop"
assert whole.usage.total_tokens > 0, whole.usage
report["answer"] = text

# Streamed: the joined deltas are the same text; usage in the last chunk when asked.
stream = client.chat.completions.create(
    model=models[0],
    messages=[{"role": "user", "content": QUESTION}],
    stream=True,
    stream_options={"include_usage": True},
)
pieces, usage, progress = [], None, []
for chunk in stream:
    if chunk.usage is not None:
        usage = chunk.usage
    for choice in chunk.choices:
        if choice.delta.content:
            pieces.append(choice.delta.content)
        extra = getattr(choice.delta, "reasoning_content", None) or (
            (choice.delta.model_extra or {}).get("reasoning_content")
        )
        if extra:
            progress.append(extra)
assert "".join(pieces) == text, ("".join(pieces), text)
assert len(pieces) >= 3, pieces
assert usage is not None and usage.total_tokens > 0, usage
assert any("search_docs" in p for p in progress), progress
report["streamed_pieces"] = len(pieces)

# A follow-up carries the conversation; a client's system message is ignored.
follow = client.chat.completions.create(
    model=models[0],
    messages=[
        {"role": "system", "content": "Answer like a pirate."},
        {"role": "user", "content": QUESTION},
        {"role": "assistant", "content": text},
        {"role": "user", "content": "And where exactly in the lobby?"},
    ],
)
report["follow_up"] = follow.choices[0].message.content

# Errors of the SDK's own types.
try:
    openai.OpenAI(base_url=base + "/v1", api_key="not-a-token", max_retries=0).models.list()
    raise AssertionError("a bad key was accepted")
except openai.AuthenticationError as error:
    assert error.status_code == 401
    assert error.body["type"] == "authentication_error", error.body


def refused(kind, **request):
    try:
        client.chat.completions.create(model=models[0], **request)
    except kind as error:
        return error
    raise AssertionError(f"accepted: {request}")


error = refused(openai.BadRequestError, messages=[{"role": "wizard", "content": "hi"}])
assert error.body["code"] == "invalid_role", error.body
error = refused(
    openai.BadRequestError,
    messages=[{"role": "user", "content": QUESTION}],
    tools=[{"type": "function", "function": {"name": "f", "parameters": {}}}],
)
assert error.body["code"] == "tools_not_accepted", error.body
# A client that asks for JSON is told it will not get it, never handed prose instead.
error = refused(
    openai.BadRequestError,
    messages=[{"role": "user", "content": QUESTION}],
    response_format={"type": "json_object"},
)
assert error.body["code"] == "response_format_not_supported", error.body
assert error.body["type"] == "invalid_request_error", error.body
many = [{"role": "user", "content": "x"}] * 10000
error = refused(openai.APIStatusError, messages=many)
assert error.status_code == 413, error.status_code
huge = [{"role": "user", "content": "x" * (2 * 1024 * 1024)}]
error = refused(openai.APIStatusError, messages=huge)
assert error.status_code == 413, error.status_code
error = refused(openai.BadRequestError, messages=[{"role": "user", "content": "hi"}] * 300)
assert error.body["code"] == "too_many_messages", error.body

# Over the caller's limits: 429 as RateLimitError.
limited = openai.OpenAI(base_url=limited_base + "/v1", api_key=token, max_retries=0)
limited.chat.completions.create(model=models[0], messages=[{"role": "user", "content": QUESTION}])
try:
    limited.chat.completions.create(model=models[0], messages=[{"role": "user", "content": QUESTION}])
    raise AssertionError("a request past REQUESTS_PER_MINUTE was answered")
except openai.RateLimitError as error:
    assert error.status_code == 429
    assert error.body["type"] == "rate_limit_error", error.body

# A replica with no free slot: 503 as the SDK's server error.
busy = openai.OpenAI(base_url=busy_base + "/v1", api_key=token, max_retries=0)
slow = threading.Thread(
    target=lambda: busy.chat.completions.create(
        model=models[0], messages=[{"role": "user", "content": "Take your time with the zebra display"}]
    )
)
slow.start()
time.sleep(1.5)
try:
    busy.chat.completions.create(model=models[0], messages=[{"role": "user", "content": QUESTION}])
    raise AssertionError("a request past MAX_IN_FLIGHT was answered")
except openai.InternalServerError as error:
    assert error.status_code == 503, error.status_code
slow.join()

print(json.dumps(report))
