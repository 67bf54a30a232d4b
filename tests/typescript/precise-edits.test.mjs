// Precise edits through the official TypeScript client, in both eras:
// get_document line windows that name a base, and edit_document batches
// stated against that base while a person types in the pad.
//
// Every argument problem and the guard's removal rule are covered case by
// case in tests/python/test_precise_edits.py; the randomized check against
// the operational-transform crate is tests/host-tests/tests/edit_oracle.rs.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { MODES, UNTRUSTED_PREAMBLE, openClient, padId, useRustpad, textOf } from './harness.mjs';

const BASE = /^r(0|[1-9][0-9]*)\.[0-9a-f]{16}$/;

/** The kinds of client frames a pad received, in order. */
async function frameKinds(rustpad, id) {
  return (await rustpad.log(id)).map((frame) => Object.keys(frame)[0]);
}

/** Splits an untrusted listing into the summary before the preamble and the body after it. */
function listing(result) {
  const text = textOf(result);
  const at = text.indexOf(UNTRUSTED_PREAMBLE);
  assert.notEqual(at, -1, text);
  return { summary: text.slice(0, at), body: text.slice(at + UNTRUSTED_PREAMBLE.length).replace(/^\n+/, '') };
}

describe('precise edits', () => {
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
        return result;
      };

      it('a window numbers its lines and names its base, without joining the pad', async () => {
        const id = padId(`window-${mode}`);
        await rustpad.seed(id, { text: 'first\nsecond 🎉\nthird\n' });
        const result = await call('get_document', { id, start_line: 2, end_line: 3 });
        const window = result.structuredContent;
        assert.equal(window.text, 'second 🎉\nthird\n');
        assert.deepEqual([window.start_line, window.end_line, window.total_lines], [2, 3, 4]);
        assert.equal(window.truncated, false);
        assert.equal(window.revision, 1);
        assert.match(window.base, BASE);
        const { summary, body } = listing(result);
        assert.ok(summary.includes(`lines 2–3 of 4, at revision 1 (base ${window.base})`), summary);
        assert.equal(body, '     2\tsecond 🎉\n     3\tthird');
        assert.deepEqual(await frameKinds(rustpad, id), ['CursorData']);
      });

      it('edits land where the model read them while a person types', async () => {
        const id = padId(`edit-typing-${mode}`);
        await rustpad.seed(id, { text: 'alpha line\nbeta line\ngamma line\n' });
        const { base } = (await call('get_document', { id, start_line: 1 })).structuredContent;
        const olds = ['alpha', 'beta line', 'gamma'];
        const typed = await rustpad.type(id, { seed: 11, count: 30, avoid: olds });
        assert.equal(typed.typed.length, 30);
        const batch = [
          { old_text: 'alpha', new_text: 'ALPHA' },
          { old_text: 'beta line', new_text: 'second' },
          { old_text: 'gamma', new_text: 'γ' },
        ];
        const result = await call('edit_document', { id, base, edits: batch });
        assert.equal(result.structuredContent.dry_run, false);
        assert.match(result.structuredContent.base, BASE);
        let before = typed.final_text;
        let after = await rustpad.text(id);
        for (const edit of batch) {
          assert.equal(before.split(edit.old_text).length, 2, before);
          assert.equal(after.split(edit.new_text).length, 2, after);
          before = before.replace(edit.old_text, '');
          after = after.replace(edit.new_text, '');
        }
        assert.equal(after, before, 'every keystroke of the person is kept');
      });

      it('a batch of 50 edits reaches Rustpad as one operation', async () => {
        const id = padId(`edit-batch-${mode}`);
        const rows = Array.from({ length: 50 }, (_, n) => `row ${String(n + 1).padStart(2, '0')}: todo`);
        await rustpad.seed(id, { text: `${rows.join('\n')}\n` });
        const { base } = (await call('get_document', { id, start_line: 1 })).structuredContent;
        const batch = rows.map((row) => ({ old_text: row, new_text: row.replace('todo', 'done') }));
        const result = await call('edit_document', { id, base, edits: batch });
        assert.equal(await rustpad.text(id), `${rows.map((row) => row.replace('todo', 'done')).join('\n')}\n`);
        assert.equal((await rustpad.edits(id)).length, 1);
        // The seed, the write's mark, the batch.
        assert.equal(result.structuredContent.revision, 3);
        assert.deepEqual(result.structuredContent.edits[49], { edit: 50, start_line: 50, end_line: 50 });
        const { summary, body } = listing(result);
        assert.ok(summary.startsWith(`Applied 50 edits to pad "${id}" as one change`), summary);
        assert.equal(body, result.structuredContent.diff);
      });

      it('a dry run shows the diff and changes nothing', async () => {
        const id = padId(`edit-dry-${mode}`);
        const original = 'keep\nchange me\nkeep too\n';
        await rustpad.seed(id, { text: original });
        const result = await call('edit_document', {
          id,
          edits: [{ old_text: 'change me', new_text: 'changed' }],
          dry_run: true,
        });
        assert.equal(result.structuredContent.dry_run, true);
        assert.equal(result.structuredContent.would_ask, false);
        assert.ok(result.structuredContent.diff.includes('-change me\n+changed\n'), result.structuredContent.diff);
        assert.equal(await rustpad.text(id), original);
        assert.deepEqual(await rustpad.edits(id), []);
      });

      it('a base from before the pad was written anew is refused and nothing is written', async () => {
        const id = padId(`edit-stale-${mode}`);
        await rustpad.seed(id, { text: 'before the restart\n' });
        const { base } = (await call('get_document', { id, start_line: 1 })).structuredContent;
        await rustpad.seed(id, { text: 'after the restart\n' });
        const result = await client.callTool({
          name: 'edit_document',
          arguments: { id, base, edits: [{ old_text: 'after', new_text: 'x' }] },
        });
        assert.equal(result.isError, true);
        const message = textOf(result);
        assert.ok(message.includes(`base ${base} does not match`), message);
        assert.ok(message.includes('Read the pad again'), message);
        assert.equal(await rustpad.text(id), 'after the restart\n');
        assert.deepEqual(await rustpad.edits(id), []);
      });
    });
  }
});
