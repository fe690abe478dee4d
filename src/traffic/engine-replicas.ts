import type { Clock } from '../engine/clock.js';
import type { GuardCore } from '../engine/guard-core.js';
import type { SeededRandom } from '../engine/random.js';
import { MemoryStore, type StateStore } from '../engine/store.js';
import type { TargetOption } from '../engine/target.js';
import type { EngineConfig, EngineState } from './config.js';
import { engineGuard } from './engine-guard.js';

/**
 * Where the engines of a run keep their state when it is not in the process (a fleet's
 * workers share theirs through Redis): a store for guard `guard`'s replica `replica`, or the
 * one its replicas share (`state: shared`). One store per guard, as its limiter's keys are
 * not named after the guard.
 */
export type EngineStores = (guard: string, replica: number | 'shared') => StateStore;

/**
 * The engines of one layer that runs as `count` replicas (processes), and which of them takes
 * the next call.
 *
 * Calls go round-robin over the calls that start at the layer, as a load balancer in front of
 * the replicas would spread them: each replica gets 1/N of the calls (give or take one), so a
 * per-replica limit or budget is exactly N times too generous, with no hashing skew on a short
 * run. It is deterministic because the order calls start in is (the simulator's events are);
 * with one replica it is always replica 0. A call keeps its replica for all its attempts: the
 * retry loop runs in the process that made the call.
 *
 * Replica 0 draws from the layer's own random stream and replica i > 0 from a split of it, so
 * one replica is the engine a layer had before replicas existed, draw for draw. `local` state
 * gives each replica its own store (the guard's default); `shared` gives them one MemoryStore
 * under one guard name, so they read and write the same windows and buckets at once — a
 * shared store with no sync delay — while breaker state stays each replica's, as with
 * `RedisStore`.
 */
export class EngineReplicas {
  readonly guards: readonly GuardCore[];
  readonly state: EngineState;
  private next = 0;

  constructor(
    base: EngineConfig,
    over: Partial<EngineConfig>,
    count: number,
    name: string,
    targets: TargetOption[],
    clock: Clock,
    random: SeededRandom,
    /** Stores from outside the process (a fleet's Redis); without them the state is the process's. */
    stores?: EngineStores,
  ) {
    this.state = over.state ?? base.state ?? 'local';
    const shared = this.state === 'shared' ? (stores?.(name, 'shared') ?? new MemoryStore()) : undefined;
    this.guards = Array.from({ length: count }, (_, i) =>
      engineGuard(
        base,
        over,
        name,
        targets,
        clock,
        i === 0 ? random : random.split(`replica:${i}`),
        shared ?? stores?.(name, i),
      ),
    );
  }

  /** The replica that takes the next call. */
  pick(): GuardCore {
    const g = this.guards;
    if (g.length === 1) return g[0];
    const i = this.next;
    this.next = i + 1 === g.length ? 0 : i + 1;
    return g[i];
  }
}
