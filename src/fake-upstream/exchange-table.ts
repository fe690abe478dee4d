import type { Exchange } from './exchange.js';

/**
 * The chat exchanges in flight, by slot: the slot is the request id the model knows, and slots
 * are reused so the table stays as large as the most requests ever in flight at once.
 */
export class ExchangeTable {
  private readonly exchanges: Array<Exchange | undefined> = [];
  private readonly freeSlots: number[] = [];

  /** The slot the next exchange takes. */
  nextSlot(): number {
    return this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.exchanges.length;
  }

  add(ex: Exchange): void {
    this.exchanges[ex.slot] = ex;
  }

  get(slot: number): Exchange | undefined {
    return this.exchanges[slot];
  }

  remove(ex: Exchange): void {
    this.exchanges[ex.slot] = undefined;
    this.freeSlots.push(ex.slot);
  }

  /** Stops every exchange's timers (the server closes). */
  stopAll(): void {
    for (const ex of this.exchanges) ex?.stop();
  }
}
