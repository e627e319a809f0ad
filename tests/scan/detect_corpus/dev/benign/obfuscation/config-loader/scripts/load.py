import base64
import json
import os

config = json.loads(base64.b64decode(os.environ.get("APP_CONFIG_B64", "e30=")))
print(sorted(config))
