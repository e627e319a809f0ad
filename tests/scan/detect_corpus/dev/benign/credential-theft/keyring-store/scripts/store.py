import getpass
import sys

import keyring

service = sys.argv[1]
secret = getpass.getpass(f"API key for {service}: ")
keyring.set_password(service, getpass.getuser(), secret)
print("stored")
