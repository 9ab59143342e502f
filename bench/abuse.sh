#!/usr/bin/env bash
# `serve` under abuse, the two figures of BENCHMARKS.md "Abuse: labels and memory":
#   1. the size of /metrics after 10,000 answers that each name a different model (an admin may
#      choose the model), next to its size after the first 100;
#   2. serve's resident memory when idle after each of 10 rounds of large requests (a 60 KiB
#      history, a 4,000-character question, and a third of them with oversized or duplicated
#      identity headers, refused), 400 requests a round from 8 clients.
# Loopback only; the provider is the serve_load bench's instant one. Release build.
# usage: bench/abuse.sh        (ROUNDS=10 PER_ROUND=400 MODELS=10000)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-10}
per_round=${PER_ROUND:-400}
models=${MODELS:-10000}
work=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

source bench/common.sh

"$helper" provider > "$work/provider.out" 2> "$work/provider.err" &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/provider.out" ] && break; sleep 0.1; done
provider=$(head -n1 "$work/provider.out")

serve_port=$(port)
DATABASE_URL="sqlite://$work/kb.sqlite" "$bin" db migrate >/dev/null
env DATABASE_URL="sqlite://$work/kb.sqlite" LLM_BASE_URL="$provider/v1" OPENROUTER_API_KEY=bench \
  ANSWER_MODEL=bench/model EMBEDDING_PROVIDER=local SCOPE_CHECK=false SEARCH_FIRST=false \
  MAX_IN_FLIGHT=1024 MAX_IN_FLIGHT_PER_CALLER=0 REQUESTS_PER_MINUTE=0 TOKENS_PER_HOUR=0 \
  RUST_LOG=error BIND="127.0.0.1:$serve_port" "$bin" serve > "$work/serve.out" 2> "$work/serve.err" &
serve_pid=$!; pids+=($serve_pid)
url="http://127.0.0.1:$serve_port"
for _ in $(seq 100); do curl -fs "$url/healthz" >/dev/null 2>&1 && break; sleep 0.1; done

python3 - "$url" "$serve_pid" "$rounds" "$per_round" "$models" <<'PY'
import base64, http.client, json, sys, threading, time, urllib.parse
url, pid, rounds, per_round, models = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
host = urllib.parse.urlparse(url)
admin = base64.b64encode(json.dumps({"sub": "bench-admin", "roles": ["admin"]}).encode()).decode()

def rss_mb():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) / 1024

def connection():
    return http.client.HTTPConnection(host.hostname, host.port, timeout=30)

def post(conn, body, headers):
    conn.request("POST", "/ask", body=body, headers={"content-type": "application/json", **headers})
    response = conn.getresponse()
    response.read()
    return response.status

def metrics_bytes():
    conn = connection()
    conn.request("GET", "/metrics")
    return len(conn.getresponse().read())

def run(jobs, clients=8):
    statuses = {}
    lock = threading.Lock()
    def worker(part):
        conn = connection()
        for body, headers in part:
            status = post(conn, body, headers)
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
    threads = [threading.Thread(target=worker, args=(jobs[i::clients],)) for i in range(clients)]
    for t in threads: t.start()
    for t in threads: t.join()
    return statuses

# 1. Random model names.
question = json.dumps({"question": "Is the lobby open?", "model": None})
def named(i):
    return (json.dumps({"question": "Is the lobby open?", "model": f"caller-chosen/model-{i}"}), {"x-gateway-claims": admin})
run([named(i) for i in range(100)])
after_100 = metrics_bytes()
started = time.time()
statuses = run([named(i) for i in range(100, models)])
print(f"/metrics after 100 answers with their own model names: {after_100:,} bytes; after {models:,}: {metrics_bytes():,} bytes ({time.time() - started:.0f} s, statuses {statuses})")

# 2. Large requests, rounds of them.
staff = base64.b64encode(json.dumps({"sub": "bench-staff", "memberships": [{"domain": "acme", "role": "business_staff"}]}).encode()).decode()
history = [{"role": "user" if i % 2 == 0 else "assistant", "content": "x" * 1200} for i in range(46)]
big = json.dumps({"question": "q" * 4000, "history": history})
def large(i):
    if i % 3 == 1:
        return (big, {"x-gateway-claims": "A" * 15000})  # oversized claims: refused
    if i % 3 == 2:
        return (big, {"authorization": "Bearer " + "B" * 9000, "cookie": "authentication_token=" + "C" * 9000})
    return (big, {"x-gateway-claims": staff})
time.sleep(1)
print(f"idle RSS before the rounds: {rss_mb():.1f} MB; request body {len(big):,} bytes")
line = []
for r in range(rounds):
    statuses = run([large(i) for i in range(per_round)])
    time.sleep(1)
    line.append(f"{rss_mb():.1f}")
    print(f"round {r + 1}: statuses {statuses}, idle RSS {line[-1]} MB", flush=True)
print("idle RSS after each round (MB): " + ", ".join(line))
PY
