#!/usr/bin/env node
// A stand-in for `kernaut-lsp` that speaks the contract of /work/notes/PROTOCOL.md
// (copied in editors/README.md) with canned answers, so the editor integrations can be
// tested before, and independently of, the real server. No dependencies: Node >= 16.
//
// What it answers:
//   hover            on `__hfma2` (markdown naming the target arch from the settings)
//   diagnostics      a 32-way bank conflict on `tile[threadIdx.x][threadIdx.y]` when the
//                    file declares `__shared__ float tile[32][32]`
//   codeAction       the quick fix (pad the rows to 33) + "Show wiki page" (a command)
//   codeLens         one "occupancy" lens above each `__global__` function
//   executeCommand   kernaut.search, kernaut.showPage, kernaut.symbolPage
//                    (with KERNAUT_MOCK_KTUI=/path/to/ktui: what `ktui explain` prints
//                    there, and search and pages from `ktui search --json` / `ktui show`)
//   kernaut/mockState (custom request) the settings it holds, for tests to assert on
//
// Every message it receives is appended to $KERNAUT_MOCK_LOG when that is set.
'use strict';

const fs = require('fs');

if (process.argv.includes('--version')) {
  process.stdout.write('kernaut-lsp 0.0.0-mock\n');
  process.exit(0);
}

const PAGES = {
  'pitfall-bank-conflict': {
    title: 'Shared-memory bank conflicts',
    kind: 'pitfall',
    markdown:
      '# Shared-memory bank conflicts\n\n## P1: Column access to a [32][32] float tile\n\n' +
      'Lanes of a warp that read one column of a `[32][32]` float tile hit the same bank: ' +
      '32 wavefronts instead of 1. Pad the rows to 33 elements.\n',
  },
  'pitfall-async-copy': {
    title: 'Asynchronous copies (cp.async)',
    kind: 'pitfall',
    markdown:
      '# Asynchronous copies (cp.async)\n\n## P2: `cp.async.wait_group 0` inside the pipelined loop\n\n' +
      'Waiting for every group in the loop kills the overlap: the async-copy version ' +
      'becomes slower than the plain loop.\n',
  },
  'api-fp16-arithmetic': {
    title: 'Half-precision arithmetic: __hadd, __hmul, __hfma, __hfma2',
    kind: 'api',
    markdown:
      '# Half-precision arithmetic\n\n```cuda\n__half2 __hfma2(const __half2 a, const __half2 b, const __half2 c);\n```\n\n' +
      'header: `cuda_fp16.h` · requires sm_53\n',
  },
};

const SEARCH = [
  {
    id: 'pitfall-async-copy', anchor: 'P2', title: '`cp.async.wait_group 0` inside the pipelined loop',
    kind: 'pitfall', words: ['async', 'copy', 'slower', 'overlap', 'loop', 'wait'],
    snippet: 'my **async**-**copy** version is **slower** than the plain **loop**',
  },
  {
    id: 'pitfall-bank-conflict', anchor: 'P1', title: 'Column access to a [32][32] float tile',
    kind: 'pitfall', words: ['bank', 'conflict', 'shared', 'transpose', 'slow', 'slower', 'tile'],
    snippet: 'a **transpose** through **shared** memory is **slow**: 32-way **bank** **conflict**',
  },
  {
    id: 'api-fp16-arithmetic', anchor: null, title: 'Half-precision arithmetic: __hfma2 and friends',
    kind: 'api', words: ['half', 'fp16', 'hfma2', '__hfma2', 'packed'],
    snippet: 'packed **fp16** fused multiply-add',
  },
];

const COMMANDS = ['kernaut.search', 'kernaut.showPage', 'kernaut.symbolPage'];

let settings = { arch: 'sm_90', wikiPaths: [], rules: {}, inlayHints: true, codeLens: true };
const docs = new Map();
const logPath = process.env.KERNAUT_MOCK_LOG;

function log(msg) {
  if (logPath) fs.appendFileSync(logPath, JSON.stringify(msg) + '\n');
}

