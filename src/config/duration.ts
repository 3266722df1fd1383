/** Go-style durations as Kubernetes flags and configuration files write them: 1h, 30m, 90s, 1h30m, 500ms. Returns seconds. */
export function parseDuration(text: string): number {
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3600 : m[2] === 'm' ? n * 60 : m[2] === 's' ? n : n / 1000;
    consumed += m[0].length;
  }
  if (text === '0') return 0;
  if (consumed !== text.length || text.length === 0) throw new Error(`invalid duration ${JSON.stringify(text)}`);
  return total;
}
