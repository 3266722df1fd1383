import { SelectorError } from './label-selector.js';

/**
 * Kubernetes field selectors: `field=value`, `field==value`, `field!=value`, comma-joined (AND).
 * Values escape `\,`, `\=`, `\!` and `\\`. Which fields exist is the kind's business: the caller
 * passes the accessors it supports, and an unknown field is refused with its name.
 */
export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

export function parseFieldSelector(text: string): FieldRequirement[] {
  const out: FieldRequirement[] = [];
  if (text.trim() === '') return out;
  for (const term of splitUnescaped(text, ',')) {
    const m = /^(.*?)(!=|==|=)(.*)$/s.exec(term);
    if (!m) throw new SelectorError(`invalid selector: '${text}'; can't understand '${term}'`);
    const field = m[1].trim();
    if (!field) throw new SelectorError(`invalid selector: '${text}'; can't understand '${term}'`);
    out.push({ field, op: m[2] === '!=' ? '!=' : '=', value: unescape(m[3]) });
  }
  return out;
}

function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && i + 1 < s.length) {
      cur += s[i] + s[i + 1];
      i++;
    } else if (s[i] === sep) {
      parts.push(cur);
      cur = '';
    } else cur += s[i];
  }
  parts.push(cur);
  return parts;
}

function unescape(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    if (v[i] === '\\') {
      const n = v[i + 1];
      if (n === undefined || !'\\,=!'.includes(n)) throw new SelectorError(`invalid field selector value: invalid escape sequence in ${JSON.stringify(v)}`);
      out += n;
      i++;
    } else if (v[i] === '=' || v[i] === '!' || v[i] === ',') {
      throw new SelectorError(`invalid field selector value: unescaped '${v[i]}' in ${JSON.stringify(v)}`);
    } else out += v[i];
  }
  return out;
}

/** Binds requirements to accessors; an unsupported field is an error naming it. */
export function compileFieldSelector<T>(reqs: FieldRequirement[], fields: Readonly<Record<string, (o: T) => string>>): (o: T) => boolean {
  const bound = reqs.map((r) => {
    const get = fields[r.field];
    if (!get) throw new SelectorError(`field label not supported: ${r.field}`);
    return { get, r };
  });
  return (o) => bound.every(({ get, r }) => (get(o) === r.value) === (r.op === '='));
}
