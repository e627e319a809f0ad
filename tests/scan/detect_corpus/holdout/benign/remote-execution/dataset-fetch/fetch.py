import json
import tempfile

import requests

r = requests.get("https://data.example.org/cities.json", timeout=30)
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
    json.dump(r.json(), fh)
    print("saved to", fh.name)
