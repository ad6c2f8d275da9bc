# Sourced by scripts/app and scripts/test: create .venv once and install the given requirements
# file when it, or what it installs from, changed since the last install (a stamp file remembers
# the hash of requirements*.txt, constraints.txt and pyproject.toml).
req="$1"
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=".venv/.installed-$(basename "$req")"
want=$(cat requirements*.txt constraints.txt pyproject.toml | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$req"
  echo "$want" > "$stamp"
fi
