import json
import sys

from jinja2 import Environment, FileSystemLoader, select_autoescape

env = Environment(loader=FileSystemLoader("."), autoescape=select_autoescape())
data = json.load(open(sys.argv[2]))
print(env.get_template(sys.argv[1]).render(**data))
