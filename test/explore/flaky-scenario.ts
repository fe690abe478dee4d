/**
 * One engine layer over an upstream that fails 30 % of calls with 503: the retry budget's
 * ratio decides how many failures are retried into successes, so sweeps and tunes over it see
 * every point differ. 10 s at 20 roots/s: ~20 ms a run. `prompt` and `throttle` are the two
 * places the tests vary it.
 */
export function flakyScenario(o: { prompt?: string; throttle?: string } = {}): string {
  return `name: flaky
seed: 7
duration: 10s
drain: 20s
arrival: { type: constant, rate: 20 }
tokens:
  prompt: ${o.prompt ?? '{ dist: const, value: 200 }'}
  completion: { dist: const, value: 50 }
layers:
  - name: llm
    timeout: 5s
    retry: { policy: engine }
    models: [primary]
engine:
  maxAttempts: 3
  retryBudget: { ratio: 0.1, minRetriesPerSec: 0 }
  throttle: ${o.throttle ?? '{ k: 2 }'}
  breaker: false
upstream:
  models:
    - { name: primary, slots: 64, queue: 64, ttft: { dist: const, value: 100ms }, tpot: 1ms }
  faults:
    - { kind: errors, rate: 0.3, status: { 503: 1 } }
`;
}
