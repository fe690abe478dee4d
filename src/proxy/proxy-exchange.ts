import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Dispatcher } from 'undici';
import type { Clock } from '../engine/clock.js';
import type { Dialect } from '../fake-upstream/dialect.js';
import type { RequestLog } from '../fake-upstream/request-log.js';
import { SseUsage, usageFromBody } from '../integrations/response-usage.js';
import { type SseEvent, SseSplitter, sseFields } from '../integrations/sse-splitter.js';
import { EventFlag, readStreamEvent } from '../integrations/stream-event.js';
import { FaultCode } from '../upstream/fault-timeline.js';
import { Detail } from '../upstream/response.js';
import { endToEnd } from './hop-headers.js';
import type { ProxyModel } from './proxy-models.js';

/** What one forwarded model request does to its answer: the fault decided at arrival and the latency phases in force. */
export interface AnswerPlan {
  /** A `FaultCode` that shapes the answer (0: none). */
  fault: number;
  /** Content events before the fault: `stall`, `cut`, `midstream`. */
  afterTokens: number;
  /** `stall`: how long (Infinity: forever); `slow-first-token`: its first token's earliest time since arrival. */
  ms: number;
  /** `slow-first-token`: time added to its first token. */
  addMs: number;
  /** `latency`: factor on the upstream's time to its answer's headers, and time added before them. */
  factor: number;
  latencyAddMs: number;
}

/** What the exchange needs from its proxy. */
export interface ExchangeContext {
  clock: Clock;
  log: RequestLog;
  /** The upstream failed (no answer, or a body that broke); counted, and heard by the observer. */
  upstreamError(err: unknown): void;
  /** An answer a fault or a TPM limit had to read came in an encoding the proxy cannot decode: relayed unshaped, counted. */
  unshaped(): void;
}

/** Asks for an uncompressed answer: a shaped stream or a body whose usage is read must be readable. */
const DROP_ENCODING: ReadonlySet<string> = new Set(['host', 'content-length', 'accept-encoding']);
const DROP_HOST: ReadonlySet<string> = new Set(['host', 'content-length']);
const DROP_LENGTH: ReadonlySet<string> = new Set(['content-length']);
/** An answer the proxy decoded: sent on without its encoding (and its length, which was the encoded one's). */
const DROP_CODING: ReadonlySet<string> = new Set(['content-length', 'content-encoding']);
const SSE = 'text/event-stream';

/**
 * One model request through the proxy: sent to the upstream as it came (less hop-by-hop
 * headers), answered as the upstream answers — status, headers, body, each SSE event as it
 * arrives — except where the plan shapes it: the headers held back (`latency`,
 * `slow-first-token` unstreamed), an event stream read event by event (by structure: the
 * `SseSplitter` and `readStreamEvent`; a stream no fault shapes is relayed chunk by chunk, only
 * its usage read, by `SseUsage`) and held (`slow-first-token`, `stall`), cut (`cut`),
 * broken with the provider's error event (`midstream`), given a malformed event, or left
 * without its terminal event (`missing-done`). Usage is read from the answer (the JSON body, or
 * the stream's usage events) for the model's token counts and its TPM quota.
 */
export class ProxyExchange {
  private body: (Dispatcher.ResponseData['body'] & { pause(): void; resume(): void }) | undefined;
  private readonly abort = new AbortController();
  private splitter: SseSplitter | undefined;
  private usage: SseUsage | undefined;
  private collected: Buffer[] | undefined;
  private contentSeen = 0;
  /** Events held back (a stall, a slow first token) until `release`. */
  private held: Buffer[] | undefined;
  private holding = false;
  private ended = false;
  private detail: number = Detail.None;
  private readonly sentAt: number;
  private cancelTimer: (() => void) | null = null;

  constructor(
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly dialect: Dialect,
    private readonly model: ProxyModel,
    private readonly plan: AnswerPlan,
    private readonly ctx: ExchangeContext,
    private readonly arrivedAt: number,
    /** Tokens reserved in the model's TPM quota at arrival, set right from the answer's usage. */
    private readonly reserved: number,
  ) {
    this.sentAt = ctx.clock.now();
    res.on('close', this.onClose);
  }

