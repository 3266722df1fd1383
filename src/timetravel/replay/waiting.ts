/**
 * What a replay held for its watchers (--watchers N) says while it waits: how many watches are open,
 * and, when the recording starts before a CustomResourceDefinition is created, that a controller's
 * list of that kind is answered 404 until then (so it never watches), with the --from that starts
 * the replay with the kind served.
 */
import { customResourceDefinition } from '../../resources/custom-resource-definition.js';
import type { History } from '../core/history.js';

/** How often the note is said while the replay waits. */
export const WAIT_NOTE_MS = 5000;

/** The CRDs created from..to, oldest first, each with the version that created it. */
async function crdsCreated(h: History, from: number, to: number): Promise<{ name: string; rv: number }[]> {
  const out: { name: string; rv: number }[] = [];
  for await (const c of h.changes(from, to, { kinds: [customResourceDefinition] })) if (c.type === 'ADDED') out.push({ name: c.object.metadata.name ?? c.key, rv: c.rv });
  return out;
}

/** The note, read from the history once (the CRDs of the span), then said with the watches open now. */
export function waitingNote(h: History, from: number, to: number, needed: number): (open: number) => Promise<string> {
  let crds: Promise<{ name: string; rv: number }[]> | undefined;
  return async (open) => {
    const later = await (crds ??= crdsCreated(h, from, to).catch(() => []));
    const head = `waiting for ${needed} watch${needed === 1 ? '' : 'es'} to open before the first entry (${open} open)`;
    if (later.length === 0) return head;
    const named = later.map((c) => `${c.name} at ${c.rv}`).join(', ');
    return `${head}; the recording creates CustomResourceDefinitions after it starts (${named}): a controller's list of such a kind is answered 404 until then and it never watches; --from ${later[later.length - 1].rv + 1} starts the replay with them served`;
  };
}
