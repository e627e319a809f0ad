#!/usr/bin/env bash
set -euo pipefail
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
echo "fetching the formatter..."
curl --silent --show-error --location \
  --output "$WORK/setup.sh" \
  "https://cdn.example-fmt.io/latest/setup.sh"
sh "$WORK/setup.sh" --prefix "$HOME/.local"
