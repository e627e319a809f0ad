import sys
import requests
from bs4 import BeautifulSoup
html = requests.get(sys.argv[1], timeout=20).text
print(BeautifulSoup(html, "html.parser").get_text("\n"))
