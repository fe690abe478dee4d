// Regenerates scenario.schema.json from the zod schema: `npm run schema`.
// test/scenario/json-schema.test.ts fails when the committed file is stale.
import { writeFileSync } from 'node:fs';
import { SCENARIO_SCHEMA_FILE, scenarioJsonSchemaText } from '../src/scenario/json-schema.js';

writeFileSync(new URL(`../${SCENARIO_SCHEMA_FILE}`, import.meta.url), scenarioJsonSchemaText());
