import type { IncomingMessage } from 'node:http';

export type BodyResult = { kind: 'ok'; body: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

/**
 * Reads a request body of at most `max` bytes and hands `done` the result: `ok`, or `too-large`
 * at once past it (or when `content-length` says it will be past it), so a huge body never sits
 * in memory; the caller answers 413 and closes the connection. A client that leaves before the
 * end is never answered: `done` is not called (the listeners go with the request).
 *
 * Callbacks, not a promise: the model routes answer from here, and a promise per request (two
 * with the handler's own) costs the server a microtask pass and listeners to take off again.
 */
export function readBody(req: IncomingMessage, max: number, done: (r: BodyResult) => void): void {
  const declared = Number(req.headers['content-length']);
  if (declared > max) return done({ kind: 'too-large' });
  let first: Buffer | undefined;
  let parts: Buffer[] | undefined;
  let size = 0;
  let settled = false;
  req.on('data', (chunk: Buffer) => {
    if (settled) return;
    size += chunk.length;
    if (size > max) {
      settled = true;
      first = parts = undefined;
      return done({ kind: 'too-large' });
    }
    if (first === undefined) first = chunk;
    else (parts ??= [first]).push(chunk);
  });
  req.on('end', () => {
    if (settled) return;
    settled = true;
    done({ kind: 'ok', body: parts !== undefined ? Buffer.concat(parts, size) : (first ?? Buffer.alloc(0)) });
  });
}

/** `readBody` as a promise, which also settles (`aborted`) when the client leaves first. */
export function readBodyAsync(req: IncomingMessage, max: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    req.once('close', () => resolve({ kind: 'aborted' }));
    readBody(req, max, resolve);
  });
}
