#!/usr/bin/env bash
# /ask under load: `serve` against the limit (a bare axum handler making the same single provider
# call) and the peer (FastAPI + uvicorn + httpx), all three over the same zero-latency scripted
# provider, with wrk at 1, 16 and 256 concurrent connections; serve also on its default
# documentation path, twice: the question searched in an empty store first (`serve-search-first`,
# against `bare-search`, which makes the same search through the library and the same call), and
# a question the project's user documentation answers, searched in a store holding it
# (`serve-docs`, answered from a passage with its marker, against `bare-docs`, the same search
# and the request serve sent); and on the live path (`serve-live`, an Acme staff member asking
# about a room, against `bare-live`, the provider's get_occupancy call, the one simulator request
# and the second call); then serve's resident memory idle and with 256 open SSE streams.
# Installs wrk from Debian and the peer into a venv when missing.
# usage: bench/serve-load.sh        (DURATION=10s per run, RUNS=3, CLIENTS="1 16 256"; PGO=1: the
#        build of scripts/build-pgo; TARGETS="serve-search-first bare-search": only those rows)
# Each share printed at the end is the median over runs of target ÷ limit within one run.
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${DURATION:-10s}
runs=${RUNS:-3}
clients=${CLIENTS:-1 16 256}
work=$(mktemp -d)
pids=()
cleanup() {
  kill "${pids[@]}" 2>/dev/null || true
  # Up to 5 s to exit as asked (an instrumented build writes its profile at exit), then not.
  for _ in $(seq 50); do
    alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    sleep 0.1
  done
  kill -9 "${pids[@]}" 2>/dev/null || true # uvicorn waits for the connections wrk gave up on
  rm -rf "$work"
}
trap cleanup EXIT

