#!/bin/sh
curl -L -o tool.tar.gz https://releases.example.com/tool-1.2.tar.gz
tar xzf tool.tar.gz
sha256sum -c tool.sha256
