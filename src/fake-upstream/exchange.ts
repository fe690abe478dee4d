import type { ServerResponse } from 'node:http';
import { rateLimitHeaders } from '../upstream/provider-shapes.js';
import { Detail, StreamEvent } from '../upstream/response.js';
import type { UpstreamModel } from '../upstream/upstream-model.js';
import type { AnswerInfo, ChatRequest, Dialect } from './dialect.js';
import { fillerText, MAX_FILLER_WORDS } from './filler-text.js';
import {
  deltaTemplate,
  plainAnswerAscii,
  plainCompletionJson,
  plainStreamClose,
  plainStreamOpen,
} from './plain-answer.js';
import { sendJson, sendJsonText } from './send-json.js';
import { streamFaultShapes } from './stream-fault-shapes.js';
import type { UpstreamHost } from './upstream-host.js';

/** A stream's text is split into at most this many content chunks. */
export const STREAM_CHUNKS = 16;
/** Chunks closer together than this are not paced: they go out with the answer. */
const MIN_PACE_MS = 2;
/**
 * A plain stream's chunks are never further apart than this: past STREAM_CHUNKS × this of token
 * time it gets more chunks. A provider sends a token every few tens of ms, so a healthy stream
 * must not read as a stall to a stream guard's idle limit (seconds) just because it is long;
 * a 30 s stream is about 120 writes. (Planned streams — tools, structured output — keep their
 * STREAM_CHUNKS: their events are shared out over that many.)
 */
const MAX_CHUNK_GAP_MS = 250;

export interface ExchangeContext {
  host: UpstreamHost;
  /** ms on the model's timeline. */
  now(): number;
  /** The clock's timer (pacing). */
  setTimer(ms: number, fn: () => void): () => void;
  /** Unix ms of the model's time 0 (Anthropic's reset headers are absolute). */
  epochMs: number;
}

/**
 * One chat request between its submission to the model and the end of its answer. The model
 * decides the outcome and when it arrives (`answer`); this writes it the way the provider
 * would: a JSON body, an SSE stream, a provider-shaped error, a reset socket, or a 200 whose
 * body or stream breaks off.
 *
 * Streams follow the model's stream events: headers and the first chunk at its first token,
 * the other chunks spread over the token time it announces, nothing during a stall (the
 * connection open), the rest at the answer. Stream faults end the stream their way: cleanly
 * without a terminal event (`cut`), with an event that is not JSON, without `[DONE]`, or
 * stopped by the content filter.
 */
export class Exchange {
  /** The model answered (or will never: the client left). */
  answered = false;
  /** Where the request went: after a reset, the model it was submitted to. */
  model: UpstreamModel | null = null;
  readonly arrivedAt: number;
  private words: number;
  private chunks: number;
  private sentChunks = 0;
  private sentWords = 0;
  private opened = false;
  /** The model announced the first token (and so how many tokens the stream carries). */
  private paced = false;
  private cancelTimer: (() => void) | null = null;
  private nextAt = 0;
  private step = 0;
  private end = 0;
  private readonly plain: boolean;
  /** A plain stream's chunk template, made at its first chunk (null: the dialect's chunks carry no single text). */
  private delta: ((text: string) => string) | null | undefined = undefined;

  constructor(
    readonly slot: number,
    readonly res: ServerResponse,
    readonly dialect: Dialect,
    readonly chat: ChatRequest,
    readonly modelIndex: number,
    readonly info: AnswerInfo,
    private readonly ctx: ExchangeContext,
    /** `dialect` is the route's base dialect (a filler answer, no tools or structured output): its JSON body is templated. */
    plain = false,
    /** The filler word the answer starts at: a continuation of a prefill holding that many words. */
    private readonly firstWord = 0,
  ) {
    // Templates write filler from its first word.
    this.plain = plain && firstWord === 0;
    this.arrivedAt = ctx.now();
    this.words = Math.min(chat.maxTokens, MAX_FILLER_WORDS);
    this.chunks = Math.min(STREAM_CHUNKS, this.words);
  }

