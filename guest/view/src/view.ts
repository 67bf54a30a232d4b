// The pad view: shows a pad's lines, who is where, and each change as it
// lands, inside a client that renders MCP Apps.
//
// What it may do is narrow on purpose (docs/guide/pad-view.md):
// - Everything from the pad (text, names, diffs) goes into the page as text
//   (`textContent`), never as markup; bidi and other invisible format
//   characters are shown as visible marks, so text cannot reorder itself.
// - It calls only tools that read (`get_document`, and `follow_pad`, the
//   server's wait for the view, which also ends on the model's own edits),
//   through the client, one call at a time. When a call fails or a person
//   declines it, the view stops and waits for the person to press Follow.
// - It never messages the model, never updates the model's context, and
//   never asks the client to open a link.

import { App } from '@modelcontextprotocol/ext-apps';

type Place = { line: number; column: number };
type Person = {
  name: string;
  /** A write of rustpad-mcp's, as the pad's history shows it; a name alone proves nothing. */
  this_server?: boolean;
  cursors?: Place[];
  selections?: { start: Place; end: Place }[];
};
type Result = { [key: string]: unknown };

/** How long one wait may hold (the tool's own maximum is 50). */
const WAIT_SECONDS = 45;
/** After this long without a change the view stops asking for more. */
const QUIET_LIMIT_MS = 30 * 60 * 1000;
/** Invisible characters that change how text around them reads (every format character: bidi
 *  controls, joiners, tags…), and the two separators a browser breaks a line at but the tools do
 *  not count as line breaks. */
const FORMAT_CHARACTERS = /[\p{Cf}\u2028\u2029]/u;

const app = new App({ name: 'rustpad-pad-view', version: '1' }, {}, { autoResize: true });
const element = (id: string) => document.getElementById(id) as HTMLElement;
const [title, status, follow, peopleList, diffView, padView, more] = [
  'title', 'status', 'follow', 'people', 'diff', 'pad', 'more',
].map(element);

let padId: string | undefined;
let running = false;
/** The lines the last change marked, kept while only people move. */
let lastChanged = new Set<number>();

function setState(state: 'waiting' | 'live' | 'stopped' | 'diff', said: string) {
  document.body.dataset.state = state;
  status.textContent = said;
  follow.hidden = !(state === 'stopped' || state === 'diff') || !padId;
}

