// The write tools against a real Rustpad protocol server, in both eras:
// what each one returns, what lands in the pad, and how bad input is
// reported (isError results) versus an unknown tool (a protocol error).
//
// Deliberately not covered here: set_document on a non-empty pad and
// replace_in_document with more than one match (the confirmation guard).

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { ProtocolError } from '@modelcontextprotocol/client';

import { MODES, codePoints, openClient, padId, useRustpad, textOf } from './harness.mjs';

const EPHEMERAL =
  'Pads are ephemeral: Rustpad forgets a pad when it restarts (unless it persists to a database) and after a day in which nobody opened it.';
const BASE = /^r(0|[1-9][0-9]*)\.[0-9a-f]{16}$/;
const CHANGE = /^r(0|[1-9][0-9]*)\.[0-9a-f]{16}:c(0|[1-9][0-9]*):t(0|[1-9][0-9]*)$/;

// A write's result without what undo needs (change, base_before, base), once they are checked:
// the change names the base before the write.
function withoutUndo(structured) {
  const { change, base_before: before, base, ...rest } = structured;
  assert.match(change, CHANGE);
  assert.match(before, BASE);
  assert.match(base, BASE);
  assert.ok(change.startsWith(`${before}:`), change);
  assert.notEqual(base, before);
  return rest;
}

