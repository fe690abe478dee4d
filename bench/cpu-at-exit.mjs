// Preloaded (node --import) into a process the fleet bench times: at exit it writes the
// process's own CPU time (user + system, µs; process.cpuUsage) to $STORMLAB_BENCH_CPU_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.STORMLAB_BENCH_CPU_FILE;
if (file !== undefined && file !== '')
  process.on('exit', () => {
    const { user, system } = process.cpuUsage();
    writeFileSync(file, JSON.stringify({ userUs: user, systemUs: system }));
  });
