/** Each library function we add, with a valid and an error case, through the real environment. */
import { describe, expect, test } from 'vitest';
import { createCelEnvironment } from '../../src/cel/environment.js';
import { celToJson } from '../../src/cel/values.js';

const env = createCelEnvironment({ unlistedVariablesAreDyn: true });
const ev = (e: string) => celToJson(env.evaluate(e, {}));

const cases: [string, string, unknown][] = [
  // strings
  ['strings', '"héllo".charAt(1)', 'é'],
  ['strings', '"abc".charAt(3)', ''],
  ['strings', '"a.b.c".replace(".", "-")', 'a-b-c'],
  ['strings', '"a.b.c".replace(".", "-", 1)', 'a-b.c'],
  ['strings', '"abc".reverse()', 'cba'],
  ['strings', '"%s has %d items costing %.2f".format(["cart", 3, 9.5])', 'cart has 3 items costing 9.50'],
  ['strings', '"%x %X %b %o %e".format([255, 255, 5, 8, 1234.5])', 'ff FF 101 10 1.234500e+03'],
  ['strings', '"%s".format([[1, "a"]])', '[1, a]'],
  ['strings', 'strings.quote("a\\n\\"b")', '"a\\n\\"b"'],
  // lists
  ['lists', '[1, 2, 2, 3].isSorted()', true],
  ['lists', '["b", "a"].isSorted()', false],
  ['lists', '[1, 2, 3].sum()', 6],
  ['lists', '[1.5, 2.5].sum()', 4],
  ['lists', '[].sum()', 0],
  ['lists', '[3, 1, 2].min()', 1],
  ['lists', '["a", "c", "b"].max()', 'c'],
  ['lists', '[1, 2, 1].indexOf(1)', 0],
  ['lists', '[1, 2, 1].lastIndexOf(1)', 2],
  ['lists', '[1, 2].indexOf(5)', -1],
  ['lists', '[1, 2, 3, 4].slice(1, 3)', [2, 3]],
  ['lists', '[[1], [2, [3]]].flatten()', [1, 2, [3]]],
  ['lists', '[1, 2, 1].distinct()', [1, 2]],
  ['lists', '[3, 1, 2].sort()', [1, 2, 3]],
  ['lists', 'lists.range(3)', [0, 1, 2]],
  ['sets', 'sets.contains([1, 2, 3], [3, 1])', true],
  ['sets', 'sets.equivalent([1, 2], [2, 1, 1])', true],
  ['sets', 'sets.intersects([1], [2])', false],
  // regex
  ['regex', '"abc 123 def 45".find("[0-9]+")', '123'],
  ['regex', '"abc".find("[0-9]+")', ''],
  ['regex', '"abc 123 def 45".findAll("[0-9]+")', ['123', '45']],
  ['regex', '"a1b2c3".findAll("[0-9]", 2)', ['1', '2']],
  ['regex', '"ABC".find("(?i)b")', 'B'],
  ['regex', '"key=val".find("(?P<k>[a-z]+)=")', 'key='],
  // url
  ['url', 'url("https://user@example.com:8443/a%20b?x=1&x=2&y=z").getScheme()', 'https'],
  ['url', 'url("https://example.com:8443/p").getHost()', 'example.com:8443'],
  ['url', 'url("https://[::1]:80/p").getHostname()', '::1'],
  ['url', 'url("https://[::1]:80/p").getPort()', '80'],
  ['url', 'url("https://example.com").getPort()', ''],
  ['url', 'url("https://example.com/a b/ü").getEscapedPath()', '/a%20b/%C3%BC'],
  ['url', 'url("https://example.com/?x=1&x=2&y=a+b").getQuery()', { x: ['1', '2'], y: ['a b'] }],
  ['url', 'url("/absolute/path?q=1").getEscapedPath()', '/absolute/path'],
  ['url', 'isURL("https://example.com")', true],
  ['url', 'isURL("example.com")', false],
  // ip
  ['ip', 'ip("192.168.0.1").family()', 4],
  ['ip', 'ip("fe80::1").family()', 6],
  ['ip', 'isIP("1.2.3.4") && !isIP("01.2.3.4") && !isIP("1.2.3") && !isIP("::ffff:1.2.3.4") && !isIP("fe80::1%eth0")', true],
  ['ip', 'ip.isCanonical("2001:db8::1") && !ip.isCanonical("2001:DB8:0::1")', true],
  ['ip', 'string(ip("2001:db8:0:0:1:0:0:1"))', '2001:db8::1:0:0:1'],
  ['ip', 'ip("127.0.0.1").isLoopback() && ip("::1").isLoopback()', true],
  ['ip', 'ip("0.0.0.0").isUnspecified()', true],
  ['ip', 'ip("169.254.1.1").isLinkLocalUnicast() && ip("fe80::1").isLinkLocalUnicast()', true],
  ['ip', 'ip("224.0.0.1").isLinkLocalMulticast() && ip("ff02::1").isLinkLocalMulticast()', true],
  ['ip', 'ip("8.8.8.8").isGlobalUnicast() && !ip("255.255.255.255").isGlobalUnicast()', true],
  ['ip', 'ip("10.0.0.1") == ip("10.0.0.1") && ip("10.0.0.1") != ip("10.0.0.2")', true],
  // cidr
  ['cidr', 'cidr("10.0.0.0/8").containsIP(ip("10.1.2.3")) && !cidr("10.0.0.0/8").containsIP("11.0.0.1")', true],
  ['cidr', 'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16") && !cidr("10.1.0.0/16").containsCIDR(cidr("10.0.0.0/8"))', true],
  ['cidr', 'cidr("2001:db8::/32").containsIP("2001:db8::1")', true],
  ['cidr', 'string(cidr("10.1.2.3/8").masked())', '10.0.0.0/8'],
  ['cidr', 'cidr("10.1.2.3/8").prefixLength()', 8],
  ['cidr', 'string(cidr("10.1.2.3/8").ip())', '10.1.2.3'],
  ['cidr', 'isCIDR("10.0.0.0/33") || isCIDR("10.0.0.0")', false],
  // quantity
  ['quantity', 'quantity("1Gi").asInteger()', 1073741824],
  ['quantity', 'quantity("500m").isLessThan(quantity("1"))', true],
  ['quantity', 'quantity("2k").isGreaterThan(quantity("1999"))', true],
  ['quantity', 'quantity("1k").compareTo(quantity("1000"))', 0],
  ['quantity', 'quantity("1") == quantity("1000m")', true],
  ['quantity', 'quantity("1.5").isInteger()', false],
  ['quantity', 'quantity("1").add(quantity("500m")).asApproximateFloat()', 1.5],
  ['quantity', 'quantity("1").add(2).asInteger()', 3],
  ['quantity', 'quantity("2Ki").sub(1024).asInteger()', 1024],
  ['quantity', 'quantity("-5").sign()', -1],
  ['quantity', 'quantity("1e3").asInteger()', 1000],
  ['quantity', 'isQuantity("1Gi") && !isQuantity("1 Gi") && !isQuantity("abc")', true],
  // format
  ['format', 'format.named("dns1123Label").value().validate("good-name").hasValue()', false],
  ['format', 'format.dns1123Label().validate("Bad_Name").value().size()', 1],
  ['format', 'format.named("nope").hasValue()', false],
  ['format', 'format.qualifiedName().validate("example.com/My.Name").hasValue()', false],
  // semver
  ['semver', 'semver("1.2.3").major() + semver("1.2.3").minor() + semver("1.2.3").patch()', 6],
  ['semver', 'semver("1.2.3").isLessThan(semver("1.10.0"))', true],
  ['semver', 'semver("1.0.0-alpha").compareTo(semver("1.0.0"))', -1],
  ['semver', 'semver("v1.2", true).minor()', 2],
  ['semver', 'isSemver("1.2.3") && !isSemver("1.2") && isSemver("v1.2", true)', true],
  // conversions
  ['conversions', 'int(5u)', 5],
  ['conversions', 'string(duration("90s"))', '90s'],
  ['conversions', 'int(timestamp("2024-01-01T00:00:00Z"))', 1704067200],
];

