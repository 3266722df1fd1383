/**
 * Library function costs as Kubernetes' own tests pin them: the rows of
 * apiserver/pkg/cel/library/cost_test.go (v1.36), estimated with that test's size estimator (every
 * string or bytes value it cannot otherwise size is 0..12 long), minimum and maximum both.
 * Expressions are checked in the mutating admission environment (it declares `authorizer`, and
 * jsonpatch.escapeKey).
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import { describe, expect, test } from 'vitest';
import { checkerFor } from '../../src/cel/admission-env.js';
import { CostEstimator, type SizeEstimator } from '../../src/cel/cost.js';
import { kubernetesHas } from '../../src/cel/has-macro.js';

/** cost_test.go's testCostEstimator: strings and bytes 0..12, anything else unknown. */
const typeSizes: SizeEstimator = { estimateSize: (_path, kind) => (kind === 'string' || kind === 'bytes' ? { min: 0, max: 12 } : undefined) };

function costOf(expression: string): [number, number] {
  const parsed = checkerFor('mutating').parse(expression);
  kubernetesHas(parsed.ast as ASTNode);
  const checked = parsed.check();
  if (!checked.valid) throw new Error(checked.error?.message);
  const c = new CostEstimator(new Map([['authorizer', undefined]]), typeSizes).cost(parsed.ast as ASTNode);
  return [c.min, c.max];
}

const INT_LIST = '[1, 2, 3, 4, 5]';
const UINT_LIST = '[uint(1), uint(2), uint(3), uint(4), uint(5)]';
const DOUBLE_LIST = '[1.0, 2.0, 3.0, 4.0, 5.0]';
const BOOL_LIST = '[false, true, false, true, false]';
const STRING_LIST = "['012345678901', '012345678901', '012345678901', '012345678901', '012345678901']";
const BYTES_LIST = "[bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901'), bytes('012345678901')]";
const DURATION_LIST = "[duration('1s'), duration('2s'), duration('3s'), duration('4s'), duration('5s')]";
const TIMESTAMP_LIST =
  "[timestamp('2011-01-01T00:00:00.000+01:00'), timestamp('2011-01-02T00:00:00.000+01:00'), timestamp('2011-01-03T00:00:00.000+01:00'), timestamp('2011-01-04T00:00:00.000+01:00'), timestamp('2011-01-05T00:00:00.000+01:00')]";
const STRING = "'01234567890123456789012345678901234567890123456789'";

// TestListsCost and TestIndexOfCost: [expression, min, max].
const lists: [string, number, number][] = [
  ...[INT_LIST, DOUBLE_LIST].map((l): [string, number, number] => [`${l}.sum()`, 15, 15]),
  ...[UINT_LIST, DURATION_LIST].map((l): [string, number, number] => [`${l}.sum()`, 20, 20]),
  ...['.isSorted()', '.max()', '.min()'].flatMap((op): [string, number, number][] => [
    [INT_LIST + op, 15, 15],
    [UINT_LIST + op, 20, 20],
    [DOUBLE_LIST + op, 15, 15],
    [BOOL_LIST + op, 15, 15],
    [STRING_LIST + op, 15, 25],
    [BYTES_LIST + op, 25, 35],
    [DURATION_LIST + op, 20, 20],
    [TIMESTAMP_LIST + op, 20, 20],
  ]),
  ...['indexOf', 'lastIndexOf'].flatMap((fn): [string, number, number][] => [
    [`${INT_LIST}.${fn}(3)`, 15, 15],
    [`${UINT_LIST}.${fn}(uint(3))`, 21, 21],
    [`${DOUBLE_LIST}.${fn}(3.0)`, 15, 15],
    [`${BOOL_LIST}.${fn}(true)`, 15, 15],
    [`${STRING_LIST}.${fn}('x')`, 15, 25],
    [`${BYTES_LIST}.${fn}(bytes('x'))`, 26, 36],
    [`${DURATION_LIST}.${fn}(duration('3s'))`, 21, 21],
    [`${TIMESTAMP_LIST}.${fn}(timestamp('2011-01-03T00:00:00.000+01:00'))`, 21, 21],
    [`${STRING}.${fn}('123')`, 5, 5],
  ]),
];

