"""The pre-commit hooks of ``.pre-commit-hooks.yaml``: ``python -P -m agbom.cli.precommit HOOK``.

pre-commit runs a hook from the repository's root with the changed files as arguments. Each
hook turns them into an ``agbom`` command line and runs it in this process:

- ``scan [--fail-on SEVERITY] [--rules DIR]... [--tools-from FILE]... FILE...``: ``agbom scan``
  of the changed files, where a file inside an Agent Skill (a folder holding ``SKILL.md``, up to
  the repository's root) stands for its whole skill folder, since a changed script changes the
  skill; files agbom does not read are skipped by the scanner. Fails (exit 1) on a finding at or
  above ``--fail-on`` (``high`` by default; ``never`` to report only), or on a file it cannot
  read (exit 3).
- ``lock [--lock FILE] [--path PATH]... [--tools-from FILE]...``: when the lock file exists
  (``agbom.lock.json`` by default), scans PATHs (the repository by default) and runs
  ``agbom check --locked`` on the result: any drift from the lock fails. No lock file, nothing
  to check.
- ``skills-lint FILE...``: the Agent Skills specification checks of each changed skill's
  ``SKILL.md`` (frontmatter, ``name`` rules and its match with the folder, description
  length), one ``path: error`` line per problem; exit 1 when there is any.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from agbom.cli import main as agbom

SEVERITIES = ("info", "low", "medium", "high", "critical", "never")


def skill_folder(file: Path, root: Path) -> Path | None:
    """The nearest folder at or above ``file``'s, up to ``root``, that holds a ``SKILL.md``."""
    folder = file.parent
    while True:
        if (folder / "SKILL.md").is_file() and not (folder / "SKILL.md").is_symlink():
            return folder
        if folder == root or folder == folder.parent:
            return None
        folder = folder.parent


def scan_targets(files: Sequence[str], root: Path) -> list[str]:
    """What to scan for ``files``: each skill once (its folder), every other file as given."""
    targets: list[str] = []
    seen: set[str] = set()
    for name in files:
        path = Path(name)
        absolute = path if path.is_absolute() else root / path
        folder = skill_folder(absolute, root)
        if folder is not None and (folder == root or root in folder.parents):
            target = os.path.relpath(folder, root)
        else:
            target = name
        if target not in seen:
            seen.add(target)
            targets.append(target)
    return targets


def _scan_options(args: argparse.Namespace) -> list[str]:
    options: list[str] = []
    for rules in args.rules:
        options += ["--rules", rules]
    for tools in args.tools_from:
        options += ["--tools-from", tools]
    return options


def scan(args: argparse.Namespace) -> int:
    targets = scan_targets(args.files, Path.cwd())
    if not targets:
        return 0
    gate = [] if args.fail_on == "never" else ["--fail-on", args.fail_on]
    return agbom(["scan", *_scan_options(args), *gate, "--", *targets])


def lock(args: argparse.Namespace) -> int:
    if not Path(args.lock).is_file():
        print(f"agbom-lock: no {args.lock} here: nothing to check", file=sys.stderr)
        return 0
    tools = [item for file in args.tools_from for item in ("--tools-from", file)]
    with tempfile.TemporaryDirectory(prefix="agbom-lock-") as work:
        report = str(Path(work) / "scan.json")
        code = agbom(["scan", *tools, "-f", "json", "-o", report, "--", *(args.path or ["."])])
        # 3: some files could not be read; `agbom lock` covers what was read, and so does the
        # check (the agbom-scan and agbom-skills-lint hooks report those files).
        if code not in (0, 1, 3):
            return code
        # Drift is printed on stderr; the findings (the agbom-scan hook's) go to a file.
        findings = str(Path(work) / "check.json")
        return agbom(["check", report, "--locked", args.lock, *tools, "-f", "json", "-o", findings])


def skills_lint(args: argparse.Namespace) -> int:
    root = Path.cwd()
    skills: list[str] = []
    for name in args.files:
        folder = skill_folder(root / name, root)
        if folder is not None:
            skill = os.path.relpath(folder / "SKILL.md", root)
            if skill not in skills:
                skills.append(skill)
    if not skills:
        return 0
    # A SKILL.md that breaks the Agent Skills specification is a scan.skill-spec finding (low;
    # scan exits 0 on it since issue 41), and one scan cannot read is a file error (exit 3):
    # both fail this hook. Other findings are agbom-scan's business, not this hook's.
    with tempfile.TemporaryDirectory(prefix="agbom-skills-lint-") as work:
        report = Path(work) / "scan.json"
        code = agbom(["scan", "-f", "json", "-o", str(report), "--", *skills])
        deviations = _spec_findings(report) if code in (0, 1) else []
    for where, message in deviations:
        print(f"agbom: {where}: {message}", file=sys.stderr)
    if code == 3 or deviations:
        return 1
    return 0 if code in (0, 1) else code


def _spec_findings(report: Path) -> list[tuple[str, str]]:
    """``(PATH:LINE, message)`` of each ``scan.skill-spec`` finding in scan's JSON report."""
    import json

    try:
        findings = json.loads(report.read_text(encoding="utf-8")).get("findings") or []
    except (OSError, ValueError, AttributeError):
        return [("scan.json", "agbom scan wrote no readable report")]
    out = []
    for finding in findings:
        if not isinstance(finding, dict) or finding.get("rule_id") != "scan.skill-spec":
            continue
        place = (finding.get("locations") or [{}])[0]
        where = f"{place.get('path', '?')}:{place.get('line', 1)}"
        out.append((where, str(finding.get("message", ""))))
    return out


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="python -P -m agbom.cli.precommit")
    hooks = root.add_subparsers(dest="hook", required=True)
    scan_hook = hooks.add_parser("scan", help="agbom scan of the changed files")
    scan_hook.add_argument("--fail-on", choices=SEVERITIES, default="high")
    scan_hook.add_argument("--rules", action="append", default=[])
    scan_hook.add_argument("--tools-from", action="append", default=[])
    scan_hook.add_argument("files", nargs="*")
    scan_hook.set_defaults(run=scan)
    lock_hook = hooks.add_parser("lock", help="agbom check --locked when a lock file exists")
    lock_hook.add_argument("--lock", default="agbom.lock.json")
    lock_hook.add_argument("--path", action="append", default=[])
    lock_hook.add_argument("--tools-from", action="append", default=[])
    lock_hook.add_argument("files", nargs="*", help="ignored: the lock covers --path")
    lock_hook.set_defaults(run=lock)
    lint_hook = hooks.add_parser("skills-lint", help="Agent Skills checks of changed skills")
    lint_hook.add_argument("files", nargs="*")
    lint_hook.set_defaults(run=skills_lint)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
