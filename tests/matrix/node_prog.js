'use strict';
// The Node.js program of the runtime matrix (rt_node.py): three nested functions warmed up
// until V8 compiles them, the innermost blocked in Atomics.wait. Before it blocks it prints
// the stack as V8 sees it (new Error().stack's call sites, every frame: Error.stackTraceLimit
// is Infinity), innermost first, one frame a line: "frame NAME@FILE:LINE" (LINE: the line the
// function starts on, as the perf map names it), then "ready".
//
//   node --perf-basic-prof --interpreted-frames-native-stack node_prog.js SECONDS
const fs = require('fs');
const cell = new Int32Array(new SharedArrayBuffer(4));
const seconds = Number(process.argv[2]) || 120;

function stackOfV8() {
  const limit = Error.stackTraceLimit;
  const prepare = Error.prepareStackTrace;
  Error.stackTraceLimit = Infinity;
  Error.prepareStackTrace = (_, sites) => sites;
  const sites = new Error().stack;
  Error.stackTraceLimit = limit;
  Error.prepareStackTrace = prepare;
  return sites.slice(1).map(s => `frame ${s.getFunctionName() || ''}@${s.getFileName()}:` +
                                  `${s.getEnclosingLineNumber()}`);
}

// Every call, warm-up or last, runs the same code (no branch V8 never saw taken, which would
// throw the optimized code away when the last call takes it): the warm-up writes its stack to
// /dev/null, the last one to stdout.
function matrixInner(fd, ms) {
  fs.writeSync(fd, stackOfV8().join('\n') + '\nready\n');
  return Atomics.wait(cell, 0, 0, ms).length;
}

function matrixMiddle(fd, ms) {
  return matrixInner(fd, ms) + 1;
}

function matrixOuter(fd, ms) {
  return matrixMiddle(fd, ms) * 2;
}

const devnull = fs.openSync('/dev/null', 'w');
let sink = 0;
for (let i = 0; i < 20000; i++) sink += matrixOuter(devnull, 0);
matrixOuter(1, seconds * 1000);
fs.writeSync(1, `done ${sink}\n`);
