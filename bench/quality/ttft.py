#!/usr/bin/env python3
"""Time to first streamed token through `serve`: posts each question to /ask with
`"stream": true`, and reads the server-sent events as they come. Prints, per question, the
seconds to the first `token` event, to the `done` event, and the tokens of the answer; then the
p50 of both. Run against a `serve` that answers with a real (local) model:

    python3 bench/quality/ttft.py http://127.0.0.1:3000 TOKEN "What CO2 level is poor?" ...

With no questions it asks five documentation questions of the golden set.
"""
import json
import statistics
import sys
import time
import urllib.request

DEFAULT_QUESTIONS = [
    "What CO2 level is poor?",
    "What CO2 concentration does outdoor air have?",
    "Which relative humidity range is comfortable in an office?",
    "When are the door counters reset to zero?",
    "In which unit do noise sensors report?",
]


def ask(base, token, question):
    body = json.dumps({"question": question, "stream": True}).encode()
    request = urllib.request.Request(
        base + "/ask",
        body,
        {"Content-Type": "application/json", "Authorization": "Bearer " + token},
    )
    started = time.monotonic()
    first_token = done = None
    event = None
    usage = {}
    with urllib.request.urlopen(request, timeout=900) as response:
        for raw in response:
            line = raw.decode("utf-8").rstrip("\n")
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event == "token" and first_token is None:
                first_token = time.monotonic() - started
            elif line.startswith("data:") and event == "done":
                done = time.monotonic() - started
                usage = json.loads(line[5:]).get("usage", {})
    return first_token, done, usage


def main():
    base, token = sys.argv[1], sys.argv[2]
    questions = sys.argv[3:] or DEFAULT_QUESTIONS
    firsts, dones = [], []
    print("| question | first token | done | prompt tokens | cached | model calls |")
    print("|---|---:|---:|---:|---:|---:|")
    for question in questions:
        first, done, usage = ask(base, token, question)
        if first is not None:
            firsts.append(first)
        if done is not None:
            dones.append(done)
        shown = "-" if first is None else f"{first:.1f} s"
        print(f"| {question} | {shown} | {done:.1f} s | {usage.get('prompt_tokens', 0)} "
              f"| {usage.get('cached_prompt_tokens', 0)} | {usage.get('model_calls', 0)} |")
    if firsts:
        print(f"\np50 first token {statistics.median(firsts):.1f} s, "
              f"p50 done {statistics.median(dones):.1f} s over {len(dones)} answers")


if __name__ == "__main__":
    main()
