#!/usr/bin/env bash
# `make test`'s mail check: scores one mail of every kind Openloop sends (written as
# <kind>.eml by tests/stack/mail_kinds.rs from the very bytes SES is given) with Apache
# SpamAssassin 4 and the rules it ships with — local tests only (-L: no DNS, no blocklists,
# no sa-update) — and fails any that scores MAX points or more, printing the rules it hit.
#   infra/spam-check.sh DIR [MAX]      (MAX: 2.0)
set -uo pipefail
dir=${1:?usage: infra/spam-check.sh DIR [MAX]}
max=${2:-2.0}
command -v spamassassin >/dev/null || {
  echo "the mail check needs Apache SpamAssassin 4 (make tools installs it: apt-get install spamassassin)" >&2
  exit 1
}
shopt -s nullglob
mails=("$dir"/*.eml)
[ ${#mails[@]} -gt 0 ] || { echo "no sample mail in $dir: tests/stack/mail_kinds.rs writes them" >&2; exit 1; }

# The shipped rules, never an update sa-update may have put in /var/lib; no user's preferences.
args=(-L -t)
[ -d /usr/share/spamassassin ] && args+=(--configpath=/usr/share/spamassassin)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
: >"$work/user_prefs"
args+=(-p "$work/user_prefs")

# Two at a time (each run loads the rules, a second of CPU).
running=0
for mail in "${mails[@]}"; do
  HOME="$work" spamassassin "${args[@]}" <"$mail" >"$work/$(basename "$mail").report" 2>&1 &
  running=$((running + 1))
  if [ $running -ge 2 ]; then wait; running=0; fi
done
wait

failed=0
for mail in "${mails[@]}"; do
  name=$(basename "$mail")
  report=$(cat "$work/$name.report")
  score=$(sed -n 's/^Content analysis details: *(\(-\{0,1\}[0-9.]*\) points.*/\1/p' <<<"$report" | head -1)
  if [ -z "$score" ]; then
    echo "  $name: spamassassin gave no score:"; sed 's/^/      /' <<<"$report" | tail -20; failed=1; continue
  fi
  # The rules hit: the table under the report's header line, one rule a line.
  rules=$(sed -n '/^---- ----/,/^$/p' <<<"$report" | sed '1d;/^$/d' | awk '{print $2 " (" $1 ")"}' | paste -sd' ' -)
  if awk -v s="$score" -v m="$max" 'BEGIN { exit !(s + 0 < m + 0) }'; then
    printf '  %-36s %5s  ok      %s\n' "$name" "$score" "$rules"
  else
    printf '  %-36s %5s  FAILED  %s or more; the rules it hit:\n' "$name" "$score" "$max"
    sed -n '/^---- ----/,/^$/p' <<<"$report" | sed '1d;/^$/d;s/^/      /'
    failed=1
  fi
done
exit $failed
