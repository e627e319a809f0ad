import os
from dotenv import load_dotenv

load_dotenv('.env')
key = os.environ['API_KEY']
