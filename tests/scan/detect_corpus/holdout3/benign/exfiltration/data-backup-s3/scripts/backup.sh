#!/usr/bin/env bash
set -euo pipefail
source ./backup.conf
stamp=$(date -u +%Y%m%dT%H%M%SZ)
dest="s3://${BUCKET}/${PREFIX}/${stamp}/"
echo "Backing up ./data -> ${dest}"
aws s3 sync ./data "$dest" --only-show-errors --sse AES256
aws s3 ls "$dest" --recursive --summarize | tail -n 2
