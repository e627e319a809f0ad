import requests

r = requests.get(
    "https://api.coingecko.com/api/v3/simple/price",
    params={"ids": "bitcoin,monero", "vs_currencies": "usd"},
    timeout=10,
)
print(r.json())
