import { CalibrateError } from './calibrate-error.js';
import { type LevelStats, type Observations, type RetryStats, ToolStats, bump } from './observations.js';
import { isGenAi, Role, type Span } from './span.js';

/**
 * Sibling spans of one call are taken as its retries when the earlier one failed and the next
 * starts within this long after it ended: longer than any client library's backoff (the
 * Vercel AI SDK's 2 s then 4 s, LangChain's up to ~64 s is the exception and is said so).
 */
export const SIBLING_RETRY_GAP_MS = 30_000;
/** A wait at least this share of a retry-after hint counts as honouring it (clocks and timers are not exact). */
const HONOURED = 0.9;
const MAX_UNKNOWN_NAMES = 64;

/** A GenAI span with the GenAI spans below it; a model call's HTTP attempts apart. */
interface Node {
  span: Span;
  kids: Node[];
  http: Span[];
}

/** One try, as a retry policy sees it. */
interface Attempt {
  start: number;
  end: number;
  failed: boolean;
  status: number;
  hintMs: number;
  counted: boolean;
}

const RETRYABLE = (s: number) => s === 408 || s === 409 || s === 429 || s >= 500;

const byStart = (a: { start: number }, b: { start: number }) => a.start - b.start;

/**
 * Reads one complete trace into `obs`: builds its tree (a cycle in parent ids is an error),
 * keeps the GenAI spans (others are seen through: their children go to their parent), groups
 * sibling retries into logical calls and records what each level did.
 */
export function observeTrace(obs: Observations, traceId: string, spans: Span[]): void {
  obs.traces++;
  obs.spans += spans.length;
  const byId = new Map<string, Span>();
  for (const s of spans) byId.set(s.id, s);
  const kids = new Map<string, Span[]>();
  const tops: Span[] = [];
  for (const s of spans) {
    if (s.parent === '' || !byId.has(s.parent) || s.parent === s.id) {
      if (s.parent === s.id) throw cycle(traceId, s.id);
      if (s.parent !== '') obs.orphans++;
      tops.push(s);
      continue;
    }
    let k = kids.get(s.parent);
    if (k === undefined) kids.set(s.parent, (k = []));
    k.push(s);
  }
  // Every span must hang from a top; one that does not sits on a cycle of parent ids.
  let reached = 0;
  const stack = [...tops];
  while (stack.length > 0) {
    const s = stack.pop()!;
    reached++;
    const k = kids.get(s.id);
    if (k !== undefined) for (const c of k) stack.push(c);
  }
  if (reached < spans.length) {
    const seen = new Set<string>();
    const walk = [...tops];
    while (walk.length > 0) {
      const s = walk.pop()!;
      seen.add(s.id);
      for (const c of kids.get(s.id) ?? []) walk.push(c);
    }
    const stuck = spans.find((s) => !seen.has(s.id))!;
    throw cycle(traceId, stuck.id);
  }
  for (const s of spans) {
    if (isGenAi(s.role)) obs.genAiSpans++;
    else if (s.role === Role.other && obs.unknown.size < MAX_UNKNOWN_NAMES) bump(obs.unknown, s.name || '(no name)');
    else if (s.role === Role.other) bump(obs.unknown, '(other names)');
    if (s.start < obs.first) obs.first = s.start;
    if (s.end > obs.last) obs.last = s.end;
  }

  const nodes = (s: Span): Node[] => {
    const k = kids.get(s.id) ?? [];
    if (!isGenAi(s.role)) {
      if (s.role === Role.http) obs.strayHttp++;
      return k.flatMap(nodes);
    }
    const n: Node = { span: s, kids: [], http: [] };
    if (s.role === Role.model) n.http = httpUnder(s, kids);
    else for (const c of k) n.kids.push(...nodes(c));
    return [n];
  };
  const top = tops.flatMap(nodes);
  if (top.length === 0) {
    obs.plainTraces++;
    return;
  }
  if (top.length === 1 && top[0].span.role === Role.agent) obs.singleAgentTop++;
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  let failed = false;
  for (const n of top) {
    if (n.span.start < start) start = n.span.start;
    if (n.span.end > end) end = n.span.end;
  }
  // The root task (level 0) is the trace: its children are its top GenAI spans.
  const root: Node = {
    span: { ...top[0].span, start, end, role: Role.agent, failed: false, name: 'task', agent: '' },
    kids: top,
    http: [],
  };
  failed = attemptOfAgent(obs, 0, root);
  const l0 = obs.level(0);
  l0.spans++;
  l0.logical++;
  l0.latency.add(end - start);
  if (failed) l0.failed++;
  obs.root(start, end, failed);
}

