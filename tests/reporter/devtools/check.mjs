// check.mjs TRACE.json TABLE.json [--gpu] [--ticks]
// Loads scopeprof's trace JSON into Chrome DevTools' own trace model
// (@paulirish/trace_engine, the Performance panel's engine) and checks:
//   - it parses with no exception and no console error or warning;
//   - every complete event ("X") lands in its thread's tree (the engine
//     silently drops a slice that overlaps its parent: that is a nesting bug);
//   - per name, the self time the engine computes on the CPU threads equals
//     the table's self_cpu_time_total_ns (TABLE.json: `scopeprof table
//     --format json` of the same files);
//   - with --gpu: every flow arrow binds to a slice at both ends;
//   - --ticks: the trace was converted from a file in clock ticks (format 4),
//     whose table converts sums (see the bound below).
import fs from 'node:fs';
import * as Trace from '@paulirish/trace_engine';

const [tracePath, tablePath, ...flags] = process.argv.slice(2);
const ticks = flags.includes('--ticks');
if (!tracePath || !tablePath) {
  console.error('usage: node check.mjs TRACE.json TABLE.json [--gpu] [--ticks]');
  process.exit(2);
}
// The engine runs in browsers; in node it only lacks DOMRect.
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) { Object.assign(this, {x, y, width, height}); }
  static fromRect(r = {}) { return new DOMRect(r.x, r.y, r.width, r.height); }
};

const problems = [];
const fail = msg => problems.push(msg);
// Whatever the engine complains about is a failure.
for (const level of ['error', 'warn']) {
  const orig = console[level];
  console[level] = (...args) => { fail(`engine console.${level}: ${args.join(' ')}`); orig(...args); };
}

const doc = JSON.parse(fs.readFileSync(tracePath, 'utf8'));
const events = doc.traceEvents;
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const parsed = model.parsedTrace()?.data;
if (!parsed) throw new Error("the engine returned no parsed trace");
for (const [kind, list] of parsed.Warnings.perWarning ?? [])
  fail(`engine warning ${kind}: ${list.length} event(s)`);
if (!parsed.Meta.traceIsGeneric) fail('the engine took the trace for a Chrome browser trace');

// Every X slice is in the tree of its thread.
const {processes, entryToNode} = parsed.Renderer;
const slices = events.filter(e => e.ph === 'X');
let inTree = 0;
for (const e of slices) {
  const thread = processes.get(e.pid)?.threads.get(e.tid);
  if (!thread) { fail(`no thread ${e.pid}/${e.tid} for ${e.name}`); continue; }
  // The engine keeps our objects: find ours among the thread's entries.
  const node = entryToNode.get(e);
  if (!node) { fail(`slice not in its thread's tree: ${JSON.stringify(e)}`); continue; }
  let root = node;
  while (root.parent) root = root.parent;
  if (!thread.tree.roots.has(root)) fail(`slice in another thread's tree: ${e.name}`);
  inTree++;
}

// Per-name self time on the CPU threads (category "scope" or "gpu" on a
// program's process; not the GPU processes, nor the Steps track, which the
// table does not count), against the table.
const table = JSON.parse(fs.readFileSync(tablePath, 'utf8')).tables[0].rows;
const cpuPids = new Set(events.filter(e => e.ph === 'M' && e.name === 'process_name' &&
                                          !e.args.name.startsWith('GPU ')).map(e => e.pid));
