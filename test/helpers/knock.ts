/** Fresh connections to a server one after another, to show a port is never refused through a switch (a replay forked on its port). */
import { get as httpGet } from 'node:http';

/** GET /version on a new connection each time, one after another, until stopped (at most 60 s): how many got each answer or error code. */
export function knockUntil(url: string): { stop(): Promise<Record<string, number>> } {
  const answers: Record<string, number> = {};
  let stopped = false;
  const deadline = Date.now() + 60_000;
  const knocking = (async () => {
    while (!stopped && Date.now() < deadline) {
      const answer = await new Promise<string>((resolve) => {
        const req = httpGet(`${url}/version`, { agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(String(res.statusCode)));
        });
        req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      });
      answers[answer] = (answers[answer] ?? 0) + 1;
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  return { stop: async () => ((stopped = true), await knocking, answers) };
}