  /** Sends the request to `upstream` (`path` with its query); the answer is relayed as it comes. */
  send(upstream: Dispatcher, path: string, body: Buffer, host: string): void {
    const identity = this.plan.fault !== 0 || this.model.tpm !== null;
    const headers = endToEnd(this.req.rawHeaders, identity ? DROP_ENCODING : DROP_HOST);
    headers.push('host', host);
    if (identity) headers.push('accept-encoding', 'identity');
    this.model.busy++;
    this.model.attempts++;
    upstream
      .request({
        method: (this.req.method ?? 'POST') as Dispatcher.HttpMethod,
        path,
        headers,
        body: body.length === 0 && (this.req.method === 'GET' || this.req.method === 'HEAD') ? null : body,
        signal: this.abort.signal,
        responseHeaders: 'raw',
        highWaterMark: 1 << 18,
      })
      .then(
        (r) => this.answer(r),
        (err: unknown) => this.failed(err),
      );
  }

  private answer(r: Dispatcher.ResponseData): void {
    const source = r.body as NonNullable<ProxyExchange['body']>;
    if (this.res.destroyed) return void source.destroy();
    const raw = r.headers as unknown as string[];
    const type = headerOf(raw, 'content-type') ?? '';
    const p = this.plan;
    // An answer compressed though identity was asked for, which a fault or a TPM limit must read: decoded, sent on decoded.
    const encoding = (headerOf(raw, 'content-encoding') ?? 'identity').trim().toLowerCase();
    const reads = p.fault !== 0 || this.model.tpm !== null;
    const decoder = encoding !== 'identity' && reads ? decoderFor(encoding) : undefined;
    const encoded = encoding !== 'identity' && decoder === undefined;
    if (encoded && reads) {
      // Not readable: relayed as it came, the fault not applied to its body (a delay still is), and counted.
      this.ctx.unshaped();
      p.fault = 0;
    }
    const body = decoder === undefined ? source : (source.pipe(decoder) as unknown as typeof source);
    if (decoder !== undefined) source.on('error', (err: unknown) => this.broken(err));
    this.body = body;
    const sse = type.startsWith(SSE) && !encoded;
    const json = type.includes('json') && !encoded;
    const reshaped = sse ? p.fault !== 0 : p.fault === FaultCode.Malformed && r.statusCode === 200;
    const headers = endToEnd(raw, decoder !== undefined ? DROP_CODING : reshaped ? DROP_LENGTH : undefined);
    if (sse) {
      // Read event by event only when the plan shapes the stream; else relayed as it comes, its usage tapped.
      if (p.fault !== 0) this.splitter = new SseSplitter();
      this.usage = new SseUsage();
    } else if (json) this.collected = [];
    body.on('error', (err: unknown) => this.broken(err));
    body.on('end', () => this.end());
    // The headers' own delay: a latency phase, or an unstreamed answer's slow first token / stall.
    const tookMs = this.ctx.clock.now() - this.sentAt;
    let delay = p.latencyAddMs + Math.max(0, p.factor - 1) * tookMs;
    if (!sse && r.statusCode === 200) delay += this.unstreamedDelay();
    if (delay === Infinity) {
      if (p.fault === FaultCode.Stall) this.mark(Detail.Stalled);
      body.pause();
      return;
    }
    const start = (): void => {
      this.cancelTimer = null;
      if (this.res.destroyed) return;
      this.res.writeHead(r.statusCode, headers);
      if (
        !sse &&
        r.statusCode === 200 &&
        (p.fault === FaultCode.Cut || p.fault === FaultCode.Midstream || p.fault === FaultCode.Malformed)
      ) {
        // Shaped as a whole: read it all first.
        this.collected = [];
        this.mark(
          p.fault === FaultCode.Cut
            ? Detail.Cut
            : p.fault === FaultCode.Midstream
              ? Detail.MidStream
              : Detail.Malformed,
        );
      }
      body.on('data', (chunk: Buffer) => this.chunk(chunk));
    };
    if (delay >= 1) this.cancelTimer = this.ctx.clock.setTimer(delay, start);
    else start();
  }

  /** What the fault did to this answer (a `Detail`), for the request log (before the response closes) and the model's counters. */
  private mark(detail: number): void {
    this.detail = detail;
    this.ctx.log.outcome(this.res, detail);
  }

