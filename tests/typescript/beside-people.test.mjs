// Working beside people through the official TypeScript client, in both eras: a wait answers a
// person's edit with its author and not this server's own write, two people's carets are reported
// at their lines, and a person sees this server's caret where it writes. The other cases (burst,
// timeout, cancellation, places) are in tests/python/test_beside_people.py.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';

import { inEachMode, padId, useRustpad } from './harness.mjs';

describe('working beside people', () => {
  const rustpad = useRustpad();

  inEachMode(rustpad, (mode, session) => {

      const call = async (name, args) => {
        const result = await session.client.callTool({ name, arguments: args });
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
        return result.structuredContent;
      };
      const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

      it("answers a person's edit, not this server's own write", async () => {
        const id = padId(`wait-${mode}`);
        await rustpad.seed(id, { text: 'question?\n' });
        const { base } = await call('get_document', { id, start_line: 1 });
        const ana = await rustpad.person(id, 'Ana');
        try {
          let answered = false;
          const waiting = call('wait_for_changes', { id, base, timeout_seconds: 40 }).then((answer) => {
            answered = true;
            return answer;
          });
          await sleep(300);
          await call('append_to_document', { id, text: 'ours\n' });
          await sleep(1000);
          assert.equal(answered, false, 'our own write ended the wait');
          await ana.append('answer\n');
          const answer = await Promise.race([
            waiting,
            sleep(10_000).then(() => assert.fail('no answer within 10 s of the edit')),
          ]);
          assert.equal(answer.timed_out, false);
          assert.ok(answer.authors.some((a) => a.name === 'Ana' && a.in_pad && a.operations === 1));
          assert.match(answer.diff, /^\+answer$/m);
        } finally {
          await ana.leave();
        }
      });

      it('reports two people at their lines and shows where it writes', async () => {
        const id = padId(`people-${mode}`);
        await rustpad.seed(id, { text: 'one\ntwo\nthree\n' });
        const ana = await rustpad.person(id, 'Ana');
        const bo = await rustpad.person(id, 'Bo');
        try {
          await ana.point([5]);
          await bo.point([], [[8, 13]]);
          const read = await call('get_document', { id, start_line: 1 });
          assert.deepEqual(read.people, [
            { name: 'Ana', this_server: false, cursors: [{ line: 2, column: 2 }], selections: [] },
            {
              name: 'Bo',
              this_server: false,
              cursors: [],
              selections: [{ start: { line: 3, column: 1 }, end: { line: 3, column: 6 } }],
            },
          ]);
          const edits = [{ old_text: 'three', new_text: 'THREE' }];
          const done = await call('edit_document', { id, edits, base: read.base });
          assert.deepEqual(done.edits[0].people, ['Bo']);
          // Ana sees this server's caret and selection over the replaced word (Rustpad relays
          // carets and edits on separate paths, so it may come after the edit).
          const shown = await ana.sees(
            (line) => line.server?.UserCursor && line.server.UserCursor.data.cursors.length > 0 &&
              line.server.UserCursor.id !== ana.identity && line.server.UserCursor.id !== bo.identity,
          );
          assert.deepEqual(shown.server.UserCursor.data, { cursors: [8], selections: [[8, 13]] });
        } finally {
          await ana.leave();
          await bo.leave();
        }
      });
  });
});
