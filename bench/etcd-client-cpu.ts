/**
 * The floor under a create on etcd: what the etcd client alone costs per write, with nothing of
 * orchd around it. Each write is what the log sends (a Txn: compare the key's mod revision to 0, put
 * a 1 KB value; on failure, range the key) and is done once the prefix's watch (with prev_kv)
 * brought its revision back. Paced (open loop) at each rate, the library client (etcd3 on grpc-js)
 * and the lean one (src/log/etcd/grpc) in alternating rounds against one etcd; the CPU counted is
 * this process's over the window, per write (the pacing's own timers are the same for both).
 *
 *   node dist/bench/etcd-client-cpu.js [--rates 600,780] [--seconds 8] [--rounds 3]
 */
import { parseArgs } from 'node:util';
import { CompareResult, CompareTarget, Etcd3 } from 'etcd3';
import { LeanEtcd } from '../src/log/etcd/grpc/client.js';
import { Result, Target } from '../src/log/etcd/grpc/proto.js';
import { watchPrefix } from '../src/log/etcd/watch-prefix.js';
import { ensureEtcd, Etcd } from './peers/etcd.js';

interface Client {
  txn(key: Buffer, value: Buffer): Promise<number>;
  watch(prefix: Buffer, end: Buffer, onRevision: (rev: number) => void): Promise<() => void>;
  close(): void;
}

function library(url: string): Client {
  const c = new Etcd3({ hosts: url });
  return {
    async txn(key, value) {
      const res = await c.kv.txn({
        compare: [{ key, target: CompareTarget.Mod, result: CompareResult.Equal, mod_revision: 0 }],
        success: [{ request_put: { key, value } }],
        failure: [{ request_range: { key } }],
      });
      return Number(res.header.revision);
    },
    async watch(prefix, end, onRevision) {
      const stream = await c.watchClient.watch();
      stream.on('data', (res: { events?: { kv: { mod_revision: string } }[] }) => {
        for (const ev of res.events ?? []) onRevision(Number(ev.kv.mod_revision));
      });
      stream.on('error', () => undefined);
      stream.write({ create_request: { key: prefix, range_end: end, prev_kv: true } });
      await new Promise((r) => setTimeout(r, 200));
      return () => stream.cancel();
    },
    close: () => c.close(),
  };
}

function lean(url: string): Client {
  const c = new LeanEtcd({ servers: [url] });
  return {
    async txn(key, value) {
      const res = await c.txn({ compare: [{ key, target: Target.Mod, result: Result.Equal, value: 0 }], success: [{ put: { key, value } }], failure: [{ range: { key } }] }, 10_000);
      return res.header.revision;
    },
    async watch(prefix, end, onRevision) {
      const w = await watchPrefix(c, prefix, end, 0, { onEvents: (evs) => evs.forEach((e) => onRevision(e.kv.mod_revision)), onProgress: () => undefined, onEnd: () => undefined });
      await new Promise((r) => setTimeout(r, 200));
      return () => w.cancel();
    },
    close: () => c.close(),
  };
}

/** Writes at rate for seconds; ms of this process's CPU per write acknowledged by the watch. */
async function round(client: Client, tag: string, rate: number, seconds: number): Promise<{ cpuMs: number; done: number }> {
  const prefix = Buffer.from(`/floor-${tag}/`);
  const end = Buffer.from(`/floor-${tag}0`);
  let seen = 0;
  const waiting = new Map<number, () => void>();
  const early = new Set<number>();
  const stop = await client.watch(prefix, end, (rev) => {
    seen = Math.max(seen, rev);
    const w = waiting.get(rev);
    if (w) {
      waiting.delete(rev);
      w();
    } else early.add(rev);
  });
  const value = Buffer.alloc(1024, 120);
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const n = Math.round(rate * seconds);
  for (let i = 0; i < n; i++) {
    const wait = t0 + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(
      client.txn(Buffer.concat([prefix, Buffer.from(String(i))]), value).then((rev) => {
        if (early.delete(rev) || rev <= seen) return;
        return new Promise<void>((resolve) => waiting.set(rev, resolve));
      }),
    );
  }
  await Promise.all(pending);
  const c = process.cpuUsage(c0);
  stop();
  return { cpuMs: (c.user + c.system) / 1000 / n, done: n };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { rates: { type: 'string', default: '600,780' }, seconds: { type: 'string', default: '8' }, rounds: { type: 'string', default: '3' } } });
  const rates = values.rates!.split(',').map(Number);
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const etcd = await Etcd.start(ensureEtcd((m) => process.stderr.write(m + '\n')));
  try {
    const clients = { 'etcd3 (grpc-js)': library, 'lean (node:http2)': lean };
    const results: Record<string, number[]> = {};
    let tag = 0;
    for (const rate of rates) {
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 ? Object.entries(clients).reverse() : Object.entries(clients);
        for (const [name, make] of order) {
          const client = make(etcd.clientUrl);
          // A warm-up round on the same client: connections, JIT.
          await round(client, `w${tag++}`, rate, 2);
          const { cpuMs } = await round(client, `m${tag++}`, rate, seconds);
          client.close();
          (results[`${name} at ${rate}/s`] ??= []).push(cpuMs);
          process.stderr.write(`${name} at ${rate}/s round ${r + 1}: ${cpuMs.toFixed(3)} ms CPU per write\n`);
        }
      }
    }
    process.stdout.write('| client, rate | CPU per write, each round (ms) | median |\n|---|---|---:|\n');
    for (const [k, v] of Object.entries(results)) {
      const s = [...v].sort((a, b) => a - b);
      process.stdout.write(`| ${k} | ${v.map((x) => x.toFixed(3)).join(', ')} | ${s[Math.floor(s.length / 2)].toFixed(3)} |\n`);
    }
  } finally {
    await etcd.stop();
  }
}

await main();
