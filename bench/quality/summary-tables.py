#!/usr/bin/env python3
"""Prints the QUALITY.md tables (headline, per tag, per assertion kind, cases that did not pass)
from one or more eval JSON reports, one column per report:

    python3 summary-tables.py 1.5B=run15.json 0.5B=run05.json
"""
import json
import sys


def rate(rates, key):
    found = rates.get(key)
    return f"{found['passed']}/{found['total']}" if found else ""


def headline(name, summary):
    runs, usage = summary["runs"], summary["usage"]
    return (f"| {name} | {summary['pass_rate'] * 100:.1f}% ({summary['pass']}/{summary['cases']}) "
            f"| {summary['pass']} | {summary['fail']} | {summary['error']} | {summary['xfail']} "
            f"| {summary['latency_ms_mean'] / 1000:.1f} s | {summary['latency_ms_p95'] / 1000:.1f} s "
            f"| {usage['total_tokens'] // runs:,} ({usage['prompt_tokens'] // runs:,} + "
            f"{usage['completion_tokens'] // runs:,}) | {summary['judge_usage']['total_tokens']:,} |")


def breakdown(title, field, reports, quote):
    names = [name for name, _ in reports]
    keys = sorted(set().union(*(model["summary"][field] for _, model in reports)))
    print(f"| {title} | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for key in keys:
        label = f"`{key}`" if quote else key
        print(f"| {label} | " + " | ".join(rate(m["summary"][field], key) for _, m in reports) + " |")
    print()


def main():
    reports = []
    for argument in sys.argv[1:]:
        name, path = argument.split("=", 1)
        reports.append((name, json.load(open(path, encoding="utf-8"))["models"][0]))
    print("| run | pass rate | PASS | FAIL | ERROR | XFAIL | mean latency | p95 latency "
          "| tokens per answer (prompt + completion) | judge tokens |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, model in reports:
        print(headline(name, model["summary"]))
    print()
    breakdown("tag", "by_tag", reports, quote=False)
    breakdown("assertion", "by_assertion", reports, quote=True)
    for name, model in reports:
        failed = [c["id"] for c in model["cases"] if c["status"].lower() in ("fail", "error", "xpass")]
        print(f"{name}, not passing: {', '.join(failed)}")


if __name__ == "__main__":
    main()
