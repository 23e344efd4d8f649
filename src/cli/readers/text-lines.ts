/**
 * The lines of a UTF-8 text file, streamed, for the text formats (JSON Lines, CSV, ids files). A
 * byte order mark at the very start is skipped (spreadsheets and some editors write one); bytes that
 * are not UTF-8 are an error naming their line rather than characters silently replaced; a line
 * longer than MAX_LINE_BYTES is refused (a binary file, not text) instead of growing the memory.
 */
import { isUtf8 } from 'node:buffer';
import { createReadStream } from 'node:fs';
import { InputFileError } from './source.js';

export interface TextLine {
  /** The line without its `\n` (a `\r` before it is kept: CSV fields may hold one). */
  readonly text: string;
  /** 1-based. */
  readonly line: number;
  /** Bytes of the file read up to the end of the block holding this line (for the progress bar). */
  readonly bytesRead: number;
  /** Whether a `\n` ended the line (the file's last line may have none). */
  readonly ended: boolean;
}

export const MAX_LINE_BYTES = 64 * 1048576;

const NEWLINE = 0x0a;

function notUtf8(label: string, line: number): InputFileError {
  return new InputFileError(`${label}:${line}: not valid UTF-8 (a binary file, or another encoding: convert it to UTF-8)`);
}

export async function* readTextLines(path: string, label: string): AsyncGenerator<TextLine> {
  let line = 0;
  let bytesRead = 0;
  /** The start of a line that the chunks so far have not ended. */
  let partial: Buffer[] = [];
  let partialBytes = 0;
  let first = true;
  for await (const chunk of createReadStream(path)) {
    let bytes = chunk as Buffer;
    if (first && bytes.length > 0) {
      // The BOM is skipped at the very start only: later, U+FEFF is an ordinary character.
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
        bytes = bytes.subarray(3);
        bytesRead += 3;
      }
      first = false;
    }
    const lastNewline = bytes.lastIndexOf(NEWLINE);
    if (lastNewline < 0) {
      partial.push(bytes);
      partialBytes += bytes.length;
      bytesRead += bytes.length;
      if (partialBytes > MAX_LINE_BYTES)
        throw new InputFileError(`${label}:${line + 1}: a line longer than ${MAX_LINE_BYTES / 1048576} MiB (not a text file?)`);
      continue;
    }
    // The whole lines of this chunk (with the start carried over), checked and decoded at once.
    const whole = partial.length === 0 ? bytes.subarray(0, lastNewline) : Buffer.concat([...partial, bytes.subarray(0, lastNewline)]);
    if (!isUtf8(whole)) {
      // Find the line: each is checked alone.
      let at = 0;
      for (let n = line + 1; ; n++) {
        const end = whole.indexOf(NEWLINE, at);
        if (!isUtf8(whole.subarray(at, end < 0 ? whole.length : end))) throw notUtf8(label, n);
        at = end + 1;
      }
    }
    bytesRead += whole.length - partialBytes + 1;
    for (const text of whole.toString('utf8').split('\n')) {
      line++;
      yield { text, line, bytesRead, ended: true };
    }
    partial = [bytes.subarray(lastNewline + 1)];
    partialBytes = bytes.length - lastNewline - 1;
    bytesRead += partialBytes;
    if (partialBytes > MAX_LINE_BYTES) throw new InputFileError(`${label}:${line + 1}: a line longer than ${MAX_LINE_BYTES / 1048576} MiB (not a text file?)`);
  }
  if (partialBytes > 0) {
    const rest = Buffer.concat(partial);
    if (!isUtf8(rest)) throw notUtf8(label, line + 1);
    line++;
    yield { text: rest.toString('utf8'), line, bytesRead, ended: false };
  }
}
