#!/usr/bin/env bash
# Install step of the agbom Action (action.yml): agbom==$INPUT_VERSION from PyPI into a venv of
# its own under $RUNNER_TEMP, made with the Python the previous step set up ($AGBOM_PYTHON).
# A second use of the action in the same job reuses that venv.
set -euo pipefail
version="${INPUT_VERSION:?the version input is empty}"
# A release number only (PEP 440, public releases and pre-releases): never a URL or an option.
if [[ ! "$version" =~ ^[0-9]+(\.[0-9]+)*((a|b|rc)[0-9]+)?(\.post[0-9]+)?(\.dev[0-9]+)?$ ]]; then
  echo "::error title=agbom::the version input must be a release number such as 0.1.0"
  exit 2
fi
venv="${RUNNER_TEMP:?}/agbom-action-venv-$version"
if [[ -x "$venv/bin/agbom" && "$("$venv/bin/agbom" --version 2>/dev/null)" == "agbom $version" ]]; then
  echo "agbom $version is installed already in $venv"
else
  rm -rf "$venv"
  "${AGBOM_PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --disable-pip-version-check --quiet "agbom==$version"
fi
"$venv/bin/agbom" --version
echo "bin=$venv/bin" >>"$GITHUB_OUTPUT"
