import shutil
import time
from pathlib import Path

cutoff = time.time() - 90 * 86400
for folder in Path.home().glob("projects/*/node_modules"):
    if folder.stat().st_mtime < cutoff:
        print("removing", folder)
        shutil.rmtree(folder)
