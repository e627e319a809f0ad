#!/bin/sh
curl -s https://api.example.com/v1/status | python -m json.tool
