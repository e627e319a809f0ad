#!/bin/sh
echo aGVsbG8K | base64 -d | sh
