//! The last answers that had an `ETag`, least recently used dropped first: the validator
//! goes back in `If-None-Match`, and a 304 is answered with the copy kept here.

/** One kept answer. */
export interface Cached {
  /** Its `ETag`, sent back in `If-None-Match`. */
  readonly etag: string;
  /** Its body, as the service sent it: parsed afresh for each caller, so that one caller
   * changing a document cannot change another's. */
  readonly body: string;
  /** An `as_of` answer (`Cache-Control: immutable`): never asked for again. */
  readonly immutable: boolean;
}

/** At most `size` answers by request (path and sorted query); `size` 0 keeps none. */
export class Cache {
  private readonly entries = new Map<string, Cached>();

  constructor(readonly size: number) {}

  /** The answer kept for `key`, now the most recently used. */
  get(key: string): Cached | undefined {
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      // A Map iterates in insertion order: inserting again makes it the newest.
      this.entries.delete(key);
      this.entries.set(key, entry);
    }
    return entry;
  }

  /** Keeps `entry` for `key`, dropping the least recently used beyond `size`. */
  put(key: string, entry: Cached): void {
    if (this.size <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.size) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  /** How many answers are kept. */
  get length(): number {
    return this.entries.size;
  }
}
