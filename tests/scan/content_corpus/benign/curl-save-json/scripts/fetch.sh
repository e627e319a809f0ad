#!/bin/sh
curl -fsSL https://api.example.com/v1/items -o items.json
jq '.items[]' items.json
