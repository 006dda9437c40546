'use strict';
// A Node.js program for jitmap-core-handler's test (tests/field/test_handler.py): three
// functions compiled by V8's optimizing tier, each a frame of its own, nested.
//
//   node --allow-natives-syntax --no-turbo-inlining --perf-basic-prof node_abort.js MODE
//
// MODE "wait": the innermost blocks in Atomics.wait (the test holds it and takes its core);
// MODE "abort": the innermost calls process.abort() (the kernel dumps it through
// core_pattern). Every warm-up call goes through the same code with nothing to do, so the
// optimized code does not deoptimize when the last call does it for real.
const cell = new Int32Array(new SharedArrayBuffer(4));
const mode = process.argv[2] || 'wait';
let sink = 0;

// "abort": not optimized (a frame of its own under the three), aborts when ms is not 0.
function act(ms) {
  if (ms) process.abort();
  return ms;
}

// "wait": the innermost waits itself, as every warm-up call did (for 0 ms).
function jitmapInner(n, ms) {
  const r = mode === 'abort' ? act(ms) : Atomics.wait(cell, 0, 0, ms).length;
  return (r + n * 3) | 0;
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
console.log('ready ' + process.pid + ' ' + sink);
jitmapOuter(7, 1e9);