// TestURLsCost, TestIPCost, TestIPIsCanonicalCost, TestCIDRCost.
const URL = "url('https:://kubernetes.io/')";
const IP4 = "ip('192.168.0.1')";
const IP6 = "ip('2001:db8:3333:4444:5555:6666:7777:8888')";
const CIDR4 = "cidr('192.168.0.0/16')";
const CIDR6 = "cidr('2001:db8::/32')";
const network: [string, number, number][] = [
  ...['.getScheme()', '.getHostname()', '.getHost()', '.getPort()', '.getEscapedPath()', '.getQuery()'].map((op): [string, number, number] => [URL + op, 4, 4]),
  [`${URL} == url('https:://kubernetes.io/')`, 7, 9],
  [`${URL} == url('http://x.b')`, 5, 5],
  ...(
    [
      [IP4, 2],
      [IP6, 4],
    ] as const
  ).flatMap(([ip, base]): [string, number, number][] => [
    [ip, base, base],
    ...['.family()', '.isUnspecified()', '.isLoopback()', '.isLinkLocalMulticast()', '.isLinkLocalUnicast()', '.isGlobalUnicast()'].map((op): [string, number, number] => [
      ip + op,
      base + 1,
      base + 1,
    ]),
    [`${ip} == ip('192.168.0.1')`, base + 3, base + 3],
  ]),
  ["ip.isCanonical('192.168.0.1')", 3, 3],
  ["ip.isCanonical('2001:db8:3333:4444:5555:6666:7777:8888')", 8, 8],
  ["ip.isCanonical('2001:db8::abcd')", 3, 3],
  ...[CIDR4, CIDR6].flatMap((c): [string, number, number][] => [
    [c, 2, 2],
    ...['.ip()', '.prefixLength()', '.masked()'].map((op): [string, number, number] => [c + op, 3, 3]),
    [`${c} == cidr('2001:db8::/32')`, 5, 5],
  ]),
  ...[".containsCIDR(cidr('192.0.0.0/30'))", ".containsCIDR(cidr('192.168.0.0/16'))", ".containsCIDR('192.0.0.0/30')", ".containsCIDR('192.168.0.0/16')"].map((op): [string, number, number] => [
    CIDR4 + op,
    7,
    11,
  ]),
  [`${CIDR4}.containsIP(ip('192.0.0.1'))`, 4, 7],
  [`${CIDR4}.containsIP(ip('192.169.0.1'))`, 5, 8],
  [`${CIDR4}.containsIP(ip('192.169.169.250'))`, 5, 8],
  [`${CIDR4}.containsIP('192.0.0.1')`, 4, 7],
  [`${CIDR4}.containsIP('192.169.0.1')`, 5, 8],
  ...[".containsCIDR(cidr('2001:db8::/126'))", ".containsCIDR(cidr('2001:db8::/32'))", ".containsCIDR('2001:db8::/126')", ".containsCIDR('2001:db8::/32')"].map((op): [string, number, number] => [
    CIDR6 + op,
    7,
    11,
  ]),
  [`${CIDR6}.containsIP(ip('2001:db8:3333:4444:5555:6666:7777:8888'))`, 7, 10],
  [`${CIDR6}.containsIP(ip('2001:db8::1'))`, 5, 8],
  [`${CIDR6}.containsIP('2001:db8:3333:4444:5555:6666:7777:8888')`, 7, 10],
  [`${CIDR6}.containsIP('2001:db8::1')`, 5, 8],
];

