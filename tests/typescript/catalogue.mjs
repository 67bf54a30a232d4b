// What the suites expect tools/list to show, read from where the catalogue is written down for
// people and checked against the tools themselves (guest/tests/docs.rs and
// guest/tests/shipped_schemas.rs): docs/tools.md's summary table and sections (names in order,
// titles, annotations) and the schemas as shipped (guest/tests/input-schemas.json and
// output-schemas.json). A new tool needs no edit here; the suite still compares what the server
// lists with what is documented, never with itself.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const read = (path) => readFileSync(join(root, path), 'utf8');

const ROW = /^\| `([a-z_]+)`( 👤)? \| [^|]+ \| ([TF])\/([TF])\/([TF])\/([TF]) \| (yes|no) \|$/;
const TITLE = /^\*\*Title:\*\* (.+?) · \*\*Annotations:\*\*/;

function catalogue() {
  const lines = read('docs/tools.md').split('\n');
  const inputs = JSON.parse(read('guest/tests/input-schemas.json'));
  const outputs = JSON.parse(read('guest/tests/output-schemas.json'));
  const titles = {};
  let section = null;
  for (const line of lines) {
    const heading = /^## `([a-z_]+)`/.exec(line);
    if (heading) section = heading[1];
    const title = TITLE.exec(line);
    if (section && title && !(section in titles)) titles[section] = title[1];
  }
  const tools = [];
  for (const line of lines) {
    const row = ROW.exec(line);
    if (!row) continue;
    const name = row[1];
    const [readOnly, destructive, idempotent, openWorld] = row.slice(3, 7).map((flag) => flag === 'T');
    tools.push({
      name,
      title: titles[name],
      readOnly,
      destructive,
      idempotent,
      openWorld,
      inputRequired: inputs[name].required,
      outputRequired: outputs[name].required,
    });
  }
  if (tools.length === 0) throw new Error('no tool rows in docs/tools.md');
  return tools;
}

/** Every tool, in the order tools/list shows them. */
export const TOOLS = catalogue();
