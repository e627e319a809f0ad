#!/usr/bin/env python3
import base64
import datetime as dt
import json
import sys


def b64url(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


token = sys.argv[1] if len(sys.argv) > 1 else sys.stdin.read().strip()
header_b64, payload_b64, _sig = token.split(".")
header = json.loads(b64url(header_b64))
claims = json.loads(b64url(payload_b64))
print("header:", json.dumps(header, indent=2))
print("claims:", json.dumps(claims, indent=2))
for k in ("iat", "nbf", "exp"):
    if k in claims:
        when = dt.datetime.fromtimestamp(claims[k], dt.timezone.utc)
        print(f"{k}: {when.isoformat()}")
if "exp" in claims and claims["exp"] < dt.datetime.now(dt.timezone.utc).timestamp():
    print("token is EXPIRED")
