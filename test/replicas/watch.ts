import { get as httpGet, type ClientRequest } from 'node:http';

export interface WatchEvent {
  type: string;
  object: { metadata: { name: string; resourceVersion: string; labels?: Record<string, string> } };
}

/** A watch stream on base+path (plain HTTP, chunked JSON lines): its events as they come; stop() ends it. */
export function watch(base: string, path: string): { events: WatchEvent[]; until(pred: (e: WatchEvent[]) => boolean, ms?: number): Promise<void>; stop(): void } {
  const events: WatchEvent[] = [];
  const waiters = new Set<() => void>();
  let partial = '';
  const req: ClientRequest = httpGet(base + path, (res) => {
    res.setEncoding('utf8');
    res.on('data', (c: string) => {
      const parts = (partial + c).split('\n');
      partial = parts.pop() ?? '';
      for (const line of parts) if (line) events.push(JSON.parse(line) as WatchEvent);
      for (const w of waiters) w();
    });
  });
  req.on('error', () => {});
  return {
    events,
    until(pred, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!pred(events)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`watch ${path}: not there after ${ms} ms; got ${JSON.stringify(events.map((e) => [e.type, e.object.metadata.name, e.object.metadata.resourceVersion]))}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    stop: () => req.destroy(),
  };
}

export const names = (events: WatchEvent[]) => events.filter((e) => e.type !== 'BOOKMARK').map((e) => `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`);
