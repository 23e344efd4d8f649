/** Reading JSON values out of a JetStream key-value bucket (membership.ts, catalog.ts). */
import type { KV } from '@nats-io/kv';
import { parseJson } from '../core/json-text.js';

const decoder = new TextDecoder();

/** An entry's value, parsed. */
export function kvRecord<T>(value: Uint8Array): T {
  return parseJson(decoder.decode(value)) as T;
}

/** The value at `key`, parsed; undefined when absent or deleted. */
export async function kvValue<T>(kv: KV, key: string): Promise<T | undefined> {
  const entry = await kv.get(key);
  return entry === null || entry.operation !== 'PUT' ? undefined : kvRecord<T>(entry.value);
}

/** Every present value of the bucket, parsed. */
export async function kvValues<T>(kv: KV): Promise<T[]> {
  const out: T[] = [];
  for await (const key of await kv.keys()) {
    const value = await kvValue<T>(kv, key);
    if (value !== undefined) out.push(value);
  }
  return out;
}