function send(msg) {
  const body = Buffer.from(JSON.stringify(Object.assign({ jsonrpc: '2.0' }, msg)), 'utf8');
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

function wordAt(text, pos) {
  const line = text.split('\n')[pos.line] || '';
  const re = /[A-Za-z_][A-Za-z0-9_]*/g;
  let m;
  while ((m = re.exec(line))) {
    if (pos.character >= m.index && pos.character <= m.index + m[0].length) return m[0];
  }
  return null;
}

function findAll(text, re) {
  const out = [];
  text.split('\n').forEach((line, i) => {
    const m = re.exec(line);
    if (m) out.push({ line: i, col: m.index, match: m });
  });
  return out;
}

function bankConflicts(uri) {
  const text = docs.get(uri) || '';
  const decl = findAll(text, /__shared__\s+float\s+(\w+)\s*\[32\]\s*\[(32)\]/)[0];
  if (!decl) return [];
  const name = decl.match[1];
  const level = (settings.rules || {})['bank-conflict'] || 'warning';
  if (level === 'off') return [];
  const severity = { error: 1, warning: 2, info: 3, hint: 4 }[level] || 2;
  const col = new RegExp(`${name}\\[threadIdx\\.x\\]\\[threadIdx\\.y\\]`);
  return findAll(text, col).map((hit) => ({
    range: {
      start: { line: hit.line, character: hit.col },
      end: { line: hit.line, character: hit.col + hit.match[0].length },
    },
    severity,
    code: 'bank-conflict',
    codeDescription: { href: 'kernaut://wiki/pitfall-bank-conflict#P1' },
    source: 'kernaut',
    message: `32-way bank conflict: this load from \`${name}\` takes 32 wavefronts instead of 1, because lanes of a warp hit 32 different words of one bank`,
    data: {
      declLine: decl.line,
      declCol: decl.col + decl.match[0].lastIndexOf('32'),
      name,
    },
  }));
}

function publish(uri) {
  send({ method: 'textDocument/publishDiagnostics', params: { uri, diagnostics: bankConflicts(uri) } });
}

// With KERNAUT_MOCK_KTUI=/path/to/ktui, hover answers what `ktui explain FILE:LINE:COL`
// prints for the file on disk: the hover text kernaut's own analysis computes, served
// through this stand-in until the real server lands.
function ktuiHover(params) {
  const ktui = process.env.KERNAUT_MOCK_KTUI;
  const uri = params.textDocument.uri;
  if (!ktui || !uri.startsWith('file://')) return undefined;
  const file = decodeURIComponent(uri.slice('file://'.length));
  const { line, character } = params.position;
  try {
    const out = require('child_process').execFileSync(
      ktui, ['explain', `${file}:${line + 1}:${character + 1}`, '--arch', settings.arch],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return out.trim() === '' ? null : { contents: { kind: 'markdown', value: out } };
  } catch (e) {
    return null;
  }
}

function hover(params) {
  const fromKtui = ktuiHover(params);
  if (fromKtui !== undefined) return fromKtui;
  const text = docs.get(params.textDocument.uri) || '';
  const word = wordAt(text, params.position);
  if (word !== '__hfma2') return null;
  return {
    contents: {
      kind: 'markdown',
      value:
        '**`__hfma2`** · Half-precision arithmetic: __hadd, __hmul, __hfma, __hfma2 · `api-fp16-arithmetic`\n\n' +
        '```cuda\n__half2 __hfma2(const __half2 a, const __half2 b, const __half2 c);\n```\n\n' +
        `header: \`cuda_fp16.h\` · requires sm_53; target ${settings.arch} has it`,
    },
  };
}

function codeActions(params) {
  const uri = params.textDocument.uri;
  const out = [];
  for (const d of bankConflicts(uri)) {
    if (d.range.start.line !== params.range.start.line && d.range.end.line !== params.range.end.line) continue;
    const { declLine, declCol, name } = d.data;
    out.push({
      title: `Pad the rows of \`${name}\` to 33 elements (128 more bytes)`,
      kind: 'quickfix',
      diagnostics: [d],
      isPreferred: true,
      edit: {
        changes: {
          [uri]: [{
            range: { start: { line: declLine, character: declCol }, end: { line: declLine, character: declCol + 2 } },
            newText: '33',
          }],
        },
      },
    });
    out.push({
      title: 'Show wiki page pitfall-bank-conflict#P1',
      kind: 'quickfix',
      diagnostics: [d],
      command: { title: 'Show wiki page', command: 'kernaut.showPage', arguments: ['pitfall-bank-conflict#P1'] },
    });
  }
  return out;
}

function codeLenses(params) {
  if (settings.codeLens === false) return [];
  const text = docs.get(params.textDocument.uri) || '';
  return findAll(text, /__global__\s+void\s+(\w+)/).map((hit) => ({
    range: { start: { line: hit.line, character: 0 }, end: { line: hit.line, character: 0 } },
    command: { title: `occupancy 100% on ${settings.arch} (256 threads)`, command: '' },
  }));
}

function page(target) {
  const id = String(target).split('#')[0];
  const p = PAGES[id];
  return p ? { id, title: p.title, markdown: p.markdown } : undefined;
}

// With KERNAUT_MOCK_KTUI, search and pages come from the real wiki through ktui.
function ktui(args) {
  const bin = process.env.KERNAUT_MOCK_KTUI;
  if (!bin) return undefined;
  try {
    return require('child_process').execFileSync(bin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch (e) {
    return null;
  }
}

function executeCommand(params) {
  const args = params.arguments || [];
  if (process.env.KERNAUT_MOCK_KTUI) {
    if (params.command === 'kernaut.search') {
      const out = ktui(['search', String(args[0] || ''), '--json', '--limit', String(typeof args[1] === 'number' ? args[1] : 20)]);
      const hits = out ? JSON.parse(out) : [];
      return hits.map((h) => Object.assign(h, { target: h.anchor ? `${h.id}#${h.anchor}` : h.id }));
    }
    if (params.command === 'kernaut.showPage') {
      const out = ktui(['show', String(args[0])]);
      if (!out) throw { code: -32602, message: `no wiki page ${args[0]}` };
      const [first, ...rest] = out.split('\n');
      const title = first.replace(/^\S+\s+/, '');
      return { id: String(args[0]).split('#')[0], title, markdown: `# ${title}\n\n${rest.join('\n')}` };
    }
  }
  switch (params.command) {
    case 'kernaut.search': {
      const words = String(args[0] || '').toLowerCase().split(/[^a-z0-9_]+/).filter(Boolean);
      const limit = typeof args[1] === 'number' ? args[1] : 20;
      return SEARCH.map((e) => ({ e, score: words.filter((w) => e.words.includes(w)).length }))
        .filter((x) => x.score > 0)
        .sort((a, b) => b.score - a.score)
        .slice(0, limit)
        .map(({ e, score }) => ({
          id: e.id, anchor: e.anchor, title: e.title, kind: e.kind, score: score * 3.5,
          snippet: e.snippet, target: e.anchor ? `${e.id}#${e.anchor}` : e.id,
        }));
    }
    case 'kernaut.showPage': {
      const p = page(args[0]);
      if (!p) throw { code: -32602, message: `no wiki page ${args[0]}` };
      return p;
    }
    case 'kernaut.symbolPage': {
      const a = args[0] || {};
      const text = docs.get(a.uri) || '';
      const word = a.position ? wordAt(text, a.position) : null;
      return word === '__hfma2' ? page('api-fp16-arithmetic') : null;
    }
    default:
      throw { code: -32601, message: `unknown command ${params.command}` };
  }
}

function handle(msg) {
  log(msg);
  const { id, method, params } = msg;
  const isRequest = id !== undefined && method !== undefined;
  const reply = (result) => isRequest && send({ id, result });
  try {
    switch (method) {
      case 'initialize':
        if (params && params.initializationOptions) settings = Object.assign(settings, params.initializationOptions);
        return reply({
          capabilities: {
            textDocumentSync: { openClose: true, change: 1 },
            hoverProvider: true,
            codeActionProvider: { codeActionKinds: ['quickfix', 'source'] },
            codeLensProvider: { resolveProvider: false },
            executeCommandProvider: { commands: COMMANDS },
          },
          serverInfo: { name: 'kernaut-lsp', version: '0.0.0-mock' },
        });
      case 'initialized':
        return undefined;
      case 'shutdown':
        return reply(null);
      case 'exit':
        return process.exit(0);
      case 'workspace/didChangeConfiguration': {
        const k = params && params.settings && params.settings.kernaut;
        if (k) settings = Object.assign(settings, k);
        for (const uri of docs.keys()) publish(uri);
        return undefined;
      }
      case 'textDocument/didOpen':
        docs.set(params.textDocument.uri, params.textDocument.text);
        return publish(params.textDocument.uri);
      case 'textDocument/didChange': {
        const last = params.contentChanges[params.contentChanges.length - 1];
        docs.set(params.textDocument.uri, last.text);
        return publish(params.textDocument.uri);
      }
      case 'textDocument/didClose':
        docs.delete(params.textDocument.uri);
        return undefined;
      case 'textDocument/hover':
        return reply(hover(params));
      case 'textDocument/codeAction':
        return reply(codeActions(params));
      case 'textDocument/codeLens':
        return reply(codeLenses(params));
      case 'workspace/executeCommand':
        return reply(executeCommand(params));
      case 'kernaut/mockState':
        return reply({ settings, documents: [...docs.keys()] });
      default:
        if (isRequest) send({ id, error: { code: -32601, message: `unhandled ${method}` } });
        return undefined;
    }
  } catch (e) {
    if (isRequest) send({ id, error: { code: e.code || -32603, message: e.message || String(e) } });
    return undefined;
  }
}

let buf = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  buf = Buffer.concat([buf, chunk]);
  for (;;) {
    const sep = buf.indexOf('\r\n\r\n');
    if (sep < 0) return;
    const header = buf.slice(0, sep).toString('ascii');
    const m = /Content-Length:\s*(\d+)/i.exec(header);
    if (!m) { buf = buf.slice(sep + 4); continue; }
    const len = Number(m[1]);
    if (buf.length < sep + 4 + len) return;
    const body = buf.slice(sep + 4, sep + 4 + len).toString('utf8');
    buf = buf.slice(sep + 4 + len);
    handle(JSON.parse(body));
  }
});
process.stdin.on('end', () => process.exit(0));
