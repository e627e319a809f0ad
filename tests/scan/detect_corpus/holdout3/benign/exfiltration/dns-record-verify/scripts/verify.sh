#!/usr/bin/env bash
set -euo pipefail
expected="${1:-infra/dns-expected.txt}"
fail=0
while read -r type name value; do
  [[ -z "$type" || "$type" == \#* ]] && continue
  actual=$(dig +short "$type" "$name" @1.1.1.1 | tr -d '"' | sort | tr '\n' ' ')
  if [[ "$actual" != *"$value"* ]]; then
    printf 'MISMATCH %-5s %-30s expected=%s got=%s\n' "$type" "$name" "$value" "$actual"
    fail=1
  fi
done < "$expected"
[[ $fail -eq 0 ]] && echo "all records match"
