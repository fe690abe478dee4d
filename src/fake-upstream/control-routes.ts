import { OptionError } from '../engine/errors.js';
import { OUTPUT_TOKENS_HEADER } from '../upstream/output-tokens-header.js';
import type { FakeUpstreamStats } from './fake-upstream-stats.js';
import { faultsJson, parseFaultBody } from './fault-phases.js';
import type { Refuse, ReadJson } from './json-request.js';
import type { Routes } from './model-routes.js';
import { openaiDialect } from './openai-dialect.js';
import { type MetricFamily, prometheusText } from './prometheus-text.js';
import type { RequestLog } from './request-log.js';
import { sendJson } from './send-json.js';
import { parseToolPolicy, type ToolPolicy } from './tool-policy.js';
import type { ServedFault } from './fault-phases.js';

/** Whose fault phases the control API reads and replaces: the fake upstream's model, or a proxy. */
export interface FaultHost {
  faults(): readonly ServedFault[];
  /** Installs phases on the server's timeline; throws an `OptionError` naming a bad one. */
  setFaults(phases: ServedFault[]): void;
}

/** What the control routes read and change; a server without tools or answer lengths (a proxy) leaves those out. */
export interface ControlContext {
  host: FaultHost;
  now(): number;
  stats(): FakeUpstreamStats;
  reset(): void;
  log: RequestLog;
  toolPolicy?(): ToolPolicy;
  setToolPolicy?(p: ToolPolicy): void;
  /** How long answers to requests without `x-stormlab-output-tokens` run (the `AnswerLengths`). */
  lengths?: { withoutHeader: 'max' | number | undefined };
  readJson: ReadJson;
  refuse: Refuse;
  /** Metric families of the server's own, after serve's in `/metrics` (a proxy's counters). */
  metrics?(): readonly MetricFamily[];
}

/**
 * The control API (`/_stormlab/*`) and `/metrics`: counters, fault phases, the tool policy,
 * the request log. Bad bodies get one 400 naming the field; nothing here reaches the model.
 */
export function controlRoutes(c: ControlContext): Routes {
  const faultView = () => ({ nowMs: c.now(), relativeTo: 'start', faults: faultsJson(c.host.faults()) });
  const { toolPolicy, setToolPolicy, lengths } = c;
  const lengthView = () => ({ header: OUTPUT_TOKENS_HEADER, withoutHeader: lengths?.withoutHeader ?? null });
  /** Runs `change` on the body; an `OptionError` becomes a 400 naming `param`. */
  const update =
    (param: string, change: (body: unknown) => void, view: () => object) =>
    async (req: Parameters<ReadJson>[0], res: Parameters<ReadJson>[1]) => {
      const body = await c.readJson(req, res, openaiDialect);
      if (body === undefined) return;
      try {
        change(body.value);
      } catch (e) {
        if (!(e instanceof OptionError)) throw e;
        return c.refuse(res, openaiDialect, { status: 400, message: e.message, param, code: null });
      }
      sendJson(res, 200, view());
    };
  return {
    '/_stormlab/stats': { GET: (_req, res) => sendJson(res, 200, c.stats()) },
    '/_stormlab/faults': {
      GET: (_req, res) => sendJson(res, 200, faultView()),
      PUT: update('faults', (body) => c.host.setFaults(parseFaultBody(body, c.now())), faultView),
    },
    ...(toolPolicy === undefined || setToolPolicy === undefined
      ? {}
      : {
          '/_stormlab/tool-policy': {
            GET: (_req, res) => sendJson(res, 200, toolPolicy()),
            PUT: update('toolPolicy', (body) => setToolPolicy(parseToolPolicy(body, toolPolicy())), toolPolicy),
          },
        }),
    ...(lengths === undefined
      ? {}
      : {
          '/_stormlab/output-tokens': {
            GET: (_req, res) => sendJson(res, 200, lengthView()),
            PUT: update('withoutHeader', (body) => (lengths.withoutHeader = parseWithoutHeader(body)), lengthView),
          },
        }),
    '/_stormlab/requests': {
      GET: (req, res) => {
        const limit = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('limit') ?? Number.NaN);
        sendJson(res, 200, { requests: c.log.list(Number.isInteger(limit) && limit >= 0 ? limit : undefined) });
      },
    },
    '/_stormlab/reset': {
      POST: (_req, res) => {
        c.reset();
        sendJson(res, 200, { reset: true, nowMs: c.now() });
      },
    },
    '/metrics': {
      GET: (_req, res) => {
        const text = prometheusText(c.stats(), c.metrics?.());
        res.writeHead(200, {
          'content-type': 'text/plain; version=0.0.4; charset=utf-8',
          'content-length': Buffer.byteLength(text),
        });
        res.end(text);
      },
    },
  };
}

/**
 * `PUT /_stormlab/output-tokens` takes `{ "withoutHeader": "max" | N | null }`: requests that
 * come without `x-stormlab-output-tokens` are answered as if they had sent that value; null
 * gives them their natural length again.
 */
function parseWithoutHeader(body: unknown): 'max' | number | undefined {
  const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body) : undefined;
  const unknown = fields?.find((k) => k !== 'withoutHeader');
  if (fields === undefined || unknown !== undefined || !fields.includes('withoutHeader'))
    throw new OptionError(
      `expected {"withoutHeader": "max" | tokens | null}${unknown === undefined ? '' : `, got an unknown field "${unknown}"`}`,
      'withoutHeader',
    );
  const v = (body as { withoutHeader: unknown }).withoutHeader;
  if (v === null) return undefined;
  if (v === 'max' || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 1)) return v;
  throw new OptionError(
    `withoutHeader must be "max", a whole number of tokens >= 1 or null, got ${JSON.stringify(v)}`,
    'withoutHeader',
  );
}
