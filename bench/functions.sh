# Functions the bench scripts and scripts/build-pgo share (sourced; defines, runs nothing).

# A free loopback TCP port.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Reads cargo's `--message-format=json` on standard input; prints the serve_load helper's path.
serve_load_executable() {
  python3 -c 'import json,sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "serve_load" and m.get("executable"):
        print(m["executable"])'
}

# The request body a wrk script of bench/peer/ sends (its `wrk.body = '…'` line).
wrk_body() { sed -n "s/^wrk.body = '\(.*\)'$/\1/p" "$1"; }
