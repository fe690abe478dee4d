import {
  CircuitBreaker,
  resolveCircuitBreakerOptions,
  type BreakerSnapshot,
  type CircuitBreakerOptions,
} from './circuit-breaker.js';
import { MemoryStore, type StateStore } from './store.js';

/**
 * One circuit breaker per downstream key (a tool, a model), created on first use with shared
 * options and store. Options are checked here, once, so a bad value fails at construction
 * rather than on the first call. Keys are meant to be a small, bounded set (never per request).
 */
export class BreakerSet {
  private readonly options: CircuitBreakerOptions;
  private readonly store: StateStore;
  private readonly breakers = new Map<string, CircuitBreaker>();

  constructor(options: Partial<CircuitBreakerOptions> = {}, store: StateStore = new MemoryStore()) {
    this.options = resolveCircuitBreakerOptions(options);
    this.store = store;
  }

  get(key: string): CircuitBreaker {
    let breaker = this.breakers.get(key);
    if (breaker === undefined) {
      breaker = new CircuitBreaker(key, this.options, this.store);
      this.breakers.set(key, breaker);
    }
    return breaker;
  }

  keys(): string[] {
    return [...this.breakers.keys()];
  }

  snapshot(now: number): BreakerSnapshot[] {
    return Array.from(this.breakers.values(), (b) => b.snapshot(now));
  }
}
