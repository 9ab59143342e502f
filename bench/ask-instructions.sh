#!/usr/bin/env bash
# Instructions per /ask answer, which do not move with the machine as timings do: the server
# (`serve` on the one-call path or the `bare` handler; `search-first`, serve searching the empty
# store before its call, or `bare-search`, the same search and call; `docs`, serve answering a
# question its user documentation answers from a store holding it, or `bare-docs`, the same
# search and the request serve sent) under callgrind, one wrk connection
# for SHORT then LONG seconds; the difference of the two profiles over the difference in
# answers cancels start-up. Prints the whole process and the TOP inclusive frames per answer
# (the table of BENCHMARKS.md's "Instructions per served answer"). Slow: about two minutes.
# KEEP=DIR keeps both profiles there (short.cg, long.cg) for callgrind_annotate.
# CACHE=1 simulates a core's caches too (32 KB L1 code, 48 KB L1 data, 1 MB second level) and
# prints their misses per answer (BENCHMARKS.md, "Whole-program optimisation").
# usage: [SHORT=8] [LONG=20] [TOP=40] [KEEP=DIR] [CACHE=1] bench/ask-instructions.sh serve|bare|search-first|bare-search|docs|bare-docs
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/common.sh
command -v valgrind >/dev/null || { echo "valgrind is needed" >&2; exit 1; }
target=$1; work=$(mktemp -d); pids=()
callgrind=(valgrind --tool=callgrind)
if [ -n "${CACHE:-}" ]; then
  callgrind+=(--cache-sim=yes --I1=32768,8,64 --D1=49152,12,64 --LL=1048576,16,64)
fi
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
"$helper" provider > "$work/provider.out" 2>&1 & pids+=($!)
for _ in $(seq 50); do [ -s "$work/provider.out" ] && break; sleep 0.1; done
provider=$(head -n1 "$work/provider.out")
DATABASE_URL="sqlite://$work/kb.sqlite" "$bin" db migrate >/dev/null
settings=(DATABASE_URL="sqlite://$work/kb.sqlite" LLM_BASE_URL="$provider/v1" OPENROUTER_API_KEY=bench
  ANSWER_MODEL=bench/model REQUIRE_AUTH=false EMBEDDING_PROVIDER=local MAX_IN_FLIGHT=1024 RUST_LOG=warn
  MAX_IN_FLIGHT_PER_CALLER=0 REQUESTS_PER_MINUTE=0 TOKENS_PER_HOUR=0 SCOPE_CHECK=false)
load=ask; captured='{"question":"capture"}'
case $target in
  serve|bare) settings+=(SEARCH_FIRST=false); limit=bare ;;
  search-first|bare-search) limit=bare-search ;;
  docs|bare-docs) limit=bare-docs; load=ask-docs
    captured=$(wrk_body bench/peer/ask-docs.lua)
    DATABASE_URL="sqlite://$work/kb.sqlite" EMBEDDING_PROVIDER=local "$bin" ingest documentation/user >/dev/null ;;
  *) echo "usage: bench/ask-instructions.sh serve|bare|search-first|bare-search|docs|bare-docs" >&2; exit 2 ;;
esac
warm_up=$(wrk_body "bench/peer/$load.lua")

# One profiled run of $seconds; prints the answers it made.
profile() {
  local seconds=$1 out=$2 port url pid
  port=$(port); url="http://127.0.0.1:$port"
  if [ "$target" = serve ] || [ "$target" = search-first ] || [ "$target" = docs ]; then
    env "${settings[@]}" BIND="127.0.0.1:$port" "${callgrind[@]}" --callgrind-out-file="$out" \
      "$bin" serve > "$work/server.out" 2>&1 & pid=$!
  else
    env "${settings[@]}" BIND="127.0.0.1:$port" "$bin" serve > "$work/capture.out" 2>&1 & local capture=$!
    for _ in $(seq 100); do curl -fs "$url/healthz" >/dev/null && break; sleep 0.1; done
    curl -fs -XPOST -H 'content-type: application/json' -d "$captured" "$url/ask" >/dev/null
    curl -fs "$provider/last-request" > "$work/request.json"
    kill "$capture"; wait "$capture" 2>/dev/null || true
    env DATABASE_URL="sqlite://$work/kb.sqlite" EMBEDDING_PROVIDER=local "${callgrind[@]}" \
      --callgrind-out-file="$out" "$helper" "$limit" "$provider" "$work/request.json" \
      > "$work/server.out" 2>&1 & pid=$!
    for _ in $(seq 600); do grep -q '^http' "$work/server.out" && break; sleep 0.2; done
    url=$(grep '^http' "$work/server.out" | head -n1)
  fi
  pids+=($pid)
  for _ in $(seq 600); do curl -fs -XPOST -H 'content-type: application/json' \
    -d "$warm_up" "$url/ask" >/dev/null 2>&1 && break; sleep 0.2; done
  wrk -t1 -c1 -d"${seconds}s" -s "bench/peer/$load.lua" "$url/ask" | sed -n 's/ *\([0-9]*\) requests in.*/\1/p'
  kill -INT "$pid"; sleep 3; kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true
}
short=$(profile "${SHORT:-8}" "$work/short.cg"); long=$(profile "${LONG:-20}" "$work/long.cg")
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP"; cp "$work/short.cg" "$work/long.cg" "$KEEP/"; fi
python3 - "$work/short.cg" "$work/long.cg" "$short" "$long" "${TOP:-40}" <<'PY'
import re, subprocess, sys
def frames(path):
    text = subprocess.run(["callgrind_annotate", "--show=Ir", "--inclusive=yes", "--threshold=100", path],
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
def totals(path):
    text = subprocess.run(["callgrind_annotate", path], capture_output=True, text=True, check=True).stdout
    events = re.search(r"^Events shown:\s+(.*)$", text, re.M).group(1).split()
    line = next(l for l in text.splitlines() if "PROGRAM TOTALS" in l)
    return dict(zip(events, (int(n.replace(",", "")) for n in re.findall(r"([\d,]+) \(", line))))
before, after = totals(sys.argv[1]), totals(sys.argv[2])
if "I1mr" in after:  # CACHE=1
    names = {"I1mr": "L1 code", "D1mr": "L1 data read", "D1mw": "L1 data write",
             "ILmr": "L2 code", "DLmr": "L2 data read", "DLmw": "L2 data write"}
    print("cache misses per answer: " + ", ".join(
        f"{label} {(after[e] - before[e]) / answers:,.0f}" for e, label in names.items()))
# Recursive frames ("poll'2") count their callees again; only the outermost are listed.
listed = [kv for kv in per.items() if not re.search(r"'\d+$", kv[0])]
for name, count in sorted(listed, key=lambda kv: -kv[1])[: int(sys.argv[5])]:
    print(f"{count:10,.0f}  {name[:140]}")
PY
