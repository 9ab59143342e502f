#!/usr/bin/env python3
"""What a customer retrieves for the golden set's documentation questions.

For every case tagged `docs` in datasets/golden.yaml, runs `crowdvision-agent search Q -k 6
--json` as a standard_customer of acme against the store DATABASE_URL names, and prints how many
developer passages reached the top 6 and, over the cases with `cited_sources`, recall@6 and
MRR@6 of the expected page. Needs python3 with PyYAML (the bench venv, target/bench-venv, has
it) and the binary on PATH or in BIN.

    DATABASE_URL=sqlite:///tmp/kb.sqlite bench/customer-ranking.py
"""
import json
import os
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("BIN", "crowdvision-agent")
CUSTOMER = {"sub": "c", "memberships": [{"domain": "acme", "role": "standard_customer"}]}


def search(question, claims):
    out = subprocess.run(
        [BIN, "search", question, "--claims", claims, "-k", "6", "--json"],
        capture_output=True, text=True, check=True,
    )
    return [r["source"] for r in json.loads(out.stdout)["results"]]


def main():
    with open(os.path.join(ROOT, "datasets/golden.yaml")) as f:
        cases = [c for c in yaml.safe_load(f)["cases"] if "docs" in c.get("tags", [])]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as claims:
        json.dump(CUSTOMER, claims)
    developer, found, reciprocal, labelled = 0, 0, 0.0, 0
    for case in cases:
        sources = search(case["question"], claims.name)
        developer += sum(s.startswith("developer/") for s in sources)
        expected = (case.get("expect") or {}).get("cited_sources")
        if expected:
            labelled += 1
            rank = next((i + 1 for i, s in enumerate(sources) if s in expected), None)
            if rank:
                found += 1
                reciprocal += 1 / rank
    print(f"documentation questions: {len(cases)}")
    print(f"developer passages in the top 6: {developer}")
    print(f"recall@6 of the expected page: {found}/{labelled}, MRR@6: {reciprocal / labelled:.3f}")


if __name__ == "__main__":
    sys.exit(main())
