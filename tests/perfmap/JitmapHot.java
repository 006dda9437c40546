// A Java program for jitmap's perf map tests (tests/perfmap/test_runtimes.py jvm): three
// methods compiled by HotSpot's JIT, each a frame of its own (-XX:CompileCommand=dontinline),
// the innermost sleeping for SECONDS (args[0]). Every warm-up call sleeps too (0 ms), so the
// compiled code needs no deoptimization when the last call sleeps for real.
public class JitmapHot {
    static volatile long sink;

    static long jitmapInner(long n, long ms) throws InterruptedException {
        Thread.sleep(ms);
        return n * 3 + 1;
    }

    static long jitmapMiddle(long n, long ms) throws InterruptedException {
        return jitmapInner(n, ms) + 1;
    }

    static long jitmapOuter(long n, long ms) throws InterruptedException {
        return jitmapMiddle(n, ms) ^ n;
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 200000; i++)
            sink += jitmapOuter(i, 0);
        System.out.println("pid " + ProcessHandle.current().pid());
        System.out.println("ready");
        System.out.flush();
        jitmapOuter(1, Long.parseLong(args[0]) * 1000);
        System.out.println("done " + sink);
    }
}
