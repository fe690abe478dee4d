import { StreamError } from '../engine/errors.js';
import type { StreamGate } from './stream-gate.js';

/** What the stream reader tells the attempt's waits (`AttemptTimers`): the guard was told what came, and when a read is pending. */
export interface StreamTimes {
  sync(): void;
  waiting(pending: boolean): void;
}

type ReadResult = { done: true; value?: Uint8Array } | { done: false; value: Uint8Array };

/** What a transport may add to a guarded stream: a look at what the caller gets, and continuation after a break. */
export interface StreamHooks {
  /** The events the caller is handed, in order; returns what it gets instead (a continuation's splice). */
  deliver?(parts: Uint8Array[]): Uint8Array[];
  /**
   * The committed stream broke (`error`): a promise of the stream that continues it (undefined
   * when none came: the caller then gets the break's in-band error), or undefined when it is
   * not continued at all.
   */
  resume?(error: unknown): Promise<ReadableStream<Uint8Array> | undefined> | undefined;
}

/** How a guarded stream ended. */
export type StreamEnd =
  /** Its terminal signal (or a finish and a clean close) came: a success. */
  | { how: 'complete' }
  /** It failed before the caller got a byte: retry or fall back. `held` is what the caller would get. */
  | { how: 'failed'; error: unknown; upstream: Record<string, unknown> | undefined }
  /** It broke after commit: the caller's stream ended with an in-band error event. */
  | { how: 'broken'; error: unknown; upstream: Record<string, unknown> | undefined }
  /** The caller cancelled it. */
  | { how: 'cancelled' }
  /** It broke after commit and its rest is being asked for (`stream.resume`): the caller's stream stays open. */
  | { how: 'resumed'; error: unknown }
  /** A refusal came whole before commit: held (`gate.heldBytes()`), the attempt's answer for the guard to judge. */
  | { how: 'refused' };

/**
 * Drives one streamed answer read through a `ReadableStream` reader (the fetch side) with the
 * stream guard: reads ahead until the gate commits (or the stream ends or fails), then hands
 * the caller a stream that reads on as the caller pulls. It tells the attempt's waits what
 * came and when a read is pending (the idle gap counts only then, so a slow reader is never
 * taken for a stalled upstream); a limit that runs out comes back as `stall` or `finishQuiet`.
 */
