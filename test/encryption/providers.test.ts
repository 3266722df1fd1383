import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EncryptionConfiguration, Provider } from '../../src/config/encryption.js';
import { packJson } from '../../src/log/codec.js';
import { aescbc } from '../../src/log/encryption/aescbc.js';
import { aesgcm } from '../../src/log/encryption/aesgcm.js';
import { ResourceProviders, UnsupportedEncryptionError } from '../../src/log/encryption/providers.js';
import { secretbox } from '../../src/log/encryption/secretbox.js';
import { StoredValues } from '../../src/log/encryption/stored-values.js';
import { TransformError, type Transformer } from '../../src/log/encryption/transformer.js';

const ctx = Buffer.from('events.orch.io/events/default/e1');
const plain = Buffer.from('{"marker":"PLAINTEXT-MARKER-1234"}');

const makers: [string, (name: string, secret: Buffer) => Transformer, number][] = [
  ['aesgcm', aesgcm, 32],
  ['aescbc', aescbc, 32],
  ['secretbox', secretbox, 32],
];

describe.each(makers)('%s', (type, make, size) => {
  const t = make('key1', randomBytes(size));

  it('round-trips, with the provider and key name in the prefix and no plaintext in the sealed bytes', () => {
    const sealed = t.seal(plain, ctx);
    expect(sealed.subarray(0, t.prefix.length).toString()).toBe(`orch:enc:${type}:v1:key1:`);
    expect(sealed.includes(Buffer.from('PLAINTEXT-MARKER'))).toBe(false);
    expect(t.open(sealed, ctx)).toEqual(plain);
  });

  it('uses a fresh nonce/IV per write', () => {
    expect(t.seal(plain, ctx).equals(t.seal(plain, ctx))).toBe(false);
  });

  it('refuses data cut short or empty as a TransformError, never a crash', () => {
    const sealed = t.seal(plain, ctx);
    for (const cut of [t.prefix.length, t.prefix.length + 5, sealed.length - 1]) {
      expect(() => t.open(sealed.subarray(0, cut), ctx)).toThrow(TransformError);
    }
  });

  it('does not open with another key', () => {
    const other = make('key1', randomBytes(size));
    let opened: Buffer | undefined;
    try {
      opened = other.open(t.seal(plain, ctx), ctx);
    } catch (err) {
      expect(err).toBeInstanceOf(TransformError);
    }
    // CBC may unpad garbage by chance (1 in 256); it is never the plaintext.
    if (opened) expect(opened.equals(plain)).toBe(false);
  });
});

describe.each([
  ['aesgcm', aesgcm],
  ['secretbox', secretbox],
] as const)('%s detects tampering', (_type, make) => {
  it('a flipped bit anywhere after the prefix fails to open', () => {
    const t = make('k', randomBytes(32));
    const sealed = t.seal(plain, ctx);
    for (let i = t.prefix.length; i < sealed.length; i += 7) {
      const bad = Buffer.from(sealed);
      bad[i] ^= 0x01;
      expect(() => t.open(bad, ctx)).toThrow(TransformError);
    }
  });
});

it('aesgcm binds a value to its storage key (authenticated context)', () => {
  const t = aesgcm('k', randomBytes(16));
  expect(() => t.open(t.seal(plain, ctx), Buffer.from('events.orch.io/events/default/other'))).toThrow('message authentication failed');
});

it('aesgcm takes 16, 24 and 32 byte keys', () => {
  for (const n of [16, 24, 32]) {
    const t = aesgcm('k', randomBytes(n));
    expect(t.open(t.seal(plain, ctx), ctx)).toEqual(plain);
  }
  expect(() => aesgcm('k', randomBytes(20))).toThrow(RangeError);
});

const key = (name: string, secret = randomBytes(32)) => ({ name, secret });
const conf = (...lists: [string[], Provider[]][]): EncryptionConfiguration => ({
  resources: lists.map(([names, providers]) => ({
    resources: names.map((n) => {
      const dot = n.indexOf('.');
      return dot < 0 ? { group: '', resource: n } : { group: n.slice(dot + 1), resource: n.slice(0, dot) };
    }),
    providers,
  })),
});
const EVENT = 'events.orch.io/events/default/e1';
const NS = '/namespaces//default';
const obj = { metadata: { name: 'x', annotations: { m: 'PLAINTEXT-MARKER' } } };

