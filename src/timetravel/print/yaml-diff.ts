/** YAML diffs of objects, as `diff` and `history` print them, coloured on a terminal (loaded only by the commands that print them). */
import { createTwoFilesPatch, structuredPatch } from 'diff';
import { stringify } from 'yaml';
import type { KubeObject } from '../../api/types.js';

const GREEN = '\x1b[32m';
const RED = '\x1b[31m';
const CYAN = '\x1b[36m';
const BOLD = '\x1b[1m';
const RESET = '\x1b[0m';

/** Colours a unified diff as git does on a terminal. */
export function colour(diff: string): string {
  return diff
    .split('\n')
    .map((l) =>
      l.startsWith('+++') || l.startsWith('---') || l.startsWith('#')
        ? BOLD + l + RESET
        : l.startsWith('+')
          ? GREEN + l + RESET
          : l.startsWith('-')
            ? RED + l + RESET
            : l.startsWith('@@')
              ? CYAN + l + RESET
              : l,
    )
    .join('\n');
}

const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * b with its keys in a's order, at every depth, keys a lacks after a's: objects are compared by key,
 * so a field written back in another place (uid, creationTimestamp and generation after an update)
 * is no change.
 */
export function alignKeys(a: unknown, b: unknown): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return b.map((x, i) => alignKeys(a[i], x));
  if (!isMap(a) || !isMap(b)) return b;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(a)) if (Object.hasOwn(b, k)) out[k] = alignKeys(a[k], b[k]);
  for (const k of Object.keys(b)) if (!Object.hasOwn(out, k)) out[k] = b[k];
  return out;
}

/** The YAML of the two versions, b's keys in a's order. */
function yamls(a: KubeObject | undefined, b: KubeObject | undefined): [string, string] {
  return [a === undefined ? '' : stringify(a), b === undefined ? '' : stringify(a === undefined ? b : alignKeys(a, b))];
}

/** The unified diff of one object's YAML between two versions ('' when equal). */
export function unifiedDiff(label: string, a: KubeObject | undefined, b: KubeObject | undefined, rvA: number | string, rvB: number | string): string {
  const [x, y] = yamls(a, b);
  if (x === y) return '';
  return createTwoFilesPatch(a ? `${label}@${rvA}` : '/dev/null', b ? `${label}@${rvB}` : '/dev/null', x, y, undefined, undefined, { context: 3 }).replace(/^=+\n/, '');
}

/** Just the hunks of the YAML diff, for a history where each version's header says what changed. */
export function hunks(a: KubeObject | undefined, b: KubeObject | undefined): string {
  const [x, y] = yamls(a, b);
  const p = structuredPatch('a', 'b', x, y, undefined, undefined, { context: 3 });
  return p.hunks.map((h) => `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@\n${h.lines.join('\n')}\n`).join('');
}

/** How many YAML lines the change adds and removes (--stat). */
export function lineCounts(a: KubeObject | undefined, b: KubeObject | undefined): { added: number; removed: number } {
  const [x, y] = yamls(a, b);
  let added = 0;
  let removed = 0;
  for (const h of structuredPatch('a', 'b', x, y, undefined, undefined, { context: 0 }).hunks) {
    for (const l of h.lines) {
      if (l.startsWith('+')) added++;
      else if (l.startsWith('-')) removed++;
    }
  }
  return { added, removed };
}
