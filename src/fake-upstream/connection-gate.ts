import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export const CONNECTION_GATE_DEFAULTS = {
  /**
   * Connections handed to the HTTP server per turn of the event loop; the rest of a burst waits
   * for the next turns. At some 0.1 ms of setup and first request each, 64 keep a turn near
   * 6 ms, so paced streams and timers run between the batches of a 5,000-connection burst.
   * @default 64
   */
  perTurn: 64,
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
  /** Destroys the connections still waiting (the server is closing: they would keep it open). */
  destroyWaiting(): void;
}

/**
 * Spreads the work of a connection burst over loop turns: the HTTP server's own `connection`
 * listener (socket setup, parser, and so the first request) runs for at most `perTurn`
 * connections per turn; the others are paused and queued, and handed over on the turns after
 * (`setImmediate`, so due timers run in between). Handing an accepted socket to an HTTP server
 * by emitting `connection` is the documented way, so nothing of the server's is bypassed.
 */
export function gateConnections(server: Server, perTurn = CONNECTION_GATE_DEFAULTS.perTurn): ConnectionGate {
  const listeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const queue: Socket[] = [];
  let head = 0;
  let admitted = 0;
  let scheduled = false;

  const admit = (socket: Socket): void => {
    for (const l of listeners) l.call(server, socket);
  };
  const nextTurn = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(drain);
  };
  const drain = (): void => {
    scheduled = false;
    admitted = 0;
    while (head < queue.length && admitted < perTurn) {
      const socket = queue[head++];
      socket.off('error', ignore);
      if (socket.destroyed) continue;
      admitted++;
      admit(socket);
      socket.resume();
    }
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
    }
    // Either more wait, or this turn's count must start over next turn.
    if (head < queue.length || admitted > 0) nextTurn();
  };

  server.on('connection', (socket: Socket) => {
    if (admitted < perTurn && head === queue.length) {
      admitted++;
      admit(socket);
    } else {
      socket.pause();
      socket.on('error', ignore); // a reset while it waits: the server never saw it, nothing to do
      queue.push(socket);
    }
    nextTurn();
  });

  return {
    get waiting() {
      return queue.length - head;
    },
    destroyWaiting() {
      for (let i = head; i < queue.length; i++) queue[i].destroy();
      queue.length = 0;
      head = 0;
    },
  };
}

function ignore(): void {}
