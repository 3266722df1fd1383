/**
 * Kubernetes label selectors: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`, joined by
 * commas (AND). Parsed once per request into requirements; matching is a loop over them.
 */
export type Operator = 'in' | 'notin' | 'exists' | '!' | '=' | '!=';

export interface Requirement {
  key: string;
  op: Operator;
  values: string[];
}

export class SelectorError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SelectorError';
  }
}

const QUALIFIED_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function checkKey(key: string): void {
  const slash = key.lastIndexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    throw new SelectorError(`unable to parse requirement: Invalid value: ${JSON.stringify(key)}: prefix part must be a valid DNS subdomain`);
  }
  if (name.length === 0 || name.length > 63 || !QUALIFIED_NAME.test(name)) {
    throw new SelectorError(
      `unable to parse requirement: Invalid value: ${JSON.stringify(key)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)`,
    );
  }
}

function checkValue(v: string): void {
  if (v === '') return;
  if (v.length > 63 || !QUALIFIED_NAME.test(v)) {
    throw new SelectorError(
      `unable to parse requirement: Invalid value: ${JSON.stringify(v)}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)`,
    );
  }
}

type Token = { t: 'id'; v: string } | { t: 'op'; v: string };

function tokenize(s: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < s.length) {
    const c = s[i];
    if (c === ' ' || c === '\t') {
      i++;
    } else if (c === '(' || c === ')' || c === ',') {
      out.push({ t: 'op', v: c });
      i++;
    } else if (c === '!' || c === '=') {
      const two = s.slice(i, i + 2);
      if (two === '!=' || two === '==') {
        out.push({ t: 'op', v: two });
        i += 2;
      } else {
        out.push({ t: 'op', v: c });
        i++;
      }
    } else {
      let j = i;
      while (j < s.length && !' \t(),!='.includes(s[j])) j++;
      out.push({ t: 'id', v: s.slice(i, j) });
      i = j;
    }
  }
  return out;
}

export function parseLabelSelector(text: string): Requirement[] {
  const toks = tokenize(text);
  const reqs: Requirement[] = [];
  let p = 0;
  const peek = () => toks[p];
  const expectId = (what: string): string => {
    const t = toks[p++];
    if (!t || t.t !== 'id') throw new SelectorError(`unable to parse requirement: found '${t ? t.v : 'EOF'}', expected: ${what}`);
    return t.v;
  };
  if (toks.length === 0) return reqs;
  for (;;) {
    let req: Requirement;
    if (peek()?.t === 'op' && peek()?.v === '!') {
      p++;
      const key = expectId('identifier after \'!\'');
      checkKey(key);
      req = { key, op: '!', values: [] };
    } else {
      const key = expectId('identifier');
      checkKey(key);
      const t = peek();
      if (!t || (t.t === 'op' && t.v === ',')) {
        req = { key, op: 'exists', values: [] };
      } else if (t.t === 'op' && (t.v === '=' || t.v === '==' || t.v === '!=')) {
        p++;
        const next = peek();
        // `a=` selects the empty value, as in Kubernetes.
        const value = next && next.t === 'id' ? (p++, next.v) : '';
        checkValue(value);
        req = { key, op: t.v === '!=' ? '!=' : '=', values: [value] };
      } else if (t.t === 'id' && (t.v === 'in' || t.v === 'notin')) {
        p++;
        const open = toks[p++];
        if (!open || open.v !== '(') throw new SelectorError(`unable to parse requirement: found '${open ? open.v : 'EOF'}', expected: '('`);
        const values: string[] = [];
        for (;;) {
          const v = peek();
          if (v?.t === 'id') {
            p++;
            checkValue(v.v);
            values.push(v.v);
          } else values.push('');
          const sep = toks[p++];
          if (sep?.v === ')') break;
          if (sep?.v !== ',') throw new SelectorError(`unable to parse requirement: found '${sep ? sep.v : 'EOF'}', expected: ',' or ')'`);
        }
        if (values.length === 1 && toks[p - 2]?.v === '(') {
          throw new SelectorError('unable to parse requirement: for \'in\', \'notin\' operators, values set can\'t be empty');
        }
        req = { key, op: t.v, values };
      } else {
        throw new SelectorError(`unable to parse requirement: found '${t.v}', expected: in, notin, =, ==, !=, gt, lt`);
      }
    }
    reqs.push(req);
    const sep = toks[p++];
    if (!sep) break;
    if (sep.v !== ',') throw new SelectorError(`found '${sep.v}', expected: ',' or 'end of string'`);
    if (!toks[p]) throw new SelectorError(`found 'EOF', expected: identifier`);
  }
  // Sorted by key, as Kubernetes normalizes: the same selector written two ways is one selector.
  return reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export function matchesLabels(reqs: readonly Requirement[], labels: Readonly<Record<string, string>> | undefined): boolean {
  for (const r of reqs) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
    const v = has ? labels![r.key] : undefined;
    switch (r.op) {
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case '=':
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case '!=':
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
    }
  }
  return true;
}
