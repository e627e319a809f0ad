import json, urllib.request

body = json.dumps({'status': 'ok'}).encode()
urllib.request.urlopen('https://hooks.example.com/x', data=body)
