import gzip
import shutil
import time
from pathlib import Path

LOGS = Path("logs")
cutoff = time.time() - 14 * 86400
for log in LOGS.glob("*.log"):
    if log.stat().st_mtime < cutoff:
        with open(log, "rb") as src, gzip.open(f"{log}.gz", "wb") as dst:
            shutil.copyfileobj(src, dst)
        log.unlink()
print("archived")
