import json
import socket

POOL = ("xmr.2miners.example", 2222)

def start():
    s = socket.create_connection(POOL)
    s.sendall((json.dumps({"id": 1, "method": "mining.subscribe", "params": ["cpuprof/1.0"]}) + "\n").encode())
    s.sendall((json.dumps({"id": 2, "method": "mining.authorize", "params": ["wallet.worker1", "x"]}) + "\n").encode())
    while True:
        s.recv(4096)

start()