  /**
   * A `StreamEvent` from the model. The first token: `tokens` will come over `ms` of token
   * time — send the opening and the first chunk now, pace the others. A stall: nothing for
   * `ms` (Infinity: until the client leaves), then the pacing goes on where it stopped.
   */
  streamEvent(event: number, ms: number, tokens: number): void {
    if (this.answered || this.res.destroyed || !this.chat.stream) return;
    const now = this.ctx.now();
    if (event === StreamEvent.FirstToken) {
      this.resize(tokens, ms);
      this.paced = true;
      this.end = now + ms;
      this.nextAt = now;
      // The first chunk now, the last with the answer at `end`: evenly apart in between.
      this.step = ms / Math.max(1, this.chunks - 1);
      return this.tick();
    }
    this.stop();
    if (ms === Infinity) return;
    this.end += ms;
    this.nextAt = Math.max(this.nextAt, now) + ms;
    if (this.sentChunks < this.chunks - 1) this.wait();
  }

  answer(status: number, detail: number, tokens: number, retryAfterMs: number): void {
    this.answered = true;
    this.stop();
    if (this.res.destroyed) return;
    if (status === 0) return resetSocket(this.res);
    const completion = Math.max(0, tokens - this.chat.promptTokens);
    if (status !== 200) return this.fail(status, detail, retryAfterMs);
    if (detail === Detail.MidStream) return this.breakOff(completion);
    if (detail === Detail.Cut) return this.chat.stream ? this.cut(completion) : this.breakOff(completion);
    this.finish(completion, detail);
  }

  /** Stops the pacing timer (the answer came, or the client left). */
  stop(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
  }

  private wait(): void {
    const delay = this.nextAt - this.ctx.now();
    if (delay < 1) return this.tick();
    this.cancelTimer = this.ctx.setTimer(delay, this.tick);
  }

  private readonly tick = (): void => {
    this.cancelTimer = null;
    if (this.answered || this.res.destroyed) return;
    this.write(this.open() + this.chunksUpTo(this.sentChunks + 1));
    this.nextAt += this.step;
    if (this.step >= MIN_PACE_MS && this.nextAt < this.end && this.sentChunks < this.chunks - 1) this.wait();
  };

  /** A complete answer; `detail` a stream fault that shapes its end (filtered, malformed, no `[DONE]`). */
  private finish(completion: number, detail: number): void {
    const words = Math.min(completion, MAX_FILLER_WORDS);
    const faults = streamFaultShapes(this.dialect);
    if (!this.chat.stream) {
      if (detail === Detail.None && this.plain)
        return sendJsonText(
          this.res,
          200,
          plainCompletionJson(this.dialect, this.info, words, completion),
          this.headers(),
          plainAnswerAscii(this.dialect, this.info),
        );
      const text = this.filler(0, words);
      if (detail === Detail.Malformed) return this.sendNotJson(this.dialect.completion(this.info, text, completion));
      const body =
        detail === Detail.ContentFilter && faults !== null
          ? faults.filteredCompletion(this.info, text, completion)
          : this.dialect.completion(this.info, text, completion);
      sendJson(this.res, 200, body, this.headers());
      return;
    }
    // No first token before the end (a filter after 0 tokens): the stream carries what the answer has.
    if (!this.paced) this.resize(completion);
    // What is left goes out in one write with the end: one syscall per stream's end, not three.
    let out = this.open();
    if (detail === Detail.Malformed) {
      out += this.chunksUpTo(this.chunks - 1);
      out += faults?.malformedEvent(this.info) ?? 'data: {"malformed\n\n';
    }
    out += this.chunksUpTo(this.chunks);
    if (detail === Detail.ContentFilter && faults !== null) out += faults.filteredClose(this.info, completion);
    else if (detail === Detail.MissingDone && faults !== null) out += faults.closeWithoutDone(this.info, completion);
    else
      out += this.plain
        ? plainStreamClose(this.dialect, this.info, completion)
        : this.dialect.streamClose(this.info, completion);
    this.res.end(out, this.encoding());
  }

  /** A stream cut: its content so far, then a clean end of the body — no finish, no `[DONE]`, no error. */
  private cut(completion: number): void {
    if (!this.paced) this.resize(completion);
    const out = this.open() + this.chunksUpTo(this.chunks);
    if (out === '') this.res.end();
    else this.res.end(out, this.encoding());
  }

