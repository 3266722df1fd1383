/**
 * A CRD rule sees strings of format byte, date, date-time and duration as Kubernetes types them
 * (apiserver/pkg/cel/common/schemas.go SchemaDeclType: bytes, timestamp, timestamp, duration) and
 * reads their values as its UnstructuredToVal does (valuesunstructured.go): base64-decoded bytes, a
 * date at midnight UTC, an RFC 3339 time, a Go duration.
 */
import { expect, test } from 'vitest';
import { compileSchemaRule, runSchemaRule, SchemaRuleScope, type CelSchema } from '../../src/cel/index.js';

const schema: CelSchema = {
  type: 'object',
  properties: {
    b: { type: 'string', format: 'byte' },
    day: { type: 'string', format: 'date' },
    t: { type: 'string', format: 'date-time' },
    u: { type: 'string', format: 'date-time' },
    d: { type: 'string', format: 'duration' },
    s: { type: 'string' },
  },
};
const self = { b: 'YWJj', day: '2020-01-16', t: '2020-01-01T10:20:30.1Z', u: '2021-06-01T00:00:00+02:00', d: '1h2m3.5s', s: '1h' };

function run(rule: string): unknown {
  const r = compileSchemaRule({ rule }, schema, 'x-kubernetes-validations[0]');
  if (!r.ok) return r.errors.map((e) => e.detail).join('\n');
  return runSchemaRule(r.rule, new SchemaRuleScope({ self }, schema), { remaining: 1e9, timeoutMs: 5000 });
}

test.each([
  "self.b == b'abc' && size(self.b) == 3",
  'self.day.getDayOfMonth() == 15 && self.day.getDate() == 16 && self.day.getHours() == 0',
  "self.t.getHours() == 10 && self.t.getMinutes() == 20 && self.t == timestamp('2020-01-01T10:20:30.1Z')",
  // Go's time.RFC3339Nano: the fraction's trailing zeros dropped.
  "string(self.t) == '2020-01-01T10:20:30.1Z' && string(self.day) == '2020-01-16T00:00:00Z'",
  'self.t < self.u',
  "self.d.getHours() == 1 && self.d.getMinutes() == 62 && self.d > duration('1h')",
  "duration(self.s) == duration('1h')",
  'type(self.d) == google.protobuf.Duration && type(self.t) == google.protobuf.Timestamp && type(self.b) == bytes',
])('%s', (rule) => {
  expect(run(rule)).toBe(true);
});

test.each([
  ["self.t == '2020-01-01T10:20:30Z'", /no such overload|no matching overload/],
  ["self.d.startsWith('1')", /no matching overload|no such overload|found no matching/],
])('%s does not compile, as on kube-apiserver', (rule, why) => {
  expect(run(rule)).toMatch(why);
});
