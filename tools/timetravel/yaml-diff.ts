/** YAML diffs of objects, as `diff` and `history` print them, coloured on a terminal (loaded only by the commands that print them). */
import { createTwoFilesPatch, structuredPatch } from 'diff';
import { stringify } from 'yaml';
import type { KubeObject } from '../../src/resources/types.js';

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
      l.startsWith('+++') || l.startsWith('---') || l.startsWith('#') ? BOLD + l + RESET : l.startsWith('+') ? GREEN + l + RESET : l.startsWith('-') ? RED + l + RESET : l.startsWith('@@') ? CYAN + l + RESET : l,
    )
    .join('\n');
}

const yamlOf = (o: KubeObject | undefined): string => (o === undefined ? '' : stringify(o));

/** The unified diff of one object's YAML between two versions ('' when equal). */
export function unifiedDiff(label: string, a: KubeObject | undefined, b: KubeObject | undefined, rvA: number | string, rvB: number | string): string {
  const x = yamlOf(a);
  const y = yamlOf(b);
  if (x === y) return '';
  return createTwoFilesPatch(a ? `${label}@${rvA}` : '/dev/null', b ? `${label}@${rvB}` : '/dev/null', x, y, undefined, undefined, { context: 3 }).replace(/^=+\n/, '');
}

/** Just the hunks of the YAML diff, for a history where each version's header says what changed. */
export function hunks(a: KubeObject | undefined, b: KubeObject | undefined): string {
  const p = structuredPatch('a', 'b', yamlOf(a), yamlOf(b), undefined, undefined, { context: 3 });
  return p.hunks.map((h) => `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@\n${h.lines.join('\n')}\n`).join('');
}

