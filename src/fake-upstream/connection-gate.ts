import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../engine/clock.js';
import { preciseClock } from '../platform/system-clock.js';
import { AcceptBursts } from './accept-bursts.js';
import { ReadAhead } from './read-ahead.js';
import { TurnQueue } from './turn-queue.js';

export const CONNECTION_GATE_DEFAULTS = {
  /**
   * Connections handed to the HTTP server per turn of the event loop; the rest of a burst waits
   * for the next turns. At some 0.1 ms of setup and first request each, 64 keep a turn near
   * 6 ms, so paced streams and timers run between the batches of a 5,000-connection burst.
   * @default 64
   */
  perTurn: 64,
  /**
   * Connections handed over whose first request has not come yet, at most; past it a burst
   * waits. A client that connects 5,000 sockets and only then writes its requests would
   * otherwise have them all read in one turn (the HTTP server reads every socket it was handed),
   * whatever the pace of hand-over. A connection stops counting at its first request, when it
   * closes, or `freshMs` after it was handed over (a client that connects ahead and sends later).
   * @default 128
   */
  maxFresh: 128,
  /**
   * Loop turns in a row that each accepted a connection, which make a burst: connections wait
   * in the kernel's listen queue (libuv accepts one per turn). While one lasts nothing is handed
   * to the HTTP server, so each turn accepts the next connection rather than serve 64 requests
   * first; those accepted meanwhile are read ahead, their requests timed from when their bytes
   * came, and handed over at the first turn that accepts nothing. Without the hold, a
   * 5,000-connection burst was accepted over 500–800 ms, and the requests still in the kernel's
   * queue all that time came 10–30 % late against the configured time to first token (no one
   * can count that wait).
   * @default 2
   */
  burstTurns: 2,
  /**
   * A burst holds hand-over at most this long; one that lasts longer (new connections as fast as
   * the server accepts them, on and on: a client without keep-alive) holds nothing more until a
   * turn accepts none, so its requests are served as they come. 0 `burstTurns` holds never.
   * @default 500
   */
  maxHoldMs: 500,
  /**
   * A client on a busy machine may write its request well after its connection was accepted
   * (the kernel completes the handshake, the client's own loop is late to see it): long enough
   * that those count, short enough that connections opened ahead and left idle hold no one up
   * for long.
   * @default 250
   */
  freshMs: 250,
  /**
   * Closed connections (the client's end seen) the HTTP server tears down per turn: its end of
   * the connection, the close, the request it aborts. At some 30 µs each, 128 keep a turn near
   * 4 ms; 5,000 clients that leave at once are torn down over some 40 turns.
   * @default 128
   */
  endsPerTurn: 128,
  /**
   * The listen backlog asked for (the kernel caps it at `net.core.somaxconn`). Node's 511 makes
   * a burst past it wait for SYN retransmits — 1 s, then 3 s — before it is even accepted.
   * @default 8192
   */
  backlog: 8192,
};

/** What a waiting connection may send before it is paused: a request of a few KB, with room to spare. */
const READ_AHEAD_BYTES = 64 * 1024;

export type GateOptions = Partial<
  Pick<typeof CONNECTION_GATE_DEFAULTS, 'perTurn' | 'maxFresh' | 'freshMs' | 'endsPerTurn' | 'burstTurns' | 'maxHoldMs'>
> & {
  /** When a handed-over connection stops being fresh. @default preciseClock */
  clock?: Clock;
};

export interface ConnectionGate {
  /** Connections accepted and not yet handed to the server. */
  readonly waiting: number;
  /** Connections handed over that count as waiting for their first request. */
  readonly fresh: number;
  /** Closed connections whose teardown waits for a later turn. */
  readonly ending: number;
  /** Destroys the connections still waiting (the server is closing: they would keep it open). */
  destroyWaiting(): void;
  /**
   * How long ago `req` arrived, ms, if it is the first request of a connection that waited
   * (its bytes came while the gate held the connection back); 0 otherwise, a request read as
   * it came. The server takes it off the request's time to first token.
   */
  waitedMs(req: IncomingMessage): number;
}

/**
 * Spreads the work of connection bursts over loop turns, both ways:
 *
 * - arrivals: the HTTP server's own `connection` listener (socket setup, parser, and so the
 *   first request) runs for at most `perTurn` connections per turn, not at all while
 *   connections are accepted in a burst (`burstTurns`), and only while fewer than
 *   `maxFresh` handed-over connections wait for their first request; the others are queued,
 *   read ahead (what they send kept, and when it came), and handed over on the turns after,
 *   what they sent given to the server's listeners then. Handing an accepted socket to an HTTP
 *   server by emitting `connection` is the documented way, so nothing of the server's is
 *   bypassed; a first request that came while its connection waited is timed from its arrival
 *   (`waitedMs`);
 * - closes: the server's `end` listeners (the client closed its side: the server ends its own,
 *   which closes the socket and aborts a request in flight) run for at most `endsPerTurn`
 *   sockets per turn, none while connections are accepted in a burst (5,000 clients that
 *   leave and come straight back must not find the listen queue full while the server tears
 *   down the old ones); the others wait a few turns with their end seen and nothing else done.
 *   The server does then exactly what it did, a little later.
 */