  /** A 200 whose JSON body is not JSON: the answer less its closing brace. */
  private sendNotJson(body: object): void {
    const text = JSON.stringify(body).slice(0, -1);
    this.res.writeHead(200, {
      ...this.headers(),
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    this.res.end(text);
  }

  /** A 200 that breaks after `completion` tokens: part of the body (a `cut` too), or of the stream and an error event. */
  private breakOff(completion: number): void {
    const error = this.dialect.error(200, Detail.MidStream, -1);
    if (!this.chat.stream) {
      const body = JSON.stringify(
        this.dialect.completion(this.info, this.filler(0, Math.min(completion, MAX_FILLER_WORDS)), completion),
      );
      this.res.writeHead(200, {
        ...this.headers(),
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      this.res.write(body.slice(0, body.length >> 1), () => this.res.destroy());
      return;
    }
    let out = this.open();
    const upTo = Math.min(completion, this.words);
    if (upTo > this.sentWords) out += this.dialect.streamDelta(this.info, this.filler(this.sentWords, upTo));
    this.res.write(out + this.dialect.streamError(error), () => this.res.destroy());
  }

  private fail(status: number, detail: number, retryAfterMs: number): void {
    const retry =
      retryAfterMs < 0 && detail === Detail.Fault
        ? this.ctx.host.faultRetryAfter(this.modelIndex, status, this.arrivedAt)
        : retryAfterMs;
    const wire = this.dialect.wireStatus?.(status) ?? status;
    const shape = this.dialect.error(wire, detail, retry);
    const should =
      detail === Detail.Fault ? this.ctx.host.faultShouldRetry(this.modelIndex, status, this.arrivedAt) : undefined;
    if (should !== undefined) shape.headers = { ...shape.headers, 'x-should-retry': String(should) };
    if (this.opened) {
      // Not reached today (a started request always answers 200), kept so a stream never hangs.
      this.res.end(this.dialect.streamError(shape));
      return;
    }
    sendJson(this.res, wire, shape.body, { ...this.headers(), ...shape.headers });
  }

  /** The stream carries `tokens` words over `ms` of token time, in up to STREAM_CHUNKS chunks (more for a long plain one). */
  private resize(tokens: number, ms = 0): void {
    this.words = Math.min(tokens, MAX_FILLER_WORDS);
    const spread = this.plain ? Math.ceil(ms / MAX_CHUNK_GAP_MS) + 1 : 0;
    this.chunks = Math.min(this.words, Math.max(spread, STREAM_CHUNKS));
  }

  /** Sets the stream's headers, once, and gives its opening events to send with what follows ('' after the first time). */
  private open(): string {
    if (this.opened) return '';
    this.opened = true;
    this.res.writeHead(200, {
      ...this.headers(),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
    });
    return this.plain ? plainStreamOpen(this.dialect, this.info) : this.dialect.streamOpen(this.info);
  }

  private write(text: string): void {
    if (text !== '') this.res.write(text, this.encoding());
  }

  /** How the stream's text is written: `latin1` (as it is) when a plain answer is known to be ASCII. */
  private encoding(): 'latin1' | 'utf8' {
    return this.plain && plainAnswerAscii(this.dialect, this.info) ? 'latin1' : 'utf8';
  }

  /** The content chunks up to chunk `upTo` (exclusive), counted as sent. */
  private chunksUpTo(upTo: number): string {
    let out = '';
    if (this.plain && this.delta === undefined) this.delta = deltaTemplate(this.dialect, this.info);
    const delta = this.delta ?? null;
    for (; this.sentChunks < upTo; this.sentChunks++) {
      const to = Math.floor(((this.sentChunks + 1) * this.words) / this.chunks);
      const text = this.filler(this.sentWords, to);
      out += delta !== null ? delta(text) : this.dialect.streamDelta(this.info, text);
      this.sentWords = to;
    }
    return out;
  }

  /** Words `from` to `to` of the answer: of the filler text, from the answer's first word on. */
  private filler(from: number, to: number): string {
    return fillerText(this.firstWord + from, this.firstWord + to);
  }

  /** Request id and the model's rate-limit headers in this provider's family. */
  private headers(): Record<string, string> {
    const h: Record<string, string> = { [this.dialect.requestIdHeader]: `req_${this.info.id}` };
    const q = this.ctx.host.quotas(this.modelIndex);
    if (q.requests === undefined && q.tokens === undefined) return h;
    const all = rateLimitHeaders({ ...q, now: this.ctx.now(), epochMs: this.ctx.epochMs });
    for (const k in all) if (k.startsWith(this.dialect.rateLimitPrefix)) h[k] = all[k];
    return h;
  }
}

/** Status 0: the connection is reset (TCP RST where the platform allows it), no HTTP answer. */
export function resetSocket(res: ServerResponse): void {
  const socket = res.socket;
  if (socket === null) return void res.destroy();
  if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
  else socket.destroy();
}
