import { prepareBody } from './request-body.js';

/** A fetch request made replayable: its URL, its init (with a body that can be sent again), its text. */
export interface FetchRequest {
  url: string;
  init: RequestInit;
  /** The body as text or bytes when it could be JSON; undefined otherwise. */
  text: string | Uint8Array | undefined;
  /** True when the body is a stream too large to hold: it goes out once, unguarded. */
  oversize: boolean;
}

/** The URL of a fetch input without reading anything else. */
export function inputUrl(input: string | URL | Request): string {
  return typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
}

/**
 * Reads what `fetch(input, init)` would send. A `Request` input is unpacked into an init; a
 * stream body is read into memory up to `maxBytes` (a larger one is passed on as a stream).
 */
export async function fetchRequest(
  input: string | URL | Request,
  init: RequestInit | undefined,
  maxBytes: number,
): Promise<FetchRequest> {
  let merged: RequestInit = init ?? {};
  if (typeof input !== 'string' && !(input instanceof URL)) {
    const body =
      init?.body !== undefined
        ? init.body
        : input.body === null
          ? undefined
          : new Uint8Array(await input.arrayBuffer());
    merged = {
      method: input.method,
      headers: input.headers,
      signal: input.signal,
      redirect: input.redirect,
      ...init,
      body,
    };
  }
  const url = inputUrl(input);
  const body = merged.body;
  if (body == null || typeof body === 'string') return { url, init: merged, text: body ?? undefined, oversize: false };
  if (body instanceof ArrayBuffer) return { url, init: merged, text: new Uint8Array(body), oversize: false };
  if (ArrayBuffer.isView(body))
    return { url, init: merged, text: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), oversize: false };
  if (!isStream(body)) return { url, init: merged, text: undefined, oversize: false }; // Blob, FormData, URLSearchParams replay as they are
  const prepared = await prepareBody(body, maxBytes);
  if (prepared.kind === 'oversize') {
    return {
      url,
      init: { ...merged, body: toWebStream(prepared.body), duplex: 'half' } as RequestInit,
      text: undefined,
      oversize: true,
    };
  }
  const bytes = prepared.body as Uint8Array;
  const rest = { ...merged, body: bytes } as RequestInit & { duplex?: string };
  delete rest.duplex;
  return { url, init: rest, text: bytes, oversize: false };
}

function isStream(body: unknown): body is ReadableStream<Uint8Array> {
  return typeof (body as ReadableStream).getReader === 'function';
}

function toWebStream(source: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = source[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const r = await it.next();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    async cancel(reason) {
      await it.return?.(reason);
    },
  });
}
