/** One priority level: the keys with waiters in turn order, and each key's waiters, oldest first. */
interface Level<T> {
  turns: string[];
  waiting: Map<string, T[]>;
}

/**
 * Waiters in fair order. Priority levels are strict (a higher level is served first, whatever it
 * holds); within a level keys take turns (round-robin: each key's oldest waiter, key after key, so
 * a burst of twenty from one key does not hold back a single request from another); within a key,
 * first come first served. A key new to the level joins at the end of the turns.
 */
export class FairQueue<T> {
  private readonly levels = new Map<number, Level<T>>();
  private readonly places = new Map<T, { priority: number; key: string }>();

  get size(): number {
    return this.places.size;
  }

  has(item: T): boolean {
    return this.places.has(item);
  }

  /** Adds a waiter behind its key's others. */
  push(item: T, key: string, priority: number): void {
    if (this.places.has(item)) return;
    const level = this.level(priority);
    const own = level.waiting.get(key);
    if (own) own.push(item);
    else {
      level.waiting.set(key, [item]);
      level.turns.push(key);
    }
    this.places.set(item, { priority, key });
  }

  /**
   * Puts back a waiter that was taken but could not start: first of its key, and its key's turn
   * first in its level (the turn it was given did not serve it).
   */
  pushFront(item: T, key: string, priority: number): void {
    if (this.places.has(item)) return;
    const level = this.level(priority);
    const own = level.waiting.get(key);
    if (own) {
      own.unshift(item);
      level.turns.splice(level.turns.indexOf(key), 1);
    } else level.waiting.set(key, [item]);
    level.turns.unshift(key);
    this.places.set(item, { priority, key });
  }

  /** The waiter served next, without taking it. */
  peek(): T | undefined {
    const level = this.top();
    if (!level) return undefined;
    return level.waiting.get(level.turns[0]!)![0];
  }

  /** Takes the waiter served next; its key's turn moves to the end of its level. */
  shift(): T | undefined {
    const level = this.top();
    if (!level) return undefined;
    const key = level.turns.shift()!;
    const own = level.waiting.get(key)!;
    const item = own.shift()!;
    if (own.length) level.turns.push(key);
    else level.waiting.delete(key);
    if (!level.turns.length) this.levels.delete(this.places.get(item)!.priority);
    this.places.delete(item);
    return item;
  }

  /** Removes a waiter wherever it is (a client that left, a wait that ran out). */
  remove(item: T): boolean {
    const place = this.places.get(item);
    if (!place) return false;
    this.places.delete(item);
    const level = this.levels.get(place.priority)!;
    const own = level.waiting.get(place.key)!;
    own.splice(own.indexOf(item), 1);
    if (!own.length) {
      level.waiting.delete(place.key);
      level.turns.splice(level.turns.indexOf(place.key), 1);
      if (!level.turns.length) this.levels.delete(place.priority);
    }
    return true;
  }

  /** How many wait at levels above `priority`. */
  sizeAbove(priority: number): number {
    let n = 0;
    for (const [p, level] of this.levels) if (p > priority) for (const own of level.waiting.values()) n += own.length;
    return n;
  }

  /** Every waiter in the order they would be served if nothing changed. */
  *order(): Generator<T> {
    for (const priority of this.priorities()) {
      const level = this.levels.get(priority)!;
      const lists = level.turns.map((k) => level.waiting.get(k)!);
      const longest = Math.max(...lists.map((l) => l.length));
      for (let round = 0; round < longest; round++) for (const l of lists) if (round < l.length) yield l[round]!;
    }
  }

  /** How many waiters would be served before `item` (undefined: not waiting). */
  ahead(item: T): number | undefined {
    if (!this.places.has(item)) return undefined;
    let n = 0;
    for (const w of this.order()) {
      if (w === item) return n;
      n++;
    }
    return undefined;
  }

  private priorities(): number[] {
    return [...this.levels.keys()].sort((a, b) => b - a);
  }

  private top(): Level<T> | undefined {
    const p = this.priorities()[0];
    return p === undefined ? undefined : this.levels.get(p);
  }

  private level(priority: number): Level<T> {
    let level = this.levels.get(priority);
    if (!level) this.levels.set(priority, (level = { turns: [], waiting: new Map() }));
    return level;
  }
}
