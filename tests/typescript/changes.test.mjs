// get_changes through the official TypeScript client, in both eras: the
// diff since a base and who made the changes, for a person still in the pad
// and one who has left. Argument and fallback cases are in
// tests/python/test_changes.py.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { MODES, openClient, padId, useRustpad, textOf } from './harness.mjs';

const DEPARTED = 'someone who has left';

describe('get_changes', () => {
  const rustpad = useRustpad();

  for (const mode of MODES) {
    describe(`${mode} mode`, () => {
      let client;
      before(async () => {
        ({ client } = await openClient(mode, { rustpadUrl: rustpad.url }));
      });
      after(async () => {
        await client?.close();
      });

      const call = async (name, args) => {
        const result = await client.callTool({ name, arguments: args });
        assert.notEqual(result.isError, true, textOf(result));
        return result.structuredContent;
      };

      it('reports the diff and both authors: one who left, one still here', async () => {
        const id = padId(`changes-${mode}`);
        const original = 'title\nbody\n';
        await rustpad.seed(id, { text: original });
        const read = await call('get_document', { id, start_line: 1 });
        let logged = (await rustpad.log(id)).length;
        await rustpad.type(id, { seed: 4, count: 5 });
        const leftOperations = (await rustpad.edits(id, logged)).length;
        logged = (await rustpad.log(id)).length;
        const carol = await rustpad.stay(id, { seed: 9, count: 4, name: 'Carol' });
        let changes;
        try {
          const carolOperations = (await rustpad.edits(id, logged)).length;
          changes = await call('get_changes', { id, base: read.base });
          for (const author of changes.authors) assert.ok(author.connections.length > 0, JSON.stringify(author));
          assert.deepEqual(changes.authors.map(({ connections, ...author }) => author), [
            { name: DEPARTED, in_pad: false, operations: leftOperations },
            { name: 'Carol', in_pad: true, operations: carolOperations },
          ]);
          assert.equal(changes.operations, leftOperations + carolOperations);
        } finally {
          await carol.leave();
        }
        assert.equal(changes.untrusted, true);
        assert.equal(changes.since_revision, read.revision);
        assert.equal(changes.revision, read.revision + changes.operations);
        assert.equal(changes.changed, true);
        assert.equal(changes.too_different, false);
        // Every line the diff removes was in the text read, every line it adds is in the text now.
        const now = carol.report.final_text.split('\n');
        const then = original.split('\n');
        const body = changes.diff.split('\n').slice(2);
        assert.ok(body.some((line) => line.startsWith('+')), changes.diff);
        for (const line of body) {
          if (line.startsWith('-')) assert.ok(then.includes(line.slice(1)), line);
          if (line.startsWith('+')) assert.ok(now.includes(line.slice(1)), line);
        }
        // The new base compares from here: nothing since.
        const quiet = await call('get_changes', { id, base: changes.base });
        assert.deepEqual([quiet.operations, quiet.changed, quiet.diff], [0, false, '']);
      });

      it('refuses a base from before the pad was written anew', async () => {
        const id = padId(`changes-stale-${mode}`);
        await rustpad.seed(id, { text: 'first life\n' });
        const { base } = await call('get_document', { id, start_line: 1 });
        await rustpad.seed(id, { text: 'second life\n' });
        const result = await client.callTool({ name: 'get_changes', arguments: { id, base } });
        assert.equal(result.isError, true);
        assert.match(textOf(result), /Read the pad again/);
      });
    });
  }
});
