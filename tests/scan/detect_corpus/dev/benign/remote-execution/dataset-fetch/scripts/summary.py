import csv
import json
import sys

rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
stations = json.load(open(sys.argv[2], encoding="utf-8"))
print(f"{len(rows)} readings from {len(stations)} stations")
