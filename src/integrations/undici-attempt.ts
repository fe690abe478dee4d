import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import type { AttemptResult } from '../engine/classify.js';
import { header } from '../engine/headers.js';
import type { Clock } from '../engine/clock.js';
import { StreamError } from '../engine/errors.js';
import { StreamDecision, StreamGuard } from '../engine/stream-guard.js';
import type { StreamWaits } from '../engine/stream-watch.js';
import type { ResolvedStreamOptions } from './engine-http-options.js';
import { answerResult, brokenStreamResult } from './http-answer.js';
import { SseUsage, usageFromBody } from './response-usage.js';
import type { StreamProvider } from './stream-event.js';
import { StreamGate } from './stream-gate.js';
import { WatchTimer } from './watch-timer.js';

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

/** How one attempt's stream is guarded (undefined: streams pass through at their headers). */
export interface AttemptStreamGuard {
  options: ResolvedStreamOptions;
  provider: StreamProvider;
  /** Called once per malformed event skipped. */
  malformed: () => void;
}

/** What every attempt needs besides its sink: timers, the stream guard, the headers it adds. */
export interface AttemptSetup {
  clock: Clock;
  /** The attempt's waits: the header wait, and a guarded stream's first-token and idle limits (`attemptWaits`). */
  waits: StreamWaits;
  stream: AttemptStreamGuard | undefined;
  /** Headers added to the answer the caller gets (`x-stormlab-target`). */
  extraHeaders: Record<string, string>;
}

