/**
 * Who can reach a listener: a service on a non-loopback address without an API key serves every
 * collection, and `POST /backup` (the whole database file), to anyone who can reach that address.
 * That is the default (`-host 0.0.0.0`, no key: a reverse proxy in front is meant to guard it), so
 * the service says so when it starts (main.ts).
 */
import { BlockList, isIP } from 'node:net';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
// Also matches ::ffff:127.x.x.x, the IPv4 loopback written as IPv6.
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether `host` (the -host flag: an address or a name) accepts connections from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const address = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (address === 'localhost') return true;
  const family = isIP(address);
  return family !== 0 && LOOPBACK.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** The warning to give at start for a listener that anyone reaching `host` may use; undefined when it needs none. */
export function exposureWarning(host: string, apiKey: string | undefined): string | undefined {
  if (apiKey !== undefined || isLoopbackHost(host)) return undefined;
  return (
    `listening on ${host} without -api-key: anyone who can reach this address can read and change every collection ` +
    'and download the whole database (POST /backup); set -api-key (KITH_API_KEY), listen on 127.0.0.1, or keep the port behind a proxy that checks access'
  );
}
