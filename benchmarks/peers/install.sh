#!/usr/bin/env bash
# Venvs of the peers compared in benchmarks/peers/run.py, beside this script
# (gitignored), never in the project's env:
#   .venv-ams   agent-memory-server 0.14.0 (Python 3.12), mcp and litellm pinned
#   .venv-mem0  mem0ai 2.2.1 + redisvl 0.27.2 (its Redis vector store)
# Usage: bash benchmarks/peers/install.sh      (PY312=/path/to/python3.12 to choose the interpreter)
set -euo pipefail
cd "$(dirname "$0")"
PY312="${PY312:-/root/.pyenv/versions/3.12.1/bin/python}"
if [ ! -x "$PY312" ]; then PY312="$(command -v python3.12)"; fi
"$PY312" -c 'import sys; assert sys.version_info[:2] == (3, 12), sys.version'

make_venv() {  # make_venv DIR PACKAGE...
    local dir="$1"; shift
    [ -x "$dir/bin/python" ] || "$PY312" -m venv "$dir"
    "$dir/bin/python" -m pip install -q --upgrade pip
    "$dir/bin/python" -m pip install -q "$@"
}

# litellm 1.82.7 and 1.82.8 were compromised releases: pinned to 1.82.6, and checked below.
make_venv .venv-ams "agent-memory-server==0.14.0" "mcp==1.30.0" "litellm==1.82.6"
make_venv .venv-mem0 "mem0ai==2.2.1" "redisvl==0.27.2"

for dir in .venv-ams .venv-mem0; do
    "$dir/bin/python" - "$dir" <<'PY'
import sys
from importlib.metadata import PackageNotFoundError, version
try:
    v = version("litellm")
except PackageNotFoundError:
    v = None
assert v not in ("1.82.7", "1.82.8"), f"{sys.argv[1]}: compromised litellm {v}"
names = ["agent-memory-server", "agent-memory-client", "mcp", "litellm", "pydocket",
         "mem0ai", "redisvl", "redis", "openai"]
found = []
for name in names:
    try:
        found.append(f"{name}=={version(name)}")
    except PackageNotFoundError:
        pass
print(sys.argv[1] + ":", " ".join(found))
PY
done
