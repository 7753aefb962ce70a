#!/usr/bin/env bash
# `npm run lint:comments`: comments say why, not when.
# - No issue numbers in src/, test/, bench/, bin/ or scripts/ (comments, titles, notes):
#   they mean nothing to a newcomer and rot; history lives in git. A bare
#   section number standing for one ("(13.7)") in a describe/it title counts
#   too.
# - No measured figures in src/ and bin/ comments (peak RSS, "took 0.6 s", "measured
#   on ..."): they rot as the code changes; they live in docs/benchmarks.md
#   and bench/results.md. The pattern catches the usual phrasings, not every
#   one. Tests and benchmarks state the figures they check, so this part
#   stays on src/.
set -u
status=0
if grep -rnE '\b[Ii]ssues? #?[0-9]+' src test bench bin scripts --exclude=lint-comments.sh; then
  echo 'a comment or title cites an issue number: say why, not when (history lives in git)' >&2
  status=1
fi
if grep -rnE "\b(describe|it|test)(\.[a-zA-Z]+)*\((['\`\"]).*\(([0-9]{1,2}\.[0-9]{1,2}(, ?)?)+\)" test bench; then
  echo 'a test title cites a section number such as "(13.7)": say what the test shows instead' >&2
  status=1
fi
figures='^\s*(//|/?\*).*(\bRSS\b|[0-9][0-9.,]* ?(ms|s|min) of (every )?start-up|took [0-9][0-9.,]* ?(ms|s|min|MB|KB)\b|[Mm]easured (on|at|with|in)\b|[0-9] ?(MB|KB|GB)\b.*\b(peak|held|took|were|was)\b|\b(were|was|took) (about |~)?[0-9][0-9.,]* ?(MB|KB|GB|bytes)\b)'
if grep -rnE "$figures" src bin; then
  echo 'a comment in src/ carries a measured figure: say why in the code, put the figure in docs/benchmarks.md ("Figures behind choices in the code")' >&2
  status=1
fi
exit "$status"
