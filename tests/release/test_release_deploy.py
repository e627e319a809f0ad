"""The compose file and Kubernetes manifests of docs/deploying.md are valid (issue 43).

The compose file is checked against the Compose specification's schema (as check-jsonschema
vendors it), the manifests against Kubernetes' own schemas in strict mode (kubernetes-validate:
an unknown or misspelt field fails). tests/release/test_release_image.py starts the image with
the Deployment's arguments.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.release.release_tools import deploy_block as block

BIN = Path(sys.executable).parent


def test_the_compose_file_matches_the_compose_specification(tmp_path: Path) -> None:
    compose = tmp_path / "compose.yaml"
    compose.write_text(block("# compose.yaml"))
    done = subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.compose-spec", str(compose)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    services: dict[str, Any] = yaml.safe_load(compose.read_text())["services"]
    guardian = services["guardian"]
    assert guardian["image"].startswith("ghcr.io/agbom/agbom:")
    assert guardian["command"][0] == "serve" and "PGPASSFILE" in guardian["environment"]
    assert "password" not in guardian["environment"]["AGBOM_DB"].split("@")[0].split("//")[1]


def test_the_kubernetes_manifests_match_kubernetes_schemas_strictly(tmp_path: Path) -> None:
    manifests = tmp_path / "agbom-guardian.yaml"
    manifests.write_text(block("# agbom-guardian.yaml"))
    done = subprocess.run(
        [str(BIN / "kubernetes-validate"), "--strict", "-k", "1.33.0", str(manifests)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    kinds = [d["kind"] for d in yaml.safe_load_all(manifests.read_text())]
    assert sorted(kinds) == ["Deployment", "Secret", "Secret", "Service"]
    (deployment,) = [
        d for d in yaml.safe_load_all(manifests.read_text()) if d["kind"] == "Deployment"
    ]
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    (container,) = spec["template"]["spec"]["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/healthz"
    assert container["env"][0]["valueFrom"]["secretKeyRef"]["name"] == "agbom-db"
    assert spec["template"]["spec"]["securityContext"]["runAsUser"] == 10001
