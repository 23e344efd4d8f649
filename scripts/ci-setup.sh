#!/usr/bin/env bash
# What `npm test` needs besides Node and the npm packages, on Debian: nats-server 2.10 or later
# (fetched into .cluster-tools/ by scripts/nats-server.mjs, which the test command also runs), tmux (the tests of
# `kith shell` drive it through a pseudo-terminal; they fail without it) and Chromium (the
# dashboard's browser tests, test/browser/, drive it; they skip without it). Installs what is
# missing with apt-get, so run it as root: `sudo bash scripts/ci-setup.sh`. CI (.ci/run) runs it first.
set -euo pipefail
nats=$(node "$(dirname "$0")/nats-server.mjs")
echo "ci-setup: nats-server at $nats"
missing=()
command -v tmux >/dev/null || missing+=(tmux)
# A browser the tests find (test/helpers/browser.ts): CHROMIUM_PATH if set, else one of these.
browsers=(/usr/bin/chromium /usr/bin/chromium-browser /usr/bin/google-chrome /usr/bin/google-chrome-stable)
if [ -n "${CHROMIUM_PATH:-}" ]; then browsers=("$CHROMIUM_PATH"); fi
has_browser=false
for browser in "${browsers[@]}"; do
  if [ -e "$browser" ]; then has_browser=true; fi
done
if ! $has_browser; then missing+=(chromium); fi
if [ ${#missing[@]} -eq 0 ]; then
  echo "ci-setup: tmux and a Chromium are installed"
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "ci-setup: ${missing[*]} missing, and only root can install it: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
