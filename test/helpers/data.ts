/** Seeded test data: vectors, clustered vectors, payloads. */
import { SeededRng } from '../../src/core/rng.js';

export function randomVectors(rng: SeededRng, n: number, dim: number): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: dim }, () => rng.gaussian()));
}

/** Small integers: exact in float32, so scores are exact and ties really happen. */
export function integerVectors(rng: SeededRng, n: number, dim: number, max = 3): number[][] {
  return Array.from({ length: n }, () => Array.from({ length: dim }, () => rng.int(2 * max + 1) - max));
}

/** Runs `body` with a seed, and names the seed in the failure so it can be replayed. */
export function withSeed<T>(seed: number, body: (rng: SeededRng) => T): T {
  try {
    return body(new SeededRng(seed));
  } catch (error) {
    if (error instanceof Error) error.message = `[seed ${seed}] ${error.message}`;
    throw error;
  }
}

/** `withSeed` for an async body: the seed is named in a failure that comes after an await too. */
export async function withSeedAsync(seed: number, body: (rng: SeededRng) => Promise<void>): Promise<void> {
  try {
    await body(new SeededRng(seed));
  } catch (error) {
    if (error instanceof Error) error.message = `[seed ${seed}] ${error.message}`;
    throw error;
  }
}

/** The seed for a property test: KITH_SEED if set (to replay a failure), else fixed per test. */
export function testSeed(fallback: number): number {
  const fromEnv = process.env.KITH_SEED;
  return fromEnv === undefined ? fallback : Number(fromEnv);
}
