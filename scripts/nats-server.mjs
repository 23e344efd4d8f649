// Prints the path of a nats-server of release 2.10 or later, fetching one when none is at hand.
//   node scripts/nats-server.mjs
// The cluster tests run three of them on loopback. 2.10 is the first release with JetStream's
// `sync_interval: always` (a publish is acknowledged only once it is fsynced on a majority of the
// stream's servers); Debian 12's own package is 2.9. Looked for in order: $KITH_NATS_SERVER,
// `nats-server` on the PATH, then .cluster-tools/ (git-ignored). Failing those, Debian 13's
// package is fetched with a private apt state (the system's sources and package database are not
// touched; Debian 12's archive keyring signs Debian 13 too) and unpacked with `dpkg -x` into
// .cluster-tools/. It is a static Go binary and runs on Debian 12.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MIN = [2, 10];
const root = fileURLToPath(new URL('..', import.meta.url));
const tools = join(root, '.cluster-tools');
const unpacked = join(tools, 'root', 'usr', 'sbin', 'nats-server');
const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';
const SOURCE = `deb [signed-by=${KEYRING}] http://deb.debian.org/debian trixie main`;

/** The release `path --version` reports, or undefined when it does not run. */
function releaseOf(path) {
  try {
    const out = execFileSync(path, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
    const m = /v?(\d+)\.(\d+)\.(\d+)/.exec(out);
    return m === null ? undefined : [Number(m[1]), Number(m[2]), Number(m[3])];
  } catch {
    return undefined;
  }
}

function recentEnough(path) {
  const release = releaseOf(path);
  return release !== undefined && (release[0] > MIN[0] || (release[0] === MIN[0] && release[1] >= MIN[1]));
}

function onPath() {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(dir, 'nats-server');
    if (dir !== '' && existsSync(candidate)) return candidate;
  }
  return undefined;
}

function fetchFromDebian() {
  for (const tool of ['apt-get', 'dpkg']) {
    try {
      execFileSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' });
    } catch {
      throw new Error(
        `no nats-server ${MIN.join('.')} or later on this machine, and no ${tool} to fetch Debian's: install one (https://nats.io) or set KITH_NATS_SERVER`,
      );
    }
  }
  if (!existsSync(KEYRING)) throw new Error(`no nats-server ${MIN.join('.')} or later, and no ${KEYRING} to check Debian's package with`);
  const apt = join(tools, 'apt');
  rmSync(tools, { recursive: true, force: true });
  for (const dir of ['lists/partial', 'cache/archives/partial', 'etc', 'download']) mkdirSync(join(apt, dir), { recursive: true });
  writeFileSync(join(apt, 'etc', 'sources.list'), `${SOURCE}\n`);
  const options = [
    `-o=Dir::Etc::SourceList=${join(apt, 'etc', 'sources.list')}`,
    '-o=Dir::Etc::SourceParts=/dev/null',
    `-o=Dir::State::Lists=${join(apt, 'lists')}`,
    `-o=Dir::Cache=${join(apt, 'cache')}`,
    '-o=Debug::NoLocking=1',
    '-o=APT::Sandbox::User=root',
    '-qq',
  ];
  const run = (args, cwd) => execFileSync('apt-get', [...options, ...args], { cwd, stdio: ['ignore', 'ignore', 'inherit'], timeout: 300_000 });
  run(['update']);
  const download = join(apt, 'download');
  run(['download', 'nats-server'], download);
  const deb = readdirSync(download).find((name) => name.endsWith('.deb'));
  if (deb === undefined) throw new Error('apt-get download nats-server left no .deb');
  execFileSync('dpkg', ['-x', join(download, deb), join(tools, 'root')], { stdio: 'inherit' });
  rmSync(join(apt, 'lists'), { recursive: true, force: true });
  if (!recentEnough(unpacked)) throw new Error(`the fetched ${deb} does not run as nats-server ${MIN.join('.')} or later`);
  return unpacked;
}

function find() {
  const given = process.env.KITH_NATS_SERVER;
  if (given !== undefined && given !== '') {
    if (!recentEnough(given)) throw new Error(`KITH_NATS_SERVER=${given} is not a nats-server ${MIN.join('.')} or later`);
    return given;
  }
  const system = onPath();
  if (system !== undefined && recentEnough(system)) return system;
  if (recentEnough(unpacked)) return unpacked;
  return fetchFromDebian();
}

try {
  process.stdout.write(`${find()}\n`);
} catch (error) {
  process.stderr.write(`nats-server: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
}
