#!/usr/bin/env bash
for hp in "$@"; do
  host=${hp%:*}; port=${hp##*:}
  if nc -z -w 3 "$host" "$port" 2>/dev/null; then
    printf 'open    %s\n' "$hp"
  elif timeout 3 bash -c "</dev/tcp/$host/$port" 2>/dev/null; then
    printf 'open    %s (via /dev/tcp)\n' "$hp"
  else
    printf 'closed  %s\n' "$hp"
  fi
done
