/**
 * Distance metrics. Internally every metric is a *similarity*: higher is better, so one top-k
 * structure serves all three. The wire score is derived from it at the edge:
 *
 * | metric | stored vector  | similarity             | wire score              |
 * |--------|----------------|------------------------|-------------------------|
 * | Cosine | unit-normalised| dot(q, v)              | cosine similarity (desc)|
 * | Dot    | as given       | dot(q, v)              | dot product (desc)      |
 * | Euclid | as given       | -‖q - v‖²              | L2 distance (asc)       |
 */

export type Distance = 'Cosine' | 'Euclid' | 'Dot';

const ALIASES: Readonly<Record<string, Distance>> = {
  cosine: 'Cosine',
  euclidean: 'Euclid',
  euclid: 'Euclid',
  l2: 'Euclid',
  dot: 'Dot',
};

/** Case-insensitive; `undefined` when the name is not a supported metric. */
export function parseDistance(name: string): Distance | undefined {
  const key = name.toLowerCase();
  return Object.hasOwn(ALIASES, key) ? ALIASES[key] : undefined;
}

/** Converts an internal similarity to the score the API reports. */
export function similarityToScore(distance: Distance, similarity: number): number {
  return distance === 'Euclid' ? Math.sqrt(Math.max(0, -similarity)) : similarity;
}

/** Whether wire scores ascend (distances) rather than descend (similarities). */
export function scoresAscend(distance: Distance): boolean {
  return distance === 'Euclid';
}

/** Whether a wire score passes `score_threshold`: at least it for similarities, at most it for distances. */
export function passesThreshold(distance: Distance, score: number, threshold: number): boolean {
  return scoresAscend(distance) ? score <= threshold : score >= threshold;
}
