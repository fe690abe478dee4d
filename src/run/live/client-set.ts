import { Client, type Dispatcher } from 'undici';

/** A request the set sends: its handler says whether it is still wanted and learns its client. */
export interface SetRequest extends Dispatcher.DispatchHandler {
  /** Given up while it waited for a connection: it is dropped instead of sent. */
  readonly cancelled: boolean;
  /** The connection it went out on, set when it is sent. */
  client: Client | undefined;
}

interface Waiting {
  opts: Dispatcher.DispatchOptions;
  handler: SetRequest;
}

/**
 * Up to `connections` undici `Client`s (one connection each, one request at a time) handed out
 * from a stack of idle ones: what a `Pool` does, without its scans of every client per request
 * (a `Pool` looks for a client that is not busy from the first one on, twice per request; with
 * most of 256 busy that was a tenth of the driver's CPU). A request that finds every connection
 * busy waits here, first come first served, and goes out on the next connection released.
 *
 * Each request sent must be `release`d exactly once, when its handler hears `onComplete` or
 * `onError` (undici calls one of them for every request dispatched, an aborted one too).
 */
export class ClientSet {
  private readonly clients: Client[] = [];
  private readonly idle: Client[] = [];
  private readonly waiting: Array<Waiting | undefined> = [];
  private head = 0;

  constructor(
    private readonly origin: string,
    private readonly connections: number,
    private readonly options: Client.Options,
  ) {}

  /** Sends the request now on an idle connection (opening one if the set has room), or queues it. */
  dispatch(opts: Dispatcher.DispatchOptions, handler: SetRequest): void {
    const client = this.idle.pop() ?? this.grow();
    if (client === undefined) this.waiting.push({ opts, handler });
    else this.send(client, opts, handler);
  }

  /** The request on `client` is over: the next one waiting goes out on it, else it is idle. */
  release(client: Client): void {
    while (this.head < this.waiting.length) {
      const w = this.waiting[this.head];
      this.waiting[this.head++] = undefined;
      if (w !== undefined && !w.handler.cancelled) return this.send(client, w.opts, w.handler);
    }
    this.waiting.length = 0;
    this.head = 0;
    this.idle.push(client);
  }

  /** Requests not yet written: those waiting for a connection, and those a connection has not written yet (it is still connecting). */
  get pending(): number {
    let n = this.waiting.length - this.head;
    for (const c of this.clients) n += c.stats.pending;
    return n;
  }

  /** Closes every connection at once; requests still in flight error. */
  async destroy(): Promise<void> {
    this.waiting.length = 0;
    this.head = 0;
    await Promise.all(this.clients.map((c) => c.destroy()));
  }

  private grow(): Client | undefined {
    if (this.clients.length >= this.connections) return undefined;
    const client = new Client(this.origin, this.options);
    this.clients.push(client);
    return client;
  }

  private send(client: Client, opts: Dispatcher.DispatchOptions, handler: SetRequest): void {
    handler.client = client;
    client.dispatch(opts, handler);
  }
}
