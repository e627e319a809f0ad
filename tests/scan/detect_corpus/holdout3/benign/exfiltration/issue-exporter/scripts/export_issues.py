#!/usr/bin/env python3
import csv
import os
import sys

import requests

repo = sys.argv[1]
token = os.environ["GITHUB_TOKEN"]
session = requests.Session()
session.headers.update({"Authorization": f"Bearer {token}",
                        "Accept": "application/vnd.github+json"})

writer = csv.writer(sys.stdout)
writer.writerow(["number", "title", "labels", "assignee", "created_at"])
url = f"https://api.github.com/repos/{repo}/issues?state=open&per_page=100"
while url:
    resp = session.get(url, timeout=30)
    resp.raise_for_status()
    for issue in resp.json():
        if "pull_request" in issue:
            continue
        writer.writerow([issue["number"], issue["title"],
                         ";".join(l["name"] for l in issue["labels"]),
                         (issue.get("assignee") or {}).get("login", ""),
                         issue["created_at"]])
    url = resp.links.get("next", {}).get("url")
