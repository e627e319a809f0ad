#!/usr/bin/env bash
# Scan step of the agbom Action (action.yml). Runs agbom on the INPUT_PATHS: a JSON report (for
# the summary and the verdict), the SARIF report, the report in INPUT_FORMAT, and the drift
# from INPUT_LOCK. Records agbom's exit codes as step outputs; the Verdict step fails the job.
set -euo pipefail
agbom="${AGBOM_BIN:?}/agbom"
out="${RUNNER_TEMP:?}/agbom-action"
mkdir -p "$out"
error() { echo "::error title=agbom::$1"; exit 2; }
# Split on whitespace without expanding globs: a path is taken as written.
set -f
# shellcheck disable=SC2206
paths=(${INPUT_PATHS:-.})
# shellcheck disable=SC2206
rule_dirs=(${INPUT_RULES:-})
set +f
((${#paths[@]})) || paths=(.)

case "${INPUT_FORMAT:=table}" in
  table) ext="txt" ;;
  json) ext="json" ;;
  cyclonedx-json) ext="cdx.json" ;;
  cyclonedx-xml) ext="cdx.xml" ;;
  spdx-json) ext="spdx.json" ;;
  *) error "format must be table, json, cyclonedx-json, cyclonedx-xml or spdx-json, not '$INPUT_FORMAT'" ;;
esac
fail_on=()
case "${INPUT_FAIL_ON:=high}" in
  never | none | "") ;;
  info | low | medium | high | critical) fail_on=(--fail-on "$INPUT_FAIL_ON") ;;
  *) error "fail-on must be info, low, medium, high, critical or never, not '$INPUT_FAIL_ON'" ;;
esac
rules=()
for dir in "${rule_dirs[@]}"; do rules+=(--rules "$dir"); done
for value in "${INPUT_SARIF:-}" "${INPUT_LOCK:-}"; do
  [[ "$value" != *$'\n'* ]] || error "the sarif and lock inputs are one path each"
done

# agbom's own exit codes: 0 pass, 1 findings at or above --fail-on, 3 unreadable files,
# anything else a usage or internal error that stops here.
run() {
  local code=0
  "$@" || code=$?
  if ((code != 0 && code != 1 && code != 3)); then
    echo "::error title=agbom::agbom exited with $code"
    exit "$code"
  fi
  return "$code"
}

report_json="$out/report.json"
scan_exit=0
rm -f "$report_json"
run "$agbom" scan "${rules[@]}" "${fail_on[@]}" -f json -o "$report_json" -- "${paths[@]}" ||
  scan_exit=$?
# 1 is also agbom's code for an input it could not open: then there is no report.
[[ -s "$report_json" ]] || error "agbom scan wrote no report (see its error above)"

sarif=""
if [[ -n "${INPUT_SARIF:-}" ]]; then
  sarif="$INPUT_SARIF"
  mkdir -p "$(dirname -- "$sarif")"
  run "$agbom" scan "${rules[@]}" -f sarif -o "$sarif" --sarif-root "${GITHUB_WORKSPACE:-$PWD}" \
    -- "${paths[@]}" || true
fi

report="$out/report.$ext"
if [[ "$INPUT_FORMAT" == json ]]; then
  report="$report_json"
elif [[ "$INPUT_FORMAT" == table ]]; then
  run "$agbom" scan "${rules[@]}" -f table -- "${paths[@]}" | tee "$report" || true
else
  run "$agbom" scan "${rules[@]}" -f "$INPUT_FORMAT" -o "$report" -- "${paths[@]}" || true
fi

drift_json=""
drift_exit=0
if [[ -n "${INPUT_LOCK:-}" ]]; then
  [[ -f "$INPUT_LOCK" ]] || error "the lock file '$INPUT_LOCK' does not exist"
  drift_json="$out/drift.json"
  "$agbom" diff "$INPUT_LOCK" "$report_json" -f json >"$drift_json" || drift_exit=$?
  ((drift_exit <= 1)) || error "agbom diff could not compare '$INPUT_LOCK' with the scan"
fi

{
  echo "report-json=$report_json"
  echo "report=$report"
  echo "sarif=$sarif"
  echo "exit-code=$scan_exit"
  echo "drift-json=$drift_json"
  echo "drift-exit-code=$drift_exit"
} >>"$GITHUB_OUTPUT"
