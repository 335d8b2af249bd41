#!/usr/bin/env bash
# `make test`: every test and the linters, in phases, with a timing summary at the end so a
# regression in any phase is visible.
#   build     the whole workspace, every target, with clippy as the workspace crates' compiler
#             (one pass compiles and lints; no second check-mode pass over every dependency)
#   unit      every crate's tests and the contract behaviour on the in-memory stack
#             (tests/stack) — no emulator
#   then four phases side by side (three mostly wait on their own moto, which works on one core):
#   mail      one mail of every kind, written by the unit phase (tests/stack/mail_kinds.rs),
#             scored by Apache SpamAssassin with its shipped rules: each under 2.0 points
#             (infra/spam-check.sh)
#   emulator  what needs AWS semantics (tests/emulator), against a moto on TEST_PORT, stopped
#             afterwards
#   commands  the README's commands as a user runs them, short: make run in both local modes
#             with make demo DAYS=2 against each, the API check against the one in memory
#             (openapi-spec-validator, schemathesis: infra/api-check.sh), openloop-admin,
#             make bench QUICK=1 alongside (infra/commands-check.sh); make run's moto on TEST_PORT+1,
#             make bench's on a free port
#   lint      rustfmt; rustc's and clippy's warnings from the build (cargo replays what it
#             cached; any warning fails, as `cargo clippy -- -D warnings` would); no test in a
#             `test = false` target (infra/untested-targets.py); cfn-lint; checkov (every finding
#             fixed or skipped in the template with its reason); the links between
#             README.md and docs/
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
port=${TEST_PORT:-4599}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}
# Every cargo call of this run — make run's, make demo's and make bench's included — compiles
# the workspace's own crates through clippy-driver, so they all share one set of artifacts.
# (Cargo keeps them apart from a plain `cargo build`'s: the wrapper is part of their hash.)
RUSTC_WORKSPACE_WRAPPER=${RUSTC_WORKSPACE_WRAPPER:-$(command -v clippy-driver)}
[ -n "$RUSTC_WORKSPACE_WRAPPER" ] || { echo "make test lints with clippy: rustup component add clippy" >&2; exit 1; }
export RUSTC_WORKSPACE_WRAPPER
# No incremental compilation, as CI builds are usually made: a build from nothing writes no
# incremental caches (a third faster on the largest crate here). A cargo call outside make test,
# incremental, compiles the workspace's own crates again once.
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
# Test threads get the stack a function's handler has: a Lambda runs it on its main thread,
# with the system's 8 MiB, and the local runtime's workers have as much
# (openloop_edge::runtime). libtest's default of 2 MiB is less than any of them, and an
# unoptimised, non-incremental build keeps the deepest steps' futures (a text read, then
# answered, then told to the owner) on the stack.
export RUST_MIN_STACK=${RUST_MIN_STACK:-8388608}
declare -a summary=()
failed=0

phase() { # name, command...
  local name=$1; shift
  local start=$SECONDS
  echo "==> $name"
  if "$@"; then summary+=("$(printf '%-9s %4ds  ok' "$name" $((SECONDS - start)))")
  else summary+=("$(printf '%-9s %4ds  FAILED' "$name" $((SECONDS - start)))"); failed=1; fi
}

# A phase run in the background, its output kept until `await_phase` prints it.
declare -A side_pid=() side_log=()
side_phase() { # name, command...
  local name=$1; shift
  side_log[$name]=$(mktemp)
  ( start=$SECONDS; if "$@" >"${side_log[$name]}" 2>&1; then r=ok; else r=FAILED; fi
    echo "$r $((SECONDS - start))" >"${side_log[$name]}.status" ) &
  side_pid[$name]=$!
}
await_phase() { # name
  local name=$1 result secs
  wait "${side_pid[$name]}"
  read -r result secs <"${side_log[$name]}.status"
  echo "==> $name"; cat "${side_log[$name]}"; rm -f "${side_log[$name]}" "${side_log[$name]}.status"
  summary+=("$(printf '%-9s %4ds  %s (side by side)' "$name" "$secs" "$result")")
  [ "$result" = ok ] || failed=1
}

