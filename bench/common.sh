# Shared by the bench scripts (sourced, from the repository root): a release build of the agent
# and of the serve_load helper (its `provider` role is an instant OpenAI-compatible server).
# Sets $bin and $helper; defines port().
cargo build --release --quiet
helper=$(cargo bench --bench serve_load --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "serve_load" and m.get("executable"):
        print(m["executable"])')
bin=${CARGO_TARGET_DIR:-target}/release/crowdvision-agent
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
