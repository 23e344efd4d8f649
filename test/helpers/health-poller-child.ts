/**
 * A child process that polls `/healthz` on the given base URLs, round robin, every POLL_MS, and
 * reports over IPC the longest answer since the last mark: how long the service could not answer.
 * It runs apart from the test process, so the test's own work (building bodies, parsing answers)
 * never delays a poll.
 */
const POLL_MS = 5;
const urls = process.argv.slice(2);
let longest = 0;
let longestUrl = '';
let polls = 0;
let failures = 0;

async function poll(): Promise<void> {
  for (let i = 0; ; i++) {
    const url = urls[i % urls.length] as string;
    const started = performance.now();
    try {
      const response = await fetch(`${url}/healthz`);
      await response.arrayBuffer();
      if (response.status !== 200) failures++;
    } catch {
      failures++;
    }
    const took = performance.now() - started;
    polls++;
    if (took > longest) {
      longest = took;
      longestUrl = url;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

process.on('message', (message: unknown) => {
  if (message === 'mark') {
    process.send?.({ longestMs: longest, longestUrl, polls, failures });
    longest = 0;
    longestUrl = '';
    polls = 0;
    failures = 0;
  } else if (message === 'stop') {
    process.exit(0);
  }
});
void poll();
process.send?.('ready');