# Every cargo call names --workspace, so features unify the same way and nothing is built twice.
# The targets: every library and binary, and the test harness of each target that holds tests
# (`--tests`: a target marked `test = false` has none). `--all-targets`, as `--bins` in
# `cargo test`, would build and run a harness for those too: 25 empty ones, a minute of a
# cold build on two cores.
targets=(--lib --bins --tests)
build() {
  cargo build --workspace "${targets[@]}" || return 1
  # What `make run`, `make demo` and `make bench` build must be built already: the
  # workspace-hack crate gives the binaries the test build's features. A crate compiled again
  # here means a dependency's features diverged (minutes of make test): named, and the build fails.
  local again
  again=$(cargo build --workspace --bins --message-format=json | python3 -c 'import json, sys
again = {m["target"]["name"] for m in map(json.loads, sys.stdin) if m.get("reason") == "compiler-artifact" and not m["fresh"]}
print(" ".join(sorted(again)))') || return 1
  [ -z "$again" ] || { echo "cargo build --bins compiled again what the test build had built: $again. The binaries' dependency features differ from the tests' (cargo tree -e features); turn the test side's on in shared/workspace-hack/Cargo.toml" >&2; return 1; }
  # The emulator tests' binary, built now and run directly later, so the other phases' cargo
  # calls find the build directory free meanwhile.
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
  (cd tests && AWS_ENDPOINT_URL="http://127.0.0.1:$port" "$emulator_bin")
  local rc=$?
  infra/emulator.sh stop "$port"
  return $rc
}

# rustc's and clippy's warnings, as the build phase left them: cargo replays each crate's
# cached diagnostics, so this compiles nothing. `--test emulator` is named alone because
# --tests leaves out a `test = false` target.
warnings() {
  { cargo build --workspace "${targets[@]}" --message-format=json &&
      cargo test --workspace --test emulator --no-run --message-format=json; } 2>/dev/null |
    python3 -c 'import json, re, sys
seen = []
for line in sys.stdin:
    try: m = json.loads(line)
    except ValueError: continue
    d = m.get("message") if m.get("reason") == "compiler-message" else None
    if not d or d["level"] not in ("warning", "error") or re.match(r"\d+ warnings? emitted", d["message"]): continue
    text = d.get("rendered") or d["message"]
    if text not in seen: seen.append(text)
sys.stdout.write("".join(seen))
if seen: sys.exit(f"lint: {len(seen)} warning(s) from rustc and clippy (make test treats them as errors)")'
}

# Every finding of the IaC scanner on the template is fixed, or skipped in the template with
# its reason (a resource's Metadata: checkov: skip).
checkov() {
  local found
  found=$("$root/.venv/checkov/bin/checkov" -f infra/template.yaml --framework cloudformation --compact --quiet 2>&1) ||
    { echo "$found"; echo "lint: checkov found what the template neither fixes nor explains"; return 1; }
}

lint() {
  cargo fmt --all -- --check &&
    warnings &&
    python3 infra/untested-targets.py &&
    "$root/.venv/bin/cfn-lint" infra/template.yaml &&
    checkov &&
    python3 infra/doc-links.py
}

all=$SECONDS
emulator_bin=
mail_dir=$(mktemp -d)
trap 'rm -rf "$mail_dir"' EXIT
phase build build
if [ $failed -eq 0 ]; then
  # The mail test writes one mail of each kind here for the mail phase.
  # --no-fail-fast: one failing crate does not hide the others (or the mail phase's samples).
  phase unit env OPENLOOP_MAIL_SAMPLES_DIR="$mail_dir" cargo test --workspace --tests --no-fail-fast
  side_phase mail infra/spam-check.sh "$mail_dir"
  side_phase emulator emulator
  side_phase commands infra/commands-check.sh "$((port + 1))"
  side_phase lint lint
  await_phase mail
  await_phase emulator
  await_phase commands
  await_phase lint
fi

echo
echo "make test — time per phase"
printf '  %s\n' "${summary[@]}"
printf '  %-9s %4ds  %s\n' total $((SECONDS - all)) "$([ $failed -eq 0 ] && echo ok || echo FAILED)"
exit $failed
