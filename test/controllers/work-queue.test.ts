/** The controllers' serial work queue (src/controllers/work-queue.ts). */
import { describe, expect, it } from 'vitest';
import { serialQueue } from '../../src/controllers/work-queue.js';
import type { Logger } from '../../src/observability/logger.js';
import { eventually } from '../helpers/registry.js';

describe('work queue', () => {
  it('runs jobs one at a time in order; a failure is logged under the controller\'s name and the next job runs', async () => {
    const warned: string[] = [];
    const logger: Logger = { info() {}, error() {}, warn: (msg, fields) => warned.push(`${msg}: ${String(fields?.error)}`) };
    const enqueue = serialQueue('test queue', logger);
    const ran: string[] = [];
    let running = 0;
    const job = (name: string, fail = false) => async () => {
      running++;
      expect(running).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 5));
      ran.push(name);
      running--;
      if (fail) throw new Error(`${name} failed`);
    };
    enqueue(job('a'));
    enqueue(job('b', true));
    enqueue(job('c'));
    await eventually(() => ran.length === 3);
    expect(ran).toEqual(['a', 'b', 'c']);
    expect(warned).toEqual(['test queue: Error: b failed']);
  });
});
