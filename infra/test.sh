#!/usr/bin/env bash
# `make test`: every test and the linters, in phases, with a timing summary at the end so a
# regression in any phase is visible.
#   build     the whole workspace, every target
#   unit      every crate's tests and the contract behaviour on the in-memory stack
#             (tests/stack) — no emulator
#   emulator  what needs AWS semantics (tests/emulator), against a moto started on TEST_PORT
#             and stopped afterwards; the linters run beside it (moto works on one core)
#   lint      rustfmt, clippy -D warnings, cfn-lint, the links between README.md and docs/
#   mail      one mail of every kind, written by the unit phase (tests/stack/mail_kinds.rs),
#             scored by Apache SpamAssassin with its shipped rules: each under 2.0 points
#             (infra/spam-check.sh)
#   commands  the README's commands as a user runs them, short: make run in both local modes
#             with make demo DAYS=2 against each, the API check against the one on moto
#             (openapi-spec-validator, schemathesis: infra/api-check.sh), openloop-admin,
#             make bench QUICK=1 (infra/commands-check.sh)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
port=${TEST_PORT:-4599}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
declare -a summary=()
failed=0

phase() { # name, command...
  local name=$1; shift
  local start=$SECONDS
  echo "==> $name"
  if "$@"; then summary+=("$(printf '%-9s %4ds  ok' "$name" $((SECONDS - start)))")
  else summary+=("$(printf '%-9s %4ds  FAILED' "$name" $((SECONDS - start)))"); failed=1; fi
}

# Every cargo call names --workspace, so features unify the same way and nothing is built twice.
lint() {
  cargo fmt --all -- --check &&
    cargo clippy --workspace --all-targets --quiet -- -D warnings &&
    # --all-targets leaves out a `test = false` target: the emulator tests are named alone.
    cargo clippy --workspace --test emulator --quiet -- -D warnings &&
    "$root/.venv/bin/cfn-lint" infra/template.yaml &&
    python3 infra/doc-links.py
}

build() {
  cargo build --workspace --all-targets || return 1
  # What `make run`, `make demo` and `make bench` build (the binaries alone unify features
  # without the dev-dependencies), so the commands phase starts them without compiling.
  cargo build --workspace --bins || return 1
  # The emulator tests' binary, built now and run directly later, so the linters' cargo can
  # hold the build directory meanwhile.
  emulator_bin=$(cargo test --workspace --test emulator --no-run --message-format=json |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "emulator":
        print(m["executable"])')
  [ -x "$emulator_bin" ] || { echo "the emulator tests were not built" >&2; return 1; }
}

emulator() {
  infra/emulator.sh start "$port" || return 1
  curl -s -X POST "http://127.0.0.1:$port/moto-api/reset" >/dev/null
  # As `cargo test` runs it: from the package's folder.
  (cd tests && RUST_MIN_STACK=8388608 AWS_ENDPOINT_URL="http://127.0.0.1:$port" "$emulator_bin")
  local rc=$?
  infra/emulator.sh stop "$port"
  return $rc
}

all=$SECONDS
emulator_bin=
mail_dir=$(mktemp -d)
trap 'rm -rf "$mail_dir"' EXIT
phase build build
if [ $failed -eq 0 ]; then
  # The mail test writes one mail of each kind here for the mail phase.
  phase unit env OPENLOOP_MAIL_SAMPLES_DIR="$mail_dir" cargo test --workspace --all-targets
  # The emulator tests wait on moto (one core); the linters use the other.
  lint_log=$(mktemp)
  ( start=$SECONDS; if lint >"$lint_log" 2>&1; then echo "ok $((SECONDS - start))"; else echo "FAILED $((SECONDS - start))"; fi ) >"$lint_log.status" &
  lint_pid=$!
  phase emulator emulator
  wait $lint_pid
  read -r lint_result lint_secs <"$lint_log.status"
  echo "==> lint"; cat "$lint_log"; rm -f "$lint_log" "$lint_log.status"
  summary+=("$(printf '%-9s %4ds  %s (beside the emulator tests)' lint "$lint_secs" "$lint_result")")
  [ "$lint_result" = ok ] || failed=1
  phase mail infra/spam-check.sh "$mail_dir"
  phase commands infra/commands-check.sh "$port"
fi

echo
echo "make test — time per phase"
printf '  %s\n' "${summary[@]}"
printf '  %-9s %4ds  %s\n' total $((SECONDS - all)) "$([ $failed -eq 0 ] && echo ok || echo FAILED)"
exit $failed
