// Builds the pad view: src/view.ts bundled with the App SDK by esbuild, and
// src/view.css, both inlined into src/page.html, written as one file the
// server embeds (guest/src/mcp/apps.rs). `--check` builds the same bytes
// and fails when they differ from the committed file, so what ships is what
// these pinned sources make.
//
//   node build.mjs [--check] OUT.html

import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { dirname, join, resolve } from 'node:path';
import * as esbuild from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const check = args[0] === '--check';
const out = resolve(here, args[check ? 1 : 0] ?? 'pad-view.html');
// The server's budget for the file (docs/performance.md).
const BUDGET = 200 * 1024;

// Two settings that let esbuild drop what the view never reaches.
// - The SDK's packages run nothing on import that the view relies on, so a
//   module none of whose exports is used can go (esbuild keeps a module's
//   top-level code otherwise, and the client package's index pulls in its
//   OAuth and transport modules).
// - ext-apps imports zod as `{ z }`, a namespace object esbuild must then
//   build whole (every locale, the JSON Schema converters); importing the
//   same namespace as `* as` lets it keep only the members used. Both
//   forms name the same module namespace, so behaviour is unchanged; the
//   build fails if the import it rewrites is not there.
const lean = {
  name: 'lean-sdk',
  setup(build) {
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.pluginData === 'resolving') return undefined;
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: 'resolving',
      });
      if (/node_modules[\\/](zod|@modelcontextprotocol)[\\/]/.test(resolved.path)) {
        return { ...resolved, sideEffects: false };
      }
      return resolved;
    });
    build.onLoad({ filter: /ext-apps[\\/]dist[\\/]src[\\/]app\.js$/ }, async (args) => {
      let rewritten = 0;
      const contents = (await readFile(args.path, 'utf8')).replace(
        /import\{z as (\w+)\}from"zod\/v4"/g,
        (_, name) => {
          rewritten += 1;
          return `import*as ${name} from"zod/v4"`;
        },
      );
      if (rewritten === 0) {
        throw new Error(`${args.path}: no "import{z as …}from\"zod/v4\"" to rewrite; check the SDK version`);
      }
      return { contents, loader: 'js' };
    });
  },
};

const bundle = await esbuild.build({
  entryPoints: [join(here, 'src/view.ts')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: 'es2022',
  platform: 'browser',
  legalComments: 'none',
  charset: 'utf8',
  write: false,
  plugins: [lean],
  metafile: !!process.env.VIEW_METAFILE,
});
const script = bundle.outputFiles[0].text;
if (process.env.VIEW_METAFILE) await writeFile(process.env.VIEW_METAFILE, JSON.stringify(bundle.metafile));
const style = (await esbuild.transform(await readFile(join(here, 'src/view.css'), 'utf8'), {
  loader: 'css',
  minify: true,
})).code;
// Inline, a closing tag inside the script or style would end it early.
for (const [what, text, tag] of [['script', script, '</script'], ['style', style, '</style']]) {
  if (text.toLowerCase().includes(tag)) throw new Error(`the ${what} holds "${tag}"`);
}
const page = await readFile(join(here, 'src/page.html'), 'utf8');
const html = page
  .replace('/* style */', () => style.trim())
  .replace('/* script */', () => script.trim());

const bytes = Buffer.byteLength(html);
if (check) {
  const committed = await readFile(out, 'utf8').catch(() => '');
  if (committed !== html) {
    console.error(`${out} is not what guest/view/src builds (${bytes} bytes built, ${Buffer.byteLength(committed)} committed): run \`make view\` and commit it`);
    process.exit(1);
  }
  console.log(`${out}: as built, ${bytes} bytes`);
} else {
  await writeFile(out, html);
  console.log(`${out}: ${bytes} bytes${bytes > BUDGET ? ` (over the ${BUDGET}-byte budget)` : ''}`);
}
