/**
 * Keep-alive HTTP clients for the benchmarks. Two implementations of one interface, so their
 * overhead can be compared (`--client`):
 *
 * - `http`: node:http with an `Agent({ keepAlive: true })`, request bodies pre-encoded as Buffers.
 *   The default: it costs the client the least per request (see bench/README.md).
 * - `fetch`: Node's built-in fetch (undici, keep-alive by default). Simpler, but its WHATWG
 *   streams and Headers objects cost ~0.15 ms more per request here (GET /healthz p50 0.39 ms
 *   against 0.26 ms), in a client process that shares the two cores with the server.
 */
import http from 'node:http';

export type ClientKind = 'http' | 'fetch';

export const CLIENT_KINDS: readonly ClientKind[] = ['http', 'fetch'];

export interface HttpResponse {
  readonly status: number;
  readonly text: string;
}

export interface HttpClient {
  readonly kind: ClientKind;
  request(method: string, path: string, body?: Buffer): Promise<HttpResponse>;
  close(): void;
}

export function createClient(kind: ClientKind, baseUrl: string, maxSockets: number): HttpClient {
  return kind === 'http' ? nodeHttpClient(baseUrl, maxSockets) : fetchClient(baseUrl);
}

function nodeHttpClient(baseUrl: string, maxSockets: number): HttpClient {
  const base = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  return {
    kind: 'http',
    request(method, path, body) {
      return new Promise<HttpResponse>((resolve, reject) => {
        const headers: http.OutgoingHttpHeaders = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': body.length };
        const req = http.request({ agent, host: base.hostname, port: base.port, method, path, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = chunks.length === 1 ? (chunks[0] as Buffer).toString() : Buffer.concat(chunks).toString();
            resolve({ status: res.statusCode ?? 0, text });
          });
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

function fetchClient(baseUrl: string): HttpClient {
  return {
    kind: 'fetch',
    async request(method, path, body) {
      const response = await fetch(baseUrl + path, {
        method,
        headers: body === undefined ? undefined : { 'content-type': 'application/json' },
        body,
      });
      return { status: response.status, text: await response.text() };
    },
    close() {},
  };
}

/** Requests one JSON document and requires a 2xx; errors carry the server's message. */
export async function requestJson(client: HttpClient, method: string, path: string, body?: unknown): Promise<unknown> {
  const encoded = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  const { status, text } = await client.request(method, path, encoded);
  if (status < 200 || status > 299) throw new Error(`${method} ${path}: HTTP ${status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as unknown;
}
