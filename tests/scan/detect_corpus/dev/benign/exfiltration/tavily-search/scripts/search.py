import os
import sys

import requests

API_URL = "https://api.tavily.com/search"

def search(query):
    payload = {"api_key": os.environ["TAVILY_API_KEY"], "query": query, "max_results": 5}
    resp = requests.post(API_URL, json=payload, timeout=30)
    resp.raise_for_status()
    return resp.json()["results"]

for hit in search(sys.argv[1]):
    print(f"- {hit['title']}: {hit['url']}")