/**
 * The handler of one attempt. Anything but a 2xx stream is buffered whole, so that the guard
 * can classify it and either retry it or have it replayed to the caller. A 2xx stream of a
 * streaming request (or a `text/event-stream` answer) goes through the stream guard: held
 * until its first content token (or whole, `commit: 'complete'`), then passed to the caller as
 * it arrives; a cut or stall before that fails the attempt (retried or failed over), one after
 * it ends the caller's stream with an in-band error event. Without the stream guard a stream
 * is committed at its headers.
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
  private gate: StreamGate | undefined = undefined;
  private committed = false;
  private settled = false;
  /** Why one of our timers cut the attempt. */
  private ours: Error | undefined = undefined;
  /** The attempt's state machine (header wait, first token, idle gap, commit) and its one timer. */
  private streamGuard: StreamGuard | undefined = undefined;
  private timer: WatchTimer | undefined = undefined;

  constructor(
    private readonly sink: CommitSink,
    private readonly streaming: boolean,
    private readonly setup: AttemptSetup,
    private readonly resolve: (a: UndiciAnswer) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  /** Cuts the attempt short (timeout, deadline, caller abort). */
  abort(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else this.pendingAbort = reason;
  }

  /** The caller paused or resumed a committed stream: a paused reader is not a stalled upstream. */
  setPaused(paused: boolean): void {
    this.timer?.waiting(!paused);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.pendingAbort !== undefined) return controller.abort(this.pendingAbort);
    const { clock, waits, stream } = this.setup;
    this.streamGuard = new StreamGuard({ waits, commit: stream?.options.commit ?? 'first-token' }, clock.now());
    this.timer = new WatchTimer(clock, this.streamGuard, (decision) => {
      if (this.settled) return;
      // Quiet after a finish: the end marker is missing, the answer is whole.
      if (decision === StreamDecision.Complete) return this.onResponseEnd(this.controller!, {});
      this.cut(this.streamGuard!.error!);
    });
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    status: number,
    headers: IncomingHttpHeaders,
    message?: string,
  ): void {
    this.timer?.headers();
    this.status = status;
    this.headers = headers;
    this.message = message;
    this.chunks = [];
    this.size = 0;
    if (status < 200 || status >= 300) return this.stopTimers();
    if (!this.streaming && !(header(headers, 'content-type') ?? '').startsWith('text/event-stream'))
      return this.stopTimers();
    this.sse = new SseUsage();
    const sg = this.setup.stream;
    if (sg === undefined) {
      this.stopTimers();
      this.committed = true;
      this.sink.commit(controller, status, this.answerHeaders(false), message);
      return;
    }
    const clock = this.setup.clock;
    this.gate = new StreamGate(this.streamGuard!, sg.provider, this.sse, () => clock.now());
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    const gate = this.gate;
    if (gate === undefined) {
      if (this.committed) {
        this.sse!.push(chunk);
        this.sink.data(controller, chunk);
        return;
      }
      this.chunks.push(chunk);
      this.size += chunk.length;
      return;
    }
    const out = gate.push(chunk);
    this.timer?.sync();
    this.countMalformed();
    if (gate.status === 'error' && !gate.committed) return this.failBeforeCommit(undefined);
    if (gate.status === 'done' && !gate.committed) return this.refusedBeforeCommit();
    if (gate.committed && !this.committed) {
      this.committed = true;
      this.sink.commit(controller, this.status, this.answerHeaders(true), this.message);
    }
    for (const part of out) this.sink.data(controller, part as Buffer);
    if (gate.status === 'done') return this.finish(controller, true);
    if (gate.status === 'error') return this.finish(controller, false);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    if (this.settled) return;
    const gate = this.gate;
    if (gate !== undefined) {
      const { complete, out } = gate.close();
      if (!complete) return this.breakOrFail(new StreamError('stream_cut', 'stream closed before its terminal signal'));
      if (!gate.committed) return this.refusedBeforeCommit();
      if (!this.committed) {
        this.committed = true;
        this.sink.commit(controller, this.status, this.answerHeaders(true), this.message);
      }
      for (const part of out) this.sink.data(controller, part as Buffer);
      return this.finish(controller, true, trailers);
    }
    this.settled = true;
    this.stopTimers();
    const { status, headers } = this;
    if (this.committed) {
      this.sink.end(trailers);
      this.resolve(this.answer(trailers, { status, headers }, this.sse!.total()));
      return;
    }
    const ok = status >= 200 && status < 300;
    const body = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size);
    this.chunks = [body];
    const result = answerResult(status, headers, body);
    this.headers = this.answerHeaders(false, !ok);
    this.resolve(this.answer(trailers, result, ok ? usageFromBody(body) : undefined));
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.settled) return;
    const error = this.ours ?? err;
    if (this.gate !== undefined && !this.sink.callerAborted())
      return this.breakOrFail(
        error instanceof StreamError ? error : new StreamError('stream_cut', 'stream broke', { cause: err }),
      );
    this.settled = true;
    this.stopTimers();
    if (!this.committed) {
      this.reject(error);
      return;
    }
    this.sink.error(err);
    // The caller has the bytes already: no retry, but the upstream's failure still counts.
    this.resolve(this.answer({}, brokenStreamResult(err, this.sink.callerAborted()), undefined));
  }

  // ---- the stream guard's ends ------------------------------------------------------------------

  /** A cut or stall: before commit the attempt fails (retry, fallback); after it, the caller gets an error event. */
  private breakOrFail(error: StreamError): void {
    if (!this.committed) return this.failBeforeCommit(error);
    this.settled = true;
    this.stopTimers();
    this.sink.data(this.controller!, this.gate!.errorEvent(error.kind, `stormlab: ${error.message}`));
    this.sink.end({});
    this.release();
    this.resolve(this.answer({}, brokenStreamResult(error, false), undefined));
  }

  /**
   * Before commit: the attempt's answer is what the caller would get should the guard give up
   * (what was held, then an error event: never a clean end); its result is the failure.
   */
  private failBeforeCommit(error: StreamError | undefined): void {
    this.settled = true;
    this.stopTimers();
    const gate = this.gate!;
    const upstream = gate.upstreamError;
    const held = gate.heldBytes().map((b) => b as Buffer);
    if (error !== undefined) held.push(gate.errorEvent(error.kind, `stormlab: ${error.message}`));
    this.chunks = held;
    const result: AttemptResult =
      upstream !== undefined ? answerResult(500, this.headers, JSON.stringify(upstream)) : { error, cancelled: false };
    this.headers = this.answerHeaders(true, true);
    this.release();
    this.resolve(this.answer({}, result, undefined));
  }

  /**
   * The model refused before commit (a whole stream ending `content_filter` / `refusal`): the
   * held stream is the attempt's answer, classified `content_filter`, for the guard to return
   * to the caller as it is or fail over (`onContentFilter`), as a refusing JSON answer is.
   */
  private refusedBeforeCommit(): void {
    this.settled = true;
    this.stopTimers();
    const gate = this.gate!;
    this.chunks = gate.heldBytes().map((b) => b as Buffer);
    const result: AttemptResult = { status: this.status, headers: this.headers, body: gate.refusal };
    this.headers = this.answerHeaders(true, true);
    this.release();
    this.resolve(this.answer({}, result, this.sse!.total()));
  }

  /** The stream is over (its end marker, or the provider's error event after commit). */
  private finish(
    controller: Dispatcher.DispatchController,
    complete: boolean,
    trailers: IncomingHttpHeaders = {},
  ): void {
    this.settled = true;
    this.stopTimers();
    this.sink.end(trailers);
    const refusal = this.gate!.refusal;
    const result: AttemptResult = complete
      ? { status: this.status, headers: this.headers, ...(refusal === undefined ? {} : { body: refusal }) }
      : answerResult(500, NO_RETRY, JSON.stringify(this.gate!.upstreamError));
    this.resolve(this.answer(trailers, result, complete ? this.sse!.total() : undefined));
    // An end marker with the connection still open: let go of it rather than wait.
    if (controller.aborted !== true) queueMicrotask(() => this.release());
  }

  private release(): void {
    const c = this.controller;
    if (c !== undefined && !c.aborted) c.abort(new Error('stormlab: stream over'));
  }

  private countMalformed(): void {
    const gate = this.gate!;
    for (let i = 0; i < gate.malformed; i++) this.setup.stream!.malformed();
    gate.malformed = 0;
  }

  private cut(e: Error): void {
    if (this.settled || this.ours !== undefined) return;
    this.ours = e;
    this.abort(e);
  }

  private stopTimers(): void {
    this.timer?.stop();
  }

  /** The answer's headers for the caller: who answered; no retry for a final error; no length for a filtered stream. */
  private answerHeaders(filtered: boolean, final = false): IncomingHttpHeaders {
    const h: IncomingHttpHeaders = { ...this.headers, ...this.setup.extraHeaders };
    if (filtered) delete h['content-length'];
    if (final) h['x-should-retry'] = 'false';
    return h;
  }

  private answer(trailers: IncomingHttpHeaders, result: AttemptResult, usage: number | undefined): UndiciAnswer {
    const { committed, status, headers, message, chunks } = this;
    return { committed, status, headers, statusMessage: message, chunks, trailers, result, usage };
  }
}

const NO_RETRY: Record<string, string> = { 'x-should-retry': 'false' };

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