describe('library functions', () => {
  test.each(cases)('%s: %s', (_lib, expr, want) => {
    expect(ev(expr)).toEqual(want);
  });
});

const errors: [string, string, RegExp][] = [
  ['strings', '"abc".charAt(4)', /index out of range/],
  ['strings', '"%d".format(["x"])', /decimal clause can only be used on integers/],
  ['strings', '"%s %s".format(["x"])', /out of range/],
  ['strings', '"%q".format([1])', /unrecognized formatting clause/],
  ['lists', '[].min()', /min called on empty list/],
  ['lists', '[1, "a"].isSorted()', /no such overload|cannot compare/],
  ['lists', '[9223372036854775807, 1].sum()', /overflow/],
  ['lists', '[1, 2].slice(1, 5)', /cannot slice/],
  ['regex', '"abc".find("(?=a)")', /error parsing regexp/],
  ['regex', '"abc".find("(a)\\\\1")', /error parsing regexp/],
  ['regex', '"abc".findAll("[")', /error parsing regexp/],
  ['url', 'url("example.com")', /URL parse error/],
  ['url', 'url("https://host:port/")', /invalid port/],
  ['ip', 'ip("1.2.3")', /parse error/],
  ['ip', 'ip("::ffff:1.2.3.4")', /IPv4-mapped IPv6 address is not allowed/],
  ['ip', 'ip("fe80::1%eth0")', /zone value is not allowed/],
  ['cidr', 'cidr("10.0.0.0/40")', /bad bits/],
  ['cidr', 'cidr("10.0.0.0/8").containsIP("x")', /parse error/],
  ['quantity', 'quantity("1 Gi")', /quantities must match/],
  ['quantity', 'quantity("1.5").asInteger()', /cannot convert value to integer/],
  ['quantity', 'quantity("10E").asInteger()', /cannot convert value to integer/],
  ['semver', 'semver("1.2")', /could not parse semver/],
  ['conversions', 'int(18446744073709551615u)', /overflow/],
];

describe('library errors', () => {
  test.each(errors)('%s: %s', (_lib, expr, want) => {
    expect(() => env.evaluate(expr, {})).toThrow(want);
  });
});

test("named formats compare by name, as Kubernetes' Format.Equal", () => {
  const env = createCelEnvironment();
  expect(env.evaluate('format.named("dns1123Label").value() == format.named("dns1123Label").value()')).toBe(true);
  expect(env.evaluate('format.dns1123Label() != format.dns1123Subdomain()')).toBe(true);
});