  /** An unstreamed answer's fault that delays it as a whole: a slow first token, a stall. */
  private unstreamedDelay(): number {
    const p = this.plan;
    if (p.fault === FaultCode.SlowFirstToken) {
      this.mark(Detail.SlowFirstToken);
      return Math.max(0, this.arrivedAt + p.ms - this.ctx.clock.now()) + p.addMs;
    }
    if (p.fault === FaultCode.Stall) {
      this.mark(Detail.Stalled);
      return p.ms;
    }
    return 0;
  }

  private chunk(chunk: Buffer): void {
    if (this.ended) return;
    if (this.splitter !== undefined) return this.sseChunk(chunk);
    this.usage?.push(chunk);
    if (this.collected !== undefined) this.collected.push(chunk);
    if (this.detail === Detail.Cut || this.detail === Detail.MidStream || this.detail === Detail.Malformed) return;
    this.write(chunk);
  }

  /** One chunk of an event stream: whole events go on as they came, unless the plan shapes them. */
  private sseChunk(chunk: Buffer): void {
    if (this.holding) {
      (this.held ??= []).push(chunk);
      return;
    }
    const out: Buffer[] = [];
    let from = 0;
    let stop = false;
    const { buf, end } = this.splitter!.push(chunk, (b, text, start, stopAt) => {
      if (stop) return;
      const e = sseFields(b, text, start, stopAt);
      const info = readStreamEvent(e);
      if (info.json !== undefined) this.usage!.observe(info.json);
      const verdict = this.event(info.flags, e);
      if (verdict === 'inject') {
        if (start > from) out.push(b.subarray(from, start));
        out.push(malformedCopy(e));
        from = start;
      } else if (verdict === 'drop') {
        if (start > from) out.push(b.subarray(from, start));
        from = stopAt;
      } else if (verdict === 'stop' || verdict === 'hold') {
        if (start > from) out.push(b.subarray(from, start));
        from = start;
        stop = true;
        if (verdict === 'hold') this.holding = true;
      }
    });
    if (!stop) {
      if (end > from) out.push(buf.subarray(from, end));
    }
    for (const o of out) this.write(o);
    if (this.holding) {
      // The events after the hold (and the part of an event not ended yet) wait with it.
      this.held = [buf.subarray(from, end)];
      this.splitterRest();
      return;
    }
    if (stop) this.finishEarly();
  }

  /** After a hold the splitter starts over: what it held goes back in front of the held events. */
  private splitterRest(): void {
    const rest = this.splitter!.rest();
    if (rest.length > 0) this.held!.push(Buffer.from(rest));
    this.splitter = new SseSplitter();
    this.body?.pause();
    const p = this.plan;
    const ms =
      p.fault === FaultCode.SlowFirstToken ? Math.max(0, this.arrivedAt + p.ms - this.ctx.clock.now()) + p.addMs : p.ms;
    if (ms === Infinity) return;
    this.cancelTimer = this.ctx.clock.setTimer(ms, () => {
      this.cancelTimer = null;
      this.holding = false;
      this.plan.fault = 0;
      const held = this.held ?? [];
      this.held = undefined;
      for (const h of held) this.sseChunk(h);
      if (this.ended) return;
      if (this.body?.readableEnded) this.end();
      else this.body?.resume();
    });
  }

  /**
   * What the plan does with one event: pass it, drop it (a terminal event under `missing-done`),
   * stop the stream before it (`cut`, `midstream`), or hold it and what follows (`stall`,
   * `slow-first-token`). `malformed` writes a broken copy before the first content event.
   */
  private event(flags: number, e: SseEvent): 'pass' | 'drop' | 'inject' | 'stop' | 'hold' {
    const p = this.plan;
    const content = (flags & EventFlag.Content) !== 0;
    switch (p.fault) {
      case FaultCode.MissingDone:
        if ((flags & EventFlag.Terminal) === 0) return 'pass';
        this.mark(Detail.MissingDone);
        return 'drop';
      case FaultCode.Malformed:
        if (!content || e.data === undefined) return 'pass';
        this.mark(Detail.Malformed);
        p.fault = 0;
        return 'inject';
      default:
        break;
    }
    if (!content) return 'pass';
    const at = this.contentSeen++;
    if (p.fault === FaultCode.Cut && at >= p.afterTokens) {
      this.mark(Detail.Cut);
      return 'stop';
    }
    if (p.fault === FaultCode.Midstream && at >= Math.max(1, p.afterTokens)) {
      this.mark(Detail.MidStream);
      return 'stop';
    }
    if (p.fault === FaultCode.Stall && at === p.afterTokens) {
      this.mark(Detail.Stalled);
      return 'hold';
    }
    if (p.fault === FaultCode.SlowFirstToken && at === 0) {
      this.mark(Detail.SlowFirstToken);
      return 'hold';
    }
    return 'pass';
  }

