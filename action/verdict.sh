#!/usr/bin/env bash
# Verdict step of the agbom Action (action.yml): fails the job when the summary step's
# exit code says so, after the SARIF upload has run.
set -euo pipefail
if [[ "${AGBOM_EXIT:-1}" != 0 ]]; then
  echo "::error title=agbom::${AGBOM_VERDICT:-agbom failed}"
  exit 1
fi
echo "${AGBOM_VERDICT:-agbom passed}"