// TestStringLibrary, TestAuthzLibrary, TestQuantityCost, TestNameFormatCost, TestSetsCost, TestSemverCost.
const sections: [string, [string, number, number][]][] = [
  [
    'TestStringLibrary',
    [
      ["'ABCDEFGHIJ abcdefghij'.lowerAscii()", 3, 3],
      ["'ABCDEFGHIJ abcdefghij'.lowerAscii() == 'abcdefghij ABCDEFGHIJ'.lowerAscii()", 7, 9],
      ["'ABCDEFGHIJ abcdefghij'.upperAscii()", 3, 3],
      ["'ABCDEFGHIJ abcdefghij'.upperAscii() == 'abcdefghij ABCDEFGHIJ'.upperAscii()", 7, 9],
      ["strings.quote('ABCDEFGHIJ abcdefghij')", 3, 3],
      ["strings.quote('ABCDEFGHIJ abcdefghij') == strings.quote('ABCDEFGHIJ abcdefghij')", 7, 11],
      ["'abc 123 def 123'.replace('123', '456')", 3, 3],
      ["'abc 123 def 123'.replace('', 'x')", 3, 3],
      ["'abc 123 def 123'.replace('123', '')", 3, 3],
      ["'abc 123 def 123'.replace('123', '456', 1)", 3, 3],
      ["'abc 123 def 123'.split(' ')", 3, 3],
      ["'abc 123 def 123'.split(' ', 1)", 3, 3],
      ["'abc 123 def 123'.substring(5)", 2, 2],
      ["'abc 123 def 123'.substring(5, 8)", 2, 2],
      ["'  abc 123 def 123  '.trim()", 2, 2],
      ["['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join(' ')", 11, 23],
      ["['aa', 'bb', 'cc', 'd', 'e', 'f', 'g', 'h', 'i', 'j'].join()", 10, 22],
      ["'abc 123 def 123'.find('123')", 2, 2],
      ["'abc 123 def 123'.findAll('123')", 2, 2],
      ["'abc 123 def 123'.findAll('123', 1)", 2, 2],
      ["jsonpatch.escapeKey('abc/def~ abc/def~')", 2, 2],
    ],
  ],
  [
    'TestAuthzLibrary',
    [
      ["authorizer.path('/healthz')", 2, 2],
      ["authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend')", 6, 6],
      ["authorizer.group('').resource('pods').fieldSelector('spec.nodeName=example-node-name.fully.qualified.domain.name.example.com')", 1821, 1821],
      ["authorizer.group('').resource('pods').labelSelector('spec.nodeName=example-node-name.fully.qualified.domain.name.example.com')", 1821, 1821],
      ["authorizer.path('/healthz').check('get').allowed()", 350003, 350003],
      ["authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').allowed()", 350007, 350007],
      ["authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').allowed()", 350007, 350007],
      ["authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').errored()", 350007, 350007],
      ["authorizer.group('apps').resource('deployments').subresource('status').namespace('test').name('backend').check('create').error()", 350007, 350007],
    ],
  ],
  [
    'TestQuantityCost',
    [
      ['quantity("12Mi")', 1, 1],
      ['isQuantity("20")', 1, 1],
      ['isQuantity("20M")', 1, 1],
      ['quantity("200M") == quantity("200M")', 3, 3],
      ['quantity("200M") == quantity("0.2G") && quantity("0.2G") == quantity("200M")', 3, 6],
      ['quantity("2M") == quantity("0.002G") && quantity("2000k") == quantity("2M") && quantity("0.002G") == quantity("2000k")', 3, 9],
      ['quantity("50M").isLessThan(quantity("50Mi"))', 3, 3],
      ['quantity("50Mi").isGreaterThan(quantity("50M"))', 3, 3],
      ['quantity("200M").compareTo(quantity("0.2G")) > 0', 4, 4],
      ['quantity("50k").add(quantity("20")) == quantity("50.02k")', 5, 5],
      ['quantity("50k").sub(quantity("20")) == quantity("49.98k")', 5, 5],
      ['quantity("50k").sub(20) == quantity("49980")', 4, 4],
      ['quantity("50k").add(20).sub(quantity("100k")).asInteger() > 0', 6, 6],
      ['quantity("50k").add(20).sub(quantity("100k")).sub(-50000).asInteger() > 0', 7, 7],
      ['quantity("50k").asInteger() > 0', 3, 3],
      ['quantity("50").isInteger()', 2, 2],
      ['quantity("50.703k").asApproximateFloat() > 0.0', 3, 3],
    ],
  ],
  [
    'TestNameFormatCost',
    [
      ['format.named("dns1123subdomain")', 1, 1],
      ['format.named("dns1123Subdomain").value().validate("my-name")', 34, 34],
      ['format.named("dns1123Label").value().validate("my-name")', 34, 34],
      ['format.named("dns1123Label").value().validate("my-name")', 34, 34],
      ['format.named("dns1123Label").value() == format.named("dns1123Label").value()', 5, 11],
    ],
  ],
  [
    'TestSetsCost',
    [
      ['sets.contains([], [])', 21, 21],
      ['sets.contains([1], [])', 21, 21],
      ['sets.contains([1], [1])', 22, 22],
      ['sets.contains([1], [1, 1])', 23, 23],
      ['sets.contains([1, 1], [1])', 23, 23],
      ['sets.contains([2, 1], [1])', 23, 23],
      ['sets.contains([1, 2, 3, 4], [2, 3])', 29, 29],
      ['sets.contains([1], [1.0, 1])', 23, 23],
      ['sets.contains([1, 2], [2u, 2.0])', 25, 25],
      ['sets.contains([1, 2u], [2, 2.0])', 25, 25],
      ['sets.contains([1, 2.0, 3u], [1.0, 2u, 3])', 30, 30],
      ['sets.contains([[1], [2, 3]], [[2, 3.0]])', 53, 53],
      ['!sets.contains([1], [2])', 23, 23],
      ['!sets.contains([1], [1, 2])', 24, 24],
      ['!sets.contains([1], ["1", 1])', 24, 24],
      ['!sets.contains([1], [1.1, 1u])', 24, 24],
      ['sets.equivalent([], [])', 21, 21],
      ['sets.equivalent([1], [1])', 23, 23],
      ['sets.equivalent([1], [1, 1])', 25, 25],
      ['sets.equivalent([1, 1], [1])', 25, 25],
      ['sets.equivalent([1], [1u, 1.0])', 25, 25],
      ['sets.equivalent([1], [1u, 1.0])', 25, 25],
      ['sets.equivalent([1, 2, 3], [3u, 2.0, 1])', 39, 39],
      ['sets.equivalent([[1.0], [2, 3]], [[1], [2, 3.0]])', 69, 69],
      ['!sets.equivalent([2, 1], [1])', 26, 26],
      ['!sets.equivalent([1], [1, 2])', 26, 26],
      ['!sets.equivalent([1, 2], [2u, 2, 2.0])', 34, 34],
      ['!sets.equivalent([1, 2], [1u, 2, 2.3])', 34, 34],
      ['sets.intersects([1], [1])', 22, 22],
      ['sets.intersects([1], [1, 1])', 23, 23],
      ['sets.intersects([1, 1], [1])', 23, 23],
      ['sets.intersects([2, 1], [1])', 23, 23],
      ['sets.intersects([1], [1, 2])', 23, 23],
      ['sets.intersects([1], [1.0, 2])', 23, 23],
      ['sets.intersects([1, 2], [2u, 2, 2.0])', 27, 27],
      ['sets.intersects([1, 2], [1u, 2, 2.3])', 27, 27],
      ['sets.intersects([[1], [2, 3]], [[1, 2], [2, 3.0]])', 65, 65],
      ['!sets.intersects([], [])', 22, 22],
      ['!sets.intersects([1], [])', 22, 22],
      ['!sets.intersects([1], [2])', 23, 23],
      ['!sets.intersects([1], ["1", 2])', 24, 24],
      ['!sets.intersects([1], [1.1, 2u])', 24, 24],
    ],
  ],
  [
    'TestSemverCost',
    [
      ['semver("1.0.0")', 1, 1],
      ['semver("1234.56789012345.67890123456789")', 4, 4],
      ['isSemver("1.0.0")', 1, 1],
      ['isSemver("1234.56789012345.67890123456789")', 4, 4],
      ['semver("1.2.3").major()', 2, 2],
      ['semver("1.2.3").minor()', 2, 2],
      ['semver("1.2.3").patch()', 2, 2],
      ['semver("1.0.0").isLessThan(semver("1.1.0"))', 3, 3],
      ['semver("1.1.0").isGreaterThan(semver("1.0.0"))', 3, 3],
      ['semver("1.0.0").compareTo(semver("1.2.3"))', 3, 3],
    ],
  ],
];

/** Rows that cannot match, with why. */
const SKIPS = new Map<string, string>([]);

describe("library costs, as Kubernetes' cost_test.go pins them", () => {
  const all: [string, [string, number, number][]][] = [['lists', lists], ['network', network], ...sections];
  for (const [name, rows] of all) {
    describe(name, () => {
      test.each(rows.filter(([e]) => !SKIPS.has(e)))('%s', (expression, min, max) => {
        expect(costOf(expression)).toEqual([min, max]);
      });
    });
  }
  test('every skip names a row', () => {
    const exprs = all.flatMap(([, rows]) => rows.map(([e]) => e));
    for (const e of SKIPS.keys()) expect(exprs).toContain(e);
  });
});