// A dur not exact to the nanosecond was padded (see the bound below).
const padded = e => Math.abs(e.dur * 1000 - Math.round(e.dur * 1000)) > 1e-3;
const selfUs = new Map(), calls = new Map(), kids = new Map(), pads = new Map();
for (const e of slices) {
  if (!cpuPids.has(e.pid) || e.cat === 'step') continue;
  const node = entryToNode.get(e);
  if (!node) continue;
  // Tables merge the steps ProfilerStep#N of a Chrome input into one row.
  const name = e.name.startsWith('ProfilerStep#') ? 'ProfilerStep*' : e.name;
  selfUs.set(name, (selfUs.get(name) ?? 0) + node.selfTime);
  calls.set(name, (calls.get(name) ?? 0) + 1);
  const n = node.children?.size ?? node.children?.length ?? 0;
  kids.set(name, (kids.get(name) ?? 0) + n);
  let p = padded(e) ? 1 : 0;
  for (const c of node.children ?? []) p += !c.entry || padded(c.entry) ? 1 : 0;
  pads.set(name, (pads.get(name) ?? 0) + p);
}
// One ulp of the largest end in the trace, in us (the spacing of doubles
// there): the error a padded dur may carry (see the bound below).
const maxEnd = slices.reduce((m, e) => Math.max(m, e.ts + e.dur), 1);
const ulpUs = 2 ** (Math.floor(Math.log2(maxEnd)) - 52);
let compared = 0;
for (const row of table) {
  // A .sprof file's steps' row (docs/REPORTER.md): one call per slice of
  // the Steps track, no self time of its own.
  if (row.name === 'ProfilerStep*' && !calls.has('ProfilerStep*')) {
    const steps = slices.filter(e => cpuPids.has(e.pid) && e.cat === 'step').length;
    if (steps !== row.count || row.self_cpu_time_total_ns !== 0)
      fail(`ProfilerStep*: table ${row.count} calls, self ${row.self_cpu_time_total_ns} ns; trace ${steps} steps`);
    compared++;
    continue;
  }
  const ours = row.self_cpu_time_total_ns / 1000;
  const theirs = selfUs.get(row.name) ?? 0;
  // The table subtracts integer nanoseconds; the engine subtracts child
  // durations from a parent's in double-precision microseconds. A dur is
  // written exact to the nanosecond (three decimals) and parses to the
  // nearest double: each call adds one such rounding for its own dur and one
  // per child it subtracts, far below 1e-6 us. A slice whose end is a shared
  // boundary is the exception: its dur is the double that makes ts + dur
  // land on the end's own double (chrome_write.c, put_dur), up to an ulp of the
  // timestamps away from the exact nanoseconds. ts is CLOCK_MONOTONIC in us,
  // so that ulp grows with the machine's uptime (7.6e-6 us under 9.5 hours,
  // 1.5e-5 us under 38: a CI machine's 179.04402630615235 for 179.044 was
  // two padded durs on such a machine, over a bound that did not count them).
  // And since format 4 the file holds clock ticks: the trace JSON has each
  // event's start and end converted to whole nanoseconds, each dur within
  // 1 ns of its ticks' exact time, while the table converts a row's sum of
  // ticks once (as the exit summary does, so that the two agree to the
  // digit). They differ by less than 1 ns per dur the self time adds or
  // subtracts, plus 1 for the sum's own conversion; a file in ns (the
  // hand-made one, scale 1) has no such term and must match to the bound
  // above, well below a nanosecond, so a single lost or misplaced
  // nanosecond exceeds it there.
  const n = row.count + (calls.get(row.name) ?? 0) + (kids.get(row.name) ?? 0);
  const conv = ticks ? 1e-3 * ((calls.get(row.name) ?? 0) + (kids.get(row.name) ?? 0) + 1) : 0;
  const tol = 1e-6 * n + 2 * ulpUs * (pads.get(row.name) ?? 0) + 1e-9 * Math.abs(ours) + conv;
  if (Math.abs(ours - theirs) > tol)
    fail(`self time of ${JSON.stringify(row.name)}: table ${ours} us, DevTools ${theirs} us`);
  if ((calls.get(row.name) ?? 0) !== row.count)
    fail(`calls of ${JSON.stringify(row.name)}: table ${row.count}, trace ${calls.get(row.name)}`);
  compared++;
}
if (compared === 0) fail('the table has no rows');

// Flows: each arrow must bind to a slice at both ends (the engine keeps only
// flows with two or more bound events).
let flows = 0;
if (flags.includes('--gpu')) {
  const starts = events.filter(e => e.ph === 's').length;
  flows = parsed.Flows.flows.length;
  if (starts === 0) fail('no flow arrows in the trace');
  if (flows !== starts) fail(`${starts} flow arrows written, ${flows} bound at both ends`);
  for (const flow of parsed.Flows.flows)
    if (flow.length !== 2 || flow[0].pid === flow[1].pid) fail(`flow not CPU -> GPU: ${JSON.stringify(flow)}`);
}

if (problems.length) {
  for (const p of problems.slice(0, 20)) console.log('FAIL:', p);
  process.exit(1);
}
console.log(`DevTools trace model: ${slices.length} slices all in their threads' trees, ` +
            `${compared} self times equal to the table's` + (flows ? `, ${flows} flows bound` : ''));
