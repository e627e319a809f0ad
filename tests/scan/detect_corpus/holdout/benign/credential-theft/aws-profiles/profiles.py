import configparser
from pathlib import Path

cfg = configparser.ConfigParser()
cfg.read(Path.home() / ".aws" / "config")
for section in cfg.sections():
    print(section.removeprefix("profile "))
