/**
 * Large answers written as JSON text in slices: a search batch at its bounds answers ~40 MB of
 * hits and payloads, which one JSON.stringify would write in one block of a few hundred ms,
 * during which the service answers nothing (not even /healthz). Here each element is written
 * natively (JSON.stringify, or a route's own writer) and the event loop gets a turn whenever a
 * slice is used up, so other requests are answered between the pieces.
 */
import { TimeSlices } from '../core/time-slices.js';

/** Tracks one answer's writing time (core/time-slices.ts), and yields to the event loop once a slice is used up. */
export class JsonSlicer {
  private readonly slices = new TimeSlices();

  /** Resolves at once within a slice; after a turn of the event loop once the slice is used. The clock is read every time: one element may be a 65,536-component vector. */
  async turn(): Promise<void> {
    if (this.slices.due(0)) await this.slices.pause();
  }
}

/** A JSON array of `items`, each written by `write`, in slices. */
export async function jsonArraySliced<T>(items: readonly T[], write: (item: T) => string | Promise<string>, slicer: JsonSlicer): Promise<string> {
  const parts: string[] = [];
  for (const item of items) {
    await slicer.turn();
    parts.push(await write(item));
  }
  return `[${parts.join(',')}]`;
}

/**
 * A result in slices: arrays element by element (an array of arrays too, as a batch's lists of
 * hits), and a top-level object (`{points, next_page_offset}`) member by member; every other value
 * (a hit, a record) by one JSON.stringify. Gives the same text as JSON.stringify for JSON values.
 */
export async function jsonSliced(value: unknown, slicer: JsonSlicer = new JsonSlicer(), top = true): Promise<string> {
  if (Array.isArray(value))
    return jsonArraySliced(value, (item) => (Array.isArray(item) ? jsonSliced(item, slicer, false) : (JSON.stringify(item) ?? 'null')), slicer);
  if (top && typeof value === 'object' && value !== null) {
    const parts: string[] = [];
    for (const [key, member] of Object.entries(value)) {
      if (member === undefined) continue;
      parts.push(`${JSON.stringify(key)}:${await jsonSliced(member, slicer, false)}`);
    }
    return `{${parts.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
