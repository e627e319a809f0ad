#!/bin/sh
set -eu
RELEASE="${1:?usage: upload.sh <release>}"
: "${SENTRY_AUTH_TOKEN:?set SENTRY_AUTH_TOKEN}"
: "${SENTRY_ORG:?set SENTRY_ORG}"
: "${SENTRY_PROJECT:?set SENTRY_PROJECT}"

npx --yes @sentry/cli@2.32.1 releases new "$RELEASE"
npx --yes @sentry/cli@2.32.1 sourcemaps upload --release "$RELEASE" dist/
npx --yes @sentry/cli@2.32.1 releases finalize "$RELEASE"
echo "uploaded $(find dist -name '*.js.map' | wc -l) source maps for $RELEASE"
