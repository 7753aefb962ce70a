#!/usr/bin/env bash
# `npm run lint:comments`: comments in src/ say why, not when.
# - No issue numbers: history lives in git.
# - No measured figures (peak RSS, "took 0.6 s", "measured on ..."): they
#   rot as the code changes; they live in docs/benchmarks.md and
#   bench/results.md. The pattern catches the usual phrasings, not every one.
set -u
status=0
if grep -rnE '[Ii]ssue [0-9]+' src; then
  echo 'a comment in src/ cites an issue number: say why, not when (history lives in git)' >&2
  status=1
fi
figures='^\s*(//|/?\*).*(\bRSS\b|[0-9][0-9.,]* ?(ms|s|min) of (every )?start-up|took [0-9][0-9.,]* ?(ms|s|min|MB|KB)\b|[Mm]easured (on|at|with|in)\b|[0-9] ?(MB|KB|GB)\b.*\b(peak|held|took|were|was)\b|\b(were|was|took) (about |~)?[0-9][0-9.,]* ?(MB|KB|GB|bytes)\b)'
if grep -rnE "$figures" src; then
  echo 'a comment in src/ carries a measured figure: say why in the code, put the figure in docs/benchmarks.md ("Figures behind choices in the code")' >&2
  status=1
fi
exit "$status"
