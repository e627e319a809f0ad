import os

import requests
from dotenv import load_dotenv

load_dotenv()
resp = requests.get(
    "https://api.stripe.com/v1/balance",
    auth=(os.environ["STRIPE_SECRET_KEY"], ""),
    timeout=20,
)
print(resp.json()["available"])
