#!/bin/sh
base64 -d cert.b64 > cert.pem
openssl x509 -in cert.pem -noout -text
