import { createServer } from 'node:http';
import { Registry } from 'prom-client';
import { Guard, systemClock, systemRandom } from 'stormlab/engine';
import { guardMetrics } from 'stormlab/prometheus';

// Serves the engine's metrics at /metrics for Prometheus to scrape.
export async function main(port = Number(process.env.PORT ?? 9464)) {
  const registry = new Registry(); // or leave it out: prom-client's global register
  const guard = new Guard({ clock: systemClock, random: systemRandom(), name: 'chat' });
  guardMetrics(guard, { registry }); // attempts, retries, sheds, trips, tokens; breaker/throttle/budget gauges

  await guard.run(async () => 'an answer');

  const server = createServer(async (req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
