"""``agbom serve`` started in a folder an attacker wrote to (issue 13, item 2).

An agent works in checkouts it can write; an operator may well start the Guardian in one. No
module file in the working directory may ever be imported by agbom's processes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.guardian.acs import request
from tests.transports.served import Served, open_session, post

pytestmark = pytest.mark.network

# Each planted module notes that it ran (in a file named after it), then hands over to the real
# module, so that a hijacked server would go on serving and nothing but the marker shows it.
PLANTED = """\
import importlib, os, sys
with open(os.path.join({markers!r}, __name__), "a") as _f:
    _f.write(str(os.getpid()) + "\\n")
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
del sys.modules[__name__]
sys.modules[__name__] = importlib.import_module(__name__)
"""
HIJACKED_NAMES = ("orjson", "agbom", "starlette", "uvicorn", "sqlite_utils", "yaml", "networkx")


def test_modules_planted_in_the_working_directory_never_run(tmp_path: Path) -> None:
    planted, markers = tmp_path / "checkout", tmp_path / "markers"
    planted.mkdir()
    markers.mkdir()
    for name in HIJACKED_NAMES:
        (planted / f"{name}.py").write_text(PLANTED.format(markers=str(markers)))
    served = Served(db=tmp_path / "s.db", log=tmp_path / "serve.log", cwd=planted)
    try:
        served.start()
        sid = open_session(served.url)
        reply = post(served.url, request("steps/userMessage", {"content": "hi"}, session_id=sid))
        assert reply["result"]["decision"] == "allow"
    finally:
        served.stop()
    ran = {marker.name: marker.read_text().split() for marker in markers.iterdir()}
    assert ran == {}, f"planted modules ran in processes {ran}"
