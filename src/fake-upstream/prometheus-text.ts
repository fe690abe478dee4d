import type { FakeUpstreamStats } from './fake-upstream-stats.js';

/** Escapes a label value as the exposition format wants: backslash, quote, newline. */
const label = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** One metric family a server adds to serve's: a name, its type and help, rows of labels (`{a="b"}` or '') and values. */
export interface MetricFamily {
  name: string;
  type: 'counter' | 'gauge';
  help: string;
  rows: Array<[string, number]>;
}

/**
 * The server's counters in the Prometheus text exposition format (version 0.0.4), then the
 * families of its own a server adds (`more`: a proxy's). Counters restart from zero on
 * `POST /_stormlab/reset`, which Prometheus reads as a counter reset.
 */
export function prometheusText(stats: FakeUpstreamStats, more: readonly MetricFamily[] = []): string {
  const out: string[] = [];
  const family = (name: string, type: 'counter' | 'gauge', help: string, rows: Array<[string, number]>) => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value] of rows) out.push(`${name}${labels} ${value}`);
  };
  const perModel = (pick: (m: FakeUpstreamStats['models'][number]) => number): Array<[string, number]> =>
    stats.models.map((m) => [`{model="${label(m.name)}"}`, pick(m)]);
  family(
    'stormlab_upstream_requests_total',
    'counter',
    'Answers the upstream gave, by model and HTTP status (0 = connection reset).',
    stats.models.flatMap((m) =>
      Object.entries(m.byStatus).map(([status, n]): [string, number] => [
        `{model="${label(m.name)}",status="${status}"}`,
        n,
      ]),
    ),
  );
  family(
    'stormlab_upstream_attempts_total',
    'counter',
    'Requests that reached the upstream model.',
    perModel((m) => m.attempts),
  );
  family(
    'stormlab_upstream_cancelled_total',
    'counter',
    'Requests whose caller went away before the answer.',
    perModel((m) => m.cancelled),
  );
  family(
    'stormlab_upstream_tokens_served_total',
    'counter',
    'Tokens of the answers delivered (prompt + completion).',
    perModel((m) => m.tokensServed),
  );
  family(
    'stormlab_upstream_wasted_tokens_total',
    'counter',
    'Tokens processed for requests whose caller had given up.',
    perModel((m) => m.wastedTokens),
  );
  family(
    'stormlab_upstream_busy',
    'gauge',
    'Slots serving now.',
    perModel((m) => m.busy),
  );
  family(
    'stormlab_upstream_queued',
    'gauge',
    'Requests waiting for a slot now.',
    perModel((m) => m.queued),
  );
  family('stormlab_http_requests_total', 'counter', 'HTTP requests received, every route.', [
    ['', stats.http.received],
  ]);
  family(
    'stormlab_http_invalid_requests_total',
    'counter',
    'Requests refused by the server before the model (bad input, unknown route or model, too large).',
    [['', stats.http.invalid]],
  );
  family('stormlab_http_client_closed_total', 'counter', 'Chat requests whose client disconnected before the answer.', [
    ['', stats.http.clientClosed],
  ]);
  family(
    'stormlab_http_route_responses_total',
    'counter',
    'Model requests closed, by route and what was sent: the HTTP status as written, reset or cancelled.',
    stats.routes.flatMap((r) =>
      Object.entries(r.status).map(([status, n]): [string, number] => [
        `{route="${label(r.route)}",status="${status}"}`,
        n,
      ]),
    ),
  );
  family('stormlab_http_in_flight', 'gauge', 'Model requests received and not closed yet.', [['', stats.inFlight]]);
  for (const f of more) family(f.name, f.type, f.help, f.rows);
  return `${out.join('\n')}\n`;
}
