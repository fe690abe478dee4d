import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { availableParallelism, loadavg } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { compileChildren } from './compile-children.js';
import { median, printTable, type Row } from './measure.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHILD = fileURLToPath(new URL('./proxy-child.ts', import.meta.url));

/** The fixed rate, well below what either path answers on this machine, and its seconds per round. */
const RATE = 200;
const RATE_SECONDS = 3;
/** Requests kept in flight for the saturation runs, and their seconds per round. */
const IN_FLIGHT = 64;
const CLOSED_SECONDS = 3;
const ROUNDS = 3;
const STREAM_ROUNDS = 7;
/** Streams read through each path before the counted ones: CPU per byte falls for the first few, as the JIT compiles. */
const WARMUP_STREAMS = 6;
/** The model server with a capacity of its own: `SLOTS` answered at a time, each after `SERVICE_MS`. */
const SLOTS = 16;
const SERVICE_MS = 20;

/** A server child (`upstream` or `proxy`), listening; `mark()` gives its CPU time and requests so far. */
interface Child {
  url: string;
  mark(): Promise<{ cpuUs: number; served: number }>;
  stop(): void;
}

async function child(file: string, args: string[]): Promise<Child> {
  const p: ChildProcess = spawn(process.execPath, [file, ...args], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: p.stdout! })[Symbol.asyncIterator]();
  const first = await lines.next();
  if (first.done) throw new Error(`proxy bench: ${args[0]} did not start`);
  const { url } = JSON.parse(first.value) as { url: string };
  return {
    url,
    async mark() {
      p.stdin!.write('mark\n');
      const l = await lines.next();
      if (l.done) throw new Error(`proxy bench: ${args[0]} ended`);
      return JSON.parse(l.value) as { cpuUs: number; served: number };
    },
    stop: () => p.stdin!.end(),
  };
}

