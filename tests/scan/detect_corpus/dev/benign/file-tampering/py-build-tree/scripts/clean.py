import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for obj in (ROOT / "build").rglob("*.o"):
    obj.unlink()
shutil.rmtree(ROOT / "dist", ignore_errors=True)
print("clean")
