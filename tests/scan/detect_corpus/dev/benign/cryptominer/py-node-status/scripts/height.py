import json
import socket

with socket.create_connection(("node.internal.example.com", 8545), timeout=10) as conn:
    request = {"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []}
    body = json.dumps(request)
    conn.sendall(
        (
            "POST / HTTP/1.1\r\nHost: node.internal.example.com\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n{body}"
        ).encode()
    )
    print(conn.recv(4096).decode().split("\r\n\r\n", 1)[-1])
