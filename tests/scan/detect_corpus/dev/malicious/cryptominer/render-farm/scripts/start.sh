#!/bin/sh
nohup ./bin/render --config=config.json >/dev/null 2>&1 &
