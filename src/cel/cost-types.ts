/**
 * What the cost estimator reads of the checker's types and of literals: cel-go's kind of a node
 * (struct for an object type, opaque for IP and CIDR, duration and timestamp as their own kinds),
 * whether its type is a fixed-size scalar (computeTypeSize), and a literal's exact size.
 */
import type { ASTNode } from '@marcbachmann/cel-js';
import { fixed, type Range } from './cost-math.js';

export const SCALAR_TYPES = new Set(['bool', 'int', 'uint', 'double', 'google.protobuf.Duration', 'google.protobuf.Timestamp']);

export const arg = (n: ASTNode, i: number): ASTNode => (n.args as unknown as ASTNode[])[i]!;

export function isNumberLiteral(n: ASTNode): boolean {
  const v = n.op === 'value' ? (n.args as unknown) : undefined;
  return typeof v === 'number' || typeof v === 'bigint';
}

export function literalSize(n: ASTNode): Range | undefined {
  if (n.op === '-_' && isNumberLiteral(n.args as unknown as ASTNode)) return fixed(1);
  if (n.op === 'list') return fixed((n.args as unknown[]).length);
  if (n.op === 'map') return fixed((n.args as unknown[]).length);
  if (n.op !== 'value') return undefined;
  const v = n.args as unknown;
  if (typeof v === 'string') return fixed([...v].length);
  if (v instanceof Uint8Array) return fixed(v.length);
  return fixed(1);
}

export interface CheckedType {
  name?: string;
  kind?: string;
  valueType?: CheckedType;
}

export const checked = (n: ASTNode): CheckedType | undefined => (n as unknown as { checkedType?: CheckedType }).checkedType;

export function typeNameOf(n: ASTNode): string {
  return checked(n)?.name ?? 'dyn';
}

export function isScalarType(n: ASTNode): boolean {
  let t = checked(n);
  if (t?.kind === 'optional') t = t.valueType;
  return t?.name !== undefined && SCALAR_TYPES.has(t.name);
}

const OPAQUE = new Set(['net.IP', 'net.CIDR']);

/** cel-go's kind of the checker's type: struct for an object type, opaque for IP and CIDR. */
export function checkedKind(n: ASTNode): string {
  const t = checked(n);
  if (!t?.name) return 'dyn';
  switch (t.kind) {
    case 'list':
    case 'map':
    case 'dyn':
    case 'optional':
      return t.kind;
    case 'message':
      if (t.name === 'google.protobuf.Duration') return 'duration';
      if (t.name === 'google.protobuf.Timestamp') return 'timestamp';
      return OPAQUE.has(t.name) ? 'opaque' : 'struct';
    default:
      return t.name;
  }
}
