#!/usr/bin/env bash
# Instructions per /ask answer, which do not move with the machine as timings do: the server
# (`serve` on the one-call path or the `bare` handler; `search-first`, serve searching the empty
# store before its call, or `bare-search`, the same search and call) under callgrind, one wrk connection
# for SHORT then LONG seconds; the difference of the two profiles over the difference in
# answers cancels start-up. Prints the whole process and the TOP inclusive frames per answer
# (the table of BENCHMARKS.md's "Instructions per served answer"). Slow: about two minutes.
# KEEP=DIR keeps both profiles there (short.cg, long.cg) for callgrind_annotate.
# usage: [SHORT=8] [LONG=20] [TOP=40] [KEEP=DIR] bench/ask-instructions.sh serve|bare|search-first|bare-search
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 1; }
target=$1; work=$(mktemp -d); pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$helper" provider > "$work/provider.out" 2>&1 & pids+=($!)
for _ in $(seq 50); do [ -s "$work/provider.out" ] && break; sleep 0.1; done
provider=$(head -n1 "$work/provider.out")
DATABASE_URL="sqlite://$work/kb.sqlite" "$bin" db migrate >/dev/null
settings=(DATABASE_URL="sqlite://$work/kb.sqlite" LLM_BASE_URL="$provider/v1" OPENROUTER_API_KEY=bench
  ANSWER_MODEL=bench/model REQUIRE_AUTH=false EMBEDDING_PROVIDER=local MAX_IN_FLIGHT=1024 RUST_LOG=warn
  MAX_IN_FLIGHT_PER_CALLER=0 REQUESTS_PER_MINUTE=0 TOKENS_PER_HOUR=0 SCOPE_CHECK=false)
case $target in
  serve|bare) settings+=(SEARCH_FIRST=false); limit=bare ;;
  search-first|bare-search) limit=bare-search ;;
  *) echo "usage: bench/ask-instructions.sh serve|bare|search-first|bare-search" >&2; exit 2 ;;
esac

# One profiled run of $seconds; prints the answers it made.
profile() {
  local seconds=$1 out=$2 port url pid
  port=$(port); url="http://127.0.0.1:$port"
  if [ "$target" = serve ] || [ "$target" = search-first ]; then
    env "${settings[@]}" BIND="127.0.0.1:$port" valgrind --tool=callgrind --callgrind-out-file="$out" \
      "$bin" serve > "$work/server.out" 2>&1 & pid=$!
  else
    env "${settings[@]}" BIND="127.0.0.1:$port" "$bin" serve > "$work/capture.out" 2>&1 & local capture=$!
    for _ in $(seq 100); do curl -fs "$url/healthz" >/dev/null && break; sleep 0.1; done
    curl -fs -XPOST -H 'content-type: application/json' -d '{"question":"capture"}' "$url/ask" >/dev/null
    curl -fs "$provider/last-request" > "$work/request.json"
    kill "$capture"; wait "$capture" 2>/dev/null || true
    env DATABASE_URL="sqlite://$work/kb.sqlite" EMBEDDING_PROVIDER=local valgrind --tool=callgrind \
      --callgrind-out-file="$out" "$helper" "$limit" "$provider" "$work/request.json" \
      > "$work/server.out" 2>&1 & pid=$!
    for _ in $(seq 600); do grep -q '^http' "$work/server.out" && break; sleep 0.2; done
    url=$(grep '^http' "$work/server.out" | head -n1)
  fi
  pids+=($pid)
  for _ in $(seq 600); do curl -fs -XPOST -H 'content-type: application/json' \
    -d '{"question":"warm up"}' "$url/ask" >/dev/null 2>&1 && break; sleep 0.2; done
  wrk -t1 -c1 -d"${seconds}s" -s bench/peer/ask.lua "$url/ask" | sed -n 's/ *\([0-9]*\) requests in.*/\1/p'
  kill -INT "$pid"; sleep 3; kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
}
short=$(profile "${SHORT:-8}" "$work/short.cg"); long=$(profile "${LONG:-20}" "$work/long.cg")
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$work/short.cg" "$work/long.cg" "$KEEP/"; fi
python3 - "$work/short.cg" "$work/long.cg" "$short" "$long" "${TOP:-40}" <<'PY'
import re, subprocess, sys
def frames(path):
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout
    found = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)", line)
        if m:
            name = re.sub(r"\s*\[.*\]$", "", m.group(2)).replace("???:", "")
            found[name] = found.get(name, 0) + int(m.group(1).replace(",", ""))
    return found
short, long = frames(sys.argv[1]), frames(sys.argv[2])
answers = int(sys.argv[4]) - int(sys.argv[3])
per = {k: (long.get(k, 0) - short.get(k, 0)) / answers for k in long}
print(f"answers: {answers} (the longer run less the shorter)")
print(f"instructions per answer, whole process: {per.get('PROGRAM TOTALS', 0):,.0f}")
# Recursive frames ("poll'2") count their callees again; only the outermost are listed.
listed = [kv for kv in per.items() if not re.search(r"'\d+$", kv[0])]
for name, count in sorted(listed, key=lambda kv: -kv[1])[: int(sys.argv[5])]:
    print(f"{count:10,.0f}  {name[:140]}")
PY
