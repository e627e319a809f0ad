#!/bin/sh
curl -s -H "Authorization: Bearer $API_TOKEN" https://api.example.com/v1/me | jq .
