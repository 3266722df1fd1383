import { describe, expect, it } from 'vitest';
import { V1, V1BETA1 } from '../../src/config/document.js';
import { tracingDocument } from '../../src/config/tracing.js';
import { check } from './support.js';

const doc = (fields: Record<string, unknown>) => ({ apiVersion: V1, kind: 'TracingConfiguration', ...fields });

const rows: { name: string; fields: Record<string, unknown>; want: [string, string][] }[] = [
  { name: 'nothing set', fields: {}, want: [] },
  { name: 'rate 0', fields: { samplingRatePerMillion: 0 }, want: [] },
  { name: 'rate one million', fields: { samplingRatePerMillion: 1_000_000 }, want: [] },
  { name: 'rate above one million', fields: { samplingRatePerMillion: 1_000_001 }, want: [['FieldValueInvalid', 'samplingRatePerMillion']] },
  { name: 'rate negative', fields: { samplingRatePerMillion: -1 }, want: [['FieldValueInvalid', 'samplingRatePerMillion']] },
  { name: 'rate not an integer', fields: { samplingRatePerMillion: 1.5 }, want: [['FieldValueTypeInvalid', 'samplingRatePerMillion']] },
  { name: 'endpoint host:port', fields: { endpoint: 'collector.example.com:4317' }, want: [] },
  { name: 'endpoint dns:///', fields: { endpoint: 'dns:///collector:4317' }, want: [] },
  { name: 'endpoint unix socket', fields: { endpoint: 'unix:///run/otel.sock' }, want: [] },
  { name: 'endpoint unix-abstract', fields: { endpoint: 'unix-abstract://otel' }, want: [] },
  { name: 'endpoint http URL', fields: { endpoint: 'http://collector:4317' }, want: [['FieldValueInvalid', 'endpoint']] },
];

describe('TracingConfiguration validation', () => {
  it.each(rows)('$name', ({ fields, want }) => {
    const got = check(tracingDocument, doc(fields));
    expect(got.errors).toEqual(want);
  });

  it('defaults the endpoint, leaves the rate unset, and reads both versions alike', () => {
    expect(check(tracingDocument, doc({})).value).toEqual({ endpoint: 'localhost:4317' });
    const fields = { endpoint: 'unix:///run/otel.sock', samplingRatePerMillion: 250 };
    const v1 = check(tracingDocument, doc(fields)).value;
    expect(v1).toEqual(fields);
    expect(check(tracingDocument, { ...doc(fields), apiVersion: V1BETA1 }).value).toEqual(v1);
  });
});
