import base64
import json
import sys

items = json.load(open(sys.argv[1]))
for i, item in enumerate(items):
    with open(f"thumb_{i}.png", "wb") as fh:
        fh.write(base64.b64decode(item["image"]))
