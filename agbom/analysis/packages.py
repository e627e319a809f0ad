"""What a skill installs, judged by the package it names: a package fetched from an address
instead of a registry, a registry other than the ecosystem's own (dependency confusion), and
a name one slip away from a well-known package (typosquatting).

The well-known names are the most downloaded packages of PyPI and npm (a fixed list, kept
here); a name is a typosquat candidate when it is not itself on the list and is one edit (an
insertion, deletion, substitution or swap of neighbours) from a listed name of five or more
characters, or differs from one only by separators or a trailing ``s``/``js``/``-py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

PYPI_POPULAR = frozenset(
    """boto3 botocore urllib3 requests setuptools certifi charset-normalizer idna typing-extensions
    python-dateutil s3transfer packaging six aiobotocore numpy pyyaml s3fs fsspec pip cryptography
    grpcio-status google-api-core cffi pycparser pandas importlib-metadata pydantic zipp
    attrs protobuf rsa jmespath click pyasn1 platformdirs colorama markupsafe jinja2 wheel pytz
    tomli pluggy filelock virtualenv pyjwt pydantic-core cachetools pytest wrapt psutil
    google-auth pyasn1-modules jsonschema aiohttp sqlalchemy multidict yarl frozenlist aiosignal
    tzdata scipy pyarrow greenlet requests-oauthlib oauthlib soupsieve beautifulsoup4 iniconfig
    exceptiongroup pygments pyparsing decorator werkzeug flask httpx httpcore anyio sniffio h11
    tqdm openpyxl et-xmlfile lxml pillow matplotlib kiwisolver fonttools cycler contourpy
    python-dotenv isodate azure-core msal grpcio docutils tabulate regex more-itertools
    distlib rich markdown-it-py mdurl scikit-learn joblib threadpoolctl networkx sympy mpmath
    torch torchvision torchaudio transformers tokenizers huggingface-hub safetensors datasets
    openai anthropic langchain langchain-core langchain-community tiktoken fastapi starlette
    uvicorn gunicorn redis celery kombu billiard vine amqp django djangorestframework
    psycopg2 psycopg2-binary psycopg pymysql mysqlclient pymongo elasticsearch paramiko
    bcrypt pynacl fabric invoke selenium websocket-client websockets playwright scrapy
    twisted zope-interface pyopenssl google-cloud-storage google-cloud-core google-resumable-media
    gcsfs adlfs azure-storage-blob msrest black isort flake8 pycodestyle pyflakes mypy
    mypy-extensions ruff pylint astroid coverage pytest-cov mock tox nox pre-commit
    setuptools-scm hatchling poetry poetry-core flit-core build twine keyring readme-renderer
    sphinx alabaster babel snowballstemmer imagesize nltk spacy gensim xgboost lightgbm
    catboost tensorflow keras opencv-python seaborn plotly dash bokeh streamlit gradio
    pyspark dask polars duckdb pyodbc sqlparse alembic marshmallow arrow pendulum dateparser
    simplejson ujson orjson msgpack toml tomlkit ruamel-yaml xmltodict defusedxml
    python-multipart itsdangerous blinker markdown mistune html5lib bleach cssselect
    pycryptodome pycryptodomex ecdsa passlib argon2-cffi boto awscli google-cloud-bigquery
    pandas-gbq sentry-sdk structlog loguru prometheus-client opentelemetry-api
    opentelemetry-sdk pyzmq tornado jupyter notebook ipython ipykernel jupyterlab nbformat
    nbconvert traitlets jedi parso prompt-toolkit wcwidth pexpect ptyprocess shapely
    pyproj geopandas fiona folium pydub ffmpeg-python moviepy imageio scikit-image pypdf
    pypdf2 pdfminer-six pdfplumber reportlab python-docx python-pptx xlrd xlsxwriter
    docker kubernetes ansible pywin32 pyserial pyusb pysocks trio gevent eventlet
    greenlet pyinstaller cython numba llvmlite requests-toolbelt httplib2 uritemplate
    google-api-python-client gspread slack-sdk discord-py python-telegram-bot tweepy
    stripe twilio sendgrid boto3-stubs types-requests types-pyyaml colorlog termcolor
    tenacity retrying backoff schedule apscheduler pyperclip pyautogui keyboard pynput
    python-jose jwcrypto authlib flask-login flask-sqlalchemy flask-cors wtforms
    jsonpointer jsonpatch dnspython email-validator phonenumbers faker factory-boy
    hypothesis freezegun responses requests-mock vcrpy pytest-mock pytest-asyncio
    pytest-xdist execnet filetype python-magic chardet cchardet unidecode emoji
    tree-sitter pyperclip mcp fastmcp""".split()
)
NPM_POPULAR = frozenset(
    """lodash chalk react react-dom request commander express debug tslib moment axios
    prop-types fs-extra uuid async bluebird underscore vue glob yargs mkdirp classnames
    colors webpack typescript body-parser rxjs inquirer dotenv minimist semver jquery
    cross-env eslint prettier babel-core core-js node-fetch ws socket.io redux
    react-redux jsonwebtoken bcrypt mongoose mongodb mysql pg redis ioredis sequelize
    cheerio puppeteer playwright jest mocha chai sinon supertest nodemon pm2 rimraf
    npm-run-all concurrently husky lint-staged esbuild vite rollup parcel next nuxt
    gatsby svelte angular zone.js immutable ramda date-fns dayjs luxon validator
    joi yup zod ajv qs query-string cookie cookie-parser cors helmet morgan multer
    passport passport-local express-session compression serve-static http-proxy
    http-proxy-middleware got superagent node-sass sass less postcss autoprefixer
    tailwindcss styled-components emotion classnames clsx nanoid shortid faker
    chokidar fast-glob globby micromatch minimatch picomatch ora cli-progress
    boxen figlet yargs-parser meow execa shelljs cross-spawn which open
    dotenv-expand config convict winston pino bunyan log4js source-map-support
    ts-node tsx tsup nodemailer sharp jimp canvas pdfkit xlsx csv-parse papaparse
    marked markdown-it highlight.js prismjs handlebars ejs pug mustache nunjucks
    graphql apollo-server express-graphql prisma typeorm knex aws-sdk firebase
    firebase-admin stripe twilio openai langchain electron electron-builder
    left-pad event-stream flatmap-stream eslint-scope coa rc ua-parser-js node-ipc
    discord.js telegraf slack bolt yaml js-yaml xml2js fast-xml-parser
    form-data formidable busboy mime mime-types content-type iconv-lite
    string-width strip-ansi ansi-regex ansi-styles supports-color escape-string-regexp
    graceful-fs readable-stream safe-buffer inherits once wrappy ms balanced-match
    brace-expansion concat-map path-is-absolute inflight isarray kind-of is-number
    has-flag color-convert color-name lru-cache yallist signal-exit set-blocking
    object-assign loose-envify js-tokens regenerator-runtime whatwg-fetch
    @babel/core @babel/preset-env @types/node @types/react vitest playwright-core""".split()
)
# Packages of their own that sit one slip from a listed name: not typosquats.
_LEGITIMATE = frozenset(
    {"scapy", "pyaml", "attr", "jwt", "preact", "color", "mysql2", "bcryptjs", "cookies",
     "dotenvx", "lodash-es", "request", "requests-html", "click-plugins", "boto", "psycopg",
     "pydot", "pyflake", "httpie", "panda", "tensorflow-gpu", "redux", "execa", "router"}
)  # fmt: skip
_POPULAR = {"pypi": PYPI_POPULAR, "npm": NPM_POPULAR}


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.lower())


def _one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by one insertion, deletion, substitution or neighbour swap."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def typosquat_of(name: str, ecosystem: str) -> str | None:
    """The well-known package ``name`` imitates, or ``None``."""
    popular = _POPULAR.get(ecosystem)
    if popular is None or not name or len(name) > 214:
        return None
    normal = _normal(name.split("/")[-1] if ecosystem == "pypi" else name)
    popular_normal = {_normal(p): p for p in popular}
    if normal in popular_normal or normal in _LEGITIMATE or name.startswith("@"):
        return None
    for known_normal, known in popular_normal.items():
        if len(known_normal) < 5:
            continue
        if _one_edit(normal, known_normal):
            return known
        squashed = normal.replace("-", "")
        if squashed == known_normal.replace("-", "") and normal != known_normal:
            return known
        for affix in ("s", "js", "-js", "-py", "py", "-python", "python-"):
            if normal in (known_normal + affix, affix + known_normal):
                return known
    return None


# -- install commands ----------------------------------------------------------------------------

# Package indexes a PyPI or npm install may name without risk: the ecosystem's own and
# vendors that document an index of their own builds (PyTorch's wheels).
_KNOWN_INDEXES = (
    "pypi.org", "files.pythonhosted.org", "pypi.python.org", "registry.npmjs.org",
    "registry.yarnpkg.com", "download.pytorch.org", "npm.pkg.github.com",
)  # fmt: skip
_VALUED_PIP = frozenset(
    {"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-t", "--target",
     "--prefix", "--root", "-i", "--index-url", "--extra-index-url", "-f", "--find-links",
     "--trusted-host", "--python", "-p", "--platform", "--python-version", "--implementation",
     "--abi", "--src", "--upgrade-strategy", "--cache-dir", "--log", "--proxy", "--retries",
     "--timeout", "--cert", "--client-cert", "--report", "--progress-bar", "--only-binary",
     "--no-binary", "--global-option", "--config-settings", "-C", "--group"}
)  # fmt: skip
_VALUED_NPM = frozenset(
    {"--registry", "--prefix", "-C", "--tag", "--cache", "--userconfig", "--workspace", "-w",
     "--loglevel", "--scope"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Install:
    """One package an install command fetches, or an index it fetches them from."""

    ecosystem: str  # pypi | npm | gem | go | cargo
    spec: str  # as written: name[==version], a URL, git+URL
    problem: str  # untrusted-install | typosquat-package
    detail: str


def _known_index(url: str) -> bool:
    host = re.sub(r"^[a-z+]+://(?:[^@/]*@)?", "", url.lower()).split("/", 1)[0].split(":")[0]
    return any(host == k or host.endswith("." + k) for k in _KNOWN_INDEXES)


def _remote_spec(spec: str) -> bool:
    lower = spec.lower()
    return lower.startswith(("http://", "https://", "git+", "git://", "ssh://", "ftp://")) or (
        "@" in lower and ("git+" in lower or "://" in lower)
    )


def _pinned_remote(spec: str) -> bool:
    """A git source at a full commit hash."""
    return re.search(r"@[0-9a-f]{40}\b|#[0-9a-f]{40}\b", spec.lower()) is not None


def _name_of(spec: str, ecosystem: str) -> str:
    if ecosystem == "npm":
        if spec.startswith("@"):
            scope, _, rest = spec[1:].partition("/")
            return "@" + scope + "/" + rest.split("@", 1)[0]
        return spec.split("@", 1)[0]
    return re.split(r"[\[<>=!~;@\s]", spec, maxsplit=1)[0]


def installs(words: list[str]) -> list[Install]:
    """What one command line installs, from its words (program first): ``pip install``,
    ``python -m pip install``, ``uv pip install``, ``uv add``, ``pipx install``, ``poetry
    add``, ``npm install/i/add``, ``yarn add``, ``pnpm add``, ``bun add``, ``gem install``."""
    if not words:
        return []
    program = words[0].rsplit("/", 1)[-1].lower().removesuffix(".exe")
    rest = words[1:]
    ecosystem = ""
    if (
        program.startswith("python")
        and len(rest) >= 2
        and rest[0] == "-m"
        and rest[1] in ("pip", "pip3")
    ):
        program, rest = "pip", rest[2:]
    if program in ("pip", "pip3", "pipx") or re.fullmatch(r"pip3\.\d+", program):
        ecosystem, rest = "pypi", rest
    elif program == "uv" and rest[:1] == ["pip"]:
        ecosystem, rest = "pypi", rest[1:]
    elif program in ("uv", "poetry", "pdm", "rye") and rest[:1] == ["add"]:
        ecosystem = "pypi"
    elif program in ("npm", "pnpm", "yarn", "bun", "cnpm"):
        ecosystem = "npm"
    elif program == "gem":
        ecosystem = "gem"
    if not ecosystem or not rest:
        return []
    verb = rest[0]
    if verb not in ("install", "i", "add", "in", "isntall"):
        return []
    valued = _VALUED_PIP if ecosystem == "pypi" else _VALUED_NPM
    out: list[Install] = []
    index = 1
    while index < len(rest):
        word = rest[index]
        option, eq, attached = word.partition("=")
        if word.startswith("-") and len(word) > 1:
            value = attached if eq else (rest[index + 1] if index + 1 < len(rest) else "")
            if option in (
                "-i",
                "--index-url",
                "--extra-index-url",
                "--registry",
                "-f",
                "--find-links",
            ):
                if value and not _known_index(value):
                    kind = "an extra index" if option == "--extra-index-url" else "an index"
                    out.append(
                        Install(
                            ecosystem,
                            value,
                            "untrusted-install",
                            f"packages from {kind} other than the registry: {value}",
                        )
                    )
            if option in ("--trusted-host",) and value:
                out.append(
                    Install(
                        ecosystem,
                        value,
                        "untrusted-install",
                        f"TLS checks switched off for {value}",
                    )
                )
            if option in valued and not eq:
                index += 1
            index += 1
            continue
        index += 1
        if (
            word in (".", "..")
            or word.startswith(("./", "../", "/"))
            or word.endswith((".txt", ".in"))
        ):
            continue
        if _remote_spec(word):
            if not _pinned_remote(word):
                out.append(
                    Install(
                        ecosystem,
                        word,
                        "untrusted-install",
                        f"a package fetched from an address, not a registry: {word}",
                    )
                )
            continue
        name = _name_of(word, ecosystem)
        squat = typosquat_of(name, ecosystem)
        if squat is not None:
            out.append(
                Install(
                    ecosystem,
                    word,
                    "typosquat-package",
                    f"{name} is one slip from the well-known {squat}",
                )
            )
    return out


def requirement_problems(line: str) -> list[Install]:
    """A ``requirements.txt`` line: an index option, a URL requirement or a typosquat."""
    line = line.split(" #", 1)[0].strip()
    if not line or line.startswith("#"):
        return []
    if line.startswith("-"):
        return installs(["pip", "install", *line.split()])
    return installs(["pip", "install", line.split(";", 1)[0].strip()])


def manifest_dependency_problems(name: str, spec: str) -> list[Install]:
    """One ``package.json`` dependency: a URL or git source, or a typosquatted name."""
    out: list[Install] = []
    if _remote_spec(spec) or spec.startswith(("github:", "gitlab:", "bitbucket:")):
        if not _pinned_remote(spec):
            out.append(
                Install(
                    "npm",
                    f"{name}@{spec}",
                    "untrusted-install",
                    f"{name} fetched from an address, not the registry: {spec}",
                )
            )
    squat = typosquat_of(name, "npm")
    if squat is not None:
        out.append(
            Install(
                "npm", name, "typosquat-package", f"{name} is one slip from the well-known {squat}"
            )
        )
    return out
