#!/bin/sh
chmod +x scripts/run.sh && ./scripts/run.sh
