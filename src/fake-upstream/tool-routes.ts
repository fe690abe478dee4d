import type { ServerResponse } from 'node:http';
import type { SeededRandom } from '../engine/random.js';
import type { ToolConfig } from '../upstream/tool-config.js';
import { ToolService, type ToolServiceStats } from '../upstream/tool-service.js';
import type { Scheduler } from '../upstream/scheduler.js';
import type { ReadJson } from './json-request.js';
import type { Routes } from './model-routes.js';
import { openaiDialect } from './openai-dialect.js';
import { sendJson } from './send-json.js';

/** Where a tool is served: `POST /_stormlab/tools/gmail.send`. */
export const TOOL_ROUTE_PREFIX = '/_stormlab/tools';

/** What the tool routes need from the server. */
export interface ToolRouteContext {
  tools: readonly ToolConfig[];
  scheduler: Scheduler;
  random: SeededRandom;
  readJson: ReadJson;
}

/** The tool service over HTTP: its routes, its counters, and a way to zero them. */
export interface ToolHost {
  routes: Routes;
  stats(): ToolServiceStats[];
  /** Counters and idempotency keys back to zero (a fresh service; fault phases stay, on the server's timeline). */
  reset(): void;
}

/** The intent a request names: `intent` in its JSON body (any string; the same string is the same intent). */
function intentName(body: unknown): string | undefined {
  const intent = typeof body === 'object' && body !== null ? (body as { intent?: unknown }).intent : undefined;
  return typeof intent === 'string' && intent !== '' ? intent : undefined;
}

/**
 * The simulator's tool service (`ToolService`) on the server's real-time scheduler, one route
 * per tool:
 *
 *   POST /_stormlab/tools/{name}   body {"intent": "…"} (the effect's business intent, counted
 *                                  for duplicates), header `idempotency-key` (optional)
 *   GET  /_stormlab/tools          per tool: requests, answers by status, executions, intents,
 *                                  duplicates, conflicts, replays, busy, queued
 *
 * The answer is the service's: 200 when the effect is done (or its receipt found), 409 for a
 * key in progress, 429 past the tool's rate, 503 past its queue, the fault phases' statuses;
 * with a `retry-after-ms` header when the service gives one. A `hang` or `lost` phase never
 * answers — `lost` after doing the effect — and the request is dropped when its client leaves.
 */
export function toolHost(c: ToolRouteContext): ToolHost {
  const pending = new Map<number, ServerResponse>();
  const intents = new Map<string, number>();
  let nextId = 1;
  const make = () =>
    new ToolService(c.tools, c.scheduler, c.random.split('tool-service'), {
      onToolResponse(reqId, _serial, status, retryAfterMs) {
        const res = pending.get(reqId);
        if (res === undefined) return; // its client left
        pending.delete(reqId);
        const ok = status === 200;
        sendJson(
          res,
          status,
          ok ? { ok: true } : { error: { type: 'tool_error', status } },
          retryAfterMs >= 0 ? { 'retry-after-ms': Math.ceil(retryAfterMs) } : {},
        );
      },
    });
  let service = make();
  const routes: Routes = {
    [TOOL_ROUTE_PREFIX]: { GET: (_req, res) => sendJson(res, 200, { tools: service.stats() }) },
  };
  c.tools.forEach((tool, index) => {
    routes[`${TOOL_ROUTE_PREFIX}/${tool.name}`] = {
      POST: async (req, res) => {
        const body = await c.readJson(req, res, openaiDialect);
        if (body === undefined) return;
        const id = nextId++;
        pending.set(id, res);
        res.on('close', () => pending.delete(id));
        const name = intentName(body.value);
        let intent = -1;
        if (name !== undefined) {
          intent = intents.get(name) ?? intents.size;
          intents.set(name, intent);
        }
        const key = req.headers['idempotency-key'];
        service.submit(id, 0, index, intent, typeof key === 'string' ? key : '', c.scheduler.now());
      },
    };
  });
  return {
    routes,
    stats: () => service.stats(),
    reset() {
      service = make();
      intents.clear();
    },
  };
}
