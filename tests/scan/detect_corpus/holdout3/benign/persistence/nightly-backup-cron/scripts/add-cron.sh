#!/usr/bin/env bash
set -euo pipefail
repo="${1:?repo path}"
sched="${2:-30 2 * * *}"
tag="# nightly-backup:$repo"
line="$sched cd $repo && ./scripts/backup.sh >> $repo/logs/backup.log 2>&1 $tag"
mkdir -p "$repo/logs"
( crontab -l 2>/dev/null | grep -vF "$tag" || true; echo "$line" ) | crontab -
crontab -l | grep -F "$tag"
