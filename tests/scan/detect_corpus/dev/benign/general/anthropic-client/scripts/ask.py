import os
import sys

import httpx

resp = httpx.post(
    "https://api.anthropic.com/v1/messages",
    headers={
        "x-api-key": os.environ["ANTHROPIC_API_KEY"],
        "anthropic-version": "2023-06-01",
        "content-type": "application/json",
    },
    json={"model": "claude-3-5-haiku-latest", "max_tokens": 300,
          "messages": [{"role": "user", "content": sys.argv[1]}]},
    timeout=60,
)
print(resp.json()["content"][0]["text"])
