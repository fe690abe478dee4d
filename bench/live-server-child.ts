import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import { createFakeUpstream } from '../src/fake-upstream/server.js';

/**
 * A server for the live suite, in a process of its own (so the load does not share its core
 * and its RSS is its own):
 *
 *   node --import tsx bench/live-server-child.ts <fake|minimal> <ttftMs>
 *
 * `fake` is the fake upstream (one model, room for any load, answers after `ttftMs`);
 * `minimal` a bare `node:http` server that reads the body and answers the same chat
 * completion JSON after `ttftMs` (at once for 0). Prints `{"url"}` when listening; when its
 * stdin ends, prints `{"peakRssMb", "maxInFlight", "served", "cpuUsPerRequest", "maxStallMs", "maxStallCpuMs", "maxStallWaitMs", "maxGcMs"}` (the most chat
 * requests open at once; CPU time per request served from the first one on; the longest the event
 * loop was held, from `monitorEventLoopDelay` and a timer-drift probe, the larger, in CPU
 * time, and of the probe's tick that fired latest the time spent waiting for a core, see below; the
 * longest GC pause) and exits.
 */
const [kind = 'minimal', ttftArg = '0'] = process.argv.slice(2);
const ttftMs = Number(ttftArg);

let serial = 0;
/** Chat requests open now, and the most at once: the memory run checks all 5,000 were held together. */
let open = 0;
let maxOpen = 0;
let served = 0;
/** CPU time at the first chat request: what the server spends per request leaves its start-up out. */
let cpu0: NodeJS.CpuUsage | undefined;
const opened = (): void => {
  if (served++ === 0) cpu0 = process.cpuUsage();
  if (++open > maxOpen) maxOpen = open;
};
/** The fake upstream's answer to a 16-token completion, built per request as it builds it. */
function completion(model: string): string {
  const id = `chatcmpl-${(++serial).toString(36)}`;
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: 'fp_stormlab',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'the storm passes when retries stay within their budget and every layer keeps its calm while tokens',
          refusal: null,
        },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 100, completion_tokens: 16, total_tokens: 116 },
  });
}

async function start(): Promise<{ url: string; close(): Promise<void> }> {
  if (kind === 'fake') {
    const fake = await createFakeUpstream({
      upstream: { models: [{ name: 'primary', slots: 1_000_000, queue: 0, ttftMs, tpotMs: 0 }] },
      port: 0,
      observer: { submitted: opened, answered: () => void open--, cancelled: () => void open-- },
    });
    return fake;
  }
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      opened();
      res.on('close', () => void open--);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string };
      const answer = (): void => {
        const text = completion(body.model);
        res.writeHead(200, {
          'x-request-id': `req_${serial}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
      };
      if (ttftMs > 0) setTimeout(answer, ttftMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * How long the event loop was held at worst: a 5 ms timer that notes how late it fires (what a
 * paced stream's next chunk would suffer), beside `monitorEventLoopDelay`'s own histogram. On a
 * shared machine a late timer may only mean the process was not scheduled, so the probe also
 * notes the most CPU time the main thread spent between two of its ticks (the stall as it would
 * be on a core of its own) and, of its tick that fired latest, the time the main thread was ready to run
 * but waited for a core (what the other processes and threads took from it). Both are the main
 * thread's own (Linux `schedstat`, ns: time on a CPU, time waiting in the run queue); the
 * process's CPU time (`process.cpuUsage`) counts the collector's and compiler's helper threads
 * too, which run beside the loop without holding it, and stands in where `schedstat` cannot be
 * read (no wait known then).
 */
const PROBE_MS = 5;
let maxDrift = 0;
/** Of the tick that fired latest (`maxDrift`), the time the main thread waited for a core. */
let maxDriftWait = 0;
let maxCpuStall = 0;
let expected = performance.now() + PROBE_MS;
let lastCpu = 0;
let lastWait = 0;
const SCHEDSTAT = `/proc/self/task/${process.pid}/schedstat`;
/** The main thread's time on a CPU and waiting for one, ms. */
const mainThread = (() => {
  try {
    readFileSync(SCHEDSTAT, 'latin1');
    return (): [number, number] => {
      const [run, wait] = readFileSync(SCHEDSTAT, 'latin1').split(' ', 2);
      return [Number(run) / 1e6, Number(wait) / 1e6];
    };
  } catch {
    return (): [number, number] => {
      const c = process.cpuUsage();
      return [(c.user + c.system) / 1000, 0];
    };
  }
})();
setInterval(() => {
  const t = performance.now();
  const [cpu, wait] = mainThread();
  if (t - expected > maxDrift) {
    maxDrift = t - expected;
    maxDriftWait = lastCpu > 0 ? wait - lastWait : 0;
  }
  expected = t + PROBE_MS;
  if (lastCpu > 0 && cpu - lastCpu - PROBE_MS > maxCpuStall) maxCpuStall = cpu - lastCpu - PROBE_MS;
  // STALL_LOG=1: each stall of more than 30 ms CPU on stderr, with the time (to match it to a phase of the load).
  if (process.env.STALL_LOG && lastCpu > 0 && cpu - lastCpu > 30)
    console.error(
      `stall ${(cpu - lastCpu).toFixed(0)} ms cpu, ${(wait - lastWait).toFixed(0)} ms waiting for a core, at ${new Date().toISOString()} open ${open}`,
    );
  lastCpu = cpu;
  lastWait = wait;
}, PROBE_MS).unref();
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
/** The longest garbage collection pause: tells a stall the collector made from one the server's own work made. */
let maxGcMs = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    if (e.duration > maxGcMs) maxGcMs = e.duration;
    // STALL_LOG=1: each pause of more than 15 ms too (kind 1 is a scavenge of the young generation, 4 a full collection).
    if (process.env.STALL_LOG && e.duration > 15)
      console.error(
        `gc ${e.duration.toFixed(0)} ms kind ${(e as unknown as { detail?: { kind?: number } }).detail?.kind} at ${new Date().toISOString()}`,
      );
  }
}).observe({ entryTypes: ['gc'] });

const server = await start();
console.log(JSON.stringify({ url: server.url }));
process.stdin.resume();
process.stdin.on('end', () => {
  const cpu = process.cpuUsage(cpu0);
  const cpuUsPerRequest = served > 1 ? (cpu.user + cpu.system) / (served - 1) : 0;
  const maxStallMs = Math.max(maxDrift, loopDelay.max / 1e6 - 10);
  console.log(
    JSON.stringify({
      peakRssMb: process.resourceUsage().maxRSS / 1024,
      maxInFlight: maxOpen,
      served,
      cpuUsPerRequest,
      maxStallMs,
      maxStallCpuMs: maxCpuStall,
      maxStallWaitMs: maxDriftWait,
      maxGcMs,
    }),
  );
  void server.close().then(() => process.exit(0));
});
