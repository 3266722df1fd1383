/**
 * Kubernetes' IP and CIDR libraries: ip(), isIP(), ip.isCanonical(), the IP predicates, cidr(),
 * isCIDR(), containsIP/containsCIDR, masked(), prefixLength(). As in Kubernetes, IPv4 octets may not
 * have leading zeros, and zones and IPv4-mapped IPv6 addresses are refused.
 */
import type { Environment } from '@marcbachmann/cel-js';
import { celError, sync } from './common.js';

export class CelIP {
  constructor(readonly bytes: Uint8Array) {}
  get family(): 4 | 6 {
    return this.bytes.length === 4 ? 4 : 6;
  }
  toString(): string {
    return formatIP(this.bytes);
  }
  toJSON(): string {
    return this.toString();
  }
  celEquals(o: unknown): boolean {
    return o instanceof CelIP && Buffer.from(o.bytes).equals(Buffer.from(this.bytes));
  }
}

export class CelCIDR {
  constructor(
    readonly ip: CelIP,
    readonly prefix: number,
  ) {}
  toString(): string {
    return `${this.ip}/${this.prefix}`;
  }
  toJSON(): string {
    return this.toString();
  }
  celEquals(o: unknown): boolean {
    return o instanceof CelCIDR && o.prefix === this.prefix && o.ip.celEquals(this.ip);
  }
  masked(): CelCIDR {
    return new CelCIDR(new CelIP(mask(this.ip.bytes, this.prefix)), this.prefix);
  }
  containsIP(ip: CelIP): boolean {
    return ip.family === this.ip.family && Buffer.from(mask(ip.bytes, this.prefix)).equals(Buffer.from(mask(this.ip.bytes, this.prefix)));
  }
  containsCIDR(o: CelCIDR): boolean {
    return o.ip.family === this.ip.family && o.prefix >= this.prefix && this.containsIP(o.ip);
  }
}

function parseIPv4(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const p = parts[i];
    if (!/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255) return undefined;
    out[i] = Number(p);
  }
  return out;
}

function parseIPv6(s: string): Uint8Array | undefined {
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return undefined;
  let tail: Uint8Array | undefined;
  let text = s;
  const lastColon = s.lastIndexOf(':');
  if (s.includes('.')) {
    tail = parseIPv4(s.slice(lastColon + 1));
    if (!tail) return undefined;
    text = s.slice(0, lastColon + 1) + '0:0';
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const group = (h: string) => (h === '' ? [] : h.split(':'));
  const head = group(halves[0]);
  const rest = halves.length === 2 ? group(halves[1]) : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(groups[i])) return undefined;
    const v = parseInt(groups[i], 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  }
  if (tail) out.set(tail, 12);
  return out;
}

/** The address, or the reason Kubernetes gives for refusing it. */
export function parseIP(s: string): CelIP | string {
  if (s.includes('%')) return `IP address with zone value is not allowed`;
  const v4 = parseIPv4(s);
  if (v4) return new CelIP(v4);
  if (s.includes(':')) {
    const v6 = parseIPv6(s);
    if (v6) {
      if (v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff) return 'IPv4-mapped IPv6 address is not allowed';
      return new CelIP(v6);
    }
  }
  return `ParseAddr(${JSON.stringify(s)}): unable to parse IP`;
}

export function parseCIDR(s: string): CelCIDR | string {
  const slash = s.lastIndexOf('/');
  if (slash < 0) return `netip.ParsePrefix(${JSON.stringify(s)}): no '/'`;
  const ip = parseIP(s.slice(0, slash));
  if (typeof ip === 'string') return ip;
  const bits = s.slice(slash + 1);
  const max = ip.family === 4 ? 32 : 128;
  if (!/^(0|[1-9]\d*)$/.test(bits) || Number(bits) > max) return `netip.ParsePrefix(${JSON.stringify(s)}): bad bits after slash: ${JSON.stringify(bits)}`;
  return new CelCIDR(ip, Number(bits));
}

function mask(bytes: Uint8Array, prefix: number): Uint8Array {
  const out = new Uint8Array(bytes);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    out[i] &= (0xff << (8 - keep)) & 0xff;
  }
  return out;
}

