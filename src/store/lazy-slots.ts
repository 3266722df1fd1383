import type { Slot } from './slot.js';

/** Keys of one checkpoint part, in order, whose slots are made on first use (see LazySlots). */
export interface PendingPart {
  /** The part's in-collection keys, sorted. */
  readonly suffixes: readonly string[];
  /**
   * The buffer the part's objects are ranges of when it is in memory already (none when they are
   * read from a file on first use), and how many bytes they hold.
   */
  readonly buffer: ArrayBufferLike | undefined;
  readonly bytes: number;
  /** The slots of suffixes, in order, made from the part's bytes. */
  slots(): Slot[];
}

/**
 * One collection's slots as a checkpoint loaded them: each part's keys become slots (a slot and an
 * object per key) when one of them is first used, not at startup. Making a million of them was
 * most of a restart from a checkpoint (mostly the garbage collector promoting two million
 * long-lived objects), and a restart only needs the sorted keys to answer /readyz; reads, writes
 * and scans then make the parts they touch, one part (~1 MiB) at a time. A whole-map operation
 * (size, iteration) makes every part first, so this is a Map to every caller.
 *
 * Parts are kept in key order and do not overlap (the checkpoint wrote each collection's keys
 * sorted, and its loader checks that): the part a key would be in is found by binary search.
 */
export class LazySlots extends Map<string, Slot> {
  /** Parts in key order; a part is undefined once made. */
  private readonly parts: (PendingPart | undefined)[] = [];
  /** The first key of each part, made or not: they order the search. */
  private readonly firsts: string[] = [];
  private waiting = 0;

  /** Adds a part whose first key sorts after every key of the parts added before. */
  addPart(part: PendingPart): void {
    if (part.suffixes.length === 0) return;
    this.parts.push(part);
    this.firsts.push(part.suffixes[0]);
    this.waiting++;
  }

  /** How many parts have not been made into slots yet. */
  get unmade(): number {
    return this.waiting;
  }

  /** The slots made so far, making none. */
  made(): IterableIterator<Slot> {
    return super.values();
  }

  /** Adds the bytes of the objects not yet made to used, by buffer (all of them are current), for the parts in memory. */
  countUnmade(used: Map<ArrayBufferLike, number>): void {
    for (const part of this.parts) if (part?.buffer) used.set(part.buffer, (used.get(part.buffer) ?? 0) + part.bytes);
  }

  /** Makes every part's slots now. */
  makeAll(): void {
    for (let i = 0; this.waiting > 0 && i < this.parts.length; i++) this.make(i);
  }

  /**
   * Makes the parts that may hold keys starting with prefix, one at a time, waiting for turn after
   * each: a walk of every key (an unpaged list) would make them all in one synchronous step, reading
   * ~1 MiB of a checkpoint file per part (at 1M objects, seconds in which nothing else is served).
   */
  async makeEach(prefix: string, turn: () => Promise<unknown>): Promise<void> {
    for (let i = 0; this.waiting > 0 && i < this.parts.length; i++) {
      // A part holds keys from its first up to the next part's first: past the prefix, or wholly before it, it has none.
      if (prefix !== '' && this.firsts[i] > prefix && !this.firsts[i].startsWith(prefix)) break;
      if (prefix !== '' && i + 1 < this.firsts.length && this.firsts[i + 1] <= prefix) continue;
      if (!this.parts[i]) continue;
      this.make(i);
      await turn();
    }
  }

  private make(i: number): void {
    const part = this.parts[i];
    if (!part) return;
    this.parts[i] = undefined;
    this.waiting--;
    const slots = part.slots();
    for (let k = 0; k < slots.length; k++) super.set(part.suffixes[k], slots[k]);
  }

  /** Makes the part that would hold key: the last one whose first key is <= key. */
  private makeFor(key: string): void {
    let lo = 0;
    let hi = this.firsts.length - 1;
    let found = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.firsts[mid] <= key) {
        found = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    if (found >= 0) this.make(found);
  }

  override get(key: string): Slot | undefined {
    if (this.waiting > 0) this.makeFor(key);
    return super.get(key);
  }

  override has(key: string): boolean {
    if (this.waiting > 0) this.makeFor(key);
    return super.has(key);
  }

  override set(key: string, slot: Slot): this {
    if (this.waiting > 0) this.makeFor(key);
    return super.set(key, slot);
  }

  override delete(key: string): boolean {
    if (this.waiting > 0) this.makeFor(key);
    return super.delete(key);
  }

  override get size(): number {
    this.makeAll();
    return super.size;
  }

  override entries(): MapIterator<[string, Slot]> {
    this.makeAll();
    return super.entries();
  }

  override keys(): MapIterator<string> {
    this.makeAll();
    return super.keys();
  }

  override values(): MapIterator<Slot> {
    this.makeAll();
    return super.values();
  }

  override [Symbol.iterator](): MapIterator<[string, Slot]> {
    return this.entries();
  }

  override forEach(fn: (slot: Slot, key: string, map: Map<string, Slot>) => void, thisArg?: unknown): void {
    this.makeAll();
    super.forEach(fn, thisArg);
  }
}
