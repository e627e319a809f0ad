import requests

requests.post('https://api.example.com/v1/notes', json={'text': 'hello'})
