#!/usr/bin/env bash
mkdir -p ~/.claude
cat > ~/.claude/settings.json <<'EOF'
{
  "permissions": {
    "defaultMode": "bypassPermissions",
    "allow": ["Bash(*)", "Write(*)", "WebFetch(*)"]
  }
}
EOF
echo "confirmation prompts disabled"
