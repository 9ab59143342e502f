# Shared by the bench scripts (sourced, from the repository root): a release build of the agent
# and of the serve_load helper (its `provider` role is an instant OpenAI-compatible server).
# Sets $bin and $helper; defines port() and serve_load_executable() (bench/functions.sh).
# PGO=1: the profile-guided build scripts/build-pgo made (it must exist) instead.
# BIN=… HELPER=…: these two binaries as they are (scripts/build-pgo's training runs).
source bench/functions.sh
root=${CARGO_TARGET_DIR:-target}
if [ -n "${BIN:-}" ] && [ -n "${HELPER:-}" ]; then
  bin=$BIN; helper=$HELPER
elif [ -n "${PGO:-}" ]; then
  bin=$root/pgo/bin/crowdvision-agent; helper=$root/pgo/bin/serve_load
  [ -x "$bin" ] && [ -x "$helper" ] || { echo "PGO=1: run scripts/build-pgo first" >&2; exit 1; }
else
  cargo build --release --quiet
  helper=$(cargo bench --bench serve_load --no-run --message-format=json 2>/dev/null | serve_load_executable)
  bin=$root/release/crowdvision-agent
fi
