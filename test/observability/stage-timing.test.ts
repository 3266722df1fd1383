/**
 * Stage timing is off unless the process starts with ORCHD_STAGE_TIMING=1 (the writes benchmark
 * turns it on and reads it from /metrics: test/bench/bench.test.ts): a server started without it
 * publishes no stage counters and its laps return at once.
 */
import { describe, expect, it } from 'vitest';
import { serverForFile } from '../helpers/server.js';
import { stageLap, stageStart, stageTotals } from '../../src/observability/stage-timing.js';

describe('stage timing, off by default', () => {
  const file = serverForFile();

  it('adds nothing to /metrics after a create', async () => {
    expect(process.env.ORCHD_STAGE_TIMING).toBeUndefined();
    const res = await fetch(`${file.base}/api/v1/namespaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'stage-timing' } }),
    });
    expect(res.status).toBe(201);
    const metrics = await (await fetch(`${file.base}/metrics`)).text();
    expect(metrics).toContain('apiserver_request_total');
    expect(metrics).not.toContain('orchd_stage_');
  });

  it('laps cost no clock read', () => {
    expect(stageStart()).toBe(0);
    expect(stageLap('decode', 0)).toBe(0);
    expect(stageTotals('decode')).toEqual({ ms: 0, count: 0 });
  });
});
