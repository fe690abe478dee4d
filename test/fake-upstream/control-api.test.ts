import { describe, expect, it } from 'vitest';
import { OptionError } from '../../src/engine/errors.js';
import { ManualClock } from '../../src/engine/manual-clock.js';
import { fast, json, start } from './harness.js';

const put = (url: string, body: unknown) =>
  fetch(`${url}/_stormlab/faults`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('fake upstream: control API', () => {
  it('GET /_stormlab/faults shows the phases on the server timeline, null for no end', async () => {
    const h = await start({
      models: [fast()],
      faults: [
        { kind: 'latency', fromMs: 0, toMs: 5000, factor: 3 },
        { kind: 'quota', fromMs: 10_000 },
      ],
    });
    const view = await json(fetch(`${h.url}/_stormlab/faults`));
    expect(view.relativeTo).toBe('start');
    expect(view.nowMs).toBeGreaterThanOrEqual(0);
    expect(view.faults).toEqual([
      { kind: 'latency', fromMs: 0, toMs: 5000, factor: 3, rate: 1 },
      { kind: 'quota', fromMs: 10_000, toMs: null, rate: 1 },
    ]);
  });

  it('PUT takes times as a scenario writes them: "10s", "1m30s", "250ms"', async () => {
    const h = await start({ models: [fast()] });
    const res = await put(h.url, {
      relativeTo: 'start',
      faults: [{ kind: 'outage', fromMs: '10s', toMs: '1m30s', retryAfterMs: '250ms' }],
    });
    expect(res.status).toBe(200);
    const view = await json(fetch(`${h.url}/_stormlab/faults`));
    expect(view.faults).toEqual([{ kind: 'outage', fromMs: 10_000, toMs: 90_000, retryAfterMs: 250, rate: 1 }]);
  });

  it('PUT /_stormlab/faults changes the faults while it runs (times from now by default)', async () => {
    const h = await start({ models: [fast()] });
    expect((await h.chat({})).status).toBe(200);
    const res = await put(h.url, [{ kind: 'outage', status: 502 }]);
    expect(res.status).toBe(200);
    const view = await json(res);
    expect(view.faults).toEqual([{ kind: 'outage', status: 502, rate: 1, fromMs: view.faults[0].fromMs, toMs: null }]);
    expect(view.faults[0].fromMs).toBeGreaterThan(0);
    expect(view.faults[0].fromMs).toBeLessThanOrEqual(view.nowMs);
    expect((await h.chat({})).status).toBe(502);
    expect((await put(h.url, [])).status).toBe(200);
    expect((await h.chat({})).status).toBe(200);
    expect(h.fu.stats().models[0].byStatus).toEqual({ 200: 2, 502: 1 });
  });

  it('PUT with relativeTo start takes times on the server timeline', async () => {
    const h = await start({ models: [fast()] });
    const view = await json(
      put(h.url, {
        faults: [
          { kind: 'outage', fromMs: 0, toMs: 1 },
          { kind: 'errors', fromMs: 3_600_000, status: 500 },
        ],
        relativeTo: 'start',
      }),
    );
    expect(view.faults.map((f: { fromMs: number; toMs: number | null }) => [f.fromMs, f.toMs])).toEqual([
      [0, 1],
      [3_600_000, null],
    ]);
    expect((await h.chat({})).status).toBe(200);
  });

  it('setFaults does the same in process, and throws an OptionError naming the bad field', async () => {
    const h = await start({ models: [fast()] });
    const phases = h.fu.setFaults([{ kind: 'quota' }]);
    expect(phases).toHaveLength(1);
    expect((await h.chat({})).status).toBe(429);
    expect(() => h.fu.setFaults([{ kind: 'errors', rate: 3 }])).toThrow(OptionError);
    expect(() => h.fu.setFaults([{ kind: 'errors', rate: 3 }])).toThrow(
      'faults[0].rate must be a number >= 0 and <= 1, got 3',
    );
    // The error names the field in the server's words, in its fields as in its message.
    const bad = (phases: Parameters<typeof h.fu.setFaults>[0]) => {
      try {
        h.fu.setFaults(phases);
      } catch (e) {
        return e as OptionError;
      }
      throw new Error('setFaults accepted a bad phase');
    };
    expect(bad([{ kind: 'errors', rate: 3 }])).toMatchObject({
      option: 'faults[0].rate',
      problem: 'must be a number >= 0 and <= 1, got 3',
    });
    expect(bad([{ kind: 'quota' }, { kind: 'outage', model: 'nope' }])).toMatchObject({
      option: 'faults[1].model',
      message: expect.stringMatching(/^faults\[1\]\.model must be one of .*, got "nope"$/),
    });
    expect(bad([{ kind: 'errors', status: { 503: 0 } }])).toMatchObject({
      option: 'faults[0].status',
      message: 'faults[0].status weights must add up to more than 0, got 0',
    });
    expect(h.fu.faults()).toEqual(phases);
  });

  it.each([
    ['not JSON', '{oops', /could not parse the JSON body/],
    [
      'an object without faults',
      { phases: [] },
      /expected a list of fault phases, or \{"faults": \[\.\.\.\], "relativeTo": "now" \| "start"\}, got an object/,
    ],
    ['an unknown top-level field', { faults: [], when: 'now' }, /unknown field "when"/],
    ['a bad relativeTo', { faults: [], relativeTo: 'later' }, /relativeTo must be "now" or "start", got "later"/],
    ['a phase that is not an object', ['outage'], /faults\[0\] must be an object/],
    [
      'an unknown kind',
      [{ kind: 'flood' }],
      /faults\[0\]\.kind must be one of errors, outage, reset, hang, midstream, quota, latency, slow-first-token, stall, cut, malformed, missing-done, prefill-rejected, content-filter, context-length, got "flood"/,
    ],
    ['a misspelt field', [{ kind: 'outage', from: 5 }], /faults\[0\] has an unknown field "from"/],
    [
      'a time that is not a duration',
      [{ kind: 'outage', fromMs: 'soon' }],
      /faults\[0\]\.fromMs must be a duration like 10s or a number of ms, got "soon"/,
    ],
    [
      'an end before the start',
      [{ kind: 'outage', fromMs: 10, toMs: 5 }],
      /faults\[0\]\.toMs must be after fromMs \(10\), got 5/,
    ],
    ['a rate above 1', [{ kind: 'errors', rate: 2 }], /faults\[0\]\.rate must be a number >= 0 and <= 1, got 2/],
    ['an unknown model', [{ kind: 'outage', model: 'zzz' }], /faults\[0\]\.model must be one of m, got "zzz"/],
    [
      'a bad status',
      [{ kind: 'errors', status: 42 }],
      /faults\[0\]\.status must be an error status from 400 to 599 \(a fault answers with an error\), got 42/,
    ],
    [
      'an error fault answering 200 (every chat would be an empty success)',
      [{ kind: 'errors', rate: 0.5, status: 200 }],
      /^faults\[0\]\.status must be an error status from 400 to 599 \(a fault answers with an error\), got 200$/,
    ],
    [
      'an outage weighting a success',
      [{ kind: 'outage', status: { 503: 0.5, 204: 0.5 } }],
      /^faults\[0\]\.status must be an error status from 400 to 599 \(a fault answers with an error\), got 204$/,
    ],
    [
      'a status given as text',
      [{ kind: 'errors', status: '503' }],
      /faults\[0\]\.status must be a status like 503 or weights by status like \{"503": 0\.7, "429": 0\.3\}, got "503"/,
    ],
    [
      'a negative retryAfterMs',
      [{ kind: 'outage', retryAfterMs: -1 }],
      /faults\[0\]\.retryAfterMs must be a duration like 20ms or a number of ms >= 0, got -1/,
    ],
  ])('PUT answers 400 with a clear message for %s, and keeps the faults', async (_what, body, message) => {
    const h = await start({ models: [fast()], faults: [{ kind: 'quota', fromMs: 0 }] });
    const before = await json(fetch(`${h.url}/_stormlab/faults`));
    const res = await put(h.url, body);
    expect(res.status).toBe(400);
    const error = (await json(res)).error;
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(message);
    expect((await json(fetch(`${h.url}/_stormlab/faults`))).faults).toEqual(before.faults);
  });

  it('GET /_stormlab/stats: attempts, statuses, busy, queued, cancels and wasted tokens per model', async () => {
    // One slot, 5 ms per request, room for one in the queue; time moves only when told.
    const clock = new ManualClock();
    const h = await start(
      { models: [{ name: 'm', slots: 1, queue: 1, ttftMs: 5, tpotMs: 0, rpm: 100 }, fast('idle')] },
      { clock },
    );
    const ctrl = new AbortController();
    const abandoned = h.chat({ max_tokens: 10 }, { signal: ctrl.signal });
    await h.waitFor('submitted');
    const queued = h.chat({ max_tokens: 10 });
    await h.waitFor('submitted', 2);
    const during = await json(fetch(`${h.url}/_stormlab/stats`));
    expect(during.models[0]).toMatchObject({ name: 'm', busy: 1, queued: 1, attempts: 2 });
    expect(during.inFlight).toBe(2);
    ctrl.abort();
    await expect(abandoned).rejects.toThrow();
    await h.waitFor('cancelled');
    // The abandoned request's work is still done (no cancel-on-disconnect): wasted; then the queued one is served.
    clock.advance(5);
    expect(h.fu.stats().models[0]).toMatchObject({ busy: 1, queued: 0, wastedTokens: 25 });
    clock.advance(5);
    expect((await queued).status).toBe(200);
    const after = await json(fetch(`${h.url}/_stormlab/stats`));
    expect(after.models[0]).toMatchObject({
      busy: 0,
      queued: 0,
      attempts: 2,
      cancelled: 1,
      byStatus: { 200: 1 },
      wastedTokens: 25,
      tokensServed: 25,
    });
    expect(after.models[0].quotas.requests).toMatchObject({ limit: 100, remaining: 98 });
    expect(after.models[1]).toMatchObject({ name: 'idle', attempts: 0, quotas: {} });
    expect(after.http).toMatchObject({ clientClosed: 1, invalid: 0, internalErrors: 0 });
  });

  it('cancel-on-disconnect frees the slot at once: nothing is wasted', async () => {
    const h = await start({
      models: [{ name: 'm', slots: 1, queue: 1, ttftMs: 60_000, tpotMs: 0 }],
      cancelOnDisconnect: true,
    });
    const ctrl = new AbortController();
    const abandoned = h.chat({}, { signal: ctrl.signal });
    await h.waitFor('submitted');
    ctrl.abort();
    await expect(abandoned).rejects.toThrow();
    await h.waitFor('cancelled');
    expect(h.fu.stats().models[0]).toMatchObject({ busy: 0, cancelled: 1, wastedTokens: 0 });
  });

  it('POST /_stormlab/reset puts counters and quotas back to zero and keeps the faults', async () => {
    const h = await start({ models: [fast('m', { rpm: 1 })], faults: [{ kind: 'latency', fromMs: 0, factor: 2 }] });
    expect((await h.chat({})).status).toBe(200);
    expect((await h.chat({})).status).toBe(429);
    await h.post('/v1/chat/completions', '{');
    const res = await h.post('/_stormlab/reset', '');
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ reset: true });
    const s = h.fu.stats();
    expect(s.models[0]).toMatchObject({
      attempts: 0,
      byStatus: {},
      tokensServed: 0,
      quotas: { requests: { limit: 1, remaining: 1, resetMs: 0 } },
    });
    expect(s.http.invalid).toBe(0);
    expect(h.fu.faults()).toHaveLength(1);
    expect((await h.chat({})).status).toBe(200);
  });

  it('a request in flight during a reset finishes on the old model and is not counted', async () => {
    const clock = new ManualClock();
    const h = await start({ models: [{ name: 'm', slots: 1, queue: 0, ttftMs: 5, tpotMs: 0 }] }, { clock });
    const before = h.chat({});
    await h.waitFor('submitted');
    h.fu.reset();
    // The new model has a free slot although the old one is still serving.
    const after = h.chat({});
    await h.waitFor('submitted', 2);
    expect(h.fu.stats().models[0]).toMatchObject({ attempts: 1, busy: 1 });
    clock.advance(5);
    expect((await before).status).toBe(200);
    expect((await after).status).toBe(200);
    expect(h.fu.stats().models[0]).toMatchObject({ attempts: 1, busy: 0, byStatus: { 200: 1 } });
  });

  it('GET /metrics: Prometheus text with requests by model and status, gauges and wasted tokens', async () => {
    const h = await start({
      models: [fast('m'), fast('we"ird')],
      faults: [{ kind: 'errors', fromMs: 0, model: 'we"ird', status: 503 }],
    });
    await h.chat({ max_tokens: 3 });
    await h.chat({ model: 'we"ird' });
    const res = await fetch(`${h.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const text = await res.text();
    expect(text).toContain('# TYPE stormlab_upstream_requests_total counter\n');
    expect(text).toContain('stormlab_upstream_requests_total{model="m",status="200"} 1\n');
    expect(text).toContain('stormlab_upstream_requests_total{model="we\\"ird",status="503"} 1\n');
    expect(text).toContain('# TYPE stormlab_upstream_busy gauge\nstormlab_upstream_busy{model="m"} 0\n');
    expect(text).toContain('# TYPE stormlab_upstream_queued gauge\n');
    expect(text).toContain('stormlab_upstream_wasted_tokens_total{model="m"} 0\n');
    expect(text).toContain('stormlab_upstream_tokens_served_total{model="m"} 18\n');
    expect(text).toContain('stormlab_http_requests_total 3\n');
    // Every sample line is `name{labels} value` or `name value`.
    for (const line of text
      .trimEnd()
      .split('\n')
      .filter((l) => !l.startsWith('#')))
      expect(line).toMatch(/^[a-z_]+(\{.*\})? \d+(\.\d+)?$/);
  });
});
