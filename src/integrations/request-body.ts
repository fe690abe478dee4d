/**
 * A request body made ready to be sent more than once. Strings, bytes and FormData replay as
 * they are; a stream or iterable is read into memory first, unless it is larger than the cap,
 * in which case it cannot be replayed and goes out once, unguarded (`oversize`).
 */
export type PreparedBody =
  | {
      kind: 'replayable';
      body: string | Uint8Array | FormData | null | undefined;
      text: string | Uint8Array | undefined;
    }
  | { kind: 'oversize'; body: AsyncIterable<Uint8Array> };

type AnyIterator = Iterator<unknown> | AsyncIterator<unknown>;

function isFormData(body: unknown): body is FormData {
  return typeof FormData !== 'undefined' && body instanceof FormData;
}

/** Sync when the body is already replayable (the common case: a JSON string or a Buffer). */
export function prepareBody(body: unknown, maxBytes: number): PreparedBody | Promise<PreparedBody> {
  if (body == null) return { kind: 'replayable', body: undefined, text: undefined };
  if (typeof body === 'string' || body instanceof Uint8Array) return { kind: 'replayable', body, text: body };
  if (isFormData(body)) return { kind: 'replayable', body, text: undefined };
  if (ArrayBuffer.isView(body)) {
    const bytes = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
    return { kind: 'replayable', body: bytes, text: bytes };
  }
  const b = body as {
    [Symbol.asyncIterator]?: () => AsyncIterator<unknown>;
    [Symbol.iterator]?: () => Iterator<unknown>;
  };
  const it: AnyIterator | undefined = b[Symbol.asyncIterator]?.() ?? b[Symbol.iterator]?.();
  if (it === undefined)
    throw new TypeError(`stormlab: unsupported request body of type ${Object.prototype.toString.call(body)}`);
  return collect(it, maxBytes);
}

async function collect(it: AnyIterator, maxBytes: number): Promise<PreparedBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const r = await it.next();
    if (r.done) break;
    const chunk = toBuffer(r.value);
    chunks.push(chunk);
    size += chunk.length;
    if (size > maxBytes) return { kind: 'oversize', body: rest(chunks, it) };
  }
  const bytes = Buffer.concat(chunks, size);
  return { kind: 'replayable', body: bytes, text: bytes };
}

async function* rest(head: Buffer[], it: AnyIterator): AsyncGenerator<Uint8Array> {
  yield* head;
  for (;;) {
    const r = await it.next();
    if (r.done) return;
    yield toBuffer(r.value);
  }
}

function toBuffer(chunk: unknown): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk);
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError(
    `stormlab: request body chunks must be strings or bytes, got ${Object.prototype.toString.call(chunk)}`,
  );
}
