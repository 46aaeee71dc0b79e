#!/usr/bin/env node
// The `tms` npm bin: registers tsx's loader (the CLI is TypeScript, run without a build step) and runs it.
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');