  /** A stream stopped before its end: cleanly (`cut`), or with the provider's error event and a broken connection (`midstream`). */
  private finishEarly(): void {
    this.ended = true;
    this.body?.destroy();
    if (this.detail === Detail.MidStream) {
      const err = this.dialect.streamError(this.dialect.error(200, Detail.MidStream, -1));
      this.res.write(err, () => this.res.destroy());
      return;
    }
    this.res.end();
  }

  private write(chunk: Buffer): void {
    if (!this.res.write(chunk) && this.body !== undefined) {
      const body = this.body;
      body.pause();
      this.res.once('drain', () => {
        if (!this.holding) body.resume();
      });
    }
  }

  private end(): void {
    if (this.ended || this.holding) return;
    this.ended = true;
    const collected = this.collected;
    if (this.splitter !== undefined) {
      const rest = this.splitter.rest();
      if (rest.length > 0) this.write(Buffer.from(rest));
    }
    this.settleTokens(collected);
    if (collected !== undefined && (this.detail === Detail.Cut || this.detail === Detail.MidStream)) {
      // An unstreamed answer that breaks: half its body, then the connection goes.
      const all = Buffer.concat(collected);
      this.res.write(all.subarray(0, all.length >> 1), () => this.res.destroy());
      return;
    }
    if (collected !== undefined && this.detail === Detail.Malformed) {
      // Not JSON: the body less its last character (its closing brace).
      const all = Buffer.concat(collected);
      const text = all.toString('utf8').trimEnd();
      this.res.end(text.slice(0, -1));
      return;
    }
    this.res.end();
  }

  /** The answer's usage: the model's tokens served, and its TPM reservation set right. */
  private settleTokens(collected: Buffer[] | undefined): void {
    const used = this.usage?.total() ?? (collected === undefined ? undefined : usageFromBody(Buffer.concat(collected)));
    if (used === undefined) return;
    this.model.tokensServed += used;
    const tpm = this.model.tpm;
    if (tpm === null) return;
    const now = this.ctx.clock.now();
    if (used > this.reserved) tpm.take(used - this.reserved, now);
    else if (used < this.reserved) tpm.giveBack(this.reserved - used, now);
  }

  private failed(err: unknown): void {
    if (this.res.destroyed) return;
    this.ctx.upstreamError(err);
    const shape = this.dialect.error(502, Detail.None, -1);
    const body = JSON.stringify(shape.body);
    this.res.writeHead(502, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    this.res.end(body);
  }

  private broken(err: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.ctx.upstreamError(err);
    this.res.destroy();
  }

  private readonly onClose = (): void => {
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.model.busy--;
    // A client that left before any answer is a cancel, as at serve's model; anything else was answered.
    if (!this.res.headersSent && !this.res.writableFinished) this.model.cancelled++;
    else this.model.answered(this.res.statusCode, this.detail);
    if (!this.ended) {
      this.ended = true;
      this.abort.abort();
      this.body?.destroy();
    }
  };
}

/** A decoder for a `content-encoding` (gzip, deflate, br), or undefined for one the proxy does not know. */
function decoderFor(encoding: string): Transform | undefined {
  if (encoding === 'gzip' || encoding === 'x-gzip') return createGunzip();
  if (encoding === 'deflate') return createInflate();
  if (encoding === 'br') return createBrotliDecompress();
  return undefined;
}

/** The first value of header `name` (lower case) in a raw list. */
function headerOf(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i].length === name.length && raw[i].toLowerCase() === name) return raw[i + 1];
  return undefined;
}

/** A copy of event `e` whose data is cut in half: no longer JSON, as a proxy that split an event would send. */
function malformedCopy(e: SseEvent): Buffer {
  const data = e.data ?? '';
  const name = e.event === undefined ? '' : `event: ${e.event}\n`;
  return Buffer.from(`${name}data: ${data.slice(0, Math.max(1, data.length >> 1))}\n\n`);
}
