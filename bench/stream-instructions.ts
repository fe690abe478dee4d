import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { guardedFetch } from '../src/integrations/guarded-fetch.js';
/**
 * The stream guard's cost in instructions, which `valgrind --tool=callgrind` counts the same on a
 * loaded machine: reads one 20,000-event chat completion stream from a server on 127.0.0.1
 * through `guardedFetch` — `MODE=guard` (the stream guard), `pass` (`stream: false`), `none`
 * (plain fetch) — 3 times to warm up, then `R` times; `SPACED=1` spaces its JSON as Python's
 * `json.dumps` does. One stream costs (count at R=10 − count at R=0) / 10:
 *
 *   for m in pass guard; do for r in 0 10; do MODE=$m R=$r valgrind --tool=callgrind \
 *     --callgrind-out-file=/dev/null node --import tsx bench/stream-instructions.ts 2>&1 | grep Collected; done; done
 */
const EVENTS = 20000;
const spaced = process.env.SPACED === '1';
const json = (v: unknown) =>
  spaced
    ? JSON.stringify(v, null, 1)
        .replace(/\n\s*/g, ' ')
        .replace(/([[{]) /g, '$1')
        .replace(/ ([\]}])/g, '$1')
    : JSON.stringify(v);
const parts: string[] = [];
const chunk = (content: string, finish: string | null) =>
  `data: ${json({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: finish, logprobs: null }] })}\n\n`;
for (let i = 0; i < EVENTS; i++) parts.push(chunk(` token${i % 97}`, null));
parts.push(chunk('', 'stop'), 'data: [DONE]\n\n');
const body = Buffer.from(parts.join(''));
const server = createServer((_q, res) => {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(body);
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
const request = { method: 'POST', body: JSON.stringify({ model: 'm', messages: [], stream: true }) };
const mode = process.env.MODE!;
const f = mode === 'none' ? fetch : guardedFetch(mode === 'pass' ? { stream: false } : {});
async function once() {
  const r = await f(url, request);
  let n = 0;
  for await (const c of r.body!) n += c.length;
  if (n !== body.length) throw new Error(`read ${n} of ${body.length}`);
}
for (let i = 0; i < 3; i++) await once();
const R = Number(process.env.R);
for (let i = 0; i < R; i++) await once();
server.close();
