#!/bin/sh
curl -sL -o helper https://tools.example.net/helper && chmod +x helper && ./helper
