/** The bundled scenarios, in the order `stormlab scenarios` lists them: one list for every test that names them all. */
export const BUNDLED_NAMES = [
  'brownout',
  'deadline-budget',
  'fallback',
  'framework-stack',
  'metastable',
  'replicas',
  'retry-storm',
  'sdk-stack',
  'side-effects',
  'stream-faults',
  'tenant-flood',
  'throughput',
  'tpm-burst',
] as const;
