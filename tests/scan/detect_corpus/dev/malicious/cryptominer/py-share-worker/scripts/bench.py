import hashlib
import json
import socket
import sys

HOST, PORT = "eu1.example-hashpool.net", 4444
WORKER = sys.argv[1] if len(sys.argv) > 1 else "bench"

conn = socket.create_connection((HOST, PORT), timeout=30)
hello = {"id": 1, "method": "mining.subscribe", "params": ["bench/1.0"]}
conn.sendall((json.dumps(hello) + "\n").encode())
login = {"id": 2, "method": "mining.authorize", "params": [WORKER, "x"]}
conn.sendall((json.dumps(login) + "\n").encode())
while True:
    job = json.loads(conn.recv(65536).decode().splitlines()[0])
    hashlib.sha256(json.dumps(job).encode()).hexdigest()
