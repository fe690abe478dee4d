import type { Server } from 'node:http';
import type { Socket } from 'node:net';
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
   * Closed connections (the client's end seen) the HTTP server tears down per turn: its end of
   * the connection, the close, the request it aborts. At some 30 µs each, 128 keep a turn near
   * 4 ms; 5,000 clients that leave at once are torn down over some 40 turns.
   * @default 128
   */
  endsPerTurn: 128,
  /**
   * Requests the fake upstream routes per turn (reads the body, answers or submits to the model);
   * the rest of a burst of requests waits for the next turns. At some 30 µs each, 128 keep a
   * turn near 4 ms.
   * @default 128
   */
  requestsPerTurn: 128,
  /**
   * The listen backlog asked for (the kernel caps it at `net.core.somaxconn`). Node's 511 makes
   * a burst past it wait for SYN retransmits — 1 s, then 3 s — before it is even accepted.
   * @default 8192
   */
  backlog: 8192,
};

export interface ConnectionGate {
  /** Connections accepted and not yet handed to the server. */
  readonly waiting: number;
  /** Closed connections whose teardown waits for a later turn. */
  readonly ending: number;
  /** Destroys the connections still waiting (the server is closing: they would keep it open). */
  destroyWaiting(): void;
}

/**
 * Spreads the work of connection bursts over loop turns, both ways:
 *
 * - arrivals: the HTTP server's own `connection` listener (socket setup, parser, and so the
 *   first request) runs for at most `perTurn` connections per turn; the others are paused and
 *   queued, and handed over on the turns after. Handing an accepted socket to an HTTP server by
 *   emitting `connection` is the documented way, so nothing of the server's is bypassed;
 * - closes: the server's `end` listeners (the client closed its side: the server ends its own,
 *   which closes the socket and aborts a request in flight) run for at most `endsPerTurn`
 *   sockets per turn; the others wait a few turns with their end seen and nothing else done.
 *   The server does then exactly what it did, a little later.
 */
export function gateConnections(
  server: Server,
  perTurn = CONNECTION_GATE_DEFAULTS.perTurn,
  endsPerTurn = CONNECTION_GATE_DEFAULTS.endsPerTurn,
): ConnectionGate {
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');

  const ends = new TurnQueue<Ending>(
    endsPerTurn,
    (e) => {
      for (const l of e.listeners) l.call(e.socket);
    },
    (e) => !e.socket.destroyed,
  );
  const admit = (socket: Socket): void => {
    const before = socket.listenerCount('end');
    for (const l of listeners) l.call(server, socket);
    // The server's own `end` listeners (added just now) run through the turn queue instead.
    const added = (socket.listeners('end') as Array<() => void>).slice(before);
    if (added.length === 0) return;
    for (const l of added) socket.off('end', l);
    const ending: Ending = { socket, listeners: added };
    socket.on('end', () => ends.push(ending));
  };
  const arrivals = new TurnQueue<Socket>(
    perTurn,
    (socket, waited) => {
      if (!waited) return admit(socket);
      socket.off('error', ignore);
      admit(socket);
      socket.resume();
    },
    (socket) => !socket.destroyed,
  );

  server.on('connection', (socket: Socket) => {
    if (arrivals.push(socket)) return;
    // It waits for a later turn: paused, and a reset while it waits is nobody's business.
    socket.pause();
    socket.on('error', ignore);
  });

  return {
    get waiting() {
      return arrivals.waiting;
    },
    get ending() {
      return ends.waiting;
    },
    destroyWaiting() {
      arrivals.clear((socket) => socket.destroy());
    },
  };
}

interface Ending {
  socket: Socket;
  listeners: Array<() => void>;
}

function ignore(): void {}
