/**
 * Kinds as a command names them (--kind, RESOURCE/NAME), by src/api/kind-names.ts: plural, singular,
 * Kind or short name, alone, with its group (webapps.apps.example.com) or with its version and
 * group (webapps.v1.apps.example.com). The built-in kinds are found at once; a custom kind among
 * those the history's CustomResourceDefinitions define at the versions the command reads
 * (custom-kinds.ts), read only when a name is not a built-in kind's.
 */
import { kinds } from '../../resources/kinds.js';
import { namesKind, resourceName } from '../../api/kind-names.js';
import type { KindStrategy } from '../../api/strategy.js';
import { parseLabelSelector, SelectorError, type Requirement } from '../../selectors/label-selector.js';
import { customKindsIn } from './custom-kinds.js';
import { type Filter, type History } from './history.js';
import { TimeTravelError } from './errors.js';
import { splitTarget, targetOf, type Target } from './target.js';

/** Versions from..to of a history (one version: from = to), whose CRDs a kind is looked for among; of another history than the command's when given. */
export interface Span {
  from: number;
  to: number;
  history?: History;
}

/** The built-in kind text names, if any. */
export const builtInKind = (text: string): KindStrategy | undefined => kinds.find((k) => namesKind(k, text));

/** The custom kind text names among these; two of different groups that it names alike: an error naming both. */
function customKind(text: string, custom: readonly KindStrategy[]): KindStrategy | undefined {
  const found = custom.filter((k) => namesKind(k, text));
  if (found.length > 1) throw new TimeTravelError(`kind ${JSON.stringify(text)} is ambiguous: ${found.map(resourceName).join(', ')}: name it with its group`);
  return found[0];
}

const spanText = (s: Span): string => (s.from === s.to ? `at version ${s.to}` : `from version ${s.from} to ${s.to}`);

/**
 * The kinds texts name: each a built-in kind, else a kind the CRDs define in the first of the spans
 * (tried in order, the cheapest to read first) that defines it.
 */
export async function resolveKinds(h: History, texts: readonly string[], spans: readonly Span[]): Promise<KindStrategy[]> {
  const out = texts.map(builtInKind);
  let custom: readonly KindStrategy[] = [];
  for (const [i, span] of spans.entries()) {
    if (out.every((k) => k !== undefined)) break;
    // A span the same as one before (a range of one version) is not read again.
    if (spans.slice(0, i).some((s) => s.from === span.from && s.to === span.to && s.history === span.history)) continue;
    custom = await customKindsIn(span.history ?? h, span.from, span.to);
    texts.forEach((t, j) => (out[j] ??= customKind(t, custom)));
  }
  const missing = texts.findIndex((_, i) => out[i] === undefined);
  if (missing >= 0) {
    const last = spans[spans.length - 1];
    const defined =
      custom.length > 0 ? `the CustomResourceDefinitions ${spanText(last)} define ${custom.map(resourceName).join(', ')}` : `no CustomResourceDefinition defines a kind ${spanText(last)}`;
    throw new TimeTravelError(`unknown kind ${JSON.stringify(texts[missing])}: orchd serves ${kinds.map(resourceName).join(', ')}; ${defined}`);
  }
  return out as KindStrategy[];
}

/** What the filter flags ask for, read before the history is opened: a bad selector is said at once. */
export interface Asked {
  kindNames: string[];
  namespace?: string;
  labels?: readonly Requirement[];
}

export function askedOf(v: { kind?: string[]; namespace?: string; selector?: string }): Asked {
  let labels: Requirement[] | undefined;
  try {
    labels = v.selector === undefined ? undefined : parseLabelSelector(v.selector);
  } catch (err) {
    if (err instanceof SelectorError) throw new TimeTravelError(`--selector ${JSON.stringify(v.selector)}: ${err.message}`);
    throw err;
  }
  const kindNames = (v.kind ?? []).flatMap((k) => k.split(',')).filter((k) => k !== '');
  return { kindNames, namespace: v.namespace, labels };
}

/** The filter of what was asked, its kinds found for the spans read (none named: every kind). */
export async function filterIn(h: History, asked: Asked, spans: readonly Span[], name?: string): Promise<Filter> {
  const kinds = asked.kindNames.length > 0 ? await resolveKinds(h, asked.kindNames, spans) : undefined;
  return { ...(kinds ? { kinds } : {}), namespace: asked.namespace, name, labels: asked.labels };
}

/** RESOURCE/NAME (events/e1, vap/event-guard, wa/shop), in the namespace given for a namespaced kind, its kind found for the spans read. */
export async function targetIn(h: History, target: string, namespace: string | undefined, spans: readonly Span[]): Promise<Target> {
  const [kind] = await resolveKinds(h, [splitTarget(target).resource], spans);
  return targetOf(kind, target, namespace);
}
