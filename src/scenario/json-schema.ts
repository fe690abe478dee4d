import { z } from 'zod';
import { scenarioSchema } from './schema.js';

/** Where editors find the schema once the package is installed (`$id` of the generated file). */
export const SCENARIO_SCHEMA_FILE = 'scenario.schema.json';

/**
 * The scenario format as a JSON Schema, generated from the zod schema the loader validates
 * with, so editors complete and check scenario files by the same rules. It describes what a
 * file may contain (zod's input side: durations as numbers or strings, defaults optional).
 * Checks zod runs as code (cross-field rules, engine settings that must fit together) are not
 * in it; `stormlab run` still reports those.
 */
export function scenarioJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(scenarioSchema(), { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' });
  return {
    ...schema,
    $id: `https://stormlab.dev/${SCENARIO_SCHEMA_FILE}`,
    title: 'stormlab scenario',
    description: 'A stormlab scenario (YAML or JSON). Reference: docs/scenario-reference.md',
  };
}

/** The file's text: what `npm run schema` writes and the test checks is fresh. */
export function scenarioJsonSchemaText(): string {
  return `${JSON.stringify(scenarioJsonSchema(), null, 2)}\n`;
}
