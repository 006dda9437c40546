// mono_nested.cs: a Mono program for tests/runtimes/test_mono.py. Two threads each block in
// Monitor.Wait under a few nested managed methods (the main thread under Main, Outer, Middle,
// Inner and Block; a thread named "jitmap-worker" under WorkerOuter, WorkerInner and Block).
// Each writes its own stack (Environment.StackTrace) to TRUTH (the main thread) or
// TRUTH.worker before it blocks; "ready" on stdout says both have. Run as Mono's users debug
// it: MONO_XDEBUG=gdb mono --debug --jitmap mono_nested.exe TRUTH
//
//   mcs -debug -out:mono_nested.exe mono_nested.cs
using System;
using System.IO;
using System.Runtime.CompilerServices;
using System.Threading;

static class JitmapMono {
    static readonly object Gate = new object();

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Block(string truth) {
        File.WriteAllText(truth + ".tmp", Environment.StackTrace);
        File.Move(truth + ".tmp", truth);
        lock (Gate) { Monitor.Wait(Gate); }
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Inner(string truth) { Block(truth); }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Middle(string truth) { Inner(truth); }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void Outer(string truth) { Middle(truth); }

    [MethodImpl(MethodImplOptions.NoInlining)]
    static void WorkerInner(string truth) { Block(truth); }
    [MethodImpl(MethodImplOptions.NoInlining)]
    static void WorkerOuter(string truth) { WorkerInner(truth); }

    static void Main(string[] args) {
        string truth = args[0];
        var worker = new Thread(() => WorkerOuter(truth + ".worker"));
        worker.Name = "jitmap-worker";
        worker.IsBackground = true;
        worker.Start();
        while (!File.Exists(truth + ".worker"))
            Thread.Sleep(10);
        // The worker says when the main thread has written its stack (it then blocks too).
        var ready = new Thread(() => {
            while (!File.Exists(truth))
                Thread.Sleep(10);
            Console.WriteLine("ready");
            Console.Out.Flush();
        });
        ready.Start();
        Outer(truth);
    }
}
