'use strict';
// The runtime matrix's Node.js program with a deoptimization under the stop (rt_node_deopt.py):
// as node_prog.js, but the last call takes a branch the warm-up never took (it prints the
// stack), so V8 throws the three functions' optimized code away while they run and they go on
// in the interpreter (InterpreterEnterAtNextBytecode), as code in the field often does. The
// stack printed is V8's own, "frame NAME@FILE:LINE" innermost first, then "ready".
//
//   node --perf-basic-prof --interpreted-frames-native-stack node_deopt_prog.js SECONDS
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

function matrixInner(ms) {
  if (ms) process.stdout.write(stackOfV8().join('\n') + '\nready\n');
  return Atomics.wait(cell, 0, 0, ms).length;
}

function matrixMiddle(ms) {
  return matrixInner(ms) + 1;
}

function matrixOuter(ms) {
  return matrixMiddle(ms) * 2;
}

let sink = 0;
for (let i = 0; i < 20000; i++) sink += matrixOuter(0);
matrixOuter(seconds * 1000);
process.stdout.write(`done ${sink}\n`);
