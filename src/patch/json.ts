/**
 * Small helpers over plain JSON values shared by the patch algorithms. Keys are set with
 * defineProperty when they are `__proto__`, so a patch can never reach an object's prototype.
 */
import { cloneJson } from '../resources/json-access.js';

export type JsonObject = Record<string, unknown>;

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

const hasOwn = Object.prototype.hasOwnProperty;

export const hasKey = (o: JsonObject, key: string): boolean => hasOwn.call(o, key);

export function setKey(o: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  else o[key] = value;
}

/** JSON equality: objects compare by members whatever their order, numbers by value. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => deepEqual(x, b[i]));
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    return ka.every((k) => hasKey(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

export const clone = <T>(v: T): T => cloneJson(v);
