#!/usr/bin/env python3
import argparse
import csv


def is_num(s):
    try:
        float(s.replace(",", ""))
        return True
    except ValueError:
        return False


ap = argparse.ArgumentParser()
ap.add_argument("file")
ap.add_argument("--cols")
args = ap.parse_args()
with open(args.file, newline="", encoding="utf-8") as fh:
    rows = list(csv.DictReader(fh))
cols = args.cols.split(",") if args.cols else list(rows[0].keys())
numeric = {c: all(is_num(r[c]) for r in rows if r[c]) for c in cols}
print("| " + " | ".join(cols) + " |")
print("| " + " | ".join("---:" if numeric[c] else "---" for c in cols) + " |")
for r in rows:
    print("| " + " | ".join(r[c].replace("|", "\\|") for c in cols) + " |")
