/**
 * Reading one field of a multipart/form-data body (RFC 7578) as a stream, without holding the
 * body: the snapshot upload's `snapshot` field, as Qdrant's clients send it. Memory stays at about
 * one chunk plus the delimiter; the other parts are read and dropped. A body cut short, without
 * the field, or with part headers over 16 KiB is ERR_BAD_INPUT.
 */
import { badInput } from '../core/errors.js';

const MAX_PART_HEADERS = 16384;
const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');

/** The boundary of a multipart/form-data content type, or undefined. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (contentType === undefined || !/^multipart\/form-data\s*;/i.test(contentType)) return undefined;
  const match = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return match?.[1] ?? match?.[2];
}

/** The `name` of a part's Content-Disposition header, or undefined. */
function partName(headers: string): string | undefined {
  for (const line of headers.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon === -1 || line.slice(0, colon).trim().toLowerCase() !== 'content-disposition') continue;
    const match = /;\s*name="([^"]*)"/i.exec(line.slice(colon + 1)) ?? /;\s*name=([^\s;]+)/i.exec(line.slice(colon + 1));
    return match?.[1];
  }
  return undefined;
}

/**
 * The bytes of the first part named `field`, as they arrive; the rest of the body is read to its
 * closing delimiter (so a body cut short is refused, even after the field).
 */
export async function* multipartField(source: AsyncIterable<Uint8Array>, boundary: string, field: string): AsyncGenerator<Buffer> {
  // Every delimiter, the first included, is preceded by CRLF once the body is seen as starting with one.
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  let buffer: Buffer = CRLF;
  let state: 'preamble' | 'after-delimiter' | 'headers' | 'body' | 'done' = 'preamble';
  let emitting = false;
  let found = false;
  for await (const chunk of source) {
    if (state === 'done') continue;
    buffer = buffer.length === 0 ? Buffer.from(chunk) : Buffer.concat([buffer, chunk]);
    for (;;) {
      if (state === 'preamble' || state === 'body') {
        const at = buffer.indexOf(delimiter);
        if (at === -1) {
          // Keep what could be the start of a delimiter; the rest is part data (or preamble).
          const keep = Math.min(buffer.length, delimiter.length - 1);
          const data = buffer.subarray(0, buffer.length - keep);
          if (emitting && data.length > 0) yield Buffer.from(data);
          buffer = buffer.subarray(buffer.length - keep);
          break;
        }
        if (emitting && at > 0) yield Buffer.from(buffer.subarray(0, at));
        if (emitting) {
          emitting = false;
          found = true;
        }
        buffer = buffer.subarray(at + delimiter.length);
        state = 'after-delimiter';
      }
      if (state === 'after-delimiter') {
        if (buffer.length < 2) break;
        if (buffer[0] === 0x2d && buffer[1] === 0x2d) {
          state = 'done';
          break;
        }
        // Transport padding (spaces, tabs) may come before the CRLF.
        const end = buffer.indexOf(CRLF);
        if (end === -1) {
          if (buffer.length > 256) throw badInput('body', 'not a multipart/form-data body: a delimiter line does not end');
          break;
        }
        buffer = buffer.subarray(end + 2);
        state = 'headers';
      }
      if (state === 'headers') {
        const end = buffer.indexOf(HEADERS_END);
        // A part without headers starts with the blank line at once.
        const bare = buffer.length >= 2 && buffer[0] === 0x0d && buffer[1] === 0x0a;
        if (end === -1 && !bare) {
          if (buffer.length > MAX_PART_HEADERS) throw badInput('body', `a multipart part's headers are longer than ${MAX_PART_HEADERS} bytes`);
          break;
        }
        const headers = bare ? '' : buffer.subarray(0, end).toString('latin1');
        buffer = buffer.subarray(bare ? 2 : end + HEADERS_END.length);
        emitting = !found && partName(headers) === field;
        state = 'body';
        continue;
      }
      break;
    }
  }
  if (state !== 'done') throw badInput('body', 'the multipart/form-data body is cut short (no closing delimiter)');
  if (!found) throw badInput('body', `the multipart/form-data body has no "${field}" field`);
}
