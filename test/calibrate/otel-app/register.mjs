/**
 * The OpenTelemetry set-up of the instrumented program (`agents.mjs`), loaded first with
 * `node --import ./register.mjs`: as under ESM it must be, the instrumentation hook is
 * registered before anything imports the openai SDK. The real Node SDK (sdk-trace-node), the
 * real openai instrumentation (one `chat` span per logical call) and the undici one (one HTTP
 * client span per attempt under it, with `x-stainless-retry-count` and the retry hints kept as
 * attributes), exporting OTLP JSON to the file `OTLP_FILE` names, one ExportTraceServiceRequest
 * a line, as the Collector's file exporter writes.
 */
import { register } from 'node:module';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { OpenAIInstrumentation } from '@opentelemetry/instrumentation-openai';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { OtlpJsonFileExporter } from './otlp-json-file-exporter.mjs';

register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);

const file = process.env.OTLP_FILE;
if (!file) throw new Error('OTLP_FILE: where to write the traces');

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'agents' }),
  spanProcessors: [
    new BatchSpanProcessor(new OtlpJsonFileExporter(file), { scheduledDelayMillis: 200, maxExportBatchSize: 512 }),
  ],
});
provider.register();

registerInstrumentations({
  tracerProvider: provider,
  instrumentations: [
    new OpenAIInstrumentation(),
    new UndiciInstrumentation({
      headersToSpanAttributes: {
        requestHeaders: ['x-stainless-retry-count'],
        responseHeaders: ['retry-after', 'retry-after-ms'],
      },
    }),
  ],
});

/** The program calls this before it exits, so every span is on disk. */
globalThis.otelShutdown = () => provider.shutdown();
