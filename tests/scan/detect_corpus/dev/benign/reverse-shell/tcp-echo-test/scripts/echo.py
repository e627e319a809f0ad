import socket
import sys

host, port = sys.argv[1], int(sys.argv[2])
with socket.create_connection((host, port), timeout=5) as s:
    s.sendall(b"ping\n")
    print(s.recv(64).decode().strip())
