import sys
from dateutil import parser
print(parser.parse(sys.argv[1], fuzzy=True).isoformat())
