/**
 * Go durations as Kubernetes flags and configuration files write them (time.ParseDuration, which
 * metav1.Duration uses): an optional sign, then numbers with units, e.g. 1h, 30m, 90s, 1h30m, 500ms,
 * 1.5h, -2s, 100us. A bare "0" is the only number allowed without a unit. Returns seconds.
 */
const unitSeconds: Record<string, number> = { ns: 1e-9, us: 1e-6, µs: 1e-6, μs: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600 };
const term = /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|h|m|s)/y;

export function parseDuration(text: string): number {
  const bad = () => new Error(`time: invalid duration ${JSON.stringify(text)}`);
  let rest = text;
  let sign = 1;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    sign = rest.startsWith('-') ? -1 : 1;
    rest = rest.slice(1);
  }
  if (rest === '0') return 0;
  if (rest === '') throw bad();
  let total = 0;
  term.lastIndex = 0;
  while (term.lastIndex < rest.length) {
    const at = term.lastIndex;
    const m = term.exec(rest);
    if (!m || m.index !== at) throw bad();
    total += Number(m[1]) * unitSeconds[m[2]];
  }
  return sign * total;
}
