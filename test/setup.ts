import fc from 'fast-check';

// Property tests are deterministic by construction: one fixed seed for every run (CI included).
// FC_SEED=<n> explores other inputs locally; a failure prints the seed and path to replay it.
fc.configureGlobal({ seed: Number(process.env.FC_SEED ?? 20261130) });
