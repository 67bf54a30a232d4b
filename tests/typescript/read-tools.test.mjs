// The read tools against a real Rustpad protocol server: get_document,
// get_document_info and get_stats, in both eras.

import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';

import {
  MODES,
  UNTRUSTED_PREAMBLE,
  codePoints,
  padId,
  useRustpad,
  textOf,
  withClient,
} from './harness.mjs';

describe('read tools', () => {
  const rustpad = useRustpad();

  for (const mode of MODES) {
    describe(`${mode} mode`, () => {
      it('get_document returns exactly what a typist wrote over the WebSocket, marked untrusted', async () => {
        const id = padId(`typed-${mode}`);
        const report = await rustpad.type(id, { seed: 11, count: 40 });
        assert.equal(report.skipped, 0, 'the typist typed every keystroke');
        assert.ok(report.final_text.length > 0);
        assert.equal(await rustpad.text(id), report.final_text, 'the typist and the server agree');

        await withClient(mode, rustpad.url, async (client) => {
          const result = await client.callTool({ name: 'get_document', arguments: { id } });
          assert.notEqual(result.isError, true, textOf(result));
          const structured = result.structuredContent;
          assert.equal(structured.text, report.final_text);
          assert.equal(structured.untrusted, true);
          assert.equal(structured.source, 'rustpad');
          assert.equal(structured.id, id);
          assert.equal(structured.empty, undefined);
          assert.equal(structured.truncated, undefined);

          const text = textOf(result);
          assert.ok(text.startsWith(`${UNTRUSTED_PREAMBLE}\n\n`), 'the text block opens with the preamble');
          const json = JSON.parse(text.slice(UNTRUSTED_PREAMBLE.length + 2));
          assert.deepEqual(json, structured, 'the text block carries the same data');
        });
      });

      it('get_document keeps tabs and newlines and removes control characters, with a note', async () => {
        const id = padId(`controls-${mode}`);
        await rustpad.seed(id, { text: 'line one\n\tindented\r\nbell\u0007 esc\u001b[0m end' });
        await withClient(mode, rustpad.url, async (client) => {
          const result = await client.callTool({ name: 'get_document', arguments: { id } });
          assert.notEqual(result.isError, true, textOf(result));
          assert.equal(result.structuredContent.text, 'line one\n\tindented\r\nbell esc[0m end');
          assert.match(result.structuredContent.note, /2 control characters were removed/);
        });
      });

      it('get_document on an empty pad says so', async () => {
        const id = padId(`empty-${mode}`);
        await withClient(mode, rustpad.url, async (client) => {
          const result = await client.callTool({ name: 'get_document', arguments: { id } });
          assert.notEqual(result.isError, true, textOf(result));
          const structured = result.structuredContent;
          assert.equal(structured.text, '');
          assert.equal(structured.empty, true);
          assert.equal(structured.untrusted, true);
          assert.equal(structured.source, 'rustpad');
          assert.match(structured.note, /is empty, or it never existed, or it has expired/);
          assert.ok(structured.note.includes(`"${id}"`));
          assert.ok(textOf(result).startsWith(UNTRUSTED_PREAMBLE));
        });
      });

      it('get_document_info counts code points for astral and ZWJ text', async () => {
        const id = padId(`info-${mode}`);
        const text = 'h🎉e🎉l👨‍👨‍👦‍👦lo';
        assert.equal(codePoints(text), 14);
        const seeded = await rustpad.seed(id, { text, ops: 2, char: '🎉', language: 'markdown' });
        assert.equal(seeded.length, 16);
        await withClient(mode, rustpad.url, async (client) => {
          const result = await client.callTool({ name: 'get_document_info', arguments: { id } });
          assert.notEqual(result.isError, true, textOf(result));
          const structured = result.structuredContent;
          assert.equal(structured.length_characters, 16);
          assert.equal(structured.revision, seeded.revision);
          assert.equal(structured.language, 'markdown');
          assert.deepEqual(structured.active_users, []);
          assert.equal(structured.id, id);
          assert.equal(structured.url, `${rustpad.url}/#${id}`);
          assert.equal(structured.untrusted, true);
          assert.equal(structured.source, 'rustpad');
          assert.match(structured.note, /ephemeral/);
          assert.ok(textOf(result).startsWith(UNTRUSTED_PREAMBLE));
        });
      });

      it('get_document_info reports exactly 14 for "h🎉e🎉l👨‍👨‍👦‍👦lo" with the default language', async () => {
        const id = padId(`info14-${mode}`);
        await rustpad.seed(id, { text: 'h🎉e🎉l👨‍👨‍👦‍👦lo' });
        await withClient(mode, rustpad.url, async (client) => {
          const result = await client.callTool({ name: 'get_document_info', arguments: { id } });
          assert.notEqual(result.isError, true, textOf(result));
          assert.equal(result.structuredContent.length_characters, 14);
          assert.equal(result.structuredContent.revision, 1);
          assert.equal(result.structuredContent.language, 'plaintext (default)');
        });
      });

      it('get_document_info looks without joining: it never announces itself or edits', async () => {
        const id = padId(`look-${mode}`);
        await rustpad.seed(id, { text: 'quiet' });
        await withClient(mode, rustpad.url, async (client) => {
          const result = await client.callTool({ name: 'get_document_info', arguments: { id } });
          assert.notEqual(result.isError, true, textOf(result));
        });
        const frames = await rustpad.log(id);
        assert.ok(frames.length > 0, 'the look reached the pad');
        for (const frame of frames) {
          assert.ok(!('ClientInfo' in frame), `no ClientInfo: ${JSON.stringify(frame)}`);
          assert.ok(!('Edit' in frame), `no Edit: ${JSON.stringify(frame)}`);
        }
        assert.equal(await rustpad.text(id), 'quiet');
      });

      it('get_stats reports the server start time and document count', async () => {
        await rustpad.seed(padId(`stats-${mode}`), { text: 'x' });
        const upstream = await rustpad.stats();
        await withClient(mode, rustpad.url, async (client) => {
          const result = await client.callTool({ name: 'get_stats', arguments: {} });
          assert.notEqual(result.isError, true, textOf(result));
          const structured = result.structuredContent;
          assert.deepEqual(Object.keys(structured).sort(), [
            'database_size',
            'num_documents',
            'start_time',
            'start_time_iso',
          ]);
          assert.equal(structured.start_time, upstream.start_time);
          assert.equal(structured.start_time_iso, new Date(upstream.start_time * 1000).toISOString());
          assert.equal(structured.num_documents, upstream.num_documents);
          assert.equal(structured.database_size, 0);
          assert.deepEqual(JSON.parse(textOf(result)), structured, 'the text block is the same data as JSON');
        });
      });
    });
  }
});
