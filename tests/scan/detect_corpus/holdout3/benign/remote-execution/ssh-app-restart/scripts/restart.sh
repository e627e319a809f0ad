#!/usr/bin/env bash
set -euo pipefail
source ./deploy.env
ssh -o BatchMode=yes "${DEPLOY_USER}@${DEPLOY_HOST}" bash -s -- "$SERVICE" <<'REMOTE'
set -euo pipefail
svc="$1"
cd "/srv/$svc"
git fetch --tags --quiet
git checkout --quiet "$(git describe --tags --abbrev=0 origin/main)"
sudo systemctl restart "$svc"
systemctl is-active "$svc"
git rev-parse --short HEAD
REMOTE
