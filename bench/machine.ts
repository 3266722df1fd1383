/** The machine a run measured, printed with every result: numbers mean little without it. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, tmpdir, totalmem } from 'node:os';

export interface Machine {
  cpuModel: string;
  cores: number;
  memoryBytes: number;
  node: string;
  kernel: string;
  /** orchd commit the run measured (short hash, `-dirty` with uncommitted changes). */
  commit: string;
  /** File system of the temp folder, where every data folder lives (tmpfs would make fsync free). */
  tmpFs: string;
  /** 1-minute load average when the run started: other work on the machine makes numbers noisy. */
  loadAtStart: number;
  /** CPU pressure when the run started (/proc/pressure/cpu "some" avg60, %): time something waited for a CPU. */
  cpuPressureAtStart: number | null;
  date: string;
}

const run = (cmd: string, args: string[], cwd?: string): string => {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', cwd, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
};

export function cpuPressure(): number | null {
  try {
    const m = /^some .*avg60=([\d.]+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export function describeMachine(repoDir: string): Machine {
  let cpuModel = cpus()[0]?.model ?? '';
  try {
    cpuModel = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? cpuModel;
  } catch {
    // not Linux
  }
  const hash = run('git', ['rev-parse', '--short', 'HEAD'], repoDir) || 'unknown';
  const dirty = run('git', ['status', '--porcelain', '--untracked-files=no'], repoDir) !== '';
  return {
    cpuModel: cpuModel.trim() || 'unknown',
    cores: cpus().length,
    memoryBytes: totalmem(),
    node: process.version,
    kernel: release(),
    commit: hash + (dirty ? '-dirty' : ''),
    tmpFs: run('findmnt', ['-n', '-o', 'FSTYPE', '--target', tmpdir()]) || run('stat', ['-f', '-c', '%T', tmpdir()]) || 'unknown',
    loadAtStart: loadavg()[0],
    cpuPressureAtStart: cpuPressure(),
    date: new Date().toISOString(),
  };
}

export function machineLine(m: Machine): string {
  const gib = (m.memoryBytes / 2 ** 30).toFixed(1);
  return `machine: ${m.cpuModel}, ${m.cores} cores, ${gib} GiB RAM, Node ${m.node}, Linux ${m.kernel}, temp dir on ${m.tmpFs}, load ${m.loadAtStart.toFixed(2)}${m.cpuPressureAtStart !== null ? ` and CPU pressure ${m.cpuPressureAtStart.toFixed(0)} %` : ''} at start; orchd ${m.commit}; ${m.date}`;
}
