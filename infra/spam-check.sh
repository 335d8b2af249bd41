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

# One run over all of them, as one mbox (the rules load once, in seconds; a run a mail took
# seconds each): each mail as SES is given it, its lines in LF as a mailbox keeps them, a body
# line starting "From " quoted as mbox quotes it. SpamAssassin answers in an order of its own
# (by date), each answer after the separator line, so an answer is told by its Message-ID
# (unique to each mail SES is given) and kept as report.N for the Nth mail.
separator="From openloop-sample Thu Jan  1 00:00:00 2026"
for mail in "${mails[@]}"; do
  echo "$separator"
  tr -d '\r' <"$mail" | sed -e 's/^\(>*From \)/>\1/' -e '$a\'
  echo
done >"$work/all.mbox"
HOME="$work" spamassassin "${args[@]}" --mbox <"$work/all.mbox" >"$work/all.out" 2>"$work/stderr"
python3 - "$separator" "$work" "${mails[@]}" <<'PY' || { tail -20 "$work/stderr"; exit 1; }
import re, sys
separator, work, mails = sys.argv[1], sys.argv[2], sys.argv[3:]
def message_id(text):
    m = re.search(r"^message-id:[ \t]*(\S+)", text, re.I | re.M)
    return m and m.group(1)
number = {}
for i, mail in enumerate(mails, 1):
    mid = message_id(open(mail, errors="replace").read())
    if not mid or mid in number:
        sys.exit(f"{mail}: no Message-ID of its own, so its report cannot be told apart")
    number[mid] = i
answers = open(f"{work}/all.out", errors="replace").read().split(separator + "\n")[1:]
for answer in answers:
    i = number.get(message_id(answer))
    if i: open(f"{work}/report.{i}", "w").write(answer)
if len(answers) != len(mails):
    sys.exit(f"spamassassin answered {len(answers)} of {len(mails)} mails")
PY

failed=0
i=0
for mail in "${mails[@]}"; do
  i=$((i + 1))
  name=$(basename "$mail")
  report=$(cat "$work/report.$i" 2>/dev/null)
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
