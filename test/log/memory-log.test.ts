import { MemoryLog } from '../../src/log/memory-log.js';
import { runLogContract } from './contract.js';

runLogContract({
  name: 'MemoryLog',
  newLog: async () => {
    const log = new MemoryLog();
    await log.open();
    return log;
  },
  reopen: async (log) => {
    await log.close();
    const next = new MemoryLog({ disk: log.disk });
    await next.open();
    return next;
  },
  breakStorage: (log) => {
    log.disk.failWrites = new Error('disk full');
  },
});
