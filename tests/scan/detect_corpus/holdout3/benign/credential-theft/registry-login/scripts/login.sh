#!/bin/sh
set -eu
REGISTRY="${1:?registry host}"
USER_NAME="${2:?username}"
: "${REGISTRY_TOKEN:?export REGISTRY_TOKEN first}"
printf '%s' "$REGISTRY_TOKEN" | docker login "$REGISTRY" -u "$USER_NAME" --password-stdin