function formatIP(b: Uint8Array): string {
  if (b.length === 4) return b.join('.');
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((b[i] << 8) | b[i + 1]);
  // RFC 5952: compress the longest run (length ≥ 2) of zero groups, the first one on a tie.
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i >= 2) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLen).join(':')}`;
}

const inPrefix = (ip: CelIP, cidr: string) => (parseCIDR(cidr) as CelCIDR).containsIP(ip);

function isLoopback(ip: CelIP): boolean {
  return ip.family === 4 ? ip.bytes[0] === 127 : inPrefix(ip, '::1/128');
}
function isUnspecified(ip: CelIP): boolean {
  return ip.bytes.every((b) => b === 0);
}
function isMulticast(ip: CelIP): boolean {
  return ip.family === 4 ? (ip.bytes[0] & 0xf0) === 0xe0 : ip.bytes[0] === 0xff;
}
function isLinkLocalUnicast(ip: CelIP): boolean {
  return ip.family === 4 ? inPrefix(ip, '169.254.0.0/16') : inPrefix(ip, 'fe80::/10');
}
function isLinkLocalMulticast(ip: CelIP): boolean {
  return ip.family === 4 ? inPrefix(ip, '224.0.0.0/24') : ip.bytes[0] === 0xff && (ip.bytes[1] & 0x0f) === 0x02;
}
function isGlobalUnicast(ip: CelIP): boolean {
  if (ip.family === 4 && ip.bytes.every((b) => b === 255)) return false;
  return !isUnspecified(ip) && !isLoopback(ip) && !isMulticast(ip) && !isLinkLocalUnicast(ip);
}

class IPNamespace {}

export function registerIP(env: Environment): void {
  const ipOf = (s: string): CelIP => {
    const ip = parseIP(s);
    if (typeof ip === 'string') throw celError(`IP Address ${JSON.stringify(s)} parse error during conversion from string: ${ip}`);
    return ip;
  };
  const cidrOf = (s: string): CelCIDR => {
    const c = parseCIDR(s);
    if (typeof c === 'string') throw celError(`network address parse error during conversion from string: ${c}`);
    return c;
  };
  env.registerType('net.IP', CelIP);
  env.registerType('net.CIDR', CelCIDR);
  env.registerFunction('ip(string): net.IP', ipOf, sync);
  env.registerFunction('isIP(string): bool', (s: string) => typeof parseIP(s) !== 'string', sync);
  env.registerType('IPNamespace', IPNamespace);
  env.registerFunction('IPNamespace.isCanonical(string): bool', (_: unknown, s: string) => ipOf(s).toString() === s, sync);
  env.registerFunction('net.IP.family(): int', (ip: CelIP) => BigInt(ip.family), sync);
  env.registerFunction('net.IP.isUnspecified(): bool', isUnspecified, sync);
  env.registerFunction('net.IP.isLoopback(): bool', isLoopback, sync);
  env.registerFunction('net.IP.isLinkLocalMulticast(): bool', isLinkLocalMulticast, sync);
  env.registerFunction('net.IP.isLinkLocalUnicast(): bool', isLinkLocalUnicast, sync);
  env.registerFunction('net.IP.isGlobalUnicast(): bool', isGlobalUnicast, sync);
  env.registerFunction('string(net.IP): string', (ip: CelIP) => ip.toString(), sync);
  env.registerOperator('net.IP == net.IP', (a: CelIP, b: CelIP) => a.celEquals(b));

  env.registerFunction('cidr(string): net.CIDR', cidrOf, sync);
  env.registerFunction('isCIDR(string): bool', (s: string) => typeof parseCIDR(s) !== 'string', sync);
  env.registerFunction('net.CIDR.containsIP(net.IP): bool', (c: CelCIDR, ip: CelIP) => c.containsIP(ip), sync);
  env.registerFunction('net.CIDR.containsIP(string): bool', (c: CelCIDR, s: string) => c.containsIP(ipOf(s)), sync);
  env.registerFunction('net.CIDR.containsCIDR(net.CIDR): bool', (c: CelCIDR, o: CelCIDR) => c.containsCIDR(o), sync);
  env.registerFunction('net.CIDR.containsCIDR(string): bool', (c: CelCIDR, s: string) => c.containsCIDR(cidrOf(s)), sync);
  env.registerFunction('net.CIDR.ip(): net.IP', (c: CelCIDR) => c.ip, sync);
  env.registerFunction('net.CIDR.masked(): net.CIDR', (c: CelCIDR) => c.masked(), sync);
  env.registerFunction('net.CIDR.prefixLength(): int', (c: CelCIDR) => BigInt(c.prefix), sync);
  env.registerFunction('string(net.CIDR): string', (c: CelCIDR) => c.toString(), sync);
  env.registerOperator('net.CIDR == net.CIDR', (a: CelCIDR, b: CelCIDR) => a.celEquals(b));
}

/** `ip` is both a function and, for ip.isCanonical, a namespace; the namespace is a constant. */
export function ipNamespaceConstant(env: Environment): void {
  env.registerConstant('ip', 'IPNamespace', new IPNamespace());
}
