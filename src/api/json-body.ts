/**
 * The JSON body parser. Replaces Fastify's so that a poisoned key is refused with its path
 * (`points[0].payload.__proto__: …`) instead of a generic message, so that every parse failure
 * carries our error code, and so that a large body is parsed piece by piece as it arrives
 * (json-stream-parser.ts) instead of in one long `JSON.parse` that holds the service thread.
 *
 * The body stream is read here, with Fastify's own rules: the body limit (413, by Content-Length
 * before reading, or once the bytes read pass it), Content-Length checked against the bytes read,
 * a stream error answered 400.
 */
import { errorCodes, type FastifyInstance, type FastifyRequest } from 'fastify';
import { nextTurn } from '../core/time-slices.js';
import { JsonStreamParser, PIECE_BYTES } from './json-stream-parser.js';

type Done = (error: Error | null, body?: unknown) => void;

/**
 * Parsing stops for the rest of a turn of the event loop once it has taken this long in it: a
 * socket read delivers up to 32 chunks of 64 KiB in one turn, about 10 ms of parsing, and a turn
 * of several bodies more. The stream is paused meanwhile (its data waits in its buffer).
 */
const PARSE_MS_PER_TURN = 4;

/** When parsing in this turn of the event loop began (undefined: not yet in this turn). */
let turnStarted: number | undefined;

export function registerJsonParser(app: FastifyInstance): void {
  // Only JSON: Fastify's text/plain parser goes too, so a cross-site form post gets a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(/^application\/([\w.+-]+\+)?json\s*(;.*)?$/i, (request, payload, done) => {
    readJsonBody(request, payload, done);
  });
}

function readJsonBody(request: FastifyRequest, payload: NodeJS.ReadableStream, done: Done): void {
  const limit = request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY;
  const contentLength = Number(request.headers['content-length']);
  if (contentLength > limit) {
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  const parser = new JsonStreamParser();
  let received = 0;
  let finished = false;
  /** Chunks wait here while a large one is parsed slice by slice (the stream is paused meanwhile). */
  let parsing = false;
  let ended = false;
  const finish = (error: Error | null, body?: unknown): void => {
    if (finished) return;
    finished = true;
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
    done(error, body);
  };
  const onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    received += bytes.length;
    const encodedLength = (payload as { receivedEncodedLength?: number }).receivedEncodedLength ?? 0;
    if (received > limit || encodedLength > limit) {
      finish(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    if (bytes.length <= PIECE_BYTES) {
      turnTime();
      parser.push(bytes);
      if (turnTime() >= PARSE_MS_PER_TURN) {
        // Enough for this turn: the next chunks wait for the next one.
        parsing = true;
        payload.pause();
        void nextTurn().then(() => {
          parsing = false;
          if (finished) return;
          payload.resume();
          if (ended) onEnd();
        });
      }
      return;
    }
    // A chunk larger than a piece (not what a socket delivers, but a preParsing stream may):
    // parsed a piece per turn of the event loop.
    parsing = true;
    payload.pause();
    const pushFrom = (at: number): void => {
      if (finished) return;
      parser.push(bytes.subarray(at, at + PIECE_BYTES));
      if (at + PIECE_BYTES < bytes.length) {
        setImmediate(pushFrom, at + PIECE_BYTES);
        return;
      }
      parsing = false;
      payload.resume();
      if (ended) onEnd();
    };
    pushFrom(0);
  };
  const onEnd = (): void => {
    ended = true;
    if (parsing || finished) return;
    const encodedLength = (payload as { receivedEncodedLength?: number }).receivedEncodedLength;
    if (!Number.isNaN(contentLength) && (encodedLength || received) !== contentLength) {
      finish(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      return;
    }
    let body: unknown;
    try {
      body = parser.end();
    } catch (error) {
      finish(error as Error);
      return;
    }
    finish(null, body);
  };
  const onError = (error: Error & { statusCode?: number }): void => {
    if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
    finish(error);
  };
  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.resume();
}

/** Milliseconds spent parsing bodies in this turn of the event loop (starting the count if it is the first). */
function turnTime(): number {
  const now = performance.now();
  if (turnStarted === undefined) {
    turnStarted = now;
    setImmediate(() => {
      turnStarted = undefined;
    });
  }
  return now - turnStarted;
}
