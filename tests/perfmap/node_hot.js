'use strict';
// A Node.js program for jitmap's perf map tests (tests/perfmap/test_runtimes.py node): three functions
// compiled by V8's optimizing tier, each a frame of its own, the innermost blocked in
// Atomics.wait for SECONDS (argv[2]), so that the test looks at a stack that stays put.
//
//   node --allow-natives-syntax --no-turbo-inlining --perf-basic-prof node_hot.js SECONDS
//
// Every warm-up call already goes through Atomics.wait (with a timeout of 0), so the code
// compiled for it does not deoptimize when the last call waits for real.
const cell = new Int32Array(new SharedArrayBuffer(4));
let sink = 0;

function jitmapInner(n, ms) {
  const r = Atomics.wait(cell, 0, 0, ms);
  return (n * 3 + r.length) | 0;
}

function jitmapMiddle(n, ms) {
  return (jitmapInner(n, ms) + 1) | 0;
}

function jitmapOuter(n, ms) {
  return (jitmapMiddle(n, ms) ^ n) | 0;
}

const fns = [jitmapInner, jitmapMiddle, jitmapOuter];
for (const f of fns) %PrepareFunctionForOptimization(f);
for (let i = 0; i < 200; i++) sink = (sink + jitmapOuter(i, 0)) | 0;
for (const f of fns) %OptimizeFunctionOnNextCall(f);
for (let i = 0; i < 200; i++) sink = (sink + jitmapOuter(i, 0)) | 0;
// V8's optimization status: 16 is "optimized", 64 "by TurboFan".
const tiers = fns.map(f => ((%GetOptimizationStatus(f)) & 80) === 80 ? 'turbofan' : 'not-optimized');
process.stdout.write(`pid ${process.pid} ${tiers.join(' ')}\nready\n`);
jitmapOuter(1, (Number(process.argv[2]) || 60) * 1000);
process.stdout.write(`done ${sink}\n`);