function cycle(traceId: string, spanId: string): CalibrateError {
  return new CalibrateError(`trace ${traceId}: parent ids form a cycle (span ${spanId} is its own ancestor)`);
}

/** The HTTP client spans under a model call (through spans that are not GenAI), by start. */
function httpUnder(s: Span, kids: Map<string, Span[]>): Span[] {
  const out: Span[] = [];
  const stack = [...(kids.get(s.id) ?? [])];
  while (stack.length > 0) {
    const c = stack.pop()!;
    if (c.role === Role.http) out.push(c);
    else if (!isGenAi(c.role)) stack.push(...(kids.get(c.id) ?? []));
  }
  return out.sort(byStart);
}

/** The key under which siblings are the same call: role, and model, tool or agent name. */
function keyOf(s: Span): string {
  return `${s.role}|${s.model}|${s.tool}|${s.agent}|${s.role === Role.model ? '' : s.name}`;
}

/**
 * Groups a parent's children into logical calls: a child that repeats the key of the one
 * before it with that one failed, starting within `SIBLING_RETRY_GAP_MS` of its end, is its
 * retry. Children are taken in start order.
 */
function logicalCalls(children: Node[], retry: (n: Node) => RetryStats): Node[][] {
  const sorted = [...children].sort((a, b) => a.span.start - b.span.start);
  const groups: Node[][] = [];
  const lastOf = new Map<string, Node[]>();
  for (const n of sorted) {
    const key = keyOf(n.span);
    const g = lastOf.get(key);
    const prev = g?.[g.length - 1];
    if (
      prev !== undefined &&
      n.span.start >= prev.span.end - 1 &&
      n.span.start - prev.span.end <= SIBLING_RETRY_GAP_MS
    ) {
      if (prev.span.failed) {
        const r = retry(n);
        r.siblingRetries++;
        const status = lastStatus(prev);
        if (RETRYABLE(status)) r.sure++;
        else if (status === 0) r.unsure++;
        g!.push(n);
        continue;
      }
      retry(n).repeats++;
    }
    const fresh = [n];
    groups.push(fresh);
    lastOf.set(key, fresh);
  }
  return groups;
}

function lastStatus(n: Node): number {
  if (n.http.length > 0) return n.http[n.http.length - 1].status;
  return n.span.status;
}

/** The attempts of one logical call: each HTTP attempt of each sibling span (or the span itself, when it has none). */
function attemptsOf(group: Node[]): Attempt[] {
  const out: Attempt[] = [];
  for (const n of group) {
    if (n.http.length === 0)
      out.push({
        start: n.span.start,
        end: n.span.end,
        failed: n.span.failed,
        status: n.span.status,
        hintMs: n.span.retryAfterMs,
        counted: n.span.retryCount >= 0,
      });
    else
      for (const h of n.http)
        out.push({
          start: h.start,
          end: h.end,
          failed: h.failed,
          status: h.status,
          hintMs: h.retryAfterMs,
          counted: h.retryCount >= 0,
        });
  }
  return out;
}

/**
 * Records the retries of one logical call's attempts; `httpRetries` of them were HTTP attempts
 * under one span (the rest, sibling spans, were counted as the call was grouped).
 */
function recordRetries(r: RetryStats, attempts: Attempt[], httpRetries = 0): void {
  const failed = attempts[attempts.length - 1].failed;
  r.call(attempts.length, failed);
  for (let i = 0; i < attempts.length; i++) {
    const a = attempts[i];
    if (a.counted) r.stainlessCounted++;
    if (!a.failed) continue;
    r.failures++;
    if (i === attempts.length - 1) continue;
    r.retriedFailures++;
    const gap = Math.max(0, attempts[i + 1].start - a.end);
    r.gap(i + 1, gap);
    if (a.hintMs >= 0) {
      r.hinted++;
      if (gap >= HONOURED * a.hintMs) r.honoured++;
    }
  }
  r.httpRetries += httpRetries;
}

