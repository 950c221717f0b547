// The cache of checked, decoded pages, blocks and tables.

/** Least recently used entries, bounded by the bytes they hold. */
export class ByteLru {
  constructor(limit) {
    this.limit = limit;
    this.bytes = 0;
    this.map = new Map();
  }

  get(key) {
    const e = this.map.get(key);
    if (e === undefined) return undefined;
    this.map.delete(key);
    this.map.set(key, e);
    return e.value;
  }

  put(key, value, size) {
    if (size > this.limit) return;
    const old = this.map.get(key);
    if (old !== undefined) {
      this.map.delete(key);
      this.bytes -= old.size;
    }
    this.map.set(key, { value, size });
    this.bytes += size;
    while (this.bytes > this.limit) {
      const [k, e] = this.map.entries().next().value;
      this.map.delete(k);
      this.bytes -= e.size;
    }
  }
}
