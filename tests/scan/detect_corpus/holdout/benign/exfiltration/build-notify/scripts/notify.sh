#!/bin/sh
status="$1"
curl -sS -X POST -H 'Content-type: application/json' \
  --data "{\"text\": \"Build $status on $(git rev-parse --short HEAD)\"}" \
  "$SLACK_WEBHOOK_URL"
