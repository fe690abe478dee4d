import type { IncomingMessage } from 'node:http';

export type BodyResult = { kind: 'ok'; body: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

/**
 * Reads a request body of at most `max` bytes. Past it (or when `content-length` says it will
 * be past it) it stops keeping the bytes and resolves `too-large` at once, so a huge body
 * never sits in memory; the caller answers 413 and closes the connection.
 */
export function readBody(req: IncomingMessage, max: number): Promise<BodyResult> {
  return new Promise((resolve) => {
    const declared = Number(req.headers['content-length']);
    if (declared > max) return resolve({ kind: 'too-large' });
    const parts: Buffer[] = [];
    let size = 0;
    const done = (r: BodyResult): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      resolve(r);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > max) return done({ kind: 'too-large' });
      parts.push(chunk);
    };
    const onEnd = (): void => done({ kind: 'ok', body: parts.length === 1 ? parts[0] : Buffer.concat(parts, size) });
    const onClose = (): void => done({ kind: 'aborted' });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
  });
}
