/**
 * A long answer's text encoded as UTF-8 a slice at a time. Node writes a string body in one call
 * (Fastify measures it with `Buffer.byteLength`, then the socket encodes it whole): for a search
 * batch at its bounds (~40 MB of JSON) the two held the service thread for ~210 ms, measured with
 * a CPU profile in the route walk (test/e2e/route-walk.test.ts), on top of the time the text took
 * to write. Encoded here in pieces with a turn of the event loop between them, the body reaches
 * Fastify as one Buffer, which it sends as it is.
 */
import { TimeSlices } from '../core/time-slices.js';

/** Texts shorter than this are sent as they are: one encoding costs less than a turn. */
export const LONG_TEXT_CHARS = 1 << 20;
/** Characters encoded at a time: ~1-3 ms each. */
const PIECE_CHARS = 1 << 19;

/** `text` as UTF-8, encoded in pieces; a surrogate pair is never split between two pieces. */
export async function utf8InSlices(text: string): Promise<Buffer> {
  const slices = new TimeSlices();
  const pieces: Buffer[] = [];
  let bytes = 0;
  for (let from = 0, i = 0; from < text.length; i++) {
    if (slices.due(i)) await slices.pause();
    let to = Math.min(text.length, from + PIECE_CHARS);
    const last = text.charCodeAt(to - 1);
    if (to < text.length && last >= 0xd800 && last <= 0xdbff) to--;
    const piece = Buffer.from(text.slice(from, to), 'utf8');
    pieces.push(piece);
    bytes += piece.length;
    from = to;
  }
  return Buffer.concat(pieces, bytes);
}
