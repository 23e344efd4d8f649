/**
 * RFC 3339 date-times for range filters, compared exactly to the nanosecond.
 *
 * Accepted: `2024-05-01T12:30:00Z`, `2024-05-01T12:30:00.123456789+02:00`, `t`/space instead of
 * `T`, `z` for `Z`, and as Qdrant also reads them: no seconds when there is no offset
 * (`2015-03-01T12:30`), an offset without its colon or minutes (`+0200`, `+02`). As in Qdrant, a missing offset means UTC and a
 * bare date means midnight UTC.
 * Fractional seconds beyond nanoseconds are truncated; strings longer than 80 characters are not
 * date-times (a cheap bound before the regex). A JS `Date` holds only milliseconds, so the
 * instant is kept as (epoch milliseconds, nanoseconds within the millisecond).
 */

export interface Instant {
  /** Milliseconds since the Unix epoch (an exact integer). */
  readonly ms: number;
  /** Nanoseconds within that millisecond, 0..999999. */
  readonly subMsNanos: number;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?)?$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number);
}

/** Parses an RFC 3339 date-time; `undefined` if the string is not one. */
export function parseDatetime(text: string): Instant | undefined {
  if (text.length < 10 || text.length > 80) return undefined;
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = m[4] === undefined ? 0 : Number(m[4]);
  const minute = m[5] === undefined ? 0 : Number(m[5]);
  const second = m[6] === undefined ? 0 : Number(m[6]);
  // Qdrant reads minutes without seconds only without an offset.
  if (m[4] !== undefined && m[6] === undefined && m[8] !== undefined) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = digits.length > 2 ? Number(digits.slice(2, 4)) : 0;
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const fraction = (m[7] ?? '').slice(0, 9).padEnd(9, '0');
  const nanos = Number(fraction);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute - offsetMinutes, second, 0);
  return { ms: date.getTime() + Math.floor(nanos / 1_000_000), subMsNanos: nanos % 1_000_000 };
}

/** Negative, zero or positive as `a` is before, at or after `b`. */
export function compareInstants(a: Instant, b: Instant): number {
  return a.ms !== b.ms ? a.ms - b.ms : a.subMsNanos - b.subMsNanos;
}

/** The widest offset RFC 3339 text carries, in minutes (parseDatetime reads `±23:59`). */
const WIDEST_OFFSET = 23 * 60 + 59;
/**
 * Offsets to write an instant in, in turn: UTC, then the widest ones, which bring the date of an
 * instant that a `+hh:mm` or `-hh:mm` text put before year 0000 or after 9999 in UTC back into the
 * four-digit years the text has.
 */
const OFFSETS = [0, WIDEST_OFFSET, -WIDEST_OFFSET];

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/**
 * RFC 3339 text that parseDatetime reads back to exactly `instant` (its inverse: an Instant keeps no
 * text, and filters are sent between nodes as JSON). UTC (`Z`) when the UTC year has four digits,
 * else an offset of ±23:59; the fraction has at most nine digits, trailing zeros dropped. The one
 * instant no offset brings below year 10000, the first second of 10000-01-01 at -23:59 (parsed
 * from `9999-12-31T23:59:60…-23:59`), is written with that leap second. Throws a RangeError for an
 * instant parseDatetime cannot make.
 */
export function formatDatetime(instant: Instant): string {
  const withinMs = ((instant.ms % 1000) + 1000) % 1000;
  const nanos = withinMs * 1_000_000 + instant.subMsNanos;
  const fraction = nanos === 0 ? '' : `.${pad(nanos, 9).replace(/0+$/, '')}`;
  const text = (local: Date, second: number, offset: number): string => {
    const zone = offset === 0 ? 'Z' : `${offset < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(offset) / 60), 2)}:${pad(Math.abs(offset) % 60, 2)}`;
    const date = `${pad(local.getUTCFullYear(), 4)}-${pad(local.getUTCMonth() + 1, 2)}-${pad(local.getUTCDate(), 2)}`;
    return `${date}T${pad(local.getUTCHours(), 2)}:${pad(local.getUTCMinutes(), 2)}:${pad(second, 2)}${fraction}${zone}`;
  };
  // The wall-clock time at each offset, held in a Date read as UTC.
  for (const offset of OFFSETS) {
    const local = new Date(instant.ms + offset * 60_000);
    const year = local.getUTCFullYear();
    if (year >= 0 && year <= 9999) return text(local, local.getUTCSeconds(), offset);
  }
  const offset = -WIDEST_OFFSET;
  const before = new Date(instant.ms + offset * 60_000 - 1000);
  if (before.getUTCFullYear() === 9999 && before.getUTCSeconds() === 59) return text(before, 60, offset);
  throw new RangeError(`the instant ${instant.ms} ms after the epoch is outside the years 0000 to 9999 that RFC 3339 text can carry`);
}
