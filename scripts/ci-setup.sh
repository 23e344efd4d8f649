#!/usr/bin/env bash
# What `npm test` needs besides Node and the npm packages, on Debian or Ubuntu: tmux (the tests of
# `kith shell` drive it through a pseudo-terminal; they fail without it) and Chromium (the
# dashboard's browser tests, test/browser/, drive it; they skip without it). Installs what is
# missing with apt-get, so run it as root: `sudo bash scripts/ci-setup.sh`. CI (.ci/run) runs it first.
set -euo pipefail
missing=()
command -v tmux >/dev/null || missing+=(tmux)
command -v chromium >/dev/null || missing+=(chromium)
if [ ${#missing[@]} -eq 0 ]; then
  echo "ci-setup: tmux and chromium are installed"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "ci-setup: ${missing[*]} missing, and only root can install it: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
