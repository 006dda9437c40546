'use strict';
// A Node.js program for jitmap's tests: three functions compiled by V8's optimizing tier,
// each a frame of its own, nested (jitmapOuter > jitmapMiddle > jitmapInner).
//
//   node --allow-natives-syntax --no-turbo-inlining --perf-basic-prof node_hot.js SECONDS
//   node --allow-natives-syntax --no-turbo-inlining --perf-basic-prof node_hot.js abort
//
// SECONDS: the innermost blocks in Atomics.wait that long, so that a test looks at a stack
// that stays put (tests/perfmap/test_runtimes.py; tests/field/test_handler.py holds it and
// takes its core). "abort": the innermost calls act, which calls process.abort() (the kernel
// dumps it through core_pattern: tests/field/test_handler.py). Every warm-up call goes
// through the same code with nothing to do (a wait of 0, no abort), so the code compiled for
// it does not deoptimize when the last call does it for real.
const cell = new Int32Array(new SharedArrayBuffer(4));
const abort = process.argv[2] === 'abort';
let sink = 0;

// Not optimized (a frame of its own under the three); aborts when ms is not 0.
function act(ms) {
  if (ms) process.abort();
  return ms;
}

function jitmapInner(n, ms) {
  const r = abort ? act(ms) : Atomics.wait(cell, 0, 0, ms).length;
  return (n * 3 + r) | 0;
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
jitmapOuter(1, abort ? 1 : (Number(process.argv[2]) || 60) * 1000);
process.stdout.write(`done ${sink}\n`);
