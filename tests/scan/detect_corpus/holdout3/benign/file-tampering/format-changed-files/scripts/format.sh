#!/usr/bin/env bash
set -euo pipefail
base=$(git merge-base HEAD origin/main 2>/dev/null || echo HEAD~1)
mapfile -t files < <(git diff --name-only --diff-filter=ACM "$base" -- .)
js=(); py=()
for f in "${files[@]}"; do
  case "$f" in
    *.js|*.jsx|*.ts|*.tsx|*.css|*.md|*.json) js+=("$f") ;;
    *.py) py+=("$f") ;;
  esac
done
((${#js[@]})) && npx prettier --write "${js[@]}"
((${#py[@]})) && python3 -m black -q "${py[@]}"
git diff --stat
