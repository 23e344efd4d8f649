/**
 * A closed-loop pass: `count` requests with `concurrency` clients, each taking the next index when
 * its previous answer has arrived (the load of every HTTP search measurement). With `stop`, a
 * client takes no further index once it returns true (a load that runs for a while: pass
 * `Number.POSITIVE_INFINITY` as the count); requests in flight are awaited.
 */
export async function closedLoop(count: number, concurrency: number, one: (i: number) => Promise<void>, stop?: () => boolean): Promise<number> {
  let next = 0;
  const client = async (): Promise<void> => {
    for (let i = next++; i < count && stop?.() !== true; i = next++) await one(i);
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  return (performance.now() - t0) / 1000;
}
