/** `stormlab calibrate --help`, after the options (apart, so --help loads nothing else). */
export const CALIBRATE_HELP = `
Reads OpenTelemetry traces as OTLP JSON: the OTLP/HTTP JSON body (an ExportTraceServiceRequest),
or JSON Lines of them as the Collector's file exporter writes. Spans are recognised by the GenAI
semantic conventions, old and new names (gen_ai.operation.name chat / embeddings / execute_tool /
invoke_agent, gen_ai.system or gen_ai.provider.name, gen_ai.request.model, gen_ai.usage.*),
HTTP client spans under a model call (one per attempt: http.response.status_code,
x-stainless-retry-count, retry-after) and the Vercel AI SDK's ai.* spans.

--serve-log FILE: the request log of stormlab serve (--log) from the same run, on the same
clock. It has no trace ids or tokens, so the tree still comes from the traces; the upstream's
error mix and fault phases come from the server's own statuses (resets included), and the fit
says its latency beside the spans'.

Privacy: calibrate reads only the attributes it needs (operation, model, token counts, tool and
agent names, statuses, times). It never copies prompt, completion or tool argument text into the
scenario or the report.

Memory: the traces are streamed; what is held is the traces still open (a trace is complete 60 s
after its last span's end in the stream), fixed-size samples per layer and model, and 16 bytes
per root task.

The scenario's header says where its figures come from; each approximation, and what could not
be derived, is a comment in it and a line on stderr. The fit table compares the traces with the
scenario simulated on the traced root start times (closed-loop users as fitted), over seeds 1, 2,
… until 2,000 roots are pooled (--report writes it as JSON, schema stormlab.calibrate/v1).

Examples:
  stormlab calibrate traces.jsonl -o mine.yaml
  stormlab compare mine.yaml                       # naive = the retries as observed, vs the engine
  stormlab calibrate traces.jsonl -o storm.yaml --faults brownout
  stormlab tune storm.yaml --maximize goodput --params engine.throttle.k,engine.retryBudget.ratio
`;