/** One attempt of an agent (or the root task) at `level`: its children, their fan-out, its tools; true if it failed. */
function attemptOfAgent(obs: Observations, level: number, n: Node): boolean {
  const stats = obs.level(level);
  const agents: Node[] = [];
  const models: Node[] = [];
  const tools: Node[] = [];
  for (const k of n.kids) {
    if (k.span.role === Role.agent) agents.push(k);
    else if (k.span.role === Role.model) models.push(k);
    else tools.push(k);
  }
  let failed = n.span.failed;
  // Agents below: their own level.
  const agentCalls = logicalCalls(agents, () => obs.level(level + 1).retry);
  bump(stats.agentKids, agentCalls.length);
  for (const g of agentCalls) {
    const below = obs.level(level + 1);
    let last = false;
    for (const a of g) {
      below.spans++;
      if (a.span.agent !== '') bump(below.names, a.span.agent);
      last = attemptOfAgent(obs, level + 1, a) || a.span.failed;
    }
    below.logical++;
    below.latency.add(g[g.length - 1].span.end - g[0].span.start);
    if (last) below.failed++;
    recordRetries(
      below.retry,
      g.map((a) => attemptOf(a.span)),
    );
    if (last) failed = true;
  }
  // Model calls: the leaf.
  const modelCalls = logicalCalls(models, () => obs.leaf.retry);
  bump(stats.modelKids, modelCalls.length);
  for (const g of modelCalls) if (modelCall(obs, g)) failed = true;
  // Tool calls.
  const toolCalls = logicalCalls(tools, (t) => toolStats(stats, t.span).retry);
  for (const g of toolCalls) {
    const t = toolStats(stats, g[0].span);
    t.calls++;
    t.spans += g.length;
    t.latency.add(g[g.length - 1].span.end - g[0].span.start);
    const f = g[g.length - 1].span.failed;
    if (f) t.failed++;
    recordRetries(
      t.retry,
      g.map((a) => attemptOf(a.span)),
    );
  }
  const all = [...agentCalls, ...modelCalls, ...toolCalls].map((g) => [g[0].span.start, g[g.length - 1].span.end]);
  if (all.length >= 2) {
    all.sort((a, b) => a[0] - b[0]);
    let overlap = false;
    for (let i = 1; i < all.length && !overlap; i++) if (all[i][0] < all[i - 1][1] - 1) overlap = true;
    if (overlap) stats.parallel++;
    else stats.sequential++;
  }
  return failed;
}

function attemptOf(s: Span): Attempt {
  return { start: s.start, end: s.end, failed: s.failed, status: s.status, hintMs: s.retryAfterMs, counted: false };
}

function toolStats(level: LevelStats, s: Span): ToolStats {
  const name = s.tool || s.name || 'tool';
  let t = level.tools.get(name);
  if (t === undefined) level.tools.set(name, (t = new ToolStats()));
  return t;
}

/** One logical model call (its sibling retries in `group`); true if it failed in the end. */
function modelCall(obs: Observations, group: Node[]): boolean {
  const leaf = obs.leaf;
  const attempts = attemptsOf(group);
  // Each span of the group is one attempt or holds its HTTP attempts: those past one a span are HTTP retries.
  recordRetries(leaf.retry, attempts, attempts.length - group.length);
  const first = group[0].span;
  const last = group[group.length - 1];
  const failed = attempts[attempts.length - 1].failed;
  leaf.logical++;
  leaf.attempts += attempts.length;
  if (failed) leaf.failed++;
  leaf.latency.add(Math.max(last.span.end, attempts[attempts.length - 1].end) - first.start);
  bump(leaf.scopes, first.scope || '(no scope)');
  const usage = group.find((n) => n.span.outTok >= 0 || n.span.inTok >= 0)?.span;
  // A call that failed in the end has no usage to record.
  if (usage === undefined) {
    if (!failed) leaf.untokened++;
  } else {
    if (usage.inTok >= 0) {
      leaf.inTok.add(usage.inTok);
      leaf.tokensIn += usage.inTok;
    }
    if (usage.outTok >= 0) {
      leaf.outTok.add(usage.outTok);
      leaf.tokensOut += usage.outTok;
    }
  }
  const model = obs.model(first.model || '(no model)');
  model.logical++;
  for (const a of attempts) {
    model.attempts++;
    model.status(a.failed ? (a.status > 0 ? String(a.status) : 'error') : a.status > 0 ? String(a.status) : '200');
    obs.bin(a.start, a.failed);
  }
  const ok = attempts[attempts.length - 1];
  if (!ok.failed) {
    const span = last.span;
    const out = span.outTok >= 0 ? span.outTok : (usage?.outTok ?? -1);
    if (out >= 0) model.answers.add(ok.end - ok.start, out);
    else model.untokened++;
    if (span.firstTokenMs >= 0) {
      leaf.streamed++;
      model.firstToken.add(Math.max(0, span.firstTokenMs + span.start - ok.start));
    }
  }
  return failed;
}
