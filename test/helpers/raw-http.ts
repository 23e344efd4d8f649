/** One raw HTTP exchange over a socket, for requests fetch refuses to send (no Host, odd Expect, garbage). */
import { connect } from 'node:net';

export function rawHttp(url: string, request: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(request));
    let out = '';
    socket.on('data', (chunk) => {
      out += chunk.toString();
    });
    socket.on('end', () => resolve(out));
    socket.on('error', reject);
    socket.setTimeout(10_000, () => socket.destroy(new Error('no answer within 10 s')));
  });
}

/** The status and the JSON body of a raw answer (`Connection: close`, so the body is the rest). */
export function parseRawAnswer(raw: string): { status: number; headers: string; body: unknown } {
  // Interim answers (100 Continue) come first; the final one follows.
  const answer = raw.replace(/^(HTTP\/1\.[01] 1\d\d [^\r]*\r\n(?:[^\r]+\r\n)*\r\n)+/, '');
  const split = answer.indexOf('\r\n\r\n');
  const head = answer.slice(0, split);
  const status = Number(/^HTTP\/1\.[01] (\d{3}) /.exec(head)?.[1] ?? Number.NaN);
  const text = answer.slice(split + 4);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status, headers: head, body };
}
