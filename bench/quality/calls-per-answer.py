#!/usr/bin/env python3
"""Counts the answer model's chat requests and prompt tokens per golden case, from the request
log of route-models.py (LOG=file) and the eval's JSON report of the same run (BENCHMARKS.md,
"Model calls and prompt tokens per documentation answer").

    python3 calls-per-answer.py route.log report.json [tag]   # tag defaults to "docs"

The eval must have run with --jobs 1, so that a case's requests follow one another. A case
begins with its topic check (a request whose JSON schema is named "topic"); cases answered
without one (greetings, live questions) are not counted, and the requests after a counted case
are cut where they add up to the prompt tokens the report gives for it. Judge requests (any
other schema name) and embedding requests are left out.
"""
import json
import statistics
import sys

ANSWER_SCHEMAS = (None, "topic", "answer")


def read_requests(log_path, model):
    """(schema name, first question, prompt tokens) of each answer-model chat request."""
    for line in open(log_path, encoding="utf-8"):
        entry = json.loads(line)
        try:
            request = json.loads(entry["req"])
            reply = json.loads(entry["resp"])
        except (ValueError, KeyError):
            continue
        if "messages" not in request or request.get("model") != model:
            continue
        schema = (request.get("response_format") or {}).get("json_schema", {}).get("name")
        if schema not in ANSWER_SCHEMAS:
            continue
        question = request["messages"][1]["content"] if schema == "topic" else None
        yield schema, question, reply.get("usage", {}).get("prompt_tokens", 0)


def group_by_case(requests):
    """[question, [prompt tokens of each request]] from each topic check to the next."""
    groups = []
    for schema, question, prompt_tokens in requests:
        if schema == "topic":
            groups.append([question.removeprefix("Question: ").strip(), []])
        if groups:
            groups[-1][1].append(prompt_tokens)
    return groups


def calls_per_case(groups, cases):
    """Case id -> (calls, prompt tokens), each group given to the next case with its question."""
    counted = {}
    for question, tokens in groups:
        case = next(
            (c for c in cases if c["id"] not in counted and c["question"].strip() == question),
            None,
        )
        if case is None:
            continue
        reported = case["runs"][0]["usage"]["prompt_tokens"]
        calls, total = 0, 0
        for prompt_tokens in tokens:
            if total >= reported:
                break
            calls, total = calls + 1, total + prompt_tokens
        counted[case["id"]] = (calls, total)
    return counted


def main():
    log_path, report_path = sys.argv[1], sys.argv[2]
    tag = sys.argv[3] if len(sys.argv) > 3 else "docs"
    report = json.load(open(report_path, encoding="utf-8"))["models"][0]
    counted = calls_per_case(group_by_case(read_requests(log_path, report["model"])), report["cases"])
    tagged = [c for c in report["cases"] if tag in c["tags"]]
    for case in tagged:
        calls, _ = counted.get(case["id"], (0, 0))
        run = case["runs"][0]
        print(f"{case['id']}: {calls} calls, {run['usage']['prompt_tokens']} prompt tokens, tools {run['tools']}")
    calls = [counted.get(c["id"], (0, 0))[0] for c in tagged]
    prompt = [c["runs"][0]["usage"]["prompt_tokens"] for c in tagged]
    print(f"{len(tagged)} cases tagged {tag}; cases by number of calls (topic check included): "
          f"{dict(sorted((n, calls.count(n)) for n in set(calls)))}")
    print(f"prompt tokens per answer: mean {statistics.mean(prompt):.0f}, median {statistics.median(prompt):.0f}")


if __name__ == "__main__":
    main()
