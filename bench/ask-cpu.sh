#!/usr/bin/env bash
# One /ask target under wrk at 16 connections for 5 s, with the server's CPU (and the kernel's
# part of it), context switches, syscalls and page faults per answer (perf stat, /proc): the
# figures of BENCHMARKS.md's "The embedded store's searches off sqlx". Same provider and
# settings as bench/serve-load.sh, empty store.
# With PERF_RECORD=FILE, also records the server's call graphs there (perf record, DWARF unwinding)
# for `perf report -i FILE --children`: the profile shares BENCHMARKS.md quotes. 64 KiB of stack
# per sample: with 16 KiB, half of serve's deep async stacks ended in `[unknown]`.
# CONNS=N: N connections instead of 16. ALLOCS=1: also counts the server's allocations and their
# bytes per answer (a uprobe on mimalloc's entry point, which slows the server; its requests/s
# and CPU are then not the server's own).
# usage: [PERF_RECORD=FILE] [CONNS=N] [ALLOCS=1] bench/ask-cpu.sh serve|search-first|bare|bare-search
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
command -v perf >/dev/null || { echo "perf is needed (Debian: linux-perf)" >&2; exit 1; }
work=$(mktemp -d); pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$helper" provider > "$work/provider.out" 2>&1 & pids+=($!)
for _ in $(seq 50); do [ -s "$work/provider.out" ] && break; sleep 0.1; done
provider=$(head -n1 "$work/provider.out")
DATABASE_URL="sqlite://$work/kb.sqlite" "$bin" db migrate >/dev/null
serve_port=$(port); url="http://127.0.0.1:$serve_port"
search_first=false; case $1 in search-first|bare-search) search_first=true ;; esac
env DATABASE_URL="sqlite://$work/kb.sqlite" LLM_BASE_URL="$provider/v1" OPENROUTER_API_KEY=bench \
  ANSWER_MODEL=bench/model REQUIRE_AUTH=false EMBEDDING_PROVIDER=local MAX_IN_FLIGHT=1024 RUST_LOG=warn \
  MAX_IN_FLIGHT_PER_CALLER=0 REQUESTS_PER_MINUTE=0 TOKENS_PER_HOUR=0 SCOPE_CHECK=false \
  SEARCH_FIRST=$search_first BIND="127.0.0.1:$serve_port" "$bin" serve > "$work/serve.out" 2>&1 &
pid=$!; pids+=($pid)
for _ in $(seq 100); do curl -fs "$url/healthz" >/dev/null && break; sleep 0.1; done
if [ "$1" = bare ]; then
  curl -fs -XPOST -H 'content-type: application/json' -d '{"question":"capture"}' "$url/ask" >/dev/null
  curl -fs "$provider/last-request" > "$work/request.json"
  "$helper" bare "$provider" "$work/request.json" > "$work/bare.out" 2>&1 & pid=$!; pids+=($pid)
  for _ in $(seq 50); do [ -s "$work/bare.out" ] && break; sleep 0.1; done
  url=$(head -n1 "$work/bare.out")
fi
if [ "$1" = bare-search ]; then # the same search of the same store, then search-first's call
  curl -fs -XPOST -H 'content-type: application/json' -d '{"question":"capture"}' "$url/ask" >/dev/null
  curl -fs "$provider/last-request" > "$work/request.json"
  DATABASE_URL="sqlite://$work/kb.sqlite" EMBEDDING_PROVIDER=local \
    "$helper" bare-search "$provider" "$work/request.json" > "$work/bare.out" 2>&1 & pid=$!; pids+=($pid)
  for _ in $(seq 50); do [ -s "$work/bare.out" ] && break; sleep 0.1; done
  url=$(head -n1 "$work/bare.out")
fi
curl -fs -XPOST -H 'content-type: application/json' -d '{"question":"warm up"}' "$url/ask" >/dev/null
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
system_ticks() { awk '{print $15}' "/proc/$pid/stat"; }
faults() { awk '{print $10}' "/proc/$pid/stat"; }
before=$(ticks); system_before=$(system_ticks); faults_before=$(faults)
perf stat -e context-switches,raw_syscalls:sys_enter -p "$pid" -o "$work/stat" -- sleep 5 &
stat=$!
if [ -n "${PERF_RECORD:-}" ]; then
  perf record -q -F 499 --call-graph dwarf,65528 -p "$pid" -o "$PERF_RECORD" -- sleep 5 2>/dev/null &
  record=$!
fi
if [ -n "${ALLOCS:-}" ]; then
  executable=$(readlink -f "/proc/$pid/exe")
  perf probe -q -x "$executable" 'cv_alloc=mi_malloc_aligned size=%di:u64' 2>/dev/null
  trap 'perf probe -q -d "probe_*:cv_alloc" 2>/dev/null; kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
  perf record -q -e 'probe_*:cv_alloc' -p "$pid" -o "$work/allocs.data" -- sleep 5 2>/dev/null &
  allocs=$!
fi
wrk -t2 -c"${CONNS:-16}" -d5s -s bench/peer/ask.lua "$url/ask" > "$work/wrk.txt"
wait "$stat"
if [ -n "${PERF_RECORD:-}" ]; then wait "$record"; fi
if [ -n "${ALLOCS:-}" ]; then wait "$allocs"; fi
answers=$(sed -n 's/ *\([0-9]*\) requests in.*/\1/p' "$work/wrk.txt")
echo "$1: $(sed -n 's/Requests\/sec: *//p' "$work/wrk.txt") requests/s"
awk -v n="$answers" -v hz="$(getconf CLK_TCK)" -v t=$(( $(ticks) - before )) \
  -v sys=$(( $(system_ticks) - system_before )) -v faults=$(( $(faults) - faults_before )) '
  /context-switches|sys_enter/ { gsub(",", "", $1); printf "  %s per answer: %.2f\n", $2, $1 / n }
  END { printf "  server CPU per answer: %.0f µs, of it in the kernel: %.0f µs\n", t / hz / n * 1e6, sys / hz / n * 1e6
        printf "  page faults per answer: %.3f\n", faults / n }' "$work/stat"
if [ -n "${ALLOCS:-}" ]; then
  perf script -i "$work/allocs.data" -F trace 2>/dev/null | sed -n 's/.*size=\([0-9]*\).*/\1/p' |
    awk -v n="$answers" '{ count++; bytes += $1 }
      END { printf "  allocations per answer: %.0f, %.1f KB\n", count / n, bytes / n / 1024 }'
fi
