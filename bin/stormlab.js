#!/usr/bin/env node
// Starts the CLI from the compiled package (npm install builds it: see "prepare").
import { main } from '../dist/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
