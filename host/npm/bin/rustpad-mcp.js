#!/usr/bin/env node
// Starts the rustpad-mcp binary that this platform's package carries: an
// optional dependency named `<this package>-<platform>-<arch>`, which npm
// installs only where its os, cpu and libc fields match. The binary speaks
// MCP on the standard streams it inherits; this script passes on signals and
// the exit status, nothing else.
'use strict';

const { spawn } = require('node:child_process');
const path = require('node:path');

const manifest = require('../package.json');
const platformPackage = `${manifest.name}-${process.platform}-${process.arch}`;
const binaryName = process.platform === 'win32' ? 'rustpad-mcp.exe' : 'rustpad-mcp';

let binary;
try {
  binary = path.join(path.dirname(require.resolve(`${platformPackage}/package.json`)), 'bin', binaryName);
} catch {
  const built = Object.keys(manifest.optionalDependencies ?? {});
  // The Linux binaries link glibc; npm skips their packages where the C library is another (musl).
  const withoutGlibc = process.platform === 'linux' && !process.report?.getReport().header.glibcVersionRuntime;
  console.error(withoutGlibc && built.includes(platformPackage)
    ? 'rustpad-mcp: the Linux builds need glibc 2.28 or later, and this system has another C library ' +
      '(Alpine\'s musl?); build it from source with: cargo install rustpad-mcp'
    : built.includes(platformPackage)
    ? `rustpad-mcp: ${platformPackage}, which carries this platform's binary, is not installed: ` +
      'npm leaves it out when optional dependencies are omitted (--omit=optional); install again with them'
    : `rustpad-mcp: there is no build for ${process.platform}-${process.arch} (there are: ` +
      `${built.map((name) => name.slice(manifest.name.length + 1)).join(', ')}); ` +
      'build it from source with: cargo install rustpad-mcp');
  process.exit(1);
}

const child = spawn(binary, process.argv.slice(2), { stdio: 'inherit', windowsHide: true });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => child.kill(signal));
}
child.on('error', (error) => {
  console.error(`rustpad-mcp: cannot start ${binary}: ${error.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    // End the way the binary ended: without our forwarding handler, the signal's default action.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
