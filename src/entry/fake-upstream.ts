/**
 * `stormlab/fake-upstream`: the fake LLM upstream `stormlab serve` runs, for your own test
 * suites. `createFakeUpstream({ upstream: { models: [...] } })` listens on a free port and
 * speaks OpenAI chat completions, the Responses API, embeddings and Anthropic messages (tools,
 * structured output, streaming), with fault phases, a tool policy and a request log you set.
 */
export {
  createFakeUpstream,
  FAKE_UPSTREAM_DEFAULTS,
  type FakeUpstream,
  type FakeUpstreamConfig,
  type FakeUpstreamObserver,
  type FakeUpstreamOptions,
} from '../fake-upstream/server.js';
export { DEFAULT_UPSTREAM } from '../fake-upstream/default-upstream.js';
export type { FakeUpstreamStats, HttpCounters } from '../fake-upstream/fake-upstream-stats.js';
export type { FaultPhaseInput, RelativeTo, ServedFault } from '../fake-upstream/fault-phases.js';
export type { UnknownModels } from '../fake-upstream/model-names.js';
export { REQUEST_LOG_CAPACITY, type RequestLogEntry } from '../fake-upstream/request-log.js';
export { TOOL_POLICY_DEFAULTS, type ToolPolicy } from '../fake-upstream/tool-policy.js';
export { valueForSchema } from '../fake-upstream/json-schema-value.js';
