"""A real Rego engine over a real bundle: rego-cpp (PyPI ``regopy``), loaded in process.

OPA's own Go engine (``opa-golib-python-bindings``) needs Python 3.14 and pip finds no
``regorus`` release on the index; rego-cpp is an independent implementation of the
language, so a policy that passes here relies on no agbom code to decide.
"""

from __future__ import annotations

import io
import tarfile
from typing import Any

import orjson
from regopy import Interpreter


def bundle_members(body: bytes) -> dict[str, bytes]:
    """Every file of a bundle tarball, by name."""
    with tarfile.open(fileobj=io.BytesIO(body), mode="r:gz") as tar:
        return {
            m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


class BundleEngine:
    """The bundle's policies and ``data.json`` files loaded into one interpreter each query
    (as OPA mounts them: a ``dir/data.json`` becomes ``data.dir``)."""

    def __init__(self, body: bytes) -> None:
        self.members = bundle_members(body)
        self.manifest = orjson.loads(self.members[".manifest"])
        self.data: dict[str, Any] = {}
        self.modules: dict[str, str] = {}
        for name, content in self.members.items():
            if name.endswith("/data.json"):
                node = self.data
                for part in name.split("/")[:-1]:
                    node = node.setdefault(part, {})
                node.update(orjson.loads(content))
            elif name.endswith(".rego"):
                self.modules[name] = content.decode()

    def query(self, expression: str, input_value: Any) -> Any:
        """The value of ``expression`` (a ref such as ``data.agbom.skill_load.allow``), or
        ``None`` when it is undefined."""
        rego = Interpreter()
        for name, source in self.modules.items():
            rego.add_module(name, source)
        rego.add_data(self.data)
        rego.set_input(input_value)
        # Bound to a variable: a query whose expression is false counts as undefined.
        output = rego.query(f"x := {expression}")
        results = output.results
        return results[0].bindings["x"] if results else None