describe('StoredValues', () => {
  it('seals selected resources with the first provider and leaves others plain', () => {
    const v = new StoredValues(new ResourceProviders(conf([['events.events.orch.io'], [{ type: 'aesgcm', keys: [key('a')] }, { type: 'identity' }]])));
    const sealed = v.seal(EVENT, obj) as Buffer;
    expect(Buffer.isBuffer(sealed) && sealed.toString('latin1').startsWith('orch:enc:aesgcm:v1:a:')).toBe(true);
    expect(v.open(EVENT, sealed)).toEqual(obj);
    expect(v.seal(NS, obj)).toBe(obj);
    expect(v.open(NS, obj)).toBe(obj);
    // identity is listed: plain data written before encryption was turned on still reads.
    expect(v.open(EVENT, obj)).toBe(obj);
  });

  it('finds the provider of an old value by its prefix after a rotation, and writes with the new first key', () => {
    const old = key('old');
    const before = new StoredValues(new ResourceProviders(conf([['*.*'], [{ type: 'secretbox', keys: [old] }]])));
    const after = new StoredValues(
      new ResourceProviders(
        conf([
          ['*.*'],
          [
            { type: 'aescbc', keys: [key('new')] },
            { type: 'secretbox', keys: [old] },
          ],
        ]),
      ),
    );
    const stored = before.seal(EVENT, obj);
    expect(after.open(EVENT, stored)).toEqual(obj);
    expect((after.seal(EVENT, obj) as Buffer).toString('latin1')).toMatch(/^orch:enc:aescbc:v1:new:/);
  });

  it('answers "no matching prefix found" for a removed key and for plain data without identity', () => {
    const a = new StoredValues(new ResourceProviders(conf([['*.'], [{ type: 'aesgcm', keys: [key('a')] }]])));
    const b = new StoredValues(new ResourceProviders(conf([['*.'], [{ type: 'aesgcm', keys: [key('b')] }]])));
    expect(() => b.open(NS, a.seal(NS, obj))).toThrow('no matching prefix found');
    expect(() => b.open(NS, obj)).toThrow('no matching prefix found');
    // No configuration at all: encrypted data is not readable either.
    expect(() => new StoredValues(new ResourceProviders({ resources: [] })).open(NS, a.seal(NS, obj))).toThrow('no matching prefix found');
  });

  it('reports a key of the right name but the wrong secret as the cipher failure', () => {
    const a = new StoredValues(new ResourceProviders(conf([['*.'], [{ type: 'aesgcm', keys: [key('same')] }]])));
    const b = new StoredValues(new ResourceProviders(conf([['*.'], [{ type: 'aesgcm', keys: [key('same')] }]])));
    expect(() => b.open(NS, a.seal(NS, obj))).toThrow('cipher: message authentication failed');
  });

  it('garbled bytes with an encrypted prefix, and bytes that are not encrypted at all, are TransformErrors', () => {
    const v = new StoredValues(new ResourceProviders(conf([['*.'], [{ type: 'aescbc', keys: [key('a')] }]])));
    expect(() => v.open(NS, Buffer.concat([Buffer.from('orch:enc:aescbc:v1:a:'), randomBytes(37)]))).toThrow(TransformError);
    expect(() => v.open(NS, Buffer.from('not encrypted'))).toThrow(TransformError);
    expect(() => v.open(NS, packJson(obj))).toThrow(TransformError);
  });

  it('earlier lists take precedence; identity exempts a resource from a later wildcard', () => {
    const p = new ResourceProviders(conf([['events.events.orch.io'], [{ type: 'identity' }]], [['*.*'], [{ type: 'aesgcm', keys: [key('a')] }]]));
    const v = new StoredValues(p);
    expect(v.seal(EVENT, obj)).toBe(obj);
    expect(Buffer.isBuffer(v.seal(NS, obj))).toBe(true);
    expect(p.forCollection('events.orch.io/events')?.writer).toBe('identity');
  });

  it('matches `*.<group>` and `*.` (core) wildcards by group', () => {
    const p = new ResourceProviders(conf([['*.events.orch.io'], [{ type: 'aesgcm', keys: [key('a')] }]], [['*.'], [{ type: 'secretbox', keys: [key('b')] }]]));
    expect((p.forCollection('events.orch.io/events')?.writer as Transformer).prefix.toString()).toBe('orch:enc:aesgcm:v1:a:');
    expect((p.forCollection('/namespaces')?.writer as Transformer).prefix.toString()).toBe('orch:enc:secretbox:v1:b:');
    expect(p.forCollection('admissionregistration.orch.io/validatingadmissionpolicies')).toBeUndefined();
  });

  it('refuses kms v1 at construction, as kube-apiserver does without its deprecated feature gate', () => {
    const v1 = (): ResourceProviders => new ResourceProviders(conf([['*.*'], [{ type: 'kms', name: 'p', apiVersion: 'v1', endpoint: 'unix:///tmp/kms.sock', timeoutMs: 3000 }]]));
    expect(v1).toThrow(UnsupportedEncryptionError);
    expect(v1).toThrow('KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead');
  });
});