export class GuardedStream {
  /** Set by a timer (first token, idle) before it cancels the read: the reason the stream failed. */
  private stalled: StreamError | undefined = undefined;
  private ended = false;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly gate: StreamGate,
    private readonly times: StreamTimes,
    /** Whether the caller's own signal has aborted (then a read error is a cancel). */
    private readonly callerAborted: () => boolean,
    /** The reason the attempt's signal aborted (deadline), if it did. */
    private readonly attemptAborted: () => unknown,
    private readonly hooks: StreamHooks = {},
  ) {}

  /** After a resumption: the stream that continues this one, read into the caller's. */
  private piped: ReadableStreamDefaultReader<Uint8Array> | undefined = undefined;
  private cancelled = false;

  /** Quiet after the answer's finish: the end marker is missing, the answer is whole; close it now. */
  finishQuiet(): void {
    if (!this.ended) this.reader.cancel().catch(() => {});
  }

  /** The first-token or idle limit ran out: the pending read ends as a stall. */
  stall(error: StreamError): void {
    if (this.ended || this.stalled) return;
    this.stalled = error;
    this.reader.cancel(error).catch(() => {});
  }

  /**
   * Reads until the gate commits or the stream ends. Resolves with the bytes the caller gets
   * first and whether that is all of it, or with how the stream failed.
   */
  async untilCommit(): Promise<{ first: Uint8Array[]; complete: boolean } | StreamEnd> {
    for (;;) {
      const r = await this.next();
      if ('how' in r) return this.fail(r);
      if (r.done) {
        const { complete, out } = this.gate.close();
        if (complete && !this.gate.committed) return this.fail({ how: 'refused' });
        if (complete) return { first: this.delivered(out), complete: true };
        return this.fail({ how: 'failed', error: this.cutError(), upstream: undefined });
      }
      const out = this.push(r.value);
      if (this.gate.status === 'error')
        return this.fail({ how: 'failed', error: upstreamError(), upstream: this.gate.upstreamError });
      if (this.gate.status === 'done' && !this.gate.committed) return this.fail({ how: 'refused' });
      if (this.gate.committed) {
        const complete = this.gate.status === 'done';
        if (complete) this.release();
        return { first: this.delivered(out), complete };
      }
    }
  }

  /** The caller's stream: `first`, then the rest as the caller pulls. `onEnd` is told once how it ended. */
  body(first: Uint8Array[], complete: boolean, onEnd: (end: StreamEnd) => void): ReadableStream<Uint8Array> {
    const finish = (end: StreamEnd): void => {
      if (this.ended) return;
      this.ended = true;
      onEnd(end);
    };
    if (complete) finish({ how: 'complete' });
    return new ReadableStream<Uint8Array>({
      start: (c) => {
        for (const part of first) c.enqueue(part);
        if (complete) c.close();
      },
      pull: async (c) => {
        if (this.piped !== undefined) return this.pipe(c);
        for (;;) {
          const r = await this.next();
          if ('how' in r) {
            if (r.how === 'cancelled') {
              c.error(r.error);
              return finish({ how: 'cancelled' });
            }
            return this.breakOff(c, r.error, finish);
          }
          if (r.done) {
            const { complete: ok, out } = this.gate.close();
            if (!ok) return this.breakOff(c, this.cutError(), finish);
            for (const part of this.delivered(out)) c.enqueue(part);
            c.close();
            return finish({ how: 'complete' });
          }
          const out = this.delivered(this.push(r.value));
          for (const part of out) c.enqueue(part);
          const status = this.gate.status;
          // 'over': a limit ran out; the next read says so.
          if (status === 'done' || status === 'error') {
            this.release();
            c.close();
            if (status === 'done') return finish({ how: 'complete' });
            // The provider's own error event went to the caller as it came.
            return finish({ how: 'broken', error: upstreamError(), upstream: this.gate.upstreamError });
          }
          if (out.length > 0) return;
        }
      },
      cancel: (reason) => {
        this.cancelled = true;
        finish({ how: 'cancelled' });
        this.piped?.cancel(reason).catch(() => {});
        return this.reader.cancel(reason);
      },
    });
  }

  /** One read from the upstream, its wait counted; a failure comes back as a `StreamEnd`. */
  private async next(): Promise<ReadResult | (StreamEnd & { error?: unknown })> {
    if (this.stalled) return { how: 'failed', error: this.stalled, upstream: undefined };
    this.times.waiting(true);
    try {
      const r = await this.reader.read();
      if (this.stalled) return { how: 'failed', error: this.stalled, upstream: undefined };
      return r;
    } catch (error) {
      if (this.stalled) return { how: 'failed', error: this.stalled, upstream: undefined };
      if (this.callerAborted()) return { how: 'cancelled', error };
      const error2 = this.attemptAborted() ?? new StreamError('stream_cut', 'stream broke', { cause: error });
      return { how: 'failed', error: error2, upstream: undefined };
    } finally {
      this.times.waiting(false);
    }
  }

  private push(chunk: Uint8Array): Uint8Array[] {
    const out = this.gate.push(chunk);
    this.times.sync();
    return out;
  }

  private cutError(): StreamError {
    return new StreamError('stream_cut', 'stream closed before its terminal signal');
  }

  /** What the caller gets of `parts` (the `deliver` hook's say). */
  private delivered(parts: Uint8Array[]): Uint8Array[] {
    return this.hooks.deliver === undefined ? parts : this.hooks.deliver(parts);
  }

  /** One read of the continuation into the caller's stream. */
  private async pipe(c: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    try {
      const r = await this.piped!.read();
      if (r.done) c.close();
      else c.enqueue(r.value);
    } catch (err) {
      c.error(err);
    }
  }

  /**
   * After commit: the caller's stream ends with an in-band error event in the provider's shape —
   * unless the `resume` hook continues it: then the attempt ends (`resumed`) and the stream that
   * continues it is read on into the caller's, or, should none come, the break's error ends it.
   */
  private async breakOff(
    c: ReadableStreamDefaultController<Uint8Array>,
    error: unknown,
    finish: (end: StreamEnd) => void,
  ): Promise<void> {
    this.release();
    const next = this.hooks.resume?.(error);
    if (next !== undefined) {
      finish({ how: 'resumed', error });
      const body = await next;
      if (body !== undefined && this.cancelled) body.cancel().catch(() => {});
      else if (body !== undefined) {
        this.piped = body.getReader();
        return this.pipe(c);
      }
      if (this.cancelled) return;
    }
    const code = faultCode(error);
    const message = error instanceof Error ? error.message : String(error);
    c.enqueue(this.gate.errorEvent(code, `stormlab: ${message}`));
    c.close();
    finish({ how: 'broken', error, upstream: undefined });
  }

  private fail(end: StreamEnd): StreamEnd {
    this.release();
    this.ended = true;
    return end;
  }

  /** Lets go of the upstream (after its end marker, a failure, or a break). */
  private release(): void {
    this.reader.cancel().catch(() => {});
  }
}

/** The attempt's error for a provider error event: classified from the event's body by the caller. */
function upstreamError(): Error {
  return new Error('the provider sent an error event');
}

/** The `code` of the in-band error event for why a stream failed. */
export function faultCode(err: unknown): string {
  return err instanceof StreamError ? err.kind : 'timeout';
}