/** `text` as nodes, with format characters made visible. */
function shown(text: string): Node {
  const fragment = document.createDocumentFragment();
  let run = '';
  for (const character of text) {
    if (!FORMAT_CHARACTERS.test(character)) {
      run += character;
      continue;
    }
    fragment.append(run);
    run = '';
    const mark = document.createElement('span');
    mark.className = 'ctl';
    mark.textContent = `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
    fragment.append(mark);
  }
  fragment.append(run);
  return fragment;
}

/** A name tag: this server's own writes are told by the server (`this_server`), never by a name,
 *  which anyone may take. */
function chip(person: Person, className: string): HTMLElement {
  const chip = document.createElement('span');
  chip.className = person.this_server ? `${className} writer` : className;
  chip.dataset.name = person.name;
  chip.title = person.this_server ? `${person.name} (this server, writing)` : person.name;
  chip.append(shown(person.name));
  return chip;
}

function showPeople(people: Person[] = []) {
  peopleList.replaceChildren(
    ...people.map((person) => {
      const item = document.createElement('li');
      item.dataset.name = person.name;
      if (person.this_server) item.className = 'writer';
      const lines = (person.cursors ?? []).map((place) => place.line);
      item.append(shown(person.name), lines.length ? ` · line ${lines.join(', ')}` : '');
      return item;
    }),
  );
}

/** One line's text, with each caret on it as a name tag at its column and the selected
 *  characters marked. Columns count code points from 1, as the tools do. */
function lineWithPlaces(line: string, number: number, people: Person[]): Node {
  const characters = Array.from(line);
  const carets = new Map<number, Person[]>();
  const selected: { from: number; to: number; name: string }[] = [];
  for (const person of people) {
    for (const place of person.cursors ?? []) {
      if (place.line === number) carets.set(place.column, [...(carets.get(place.column) ?? []), person]);
    }
    for (const { start, end } of person.selections ?? []) {
      if (start.line > number || end.line < number) continue;
      const from = start.line === number ? start.column : 1;
      const to = end.line === number ? end.column : characters.length + 1;
      if (from < to) selected.push({ from, to, name: person.name });
    }
  }
  const cuts = new Set([1, characters.length + 1, ...carets.keys()]);
  for (const { from, to } of selected) cuts.add(from).add(to);
  const columns = [...cuts].filter((c) => c >= 1 && c <= characters.length + 1).sort((a, b) => a - b);
  const fragment = document.createDocumentFragment();
  columns.forEach((column, index) => {
    for (const person of carets.get(column) ?? []) fragment.append(chip(person, 'person caret'));
    const next = columns[index + 1];
    if (next === undefined) return;
    const text = shown(characters.slice(column - 1, next - 1).join(''));
    const by = selected.filter(({ from, to }) => from <= column && next <= to);
    if (by.length === 0) {
      fragment.append(text);
      return;
    }
    const mark = document.createElement('mark');
    mark.className = 'selection';
    mark.title = by.map(({ name }) => name).join(', ');
    mark.append(text);
    fragment.append(mark);
  });
  return fragment;
}

/** Draws the window's lines, marking `changed` ones and people's places. */
function showLines(result: Result, changed: Set<number>) {
  const first = Number(result.start_line ?? 1);
  // Numbered as the tools number them: the empty line after a final line break is a line too
  // (a caret can stand there), so the window's own count decides, not the last line break.
  const shownLines = Number(result.end_line ?? first) - first + 1;
  const lines = String(result.text ?? '').split('\n').slice(0, Math.max(shownLines, 1));
  const people = (result.people as Person[] | undefined) ?? [];
  padView.replaceChildren(
    ...lines.map((line, index) => {
      const number = first + index;
      const row = document.createElement('div');
      row.className = changed.has(number) ? 'line changed' : 'line';
      row.setAttribute('role', 'listitem');
      row.dataset.line = String(number);
      const numberCell = document.createElement('span');
      numberCell.className = 'number';
      numberCell.textContent = String(number);
      const textCell = document.createElement('span');
      textCell.className = 'text';
      textCell.append(lineWithPlaces(line.replace(/\r$/, ''), number, people));
      row.append(numberCell, textCell);
      return row;
    }),
  );
  const total = Number(result.total_lines ?? lines.length);
  const last = Number(result.end_line ?? first + lines.length - 1);
  more.hidden = last >= total && !result.truncated;
  more.textContent =
    last >= total
      ? `Line ${last} is too long for one result; the view shows its beginning.`
      : `Lines ${last + 1}–${total} do not fit in one result; the view shows lines ${first}–${last}.`;
  showPeople(people);
}

/** What a row of a unified diff is: its file headers come before the first hunk. */
function diffKind(row: string, inHunk: boolean): string {
  if (row.startsWith('@@')) return 'hunk';
  if (!inHunk || row.startsWith('\\')) return 'file';
  return row.startsWith('+') ? 'add' : row.startsWith('-') ? 'del' : 'context';
}

/** The lines a unified diff adds or changes, numbered in the new text. */
function linesAdded(diff: string): Set<number> {
  const added = new Set<number>();
  let line = 0;
  let inHunk = false;
  for (const row of diff.split('\n')) {
    const kind = diffKind(row, inHunk);
    inHunk ||= kind === 'hunk';
    if (kind === 'hunk') line = Number(/^@@ -\d+(?:,\d+)? \+(\d+)/.exec(row)?.[1] ?? 0);
    else if (kind === 'add') added.add(line++);
    else if (kind === 'context') line++;
  }
  return added;
}

function showDiff(diff: string) {
  diffView.hidden = diff === '';
  let inHunk = false;
  const rows = diff.endsWith('\n') ? diff.slice(0, -1).split('\n') : diff.split('\n');
  diffView.replaceChildren(
    ...rows.map((row) => {
      const line = document.createElement('span');
      const kind = diffKind(row, inHunk);
      inHunk ||= kind === 'hunk';
      line.className = `diff-line ${kind}`;
      line.append(shown(row));
      return line;
    }),
  );
}

/** One read tool, through the client; a failure (or a person's no) throws. */
async function call(name: string, args: Result): Promise<Result> {
  const result = await app.callServerTool({ name, arguments: args }, { timeout: (WAIT_SECONDS + 15) * 1000 });
  if (result.isError || !result.structuredContent) {
    const said = result.content?.find((block) => block.type === 'text');
    throw new Error(said && 'text' in said ? said.text : `${name} failed`);
  }
  return result.structuredContent as Result;
}

const readPad = (id: string) => call('get_document', { id, start_line: 1 });

/** Follows the pad: a read, then one wait after another, each after the last. */
async function followPad() {
  if (!padId || running) return;
  running = true;
  const id = padId;
  try {
    setState('live', 'Reading the pad…');
    let window = await readPad(id);
    lastChanged = new Set();
    showLines(window, lastChanged);
    let quietSince = Date.now();
    while (Date.now() - quietSince < QUIET_LIMIT_MS) {
      setState('live', `Live at revision ${window.revision}`);
      const change = await call('follow_pad', { id, base: window.base, timeout_seconds: WAIT_SECONDS });
      if (change.timed_out) {
        // Nobody changed the text: people may have moved, over the same lines.
        window = { ...window, people: change.people ?? [] };
        showLines(window, lastChanged);
        continue;
      }
      quietSince = Date.now();
      window = await readPad(id);
      lastChanged = linesAdded(String(change.diff ?? ''));
      showLines(window, lastChanged);
    }
    setState('stopped', 'Nothing changed for 30 minutes, so the view stopped following.');
  } catch (error) {
    setState('stopped', `Stopped following: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    running = false;
  }
}

/** A tool's result (or its arguments, before it ends) tells which pad. */
function learnPad(source: Result | undefined) {
  const id = source?.id;
  if (typeof id !== 'string' || id === '') return;
  padId = id;
  title.replaceChildren('Pad ', shown(id));
}

follow.addEventListener('click', () => {
  diffView.hidden = true;
  void followPad();
});

app.ontoolinput = (params) => learnPad(params.arguments as Result | undefined);
app.ontoolresult = (result) => {
  const content = result.structuredContent as Result | undefined;
  learnPad(content);
  if (result.isError || !content) {
    setState('stopped', 'The tool call failed; there is nothing to show.');
    return;
  }
  if (typeof content.diff === 'string') {
    // get_changes and edit_document: the diff, until a person asks for more.
    showDiff(content.diff);
    setState('diff', content.diff ? `Changes in pad ${padId}` : `No change to pad ${padId}`);
    return;
  }
  if (typeof content.text === 'string' && content.start_line !== undefined) showLines(content, new Set());
  void followPad();
};
app.onhostcontextchanged = (context) => {
  if (context.theme) document.documentElement.dataset.theme = context.theme;
};

await app.connect();
const theme = app.getHostContext()?.theme;
if (theme) document.documentElement.dataset.theme = theme;
