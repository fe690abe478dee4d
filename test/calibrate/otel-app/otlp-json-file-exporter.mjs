import { appendFileSync } from 'node:fs';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';

/** `ExportResultCode` of @opentelemetry/core: SUCCESS 0, FAILED 1. */
const SUCCESS = 0;
const FAILED = 1;

/**
 * A span exporter writing what the OTLP/HTTP JSON exporter would send (the SDK's own
 * serializer), one request body a line: the Collector's file exporter's JSON Lines.
 */
export class OtlpJsonFileExporter {
  constructor(path) {
    this.path = path;
  }

  export(spans, done) {
    try {
      const body = Buffer.from(JsonTraceSerializer.serializeRequest(spans));
      appendFileSync(this.path, `${body.toString('utf8')}\n`);
      done({ code: SUCCESS });
    } catch (error) {
      done({ code: FAILED, error });
    }
  }

  shutdown() {
    return Promise.resolve();
  }

  forceFlush() {
    return Promise.resolve();
  }
}
