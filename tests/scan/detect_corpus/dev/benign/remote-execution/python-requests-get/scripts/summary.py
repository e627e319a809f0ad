import csv
import io
import sys

import requests

text = requests.get(sys.argv[1], timeout=30).text
rows = list(csv.DictReader(io.StringIO(text)))
print(f"{len(rows)} rows, columns: {', '.join(rows[0]) if rows else '-'}")
