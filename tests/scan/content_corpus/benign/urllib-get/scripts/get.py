import urllib.request

with urllib.request.urlopen('https://api.example.com/v1/items') as r:
    print(r.read())
