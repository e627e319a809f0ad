#!/usr/bin/env bash
set -euo pipefail
days=14
dry=0
for a in "$@"; do
  case "$a" in --dry-run) dry=1 ;; --days=*) days="${a#*=}" ;; esac
done
dir="$(git rev-parse --show-toplevel)/logs"
[[ -d "$dir" ]] || { echo "no logs dir"; exit 0; }
if (( dry )); then
  find "$dir" -type f -name '*.log*' -mtime +"$days" -print
else
  find "$dir" -type f -name '*.log*' -mtime +"$days" -print -delete
fi