export function gateConnections(server: Server, options: GateOptions = {}): ConnectionGate {
  const o = { ...CONNECTION_GATE_DEFAULTS, ...options, clock: options.clock ?? preciseClock };
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');

  // Both queues wait while connections are accepted in a burst: each turn goes to accepting.
  const bursts = new AcceptBursts(o.burstTurns, o.maxHoldMs, o.clock, () => {
    arrivals.kick();
    ends.kick();
  });
  const ends = new TurnQueue<Ending>(
    o.endsPerTurn,
    (e) => {
      for (const l of e.listeners) l.call(e.socket);
    },
    (e) => !e.socket.destroyed,
    () => !bursts.holding(),
  );
  const fresh = new FreshConnections(o.maxFresh, o.freshMs, o.clock, () => arrivals.kick());
  /** Connections waiting, each reading ahead. */
  const reading = new WeakMap<Socket, ReadAhead>();
  /** When the first bytes came, of connections handed over after they did, until their first request; then that request's. */
  const arrivedAt = new WeakMap<Socket, number>();
  const requestArrivedAt = new WeakMap<IncomingMessage, number>();
  /** Hands `socket` to the server; gives the server's `end` listeners (now behind the turn queue), null if none. */
  const admit = (socket: Socket): Ending | null => {
    const before = socket.listenerCount('end');
    for (const l of listeners) l.call(server, socket);
    fresh.add(socket);
    // The server's own `end` listeners (added just now) run through the turn queue instead.
    const added = (socket.listeners('end') as Array<() => void>).slice(before);
    if (added.length === 0) return null;
    for (const l of added) socket.off('end', l);
    const ending: Ending = { socket, listeners: added };
    socket.on('end', () => ends.push(ending));
    return ending;
  };
  const arrivals = new TurnQueue<Socket>(
    o.perTurn,
    (socket, waited) => {
      if (!waited) return void admit(socket);
      socket.off('error', ignore);
      const ahead = reading.get(socket);
      reading.delete(socket);
      ahead?.stop();
      const ending = admit(socket);
      if (ahead !== undefined) {
        if (ahead.firstAt >= 0) arrivedAt.set(socket, ahead.firstAt);
        ahead.replay();
        // The client's end, a turn later, as a read after the bytes would give it: after what the
        // request's parse set going (its body's end, the answer), which an end at once would abort.
        // A socket closed meanwhile has had its teardown (its parser may serve another by then).
        if (ahead.ended && ending !== null)
          setImmediate(() => {
            if (!socket.destroyed) ends.push(ending);
          });
      }
      socket.resume();
    },
    (socket) => !socket.destroyed,
    () => !bursts.holding() && fresh.room(),
  );

  server.on('connection', (socket: Socket) => {
    bursts.accepted();
    if (arrivals.push(socket)) return;
    // It waits for a later turn, reading ahead; a reset while it waits is nobody's business.
    reading.set(socket, new ReadAhead(socket, o.clock, READ_AHEAD_BYTES));
    socket.on('error', ignore);
  });
  server.on('request', (req: IncomingMessage) => {
    fresh.done(req.socket);
    const at = arrivedAt.get(req.socket);
    if (at === undefined) return;
    arrivedAt.delete(req.socket);
    requestArrivedAt.set(req, at);
  });

  return {
    get waiting() {
      return arrivals.waiting;
    },
    get fresh() {
      return fresh.count;
    },
    get ending() {
      return ends.waiting;
    },
    waitedMs(req) {
      const at = requestArrivedAt.get(req);
      return at === undefined ? 0 : Math.max(0, o.clock.now() - at);
    },
    destroyWaiting() {
      arrivals.clear((socket) => socket.destroy());
      fresh.stop();
      bursts.stop();
    },
  };
}

/**
 * The connections handed over that have not sent their first request, oldest first. One
 * stops counting at its first request, when it closes, or `freshMs` after it was handed over;
 * `onRoom` hears when one stops counting (what waits may go on).
 */
class FreshConnections {
  /** Fresh connections and when each was handed over, oldest first (a Map keeps insertion order). */
  private readonly since = new Map<Socket, number>();
  private cancelTimer: (() => void) | null = null;

  constructor(
    private readonly max: number,
    private readonly ms: number,
    private readonly clock: Clock,
    private readonly onRoom: () => void,
  ) {}

  get count(): number {
    this.expire();
    return this.since.size;
  }

  add(socket: Socket): void {
    this.since.set(socket, this.clock.now());
    socket.once('close', () => this.done(socket));
  }

  done(socket: Socket): void {
    if (this.since.delete(socket)) this.onRoom();
  }

  /** Whether one more may be handed over now; if not, a timer wakes `onRoom` when the oldest expires. */
  room(): boolean {
    this.expire();
    if (this.since.size < this.max) return true;
    if (this.cancelTimer === null) {
      const oldest = this.since.values().next().value ?? this.clock.now();
      this.cancelTimer = this.clock.setTimer(Math.max(0, oldest + this.ms - this.clock.now()), () => {
        this.cancelTimer = null;
        this.onRoom();
      });
    }
    return false;
  }

  stop(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
  }

  /** Drops from the front what has been fresh for `ms`. */
  private expire(): void {
    const until = this.clock.now() - this.ms;
    for (const [socket, at] of this.since) {
      if (at > until) break;
      this.since.delete(socket);
    }
  }
}

interface Ending {
  socket: Socket;
  listeners: Array<() => void>;
}

function ignore(): void {}
