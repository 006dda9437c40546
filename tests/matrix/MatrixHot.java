// The Java program of the runtime matrix (rt_jvm.py): three methods HotSpot compiles (each
// warmed up well past the C2 threshold), the innermost asleep for SECONDS (args[0]). It
// prints "ready" just before the last call (every call runs the same code: a branch the
// warm-up never took would send the compiled code back to the interpreter); the truth is
// jstack's account of thread "main", taken once it sleeps.
public class MatrixHot {
    static volatile long sink;

    static long matrixInner(long n, long ms) throws InterruptedException {
        Thread.sleep(ms);
        return n * 3 + 1;
    }

    static long matrixMiddle(long n, long ms) throws InterruptedException {
        return matrixInner(n, ms) + 1;
    }

    static long matrixOuter(long n, long ms) throws InterruptedException {
        return matrixMiddle(n, ms) ^ n;
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 200000; i++)
            sink += matrixOuter(i, 0);
        System.out.println("ready");
        System.out.flush();
        matrixOuter(1, Long.parseLong(args[0]) * 1000);
        System.out.println("done " + sink);
    }
}
