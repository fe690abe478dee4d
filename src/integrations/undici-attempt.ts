import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { AttemptResult } from '../engine/classify.js';
import { header } from '../engine/headers.js';
import { answerResult, brokenStreamResult } from './http-answer.js';
import { SseUsage, usageFromBody } from './response-usage.js';

/** What one attempt through the dispatcher came back with. */
export interface UndiciAnswer {
  /** True when the answer was streamed to the caller as it came (no replay, no retry). */
  committed: boolean;
  status: number;
  headers: IncomingHttpHeaders;
  statusMessage: string | undefined;
  chunks: Buffer[];
  trailers: IncomingHttpHeaders;
  result: AttemptResult;
  usage: number | undefined;
}

/** The side that receives a committed (streamed) answer: the guarded request's own handler. */
export interface CommitSink {
  /** Passes the response start on; the live controller takes over the caller's pause and resume. */
  commit(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
    message: string | undefined,
  ): void;
  data(controller: Dispatcher.DispatchController, chunk: Buffer): void;
  end(trailers: IncomingHttpHeaders): void;
  error(err: Error): void;
  /** Whether the caller's own signal ended the request. */
  callerAborted(): boolean;
}

/**
 * The handler of one attempt. A 2xx of a streaming request (or a `text/event-stream` answer)
 * is committed: passed to the caller as it arrives, its usage read from the events on the way.
 * Anything else is buffered whole, so that the guard can classify it and either retry it or
 * have it replayed to the caller.
 */
export class AttemptHandler implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | undefined = undefined;
  private pendingAbort: Error | undefined = undefined;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private message: string | undefined = undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  private sse: SseUsage | undefined = undefined;
  private committed = false;
  private settled = false;

  constructor(
    private readonly sink: CommitSink,
    private readonly streaming: boolean,
    private readonly resolve: (a: UndiciAnswer) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  /** Cuts the attempt short (timeout, deadline, caller abort). */
  abort(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else this.pendingAbort = reason;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort !== undefined) controller.abort(this.pendingAbort);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
    message?: string,
  ): void {
    this.status = status;
    this.headers = headers;
    this.message = message;
    this.chunks = [];
    this.size = 0;
    if (status < 200 || status >= 300) return;
    if (!this.streaming && !(header(headers, 'content-type') ?? '').startsWith('text/event-stream')) return;
    this.committed = true;
    this.sse = new SseUsage();
    this.sink.commit(controller, status, headers, message);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.committed) {
      this.sse!.push(chunk);
      this.sink.data(controller, chunk);
      return;
    }
    this.chunks.push(chunk);
    this.size += chunk.length;
  }

  onResponseEnd(_controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    if (this.settled) return;
    this.settled = true;
    const { status, headers } = this;
    if (this.committed) {
      this.sink.end(trailers);
      this.resolve(this.answer(trailers, { status, headers }, this.sse!.total()));
      return;
    }
    const ok = status >= 200 && status < 300;
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
    this.chunks = [body];
    this.resolve(this.answer(trailers, answerResult(status, headers, body), ok ? usageFromBody(body) : undefined));
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.settled) return;
    this.settled = true;
    if (!this.committed) {
      this.reject(err);
      return;
    }
    this.sink.error(err);
    // The caller has the bytes already: no retry, but the upstream's failure still counts.
    this.resolve(this.answer({}, brokenStreamResult(err, this.sink.callerAborted()), undefined));
  }

  private answer(trailers: IncomingHttpHeaders, result: AttemptResult, usage: number | undefined): UndiciAnswer {
    const { committed, status, headers, message, chunks } = this;
    return { committed, status, headers, statusMessage: message, chunks, trailers, result, usage };
  }
}

/** The controller the caller's handler holds: it aborts, pauses and resumes whatever is current. */
export class OuterController implements Dispatcher.DispatchController {
  aborted = false;
  paused = false;
  reason: Error | null = null;
  rawHeaders: Dispatcher.DispatchController['rawHeaders'] = null;
  rawTrailers: Dispatcher.DispatchController['rawTrailers'] = null;

  constructor(private readonly owner: { onAbort(reason: Error): void; onPause(): void; onResume(): void }) {}

  abort(reason: Error): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.owner.onAbort(reason);
  }

  pause(): void {
    this.paused = true;
    this.owner.onPause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.owner.onResume();
  }
}
