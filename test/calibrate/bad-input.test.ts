import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cli, tempDir } from '../cli/capture-io.js';
import { otlpBody, TraceWriter } from './otlp-fixture.js';

/** `stormlab calibrate <file> -o out.yaml --report r.json` on a file holding `text`. */
async function calibrateText(text: string, name = 'bad.json') {
  const dir = tempDir({ [name]: text });
  const r = await cli(['calibrate', name, '-o', 'out.yaml', '--report', 'r.json'], { cwd: dir });
  return { ...r, dir };
}

/** One line on stderr, exit 2, nothing written. */
function refused(r: Awaited<ReturnType<typeof calibrateText>>, line: RegExp) {
  expect(r.code).toBe(2);
  expect(r.err.split('\n').filter(Boolean)).toHaveLength(1);
  expect(r.err).toMatch(line);
  expect(r.err).not.toMatch(/\n\s+at /);
  expect(r.files.size).toBe(0);
  expect(existsSync(join(r.dir, 'out.yaml'))).toBe(false);
}

const plainSpans = (n: number) => {
  const w = new TraceWriter('ab'.repeat(16));
  let parent: string | undefined;
  for (let i = 0; i < n; i++)
    parent = w.add('http', parent, `GET /${i}`, 2, i, i + 10, [{ key: 'http.route', value: { stringValue: '/x' } }]);
  return JSON.stringify(otlpBody(w.spans));
};

describe('calibrate refuses bad input: one line, exit 2, nothing half-written', () => {
  it('an empty file', async () => {
    refused(await calibrateText('\n  \n'), /^stormlab: bad\.json: empty file, no traces in it$/m);
  });

  it('a file that is not JSON', async () => {
    refused(
      await calibrateText('hello world\n'),
      /^stormlab: bad\.json:1: not OTLP trace JSON: expected a JSON object, got "hello world"$/m,
    );
    refused(await calibrateText('{"resourceSpans": [}\n'), /^stormlab: bad\.json:1: not JSON \(/m);
  });

  it('JSON that is not OTLP', async () => {
    refused(
      await calibrateText('{"foo": 1}\n'),
      /^stormlab: bad\.json:1: not OTLP trace JSON: expected an ExportTraceServiceRequest/m,
    );
    refused(
      await calibrateText('{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "1"}]}]}]}\n'),
      /^stormlab: bad\.json:1: resourceSpans\[0\]\.scopeSpans\[0\]\.spans\[0\]: a span without a traceId$/m,
    );
  });

  it('a document that never ends', async () => {
    refused(
      await calibrateText('{"resourceSpans": [\n  {"scopeSpans": []}\n'),
      /^stormlab: bad\.json:1: the JSON document starting here never ends$/m,
    );
  });

  it('spans with no GenAI attributes', async () => {
    refused(await calibrateText(`${plainSpans(5)}\n`), /^stormlab: bad\.json: no GenAI spans in 5 spans/m);
  });

  it('a cycle in parent ids', async () => {
    const w = new TraceWriter('cd'.repeat(16));
    const chat = [{ key: 'gen_ai.operation.name', value: { stringValue: 'chat' } }];
    w.add('x', undefined, 'chat', 3, 0, 10, chat);
    w.add('x', '0000000000000003', 'chat', 3, 0, 10, chat);
    w.add('x', '0000000000000002', 'chat', 3, 0, 10, chat);
    refused(
      await calibrateText(`${JSON.stringify(otlpBody(w.spans))}\n`),
      /^stormlab: trace (cd)+: parent ids form a cycle \(span 000000000000000[23] is its own ancestor\)$/m,
    );
  });

  it('a file that is not there, or no -o', async () => {
    const dir = tempDir();
    const r = await cli(['calibrate', 'nope.jsonl', '-o', 'out.yaml'], { cwd: dir });
    expect(r.code).toBe(2);
    expect(r.err).toBe('stormlab: cannot read nope.jsonl: no such file\n');
    const o = await cli(['calibrate', 'nope.jsonl'], { cwd: dir });
    expect(o.code).toBe(2);
    expect(o.err).toBe('stormlab: calibrate: -o <file> is required (the scenario to write; - for stdout)\n');
  });
});

describe('calibrate reads OTLP JSON as it comes', () => {
  it('one pretty-printed body, and bodies one after another, read like JSON Lines', async () => {
    const w = new TraceWriter('ef'.repeat(16));
    const agent = w.add('app', undefined, 'invoke_agent', 1, 0, 1000, [
      { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } },
    ]);
    // Old attribute names: gen_ai.system without an operation name, prompt/completion_tokens, http.status_code.
    const chat = w.add('openai', agent, 'openai.chat', 3, 10, 900, [
      { key: 'gen_ai.system', value: { stringValue: 'openai' } },
      { key: 'gen_ai.request.model', value: { stringValue: 'gpt-4' } },
      { key: 'gen_ai.usage.prompt_tokens', value: { intValue: 100 } },
      { key: 'gen_ai.usage.completion_tokens', value: { intValue: '20' } },
    ]);
    w.add('undici', chat, 'POST', 'SPAN_KIND_CLIENT' as unknown as number, 10, 890, [
      { key: 'http.method', value: { stringValue: 'POST' } },
      { key: 'http.status_code', value: { intValue: 200 } },
    ]);
    const body = otlpBody(w.spans);
    const pretty = JSON.stringify(body, null, 2);
    for (const text of [pretty, `${pretty}\n${pretty.replaceAll('efef', 'eeee')}`]) {
      const dir = tempDir({ 't.json': text });
      const r = await cli(['calibrate', 't.json', '-o', 'out.yaml'], { cwd: dir });
      expect(r.code, r.err).toBe(0);
      const out = r.files.get('out.yaml')!;
      expect(out).toMatch(/models: \[ gpt-4 \]/);
      expect(out).toMatch(text === pretty ? /# 3 spans \(2 GenAI\) in 1 traces/ : /# 6 spans \(4 GenAI\) in 2 traces/);
      expect(out).toMatch(/tokens: \{ prompt: 100, completion: 20 \}/);
    }
  });
});
