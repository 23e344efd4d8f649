/**
 * What an import reads, whatever the file format: points, each with where it came from (for
 * error messages: `FILE:17`) and how far into the file it ends (for the progress bar).
 */
import type { PointLine } from '../target.js';

export interface SourcePoint {
  /** `FILE:LINE` for text formats, `FILE: vector N` for binary ones. */
  readonly location: string;
  readonly point: PointLine;
  /** Bytes of the file consumed up to and including this point. */
  readonly bytesRead: number;
}

/** Bad input in the file; the message starts with the location. Exit 1, nothing of the current batch written. */
export class InputFileError extends Error {
  override readonly name = 'InputFileError';
}
