"""Regenerate agbom's schema validators: ``python -m agbom._validators``."""

from pathlib import Path

from agbom._schema import generated_path, generated_source, schema_names

folder = Path(__file__).resolve().parent
wanted = {generated_path(name): name for name in schema_names()}
for stale in folder.glob("gen_*.py"):
    if stale not in wanted:
        stale.unlink()  # a schema that is gone
for target, name in sorted(wanted.items()):
    target.write_text(generated_source(name), encoding="utf-8")
print(f"wrote {len(wanted)} validators to {folder}")
