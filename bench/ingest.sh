#!/usr/bin/env bash
# Full ingest of the shared corpus (the run exits 1: four files have invalid front matter) with the local embedder on both stores, then a no-op
# re-ingest, with the release binary. Prints seconds and chunks per second for each.
# usage: bench/ingest.sh [CORPUS]   (Postgres: TEST_POSTGRES_URL, default the local server)
set -euo pipefail
cd "$(dirname "$0")/.."
corpus=${1:-../shared/corpus}
admin=${TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cargo build --release --quiet
bin=${CARGO_TARGET_DIR:-target}/release/crowdvision-agent
export EMBEDDING_PROVIDER=local

run() { # label, database url
  local label=$1 url=$2 first second chunks
  first=$( { /usr/bin/time -f %e env DATABASE_URL="$url" "$bin" ingest --json "$corpus" > "$work/first.json" || true; } 2>&1 | tail -n1)
  chunks=$(python3 -c "import json;print(json.load(open('$work/first.json'))['chunks_written'])")
  second=$( { /usr/bin/time -f %e env DATABASE_URL="$url" "$bin" ingest --json "$corpus" > "$work/second.json" || true; } 2>&1 | tail -n1)
  python3 - "$label" "$first" "$second" "$chunks" "$work/second.json" <<'PY'
import json, sys
label, first, second, chunks, summary = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
skipped = json.load(open(summary))["skipped"]
print(f"{label}: first ingest {first:.2f} s, {chunks} chunks, {chunks / first:,.0f} chunks/s; "
      f"no-op re-ingest {second:.2f} s ({skipped} skipped, {second / first:.1%} of the first)")
PY
}

run "sqlite" "sqlite://$work/kb.sqlite"

db=cv_bench_$$
psql "$admin" -qc "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null 2>&1
run "postgres" "${admin%/*}/$db"
psql "$admin" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null
