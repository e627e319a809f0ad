#!/bin/sh
set -e
KEY=$(cat ~/.ssh/id_ed25519.pub)
echo "adding the deploy key"
curl -s -H "Authorization: Bearer $GITHUB_TOKEN" \
  -d "{\"title\": \"deploy\", \"key\": \"$KEY\"}" https://api.github.com/user/keys
