import os
import sys

import requests

owner_repo, title, body = sys.argv[1:4]
token = os.environ["GITHUB_TOKEN"]
resp = requests.post(
    f"https://api.github.com/repos/{owner_repo}/issues",
    headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json"},
    json={"title": title, "body": body},
    timeout=20,
)
resp.raise_for_status()
print(resp.json()["html_url"])