describe('write tools', () => {
  const rustpad = useRustpad();

  for (const mode of MODES) {
    describe(`${mode} mode`, () => {
      // One connection for the whole block, as a real host keeps one.
      let client;
      before(async () => {
        ({ client } = await openClient(mode, { rustpadUrl: rustpad.url }));
      });
      after(async () => {
        await client?.close();
      });

      const call = (name, args) => client.callTool({ name, arguments: args });

      describe('create_document', () => {
        it('creates a pad with text and a language and returns its link', async () => {
          const id = padId(`create-${mode}`);
          const text = 'Notes 🎉\nsecond line';
          const result = await call('create_document', { id, text, language: 'markdown' });
          assert.notEqual(result.isError, true, textOf(result));
          assert.deepEqual(withoutUndo(result.structuredContent), {
            id,
            url: `${rustpad.url}/#${id}`,
            characters: codePoints(text),
            note: EPHEMERAL,
            created: true,
            language: 'markdown',
          });
          assert.match(textOf(result), new RegExp(`Created pad "${id}" with ${codePoints(text)} characters\\.`));
          assert.ok(textOf(result).includes(`Link: ${rustpad.url}/#${id}`));
          assert.equal(await rustpad.text(id), text);

          const info = await call('get_document_info', { id });
          assert.equal(info.structuredContent.language, 'markdown');
          assert.equal(info.structuredContent.length_characters, codePoints(text));
        });

        it('announces itself as rustpad-mcp in the pad', async () => {
          const id = padId(`announce-${mode}`);
          const result = await call('create_document', { id, text: 'hi' });
          assert.notEqual(result.isError, true, textOf(result));
          const frames = await rustpad.log(id);
          const infos = frames.filter((frame) => 'ClientInfo' in frame);
          assert.equal(infos.length, 1);
          assert.equal(infos[0].ClientInfo.name, 'rustpad-mcp');
          assert.deepEqual(await rustpad.edits(id), [{ revision: 0, operation: ['hi'] }]);
          // Its mark went first: an edit that keeps the (empty) text.
          assert.deepEqual(await rustpad.marks(id), [{ revision: 0, operation: [] }]);
        });

        it('picks a random 12-character id when none is given', async () => {
          const result = await call('create_document', {});
          assert.notEqual(result.isError, true, textOf(result));
          const { id, url, characters, created } = result.structuredContent;
          assert.match(id, /^[a-z0-9]{12}$/);
          assert.equal(url, `${rustpad.url}/#${id}`);
          assert.equal(characters, 0);
          assert.equal(created, true);
          assert.equal(result.structuredContent.language, undefined);
          assert.equal(textOf(result).split('\n')[0], `Created pad "${id}".`);
        });

        it('refuses an id whose pad already has content and leaves it alone', async () => {
          const id = padId(`taken-${mode}`);
          await rustpad.seed(id, { text: 'already here' });
          const result = await call('create_document', { id, text: 'new' });
          assert.equal(result.isError, true);
          assert.equal(result.structuredContent, undefined);
          assert.match(textOf(result), /already has content/);
          assert.equal(await rustpad.text(id), 'already here');
          assert.deepEqual(await rustpad.edits(id), []);
        });
      });

      describe('append_to_document', () => {
        it('adds the text at the end and reports the counts in code points', async () => {
          const id = padId(`append-${mode}`);
          await rustpad.seed(id, { text: 'alpha 👨‍👩‍👧' });
          const before = codePoints('alpha 👨‍👩‍👧');
          const addition = '\n🎉 beta';
          const result = await call('append_to_document', { id, text: addition });
          assert.notEqual(result.isError, true, textOf(result));
          assert.deepEqual(withoutUndo(result.structuredContent), {
            id,
            url: `${rustpad.url}/#${id}`,
            characters: before + codePoints(addition),
            note: EPHEMERAL,
            appended_characters: codePoints(addition),
          });
          assert.match(
            textOf(result),
            new RegExp(`Appended ${codePoints(addition)} characters to pad "${id}" \\(now ${before + codePoints(addition)} characters\\)`),
          );
          assert.equal(await rustpad.text(id), `alpha 👨‍👩‍👧${addition}`);
          assert.deepEqual(await rustpad.edits(id), [{ revision: 1, operation: [before, addition] }]);
        });

        it('lands after text a typist wrote over the WebSocket', async () => {
          const id = padId(`append-typed-${mode}`);
          const report = await rustpad.type(id, { seed: 5, count: 25 });
          const result = await call('append_to_document', { id, text: ' END' });
          assert.notEqual(result.isError, true, textOf(result));
          assert.equal(await rustpad.text(id), `${report.final_text} END`);
          assert.equal(result.structuredContent.characters, codePoints(report.final_text) + 4);
        });

        it('appends to an empty pad', async () => {
          const id = padId(`append-empty-${mode}`);
          const result = await call('append_to_document', { id, text: 'first' });
          assert.notEqual(result.isError, true, textOf(result));
          assert.equal(result.structuredContent.characters, 5);
          assert.equal(result.structuredContent.appended_characters, 5);
          assert.equal(await rustpad.text(id), 'first');
        });
      });

      describe('set_document', () => {
        it('fills an empty pad without asking', async () => {
          const id = padId(`set-${mode}`);
          const text = 'fresh 🎉 content\n';
          const result = await call('set_document', { id, text });
          assert.notEqual(result.isError, true, textOf(result));
          assert.deepEqual(withoutUndo(result.structuredContent), {
            id,
            url: `${rustpad.url}/#${id}`,
            characters: codePoints(text),
            note: EPHEMERAL,
            changed: true,
            characters_before: 0,
          });
          assert.match(textOf(result), new RegExp(`\\(0 → ${codePoints(text)} characters\\)`));
          assert.equal(await rustpad.text(id), text);
        });

        it('setting an empty pad to empty text changes nothing', async () => {
          const id = padId(`set-empty-${mode}`);
          const result = await call('set_document', { id, text: '' });
          assert.notEqual(result.isError, true, textOf(result));
          assert.equal(result.structuredContent.changed, false);
          assert.equal(result.structuredContent.characters, 0);
          assert.equal(result.structuredContent.characters_before, 0);
          assert.match(textOf(result), /nothing was written/);
          assert.deepEqual(await rustpad.edits(id), []);
        });
      });

      describe('replace_in_document', () => {
        it('replaces a single match in place', async () => {
          const id = padId(`replace-${mode}`);
          await rustpad.seed(id, { text: 'héllo 🎉 world, goodbye' });
          const result = await call('replace_in_document', { id, search: 'world', replace: 'there 👋' });
          assert.notEqual(result.isError, true, textOf(result));
          const expected = 'héllo 🎉 there 👋, goodbye';
          assert.deepEqual(withoutUndo(result.structuredContent), {
            id,
            url: `${rustpad.url}/#${id}`,
            characters: codePoints(expected),
            note: EPHEMERAL,
            replacements: 1,
          });
          assert.match(textOf(result), new RegExp(`Replaced 1 occurrence in pad "${id}"`));
          assert.equal(await rustpad.text(id), expected);
          // Only the matched range is touched: retain 8, replace 5 by the insert, retain the
          // rest (insert and delete at one position may come in either order).
          const sent = await rustpad.edits(id);
          assert.equal(sent.length, 1);
          // A replacement that removes text sends its mark first and waits for it (revision 2).
          assert.equal(sent[0].revision, 2);
          const [first, a, b, last, ...more] = sent[0].operation;
          assert.deepEqual([first, last, more], [8, 9, []]);
          assert.deepEqual([a, b].sort(), [-5, 'there 👋'].sort());
        });

        it('replace_all with a single match replaces it', async () => {
          const id = padId(`replace-all-one-${mode}`);
          await rustpad.seed(id, { text: 'one two three' });
          const result = await call('replace_in_document', { id, search: 'two', replace: '', replace_all: true });
          assert.notEqual(result.isError, true, textOf(result));
          assert.equal(result.structuredContent.replacements, 1);
          assert.equal(await rustpad.text(id), 'one  three');
        });

        it('a search string that is not there is an isError result and nothing changes', async () => {
          const id = padId(`replace-miss-${mode}`);
          await rustpad.seed(id, { text: 'abc' });
          const result = await call('replace_in_document', { id, search: 'xyz', replace: 'q' });
          assert.equal(result.isError, true);
          assert.match(textOf(result), /was not found/);
          assert.equal(await rustpad.text(id), 'abc');
          assert.deepEqual(await rustpad.edits(id), []);
        });

        it('identical search and replace is an isError result', async () => {
          const id = padId(`replace-same-${mode}`);
          await rustpad.seed(id, { text: 'abc' });
          const result = await call('replace_in_document', { id, search: 'b', replace: 'b' });
          assert.equal(result.isError, true);
          assert.match(textOf(result), /identical/);
          assert.deepEqual(await rustpad.log(id), [], 'refused before connecting');
        });
      });

      describe('set_language', () => {
        it('sets the language and leaves the text alone', async () => {
          const id = padId(`lang-${mode}`);
          await rustpad.seed(id, { text: 'fn main() {}', language: 'plaintext' });
          const result = await call('set_language', { id, language: 'rust' });
          assert.notEqual(result.isError, true, textOf(result));
          assert.deepEqual(result.structuredContent, {
            id,
            url: `${rustpad.url}/#${id}`,
            characters: 12,
            note: EPHEMERAL,
            language: 'rust',
            language_before: 'plaintext',
          });
          assert.equal(textOf(result), `Set the language of pad "${id}" to rust.`);
          assert.equal(await rustpad.text(id), 'fn main() {}');
          assert.deepEqual(await rustpad.edits(id), []);
          const info = await call('get_document_info', { id });
          assert.equal(info.structuredContent.language, 'rust');
        });
      });

      describe('input errors are isError results, reported before touching the pad', () => {
        const cases = [
          ['get_document', { id: 'a/b' }, /invalid pad id/],
          ['get_document', { id: '..' }, /invalid pad id/],
          ['get_document', {}, /missing required argument "id"/],
          ['get_document', { id: 5 }, /argument "id" must be a string/],
          ['get_document_info', { id: 'x'.repeat(101) }, /invalid pad id: it must be 1–100 characters long/],
          ['get_stats', { verbose: true }, /unknown argument "verbose": get_stats takes no arguments/],
          ['create_document', { id: 'ok', language: 'not a language!' }, /invalid language/],
          ['create_document', { id: 'ok', colour: 'red' }, /unknown argument "colour"/],
          ['set_document', { id: 'ok' }, /missing required argument "text"/],
          ['set_document', { id: 'ok', text: 'x', confirm_token: '' }, /confirm_token must be 1–64 characters/],
          ['append_to_document', { id: 'ok', text: '' }, /argument "text" must not be empty/],
          ['append_to_document', { id: 'ok', text: 7 }, /argument "text" must be a string/],
          ['replace_in_document', { id: 'ok', search: '', replace: 'x' }, /argument "search" must not be empty/],
          ['replace_in_document', { id: 'ok', search: 'a', replace: 'b', replace_all: 'yes' }, /argument "replace_all" must be true or false/],
          ['set_language', { id: 'ok' }, /missing required argument "language"/],
        ];
        for (const [name, args, message] of cases) {
          it(`${name} ${JSON.stringify(args).slice(0, 60)}`, async () => {
            const result = await call(name, args);
            assert.equal(result.isError, true, JSON.stringify(result));
            assert.equal(result.structuredContent, undefined);
            assert.match(textOf(result), message);
          });
        }

        it('an input error never reaches the pad', async () => {
          const id = padId(`bad-input-${mode}`);
          const result = await call('append_to_document', { id, text: 'x', extra: 1 });
          assert.equal(result.isError, true);
          assert.deepEqual(await rustpad.log(id), []);
          assert.equal(await rustpad.text(id), '');
        });
      });

      it('an unknown tool is a protocol error (-32602), not a result', async () => {
        await assert.rejects(call('delete_document', { id: 'x' }), (error) => {
          assert.ok(error instanceof ProtocolError, `${error?.constructor?.name}: ${error?.message}`);
          assert.equal(error.code, -32602);
          assert.match(error.message, /Unknown tool: delete_document/);
          return true;
        });
      });
    });
  }
});
