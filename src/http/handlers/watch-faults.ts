/**
 * Watch faults: a sink that passes a watch's events through until the fault acts (at once, or once
 * `after.events` events have gone out), then ends it as production ends watches: `expire` with an
 * ERROR event carrying 410 Expired (as a compacted watch cache does), `drop` cleanly, `reset` by
 * destroying the connection mid-stream; `lag` delays every later event by latencyMs for this
 * watcher only (a slow watch cache). The engine behind is never told: what it sends is cut here.
 */
import type { Faults, FaultHit } from '../../faults/faults.js';
import { gone } from '../respond/status.js';
import type { WatchSink } from './watch-sinks.js';
import { eventLine, pushLine } from './watch-frames.js';

export interface WatchFaultContext {
  /** Destroys the connection (reset). */
  destroy(): void;
  /** The version the watch asked to start at, for the 410's message ("too old resource version: 5 (10)"). */
  startVersion: string;
  /** The newest version applied now: what the "cache" had moved to. */
  head(): number;
  annotate(key: string, value: string): void;
}

export function faultySink(sink: WatchSink, hit: FaultHit, faults: Faults, ctx: WatchFaultContext): WatchSink {
  const fault = hit.inject.watch!;
  let sent = 0;
  let acted = false;
  let lagging = false;
  const lagMs = hit.latencyMs ?? 0;
  const later = (fn: () => void) => (lagging ? setTimeout(fn, lagMs) : fn());

  const act = () => {
    if (acted) return;
    acted = true;
    faults.record(hit, `watch:${fault}`, { afterEvents: sent, ...(fault === 'lag' ? { latencyMs: lagMs } : {}) });
    ctx.annotate('faults.orch.io/injected', `${hit.rule.name}: watch:${fault}`);
    switch (fault) {
      case 'expire': {
        const status = gone(`too old resource version: ${ctx.startVersion || '0'} (${ctx.head()})`).status;
        const frames: Buffer[] = [];
        pushLine(eventLine('ERROR', JSON.stringify(status)), sink.framing, frames);
        sink.write(frames);
        sink.end();
        return;
      }
      case 'drop':
        sink.end();
        return;
      case 'reset':
        ctx.destroy();
        return;
      case 'lag':
        lagging = true;
    }
  };
  // Once the batch that reached the count is out, so a client has seen exactly that many events or more.
  const counted = (n: number) => {
    sent += n;
    if (!acted && sent >= hit.afterEvents) act();
  };
  if (hit.afterEvents === 0) setImmediate(act);

  return {
    framing: sink.framing,
    write(frames) {
      if (acted && fault !== 'lag') return;
      later(() => sink.write(frames));
      counted(sink.framing === 'websocket' ? frames.length / 2 : frames.length);
    },
    ...(sink.writeChanges
      ? {
          writeChanges(events, apiVersion) {
            if (acted && fault !== 'lag') return [];
            const write = sink.writeChanges!.bind(sink);
            let sizes: readonly number[] = [];
            if (lagging) setTimeout(() => write(events, apiVersion), lagMs);
            else sizes = write(events, apiVersion);
            counted(events.length);
            return sizes;
          },
        }
      : {}),
    buffered: () => sink.buffered(),
    drained: (below) => sink.drained(below),
    end() {
      later(() => sink.end());
    },
    onClose: (fn) => sink.onClose(fn),
  } satisfies WatchSink;
}
