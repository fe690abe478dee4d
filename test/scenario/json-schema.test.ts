import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { listBundledScenarios } from '../../src/scenario/bundled.js';
import { SCENARIO_SCHEMA_FILE, scenarioJsonSchemaText } from '../../src/scenario/json-schema.js';

const committed = readFileSync(new URL(`../../${SCENARIO_SCHEMA_FILE}`, import.meta.url), 'utf8');
const schema = JSON.parse(committed) as {
  properties: Record<string, { description?: string; anyOf?: unknown[] }>;
  required: string[];
  additionalProperties: boolean;
};

describe('scenario.schema.json', () => {
  it('is fresh: what the zod schema generates now (run `npm run schema` after changing it)', () => {
    expect(committed).toBe(scenarioJsonSchemaText());
  });

  it('names the required fields and refuses unknown top-level ones, as the loader does', () => {
    expect(schema.required.sort()).toEqual(['arrival', 'duration', 'layers', 'name', 'tokens', 'upstream']);
    expect(schema.additionalProperties).toBe(false);
  });

  it('describes durations as numbers (ms) or strings with units', () => {
    expect(schema.properties.duration.anyOf).toHaveLength(2);
    expect(schema.properties.duration.description).toMatch(/1m30s/);
  });

  it('knows every top-level field of every bundled scenario', () => {
    for (const s of listBundledScenarios()) {
      const doc = YAML.parse(readFileSync(s.file, 'utf8')) as Record<string, unknown>;
      for (const key of Object.keys(doc)) expect(schema.properties, `${s.name}: ${key}`).toHaveProperty(key);
    }
  });
});
