/** How a tapped stream ended: read to the end, broken by an error, or cancelled by its reader. */
export type TapEnd = { how: 'end' } | { how: 'error'; error: unknown } | { how: 'cancel' };

/**
 * A stream that passes `body` through chunk by chunk, showing each chunk to `onChunk` and
 * telling `onEnd` once how it ended. Pull-based, so the reader's pace is the upstream's.
 */
export function tapStream(
  body: ReadableStream<Uint8Array>,
  onChunk: (chunk: Uint8Array) => void,
  onEnd: (end: TapEnd) => void,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  const finish = (end: TapEnd): void => {
    if (ended) return;
    ended = true;
    onEnd(end);
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const r = await reader.read();
        if (r.done) {
          controller.close();
          finish({ how: 'end' });
          return;
        }
        onChunk(r.value);
        controller.enqueue(r.value);
      } catch (error) {
        controller.error(error);
        finish({ how: 'error', error });
      }
    },
    cancel(reason) {
      finish({ how: 'cancel' });
      return reader.cancel(reason);
    },
  });
}

/**
 * Up to `max` bytes of a stream, or undefined when it holds more (it is cancelled then).
 * For error bodies, which are small unless something is wrong.
 */
export async function readUpTo(body: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array | undefined> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    chunks.push(r.value);
    size += r.value.length;
    if (size > max) {
      await reader.cancel();
      return undefined;
    }
  }
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
