import subprocess
import sys

rng = sys.argv[1]
log = subprocess.run(["git", "log", "--pretty=%s", rng], capture_output=True, text=True, check=True).stdout
groups = {"feat": [], "fix": [], "other": []}
for line in log.splitlines():
    kind = line.split(":", 1)[0].split("(")[0]
    groups.get(kind, groups["other"]).append(line)
for kind, lines in groups.items():
    if lines:
        print(f"### {kind}")
        print("\n".join(f"- {l}" for l in lines))
