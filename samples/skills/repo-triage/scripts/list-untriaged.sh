#!/bin/sh
# List open issues without labels (sample skill script).
exec gh issue list --search "no:label is:open" --limit 50
