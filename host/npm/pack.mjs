#!/usr/bin/env node
// Makes the npm packages: the main package (a launcher, no binary) and one
// package per platform binary, in the pattern esbuild and biome use.
//
//   node host/npm/pack.mjs OUT_DIR [PLATFORM=BINARY ...]
//
// writes OUT_DIR/<package>/ and OUT_DIR/<package>-<version>.tgz (by npm pack)
// for the main package and each platform given, named as Node.js names them
// (`linux-x64`: process.platform and process.arch). The main package lists
// every platform of platforms.json as an optional dependency of the same
// version, which the crate's version sets (one version for every channel).
// Releases put there the binary built for the platform's `release-target`;
// Linux packages say they need glibc, so npm skips them on musl systems.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Not the unscoped `rustpad-mcp`: that name is the TypeScript server's.
const MAIN_PACKAGE = '@rustpad-mcp/sandboxed';
const MCP_NAME = 'io.github.rustpad-mcp/rustpad-mcp';
const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..', '..');
const platforms = JSON.parse(readFileSync(path.join(here, 'platforms.json'), 'utf8'));

const [outDir, ...binaries] = process.argv.slice(2);
if (!outDir) {
  console.error('usage: pack.mjs OUT_DIR [PLATFORM=BINARY ...]');
  process.exit(2);
}

const metadata = JSON.parse(execFileSync('cargo', ['metadata', '--no-deps', '--format-version', '1'],
  { cwd: root, encoding: 'utf8' }));
const crate = metadata.packages.find((p) => p.name === 'rustpad-mcp');
const common = {
  version: crate.version,
  license: crate.license,
  repository: { type: 'git', url: `git+${crate.repository}.git` },
  homepage: `${crate.repository}#readme`,
};
const platformPackage = (platform) => `${MAIN_PACKAGE}-${platform}`;

function write(name, manifest, files) {
  const dir = path.join(outDir, name.replace('/', '+'));
  rmSync(dir, { recursive: true, force: true });
  for (const [from, to, mode] of files) {
    mkdirSync(path.dirname(path.join(dir, to)), { recursive: true });
    copyFileSync(from, path.join(dir, to));
    if (mode) chmodSync(path.join(dir, to), mode);
  }
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const tarball = execFileSync('npm', ['pack', '--pack-destination', path.resolve(outDir), '--loglevel=error'],
    { cwd: dir, encoding: 'utf8' }).trim().split('\n').pop();
  console.log(path.join(outDir, tarball));
}

const documents = [
  [path.join(root, 'host', 'README.md'), 'README.md'],
  [path.join(root, 'LICENSE'), 'LICENSE'],
];

write(MAIN_PACKAGE, {
  name: MAIN_PACKAGE,
  ...common,
  description: crate.description,
  mcpName: MCP_NAME,
  keywords: ['mcp', 'mcp-server', 'rustpad', 'webassembly'],
  bin: { 'rustpad-mcp': 'bin/rustpad-mcp.js' },
  files: ['bin/rustpad-mcp.js'],
  engines: { node: '>=18' },
  optionalDependencies: Object.fromEntries(Object.keys(platforms).map((p) => [platformPackage(p), crate.version])),
}, [[path.join(here, 'bin', 'rustpad-mcp.js'), 'bin/rustpad-mcp.js', 0o755], ...documents]);

for (const pair of binaries) {
  const [name, binary] = pair.split('=');
  const platform = platforms[name];
  if (!platform || !binary) {
    console.error(`pack.mjs: expected PLATFORM=BINARY with a platform of platforms.json, got ${pair}`);
    process.exit(2);
  }
  const binaryName = platform.os === 'win32' ? 'rustpad-mcp.exe' : 'rustpad-mcp';
  write(platformPackage(name), {
    name: platformPackage(name),
    ...common,
    description: `The rustpad-mcp binary for ${name}; install ${MAIN_PACKAGE}, which picks it`,
    os: [platform.os],
    cpu: [platform.cpu],
    ...(platform.libc ? { libc: [platform.libc] } : {}),
    files: [`bin/${binaryName}`],
    preferUnplugged: true,
  }, [[binary, `bin/${binaryName}`, 0o755], ...documents]);
}
