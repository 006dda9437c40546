%% An Erlang program for jitmap's runtime tests (tests/runtimes/test_runtimes.py beam), run by
%% BEAM's JIT with `+JPperf true` (a perf map /tmp/perf-PID.map and a jitdump /tmp/jit-PID.dump,
%% and frame pointers in Erlang code):
%%
%%   erl +JPperf true -noshell -pa DIR -run jitmap_beam start TRUTH
%%
%% - a process runs outer/1 -> middle/1 -> inner/1 -> spin/2, which loops for ever: its frames
%%   are on a scheduler thread's stack whenever that thread is running it (BEAM runs Erlang
%%   code on the process's own stack, which the thread's stack pointer points into);
%% - a process waits in `receive` under w_outer/0 -> w_middle/0 -> w_inner/0: a waiting
%%   process is on no thread's stack, so no tool may show these;
%% - a process exits normally and one crashes, as the issue's program did.
%%
%% Once the spinning process runs, the program writes its stack as BEAM sees it
%% (process_info current_stacktrace, innermost first, MODULE:FUNCTION/ARITY a line) to TRUTH
%% and prints "ready".
-module(jitmap_beam).
-export([start/1, outer/1, w_outer/0]).

outer(N) -> middle(N) + 1.
middle(N) -> inner(N) + 1.
inner(N) -> spin(N, 0) + 1.
spin(N, I) when I < 0 -> N;
spin(N, I) -> spin(N, I + 1).

w_outer() -> w_middle() + 1.
w_middle() -> w_inner() + 1.
w_inner() -> receive stop -> 0 end.

start([Truth]) ->
    Spinner = spawn(?MODULE, outer, [1]),
    _Waiter = spawn(?MODULE, w_outer, []),
    spawn(fun() -> ok end),
    spawn(fun() -> error(crashed_on_purpose) end),
    timer:sleep(200),
    {current_stacktrace, Stack} = erlang:process_info(Spinner, current_stacktrace),
    Lines = [io_lib:format("~s:~s/~b~n", [M, F, A]) || {M, F, A, _} <- Stack],
    ok = file:write_file(Truth, Lines),
    io:format("pid ~s~nready~n", [os:getpid()]),
    receive after infinity -> ok end.
