/**
 * A closed-loop pass: `count` requests with `concurrency` clients, each taking the next index when
 * its previous answer has arrived (the load of every HTTP search measurement).
 */
export async function closedLoop(count: number, concurrency: number, one: (i: number) => Promise<void>): Promise<number> {
  let next = 0;
  const client = async (): Promise<void> => {
    for (let i = next++; i < count; i = next++) await one(i);
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, client));
  return (performance.now() - t0) / 1000;
}