command -v wrk >/dev/null || { apt-get install -y -qq wrk >/dev/null 2>&1 || sudo apt-get install -y -qq wrk >/dev/null 2>&1; }
venv=target/bench-venv
if [ ! -x "$venv/bin/uvicorn" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r bench/peer/requirements.txt
fi

source bench/common.sh

# start NAME COMMAND...: runs it in the background; its first output line is its URL, in $url.
start() {
  local name=$1; shift
  "$@" > "$work/$name.out" 2> "$work/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do [ -s "$work/$name.out" ] && break; sleep 0.1; done
  url=$(head -n1 "$work/$name.out")
}
wait_ready() { for _ in $(seq 100); do curl -fs "$1" >/dev/null 2>&1 && return; sleep 0.1; done; echo "$1 never answered" >&2; exit 1; }
wait_ready_post() { for _ in $(seq 100); do curl -fs -XPOST -H 'content-type: application/json' -d '{"question":"ready"}' "$1" >/dev/null 2>&1 && return; sleep 0.1; done; echo "$1 never answered" >&2; exit 1; }
rss_mb() { awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$1/status"; }

start provider "$helper" provider; provider=$url

DATABASE_URL="sqlite://$work/kb.sqlite" "$bin" db migrate >/dev/null
# start_serve NAME SETTING=VALUE...: one serve over the shared SQLite store; sets $url and $pid.
# RUST_LOG=warn: no line per request, as the peer runs with --no-access-log (metrics stay on).
# The per-caller limits are off: every request of the load comes from the one anonymous caller.
start_serve() {
  local name=$1 serve_port; shift
  serve_port=$(port)
  env DATABASE_URL="sqlite://$work/kb.sqlite" LLM_BASE_URL="$provider/v1" OPENROUTER_API_KEY=bench \
    ANSWER_MODEL=bench/model REQUIRE_AUTH=false EMBEDDING_PROVIDER=local MAX_IN_FLIGHT=1024 RUST_LOG=warn \
    MAX_IN_FLIGHT_PER_CALLER=0 REQUESTS_PER_MINUTE=0 TOKENS_PER_HOUR=0 "$@" \
    BIND="127.0.0.1:$serve_port" "$bin" serve > "$work/$name.out" 2> "$work/$name.err" &
  pid=$!; pids+=($pid)
  url="http://127.0.0.1:$serve_port"
  wait_ready "$url/healthz"
}
# SCOPE_CHECK=false SEARCH_FIRST=false: one model call per answer and nothing else, the same
# work as the limit and the peer.
start_serve serve SCOPE_CHECK=false SEARCH_FIRST=false; serve=$url; serve_pid=$pid
# The default documentation path: the question is searched in the (empty) store before the call.
start_serve search-first SCOPE_CHECK=false; search_first=$url; search_first_pid=$pid
# The limit sends exactly the request serve sends (system prompt, tool definitions, settings).
curl -fs -XPOST -H 'content-type: application/json' -d '{"question":"capture"}' "$serve/ask" >/dev/null
curl -fs "$provider/last-request" > "$work/request.json"
start bare "$helper" bare "$provider" "$work/request.json"; bare=$url; bare_pid=${pids[-1]}
# The documentation path's limit: the same search of the same store, then the call search-first
# sends after finding nothing.
curl -fs -XPOST -H 'content-type: application/json' -d '{"question":"capture"}' "$search_first/ask" >/dev/null
curl -fs "$provider/last-request" > "$work/search-request.json"
DATABASE_URL="sqlite://$work/kb.sqlite" EMBEDDING_PROVIDER=local \
  start bare_search "$helper" bare-search "$provider" "$work/search-request.json"
bare_search=$url; bare_search_pid=${pids[-1]}
wait_ready_post "$bare_search/ask"

# The documentation path that finds passages: the project's user documentation in a store of
# its own, a question it answers (`serve-docs`), against `bare-docs`, which makes the same search
# and posts the request serve sent for that question.
docs_store="sqlite://$work/docs.sqlite"
DATABASE_URL=$docs_store "$bin" db migrate >/dev/null
DATABASE_URL=$docs_store EMBEDDING_PROVIDER=local "$bin" ingest documentation/user >/dev/null
start_serve docs SCOPE_CHECK=false DATABASE_URL="$docs_store"; docs=$url; docs_pid=$pid
docs_body=$(wrk_body bench/peer/ask-docs.lua)
curl -fs -XPOST -H 'content-type: application/json' -d "$docs_body" "$docs/ask" > "$work/docs.json"
python3 - "$work/docs.json" <<'PY' || exit 1
import json, sys
answer = json.load(open(sys.argv[1]))
if answer["decision"] != "answered" or not answer["citations"] or answer["usage"]["model_calls"] != 1:
    sys.exit(f"the documentation path did not answer from a passage in one call: {answer}")
PY
curl -fs "$provider/last-request" > "$work/docs-request.json"
DATABASE_URL=$docs_store EMBEDDING_PROVIDER=local \
  start bare_docs "$helper" bare-docs "$provider" "$work/docs-request.json"
bare_docs=$url; bare_docs_pid=${pids[-1]}
wait_ready_post "$bare_docs/ask"

# The live path: the simulator as the twin and sensor services, an Acme staff member asking.
sim_port=$(port)
"$bin" sim --bind "127.0.0.1:$sim_port" > "$work/sim.out" 2>&1 &
pids+=($!)
sim="http://127.0.0.1:$sim_port"
wait_ready "$sim/_sim/requests"
start_serve live SCOPE_CHECK=false SEARCH_FIRST=false TWIN_SERVICE_URL="$sim" SENSOR_SERVICE_URL="$sim"
live=$url; live_pid=$pid
claims=$(sed -n 's/.*X-Gateway-Claims"\] = "\(.*\)"/\1/p' bench/peer/ask-live.lua)
live_body=$(wrk_body bench/peer/ask-live.lua)
curl -fs -XDELETE "$sim/_sim/requests" >/dev/null
curl -fs -XPOST -H 'content-type: application/json' -H "x-gateway-claims: $claims" -d "$live_body" "$live/ask" > "$work/live.json"
grep -q '"get_occupancy"' "$work/live.json" || { echo "the live path made no tool call: $(cat "$work/live.json")" >&2; exit 1; }
live_downstream=$(curl -fs "$sim/_sim/requests" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
curl -fs "$provider/previous-request" > "$work/live-first.json"
curl -fs "$provider/last-request" > "$work/live-second.json"
start bare_live "$helper" bare-live "$provider" "$sim" "$work/live-first.json" "$work/live-second.json" "$claims"; bare_live=$url
bare_live_pid=${pids[-1]}

peer_port=$(port)
PROVIDER_URL=$provider "$venv/bin/uvicorn" --app-dir bench/peer fastapi_ask:app --host 127.0.0.1 \
  --port "$peer_port" --log-level warning --no-access-log > "$work/peer.out" 2>&1 &
pids+=($!)
peer="http://127.0.0.1:$peer_port"
for _ in $(seq 100); do curl -fs -XPOST -H 'content-type: application/json' -d '{"question":"hi"}' "$peer/ask" >/dev/null 2>&1 && break; sleep 0.1; done

peer_pid=${pids[-1]}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
idle_rss=$(rss_mb "$serve_pid")
echo "Each row: the median of $runs runs of $duration by requests/s; server CPU is the target process's own."
echo "One live question made $live_downstream simulator request(s) from serve; bare-live makes 1."
echo
echo "| target | clients | requests/s | p50 | p99 | errors | server CPU per request |"
echo "|---|---:|---:|---:|---:|---:|---:|"
# Each target beside its limit, so that the two runs of a pair are seconds apart.
all_targets=("serve $serve $serve_pid ask" "bare-axum $bare $bare_pid ask"
  "serve-search-first $search_first $search_first_pid ask" "bare-search $bare_search $bare_search_pid ask"
  "serve-docs $docs $docs_pid ask-docs" "bare-docs $bare_docs $bare_docs_pid ask-docs"
  "serve-live $live $live_pid ask-live" "bare-live $bare_live $bare_live_pid ask-live"
  "fastapi $peer $peer_pid ask")
targets=()
for target in "${all_targets[@]}"; do
  name=${target%% *}
  if [ -z "${TARGETS:-}" ] || [[ " $TARGETS " == *" $name "* ]]; then targets+=("$target"); fi
done
[ "${#targets[@]}" -gt 0 ] || { echo "TARGETS names none of: serve bare-axum serve-search-first bare-search serve-docs bare-docs serve-live bare-live fastapi" >&2; exit 2; }
# Runs take turns (run 1 of every target, then run 2, ...) so that a change in what else the
# machine is doing falls on every target alike rather than on the ones measured last; every
# other run goes through the targets backwards, so that neither side of a pair always runs first.
for c in $clients; do
  for run in $(seq "$runs"); do
    order=$(seq 0 $(( ${#targets[@]} - 1 )))
    [ $(( run % 2 )) = 0 ] && order=$(echo "$order" | tac)
    for i in $order; do
      set -- ${targets[$i]}
      warm_up=$(wrk_body "bench/peer/$4.lua")
      curl -fs -XPOST -H 'content-type: application/json' -H "x-gateway-claims: $claims" -d "$warm_up" "$2/ask" >/dev/null
      before=$(cpu_ticks "$3")
      wrk -t"$(( c < 2 ? 1 : 2 ))" -c"$c" -d"$duration" --latency -s "bench/peer/$4.lua" "$2/ask" > "$work/wrk.$i.$run.txt"
      echo $(( $(cpu_ticks "$3") - before )) > "$work/cpu.$i.$run.txt"
      sleep 2 # let a server finish what the clients gave up on before the next run
    done
  done
  for i in "${!targets[@]}"; do
    set -- ${targets[$i]}
    python3 - "$1" "$c" "$work" "$runs" "$(getconf CLK_TCK)" "$i" <<'PY'
import re, sys
name, clients, work, runs, hz, target = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6]
rows = []
for run in range(1, runs + 1):
    text = open(f"{work}/wrk.{target}.{run}.txt").read()
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    total = int(re.search(r"(\d+) requests in", text).group(1))
    ticks = int(open(f"{work}/cpu.{target}.{run}.txt").read())
    rows.append((rate, text, ticks / hz / max(total, 1)))
rate, text, cpu = sorted(rows, key=lambda r: r[0])[len(rows) // 2]
def pct(p):
    m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
    return f"{float(m.group(1)):g} {m.group(2).replace('us', 'µs')}"
errors = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", text))
errors += sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", text))
print(f"| {name} | {clients} | {rate:,.0f} | {pct(50)} | {pct(99)} | {errors} | {cpu * 1e6:.0f} µs |")
with open(f"{work}/rates", "a") as rates:
    for run, (run_rate, _, _) in enumerate(rows, 1):
        rates.write(f"{name} {clients} {run} {run_rate}\n")
PY
  done
done

echo
python3 - "$work/rates" <<'PY'
# A share is the median over runs of the target's requests/s over its limit's in the same run
# (the two ran seconds apart), with the lowest and highest: a drift of the machine between runs
# moves both sides of a pair alike.
import statistics, sys
rates = {}
for line in open(sys.argv[1]):
    name, clients, run, rate = line.split()
    rates.setdefault((name, clients), {})[run] = float(rate)
for target, limit in [("serve", "bare-axum"), ("serve-search-first", "bare-search"),
                      ("serve-docs", "bare-docs"),
                      ("serve-search-first", "bare-axum"), ("serve-live", "bare-live")]:
    shares = []
    for (name, clients), runs in rates.items():
        if name != target or (limit, clients) not in rates:
            continue
        paired = [runs[r] / rates[(limit, clients)][r] for r in runs if r in rates[(limit, clients)]]
        shares.append(f"{statistics.median(paired):.0%} at {clients} ({min(paired):.0%}–{max(paired):.0%})")
    if shares:
        print(f"{target} against {limit}: " + ", ".join(shares))
PY

after_load_rss=$(rss_mb "$serve_pid")
streams_in=$work/streams.in
mkfifo "$streams_in"
"$helper" streams "$serve" 256 < "$streams_in" > "$work/streams.out" &
streams_pid=$!; pids+=($streams_pid)
exec 3> "$streams_in"
for _ in $(seq 300); do grep -q "open 256" "$work/streams.out" 2>/dev/null && break; sleep 0.1; done
grep -q "open 256" "$work/streams.out" || { echo "the 256 streams did not open" >&2; cat "$work/serve.err" >&2; exit 1; }
streams_rss=$(rss_mb "$serve_pid")
exec 3>&-
echo
echo "serve resident memory: idle ${idle_rss} MB, after the load runs ${after_load_rss} MB, with 256 open SSE streams ${streams_rss} MB"
