/** Which -host values count as reachable from this machine only (no warning without an API key). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exposureWarning, isLoopbackHost } from '../../../src/api/listen-exposure.js';

test('loopback: 127.0.0.0/8, ::1 in any spelling, the IPv4 loopback as IPv6, localhost', () => {
  for (const host of ['127.0.0.1', '127.255.0.9', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST', ' 127.0.0.1 ']) {
    assert.equal(isLoopbackHost(host), true, host);
  }
});

test('not loopback: every interface, other addresses, names, nonsense', () => {
  for (const host of [
    '0.0.0.0',
    '::',
    '[::]',
    '10.0.0.1',
    '192.168.1.2',
    '::ffff:10.0.0.1',
    '128.0.0.1',
    'example.com',
    'localhost.example.com',
    '',
    '127.0.0.1.nip.io',
  ]) {
    assert.equal(isLoopbackHost(host), false, host);
  }
});

test('the warning: only for a non-loopback host without a key, and it names the host, the backup and the remedy', () => {
  assert.equal(exposureWarning('127.0.0.1', undefined), undefined);
  assert.equal(exposureWarning('0.0.0.0', 'secret'), undefined);
  const warning = exposureWarning('0.0.0.0', undefined);
  assert.ok(warning !== undefined);
  assert.match(warning, /^listening on 0\.0\.0\.0 without -api-key/);
  assert.match(warning, /POST \/backup/);
  assert.match(warning, /-api-key/);
});