/** One load run in a child of its own (blocking: the servers run in theirs). */
function load<T>(file: string, args: Array<string | number>): T {
  const r = spawnSync(process.execPath, [file, 'load', ...args.map(String)], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  if (r.status !== 0) throw new Error(`proxy bench load (${args[0]}) failed with ${r.status ?? r.signal}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as T;
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/**
 * `npm run bench -- --suite proxy`: what `stormlab proxy` costs in front of a model server,
 * each figure beside the same load sent to the server directly and through the least a Node
 * proxy does (`relay` in proxy-child.ts: the peer, to tell the proxy's own cost from the cost of
 * any relay on this machine), in the same run, the three taken in turn (reversed every other
 * round). Client, proxy and server are three processes, and a 2-core machine shared by them
 * cannot give each a core: so the proxy's cost is given as the CPU time it spends (per request,
 * per byte streamed: what it needs whatever the cores), and as what a client sees.
 *
 * First a warm-up through every path (a second of requests, `WARMUP_STREAMS` streams), so that
 * no figure counts the JIT compiling.
 *
 * 1. Saturation, CPU-bound: `IN_FLIGHT` requests kept in flight against an upstream that
 *    answers at once. Requests/s, and the proxy's CPU µs per request, whose inverse is what it
 *    answers on a core of its own.
 * 2. A fixed rate (`RATE`/s, far below saturation), the same upstream: the latency the proxy
 *    adds at the median and the 99th percentile (goal: added p99 < 2 ms), CPU µs per request.
 * 3. Saturation of a model server with a capacity of its own (`SLOTS` at a time, `SERVICE_MS`
 *    each): requests/s direct and through the proxy (goal ≥ 90 %: the proxy is not what limits
 *    a model server).
 * 4. A 20,000-event chat completion stream read to its end: bytes/s (goal ≥ 90 % of direct),
 *    and the bytes the proxy relays per second of its own CPU time.
 */
export async function proxySuite(): Promise<Row[]> {
  const file = (await compileChildren({ 'proxy-child': CHILD }))['proxy-child'];
  const load0 = loadavg()[0];
  const rows: Row[] = [];
  const row = (name: string, value: number, unit: string) => rows.push({ suite: 'proxy', name, value, unit });
  type Mark = { cpuUs: number; served: number };
  const perRequest = (a: Mark, b: Mark) => (b.served > a.served ? (b.cpuUs - a.cpuUs) / (b.served - a.served) : 0);

  const upstream = await child(file, ['upstream', '1000000', '0']);
  const proxy = await child(file, ['proxy', upstream.url]);
  const relay = await child(file, ['relay', upstream.url]);
  const urls = [upstream.url, proxy.url, relay.url];
  const marks = () => Promise.all([upstream.mark(), proxy.mark(), relay.mark()]);
  // Warm-up: every path's JIT compiled (requests and streams) before anything is counted.
  load(file, ['closed', IN_FLIGHT, 1, 1, ...urls]);
  load(file, ['stream', WARMUP_STREAMS, ...urls]);
  const m0 = await marks();
  const closed = load<number[][]>(file, ['closed', IN_FLIGHT, CLOSED_SECONDS, ROUNDS, ...urls]).map(median);
  const m1 = await marks();
  const rate = load<number[][][]>(file, ['rate', RATE, RATE_SECONDS, ROUNDS, ...urls]).map((r) => r.flat());
  const m2 = await marks();
  const stream = load<{ bytes: number; rates: number[][] }>(file, ['stream', STREAM_ROUNDS, ...urls]);
  const m3 = await marks();
  for (const c of [relay, proxy, upstream]) c.stop();

  const model = await child(file, ['upstream', String(SLOTS), String(SERVICE_MS)]);
  const modelProxy = await child(file, ['proxy', model.url]);
  const modelRelay = await child(file, ['relay', model.url]);
  const capped = load<number[][]>(file, [
    'closed',
    IN_FLIGHT,
    CLOSED_SECONDS,
    ROUNDS,
    model.url,
    modelProxy.url,
    modelRelay.url,
  ]).map(median);
  for (const c of [modelRelay, modelProxy, model]) c.stop();
  const load1 = loadavg()[0];

  const cpuSaturated = [1, 2].map((i) => perRequest(m0[i], m1[i]));
  const cpuRate = [0, 1, 2].map((i) => perRequest(m1[i], m2[i]));
  const p50 = rate.map((xs) => quantile(xs, 0.5));
  const p99 = rate.map((xs) => quantile(xs, 0.99));
  const streams = stream.rates.map(median);
  /** Bytes relayed per second of the child's CPU time over the stream run. */
  const bytesPerCpu = [1, 2].map((i) => {
    const n = m3[i].served - m2[i].served;
    return (n * stream.bytes) / ((m3[i].cpuUs - m2[i].cpuUs) / 1e6);
  });
  const share = (a: number, b: number) => (100 * a) / b;

  row('saturation, CPU-bound (instant upstream): direct', closed[0], 'requests/s');
  row('saturation, CPU-bound (instant upstream): through the proxy', closed[1], 'requests/s');
  row('saturation, CPU-bound (instant upstream): through the minimal relay', closed[2], 'requests/s');
  row('saturation, CPU-bound: proxy / direct', share(closed[1], closed[0]), '%');
  row('saturation, CPU-bound: minimal relay / direct', share(closed[2], closed[0]), '%');
  row('proxy CPU per request at saturation', cpuSaturated[0], 'µs');
  row('minimal relay CPU per request at saturation', cpuSaturated[1], 'µs');
  row('proxy on a core of its own (10⁶ / CPU µs per request)', 1e6 / cpuSaturated[0], 'requests/s');
  row(`proxy CPU per request at ${RATE}/s`, cpuRate[1], 'µs');
  row(`minimal relay CPU per request at ${RATE}/s`, cpuRate[2], 'µs');
  row(`upstream CPU per request at ${RATE}/s`, cpuRate[0], 'µs');
  for (const [i, who] of ['direct', 'through the proxy', 'through the minimal relay'].entries()) {
    row(`latency p50 at ${RATE}/s: ${who}`, p50[i], 'ms');
    row(`latency p99 at ${RATE}/s: ${who}`, p99[i], 'ms');
  }
  row(`added p50 at ${RATE}/s: proxy`, p50[1] - p50[0], 'ms');
  row(`added p99 at ${RATE}/s: proxy`, p99[1] - p99[0], 'ms');
  row(`added p99 at ${RATE}/s: minimal relay`, p99[2] - p99[0], 'ms');
  row(`saturation, model server ${SLOTS} × ${SERVICE_MS} ms: direct`, capped[0], 'requests/s');
  row(`saturation, model server ${SLOTS} × ${SERVICE_MS} ms: through the proxy`, capped[1], 'requests/s');
  row(`saturation, model server ${SLOTS} × ${SERVICE_MS} ms: through the minimal relay`, capped[2], 'requests/s');
  row(`saturation, model server ${SLOTS} × ${SERVICE_MS} ms: proxy / direct`, share(capped[1], capped[0]), '%');
  row('stream: direct', streams[0], 'bytes/s');
  row('stream: through the proxy', streams[1], 'bytes/s');
  row('stream: through the minimal relay', streams[2], 'bytes/s');
  row('stream: proxy / direct', share(streams[1], streams[0]), '%');
  row('stream: minimal relay / direct', share(streams[2], streams[0]), '%');
  row('stream: proxy, bytes per second of its CPU', bytesPerCpu[0], 'bytes/s');
  row('stream: minimal relay, bytes per second of its CPU', bytesPerCpu[1], 'bytes/s');
  row('stream: proxy on a core of its own / direct', share(bytesPerCpu[0], streams[0]), '%');
  row('cores', availableParallelism(), 'cores');
  row('load average (1 min) at start', load0, '');
  row('load average (1 min) at end', load1, '');

  const pct = (a: number, b: number) => `${share(a, b).toFixed(0)} %`;
  const ms = (i: number) => `${p50[i].toFixed(2)} / ${p99[i].toFixed(2)}`;
  printTable(
    `proxy: stormlab proxy and a minimal Node relay (the peer) in front of a minimal OpenAI-compatible server, against the server direct (${availableParallelism()} cores shared by client, proxy and server; load average ${load0.toFixed(1)} → ${load1.toFixed(1)})`,
    [
      {
        figure: `latency at ${RATE}/s, p50 / p99 ms`,
        direct: ms(0),
        'stormlab proxy': ms(1),
        'proxy vs direct': `+${(p50[1] - p50[0]).toFixed(2)} / +${(p99[1] - p99[0]).toFixed(2)} ms`,
        'minimal relay': ms(2),
        'relay vs direct': `+${(p50[2] - p50[0]).toFixed(2)} / +${(p99[2] - p99[0]).toFixed(2)} ms`,
        goal: 'added p99 < 2 ms',
      },
      {
        figure: `saturation, model server ${SLOTS} × ${SERVICE_MS} ms, req/s`,
        direct: capped[0].toFixed(0),
        'stormlab proxy': capped[1].toFixed(0),
        'proxy vs direct': pct(capped[1], capped[0]),
        'minimal relay': capped[2].toFixed(0),
        'relay vs direct': pct(capped[2], capped[0]),
        goal: '≥ 90 %',
      },
      {
        figure: 'saturation, CPU-bound (instant upstream), req/s',
        direct: closed[0].toFixed(0),
        'stormlab proxy': closed[1].toFixed(0),
        'proxy vs direct': pct(closed[1], closed[0]),
        'minimal relay': closed[2].toFixed(0),
        'relay vs direct': pct(closed[2], closed[0]),
        goal: '(3 processes on the cores)',
      },
      {
        figure: 'CPU µs per request, saturation / fixed rate',
        direct: `${cpuRate[0].toFixed(0)} (upstream, fixed rate)`,
        'stormlab proxy': `${cpuSaturated[0].toFixed(0)} / ${cpuRate[1].toFixed(0)}`,
        'proxy vs direct': `${(1e6 / cpuSaturated[0]).toFixed(0)} req/s on a core`,
        'minimal relay': `${cpuSaturated[1].toFixed(0)} / ${cpuRate[2].toFixed(0)}`,
        'relay vs direct': `${(1e6 / cpuSaturated[1]).toFixed(0)} req/s on a core`,
        goal: '',
      },
      {
        figure: `${(stream.bytes / 1e6).toFixed(1)} MB stream (20,000 events), MB/s`,
        direct: (streams[0] / 1e6).toFixed(0),
        'stormlab proxy': (streams[1] / 1e6).toFixed(0),
        'proxy vs direct': pct(streams[1], streams[0]),
        'minimal relay': (streams[2] / 1e6).toFixed(0),
        'relay vs direct': pct(streams[2], streams[0]),
        goal: '≥ 90 %',
      },
      {
        figure: 'stream, MB per second of the relaying CPU',
        direct: '',
        'stormlab proxy': (bytesPerCpu[0] / 1e6).toFixed(0),
        'proxy vs direct': `${pct(bytesPerCpu[0], streams[0])} on a core`,
        'minimal relay': (bytesPerCpu[1] / 1e6).toFixed(0),
        'relay vs direct': `${pct(bytesPerCpu[1], streams[0])} on a core`,
        goal: '≥ 90 %',
      },
    ],
  );
  return rows;
}
