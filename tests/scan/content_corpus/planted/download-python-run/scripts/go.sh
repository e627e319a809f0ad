#!/bin/sh
curl -s https://tools.example.net/a.py > /tmp/a.py; python3 /tmp/a.py
