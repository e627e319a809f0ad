#!/usr/bin/env bash
set -euo pipefail
VERSION="0.18.3"
NAME="tool_${VERSION}_linux_amd64.tar.gz"
URL="https://github.com/example-org/tool/releases/download/v${VERSION}/${NAME}"
SHA256="3f1c9a7e4b2d8c6f0a5e9b1d7c3f8e2a6b4d0c9e1f7a3b5d8c2e6f0a4b9d1c7e"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
curl -fsSL --proto '=https' -o "$tmp/$NAME" "$URL"
echo "${SHA256}  $tmp/$NAME" | sha256sum -c - || { echo "checksum mismatch, aborting"; exit 1; }
tar -xzf "$tmp/$NAME" -C "$tmp" tool
install -m 0755 "$tmp/tool" "$HOME/.local/bin/tool"
"$HOME/.local/bin/tool" --version
