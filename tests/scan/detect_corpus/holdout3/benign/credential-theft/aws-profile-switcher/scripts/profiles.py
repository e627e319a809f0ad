#!/usr/bin/env python3
"""Print profile names and regions from ~/.aws/config (no secrets)."""
import configparser
import os

cfg = configparser.ConfigParser()
cfg.read(os.path.expanduser("~/.aws/config"))
current = os.environ.get("AWS_PROFILE", "default")
for section in cfg.sections():
    name = section.removeprefix("profile ").strip()
    region = cfg[section].get("region", "-")
    sso = "sso" if "sso_start_url" in cfg[section] or "sso_session" in cfg[section] else ""
    marker = "*" if name == current else " "
    print(f"{marker} {name:<30} {region:<15} {sso}")
