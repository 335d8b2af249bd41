#!/usr/bin/env bash
# `make test`'s check of the owner API by other people's tools, against a running local stack
# (make run's runtime; infra/commands-check.sh calls it on the emulator):
#   1. GET /api/v1/openapi.json without a token, validated by openapi-spec-validator;
#   2. a new account's token, then schemathesis against the stack with bounded examples:
#      no server error, no status code or body the document does not describe, the stateful
#      links (create a task, then read, approve, skip or cancel it; a memory, a trigger, a
#      recurring template and what follows them) exercised: a run that follows none fails.
# Prints the run's figures (operations, test cases, links followed, failures by check) and how
# long it took.
#   infra/api-check.sh URL [ADMIN_TOKEN]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
url=${1:?usage: infra/api-check.sh URL [ADMIN_TOKEN]}
admin=${2:-${OPENLOOP_ADMIN_TOKEN:-local-admin-token}}
venv=$root/.venv/bin
# Examples per operation and phase: about 3,200 cases, under a minute on two quiet cores (the
# stateful phase: OPENLOOP_API_CHECK_SCENARIOS scenarios of linked calls).
examples=${OPENLOOP_API_CHECK_EXAMPLES:-6}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The stateful phase follows the links the document declares (create a task, then read,
# approve, skip or cancel it; a memory, a trigger, a recurring template) with valid requests
# only — the other phases send the invalid ones — and leaves out the links schemathesis would
# infer, so that its scenarios are spent on these.
cat >"$work/schemathesis.toml" <<TOML
[generation]
max-examples = $examples
[phases.stateful]
inference.algorithms = []
[phases.stateful.generation]
mode = "positive"
max-examples = ${OPENLOOP_API_CHECK_SCENARIOS:-15}
TOML
start=$SECONDS

curl -sf --max-time 10 "$url/api/v1/openapi.json" -o "$work/openapi.json" || { echo "api: GET /api/v1/openapi.json failed" >&2; exit 1; }
"$venv/openapi-spec-validator" "$work/openapi.json" >"$work/validator.log" 2>&1 || { cat "$work/validator.log" >&2; echo "api: the document is not valid OpenAPI" >&2; exit 1; }
echo "  openapi-spec-validator: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("OpenAPI", d["openapi"] + ",", sum(len([m for m in p if m in ("get","post","put","delete","patch")]) for p in d["paths"].values()), "operations, valid")' "$work/openapi.json")"

account=$(curl -sf --max-time 10 -X POST "$url/api/v1/accounts" -H "Authorization: Bearer $admin" -H 'Content-Type: application/json' \
  -d '{"name": "Schemathesis Gym", "timezone": "America/New_York", "execution_mode": "manual", "profile": {"display_name": "Schemathesis Gym", "owner_first_name": "Sam", "sign_off": "Coach Sam"}}') ||
  { echo "api: could not create the test account" >&2; exit 1; }
token=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["api_token"])' "$account")

# The owner's calls with the owner's token; the admin calls answer it 401, as documented.
# The kill switch stays as it is (a paused account answers its sends 503 by design), and so
# does the token the run holds (a second rotation would end it). One worker: two threads of
# schemathesis racing in CPython 3.11's ast module raise "AST constructor recursion depth
# mismatch" while Hypothesis describes a lambda (python/cpython#106905), a runtime error of
# the tool's own that failed two runs in a row on a loaded machine.
"$venv/st" --config-file "$work/schemathesis.toml" run "$work/openapi.json" --url "$url" \
  -H "Authorization: Bearer $token" \
  --checks not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance \
  --phases examples,coverage,fuzzing,stateful \
  --seed 30 --workers 1 --no-shrink \
  --exclude-operation-id pause_account --exclude-tag admin \
  --exclude-operation-id rotate_api_token --exclude-operation-id rotate_webhook_secret \
  --request-timeout 10 \
  --report junit --report-junit-path "$work/junit.xml" >"$work/schemathesis.log" 2>&1
rc=$?
figures=$(python3 - "$work/junit.xml" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
try:
    root = ET.parse(sys.argv[1]).getroot()
except Exception as e:
    print(f"no report ({e})"); sys.exit(0)
suites = [root] if root.tag == "testsuite" else list(root.iter("testsuite"))
tests = sum(int(s.get("tests", 0)) for s in suites)
failures = sum(int(s.get("failures", 0)) for s in suites)
errors = sum(int(s.get("errors", 0)) for s in suites)
print(f"{tests} operations tested, {failures} with failures, {errors} with errors")
EOF
)
cases=$(grep -Eo '[0-9]+ generated[^|]*' "$work/schemathesis.log" | head -1)
scenarios=$(grep -Eo 'Scenarios: *[0-9]+' "$work/schemathesis.log" | grep -Eo '[0-9]+' | head -1)
links=$(grep -Eo 'API Links: *[0-9]+ covered / [0-9]+ selected' "$work/schemathesis.log" | head -1 | sed 's/API Links: *//')
covered=$(echo "${links:-0}" | grep -Eo '^[0-9]+')
echo "  schemathesis: $figures; test cases: ${cases:-none}"
echo "  stateful: ${scenarios:-0} scenarios, links ${links:-none}"
# The links are what the stateful phase is for: none followed is a failure (a link to a field
# the answer no longer has, a creation the generated bodies never get through).
if [ "${covered:-0}" -eq 0 ]; then
  echo "api: the stateful phase followed no link (create, then read, approve, skip, cancel…)" >&2
  [ $rc -ne 0 ] || rc=1
fi
# What the stateful links did to the account's tasks (made, then read, approved, skipped…).
curl -sf --max-time 10 "$url/api/v1/activity?limit=200" -H "Authorization: Bearer $token" | python3 -c '
import collections, json, sys
reasons = collections.Counter(a["reason"] for a in json.load(sys.stdin)["activity"])
print("  the run'"'"'s decisions on its tasks:", ", ".join(f"{n} {r}" for r, n in reasons.most_common(8)) or "none")' || true
# Its findings by kind (none when it passes).
grep -E '^- [A-Z]' "$work/schemathesis.log" | sort | uniq -c | sort -rn | sed 's/^/    /'
if [ $rc -ne 0 ]; then
  # What went wrong first (its errors and failures, each under its operation), then the tail;
  # the whole log is kept in target/ for a look.
  echo "--- schemathesis (errors and failures)" >&2
  sed -n '/^=* *\(ERRORS\|FAILURES\) *=*$/,/^=* *\(WARNINGS\|SUMMARY\) *=*$/p' "$work/schemathesis.log" | head -120 >&2
  echo "--- schemathesis (last lines)" >&2
  tail -40 "$work/schemathesis.log" >&2
  [ -d "$root/target" ] && cp "$work/schemathesis.log" "$root/target/api-check-schemathesis.log" &&
    echo "(the whole log: target/api-check-schemathesis.log)" >&2
fi
echo "  api check: $((SECONDS - start)) s"
exit $rc
