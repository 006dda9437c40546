'use strict';
// A Node.js program for jitmap's runtime tests (tests/runtimes/test_runtimes.py node): a frame
// that V8's deoptimizer rebuilt, whose return address is the first byte of the builtin
// InterpreterEnterAtNextBytecode, under the frame that blocks.
//
//   node --allow-natives-syntax --perf-basic-prof --interpreted-frames-native-stack \
//        node_deopt.js TRUTH SECONDS
//
// outer() is optimized by TurboFan with middle() inlined into it. On the last call inner()
// (never optimized, so never inlined) throws outer's code away while outer's frame is on the
// stack; when inner returns, the deoptimizer turns that one optimized frame into two
// interpreted ones, outer's and middle's, and gives middle's frame the start of
// InterpreterEnterAtNextBytecode as its return address (outer goes on at its next bytecode).
// Then middle calls block(), which writes the JavaScript stack as V8 sees it (this script's
// functions, innermost first, "<top-level>" for the script itself) to TRUTH, prints "ready"
// and waits in Atomics.wait for SECONDS. --interpreted-frames-native-stack gives every
// interpreted function a copy of the interpreter's entry trampoline, named in the perf map,
// so that its frames can be named at all.
const fs = require('fs');
const cell = new Int32Array(new SharedArrayBuffer(4));
const truth = process.argv[2];
const seconds = Number(process.argv[3]) || 60;
let phase = 0;

function stackOfThisScript() {
  const saved = Error.prepareStackTrace;
  Error.prepareStackTrace = (_, sites) => sites;
  const sites = new Error().stack;
  Error.prepareStackTrace = saved;
  return sites.filter(s => s.getFileName() === __filename)
    .map(s => s.getFunctionName() || '<top-level>').slice(1);  // not itself
}

function block(ms) {
  if (phase === 1) {
    fs.writeFileSync(truth, stackOfThisScript().join('\n') + '\n');
    const after = (%GetOptimizationStatus(outer) & 16) ? 'optimized' : 'deoptimized';
    process.stdout.write(`pid ${process.pid} outer-after ${after}\nready\n`);
  }
  return Atomics.wait(cell, 0, 0, ms).length;
}

function inner(n) {
  if (phase === 1) %DeoptimizeFunction(outer);
  return n + 1;
}

function middle(n, ms) {
  const a = inner(n);
  return a + block(ms);
}

function outer(n, ms) { return middle(n, ms) * 2; }

%NeverOptimizeFunction(inner);
%NeverOptimizeFunction(block);
%NeverOptimizeFunction(stackOfThisScript);
%PrepareFunctionForOptimization(outer);
%PrepareFunctionForOptimization(middle);
for (let i = 0; i < 100; i++) outer(i, 0);
%OptimizeFunctionOnNextCall(outer);
for (let i = 0; i < 100; i++) outer(i, 0);
// V8's optimization status: 16 is "optimized", 64 "by TurboFan".
const before = (%GetOptimizationStatus(outer) & 80) === 80 ? 'turbofan' : 'not-optimized';
process.stdout.write(`outer-before ${before}\n`);
phase = 1;
outer(1, seconds * 1000);
