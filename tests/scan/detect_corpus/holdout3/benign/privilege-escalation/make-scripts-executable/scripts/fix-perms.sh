#!/usr/bin/env bash
set -euo pipefail
root=$(git rev-parse --show-toplevel)
cd "$root"
for f in scripts/*.sh bin/*; do
  [[ -f "$f" ]] || continue
  chmod u+x,g+x "$f"
  git update-index --chmod=+x "$f"
done
git diff --cached --summary
