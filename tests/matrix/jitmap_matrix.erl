%% The Erlang program of the runtime matrix (rt_beam.py), run by BEAM's JIT with `+JPperf true`
%% (a perf map /tmp/perf-PID.map, and frame pointers through Erlang code):
%%
%%   erl +JPperf true -noshell -pa DIR -run jitmap_matrix start
%%
%% A process runs outer/1 -> middle/1 -> inner/1 -> spin/2, which loops for ever: its frames are
%% on a scheduler thread's stack whenever that thread runs it. Once it runs, the program prints
%% its stack as BEAM sees it (process_info current_stacktrace, innermost first), "frame
%% MODULE:FUNCTION/ARITY" a line, then "ready".
-module(jitmap_matrix).
-export([start/0, outer/1]).

outer(N) -> middle(N) + 1.
middle(N) -> inner(N) + 1.
inner(N) -> spin(N, 0) + 1.
spin(N, I) when I < 0 -> N;
spin(N, I) -> spin(N, I + 1).

start() ->
    Spinner = spawn(?MODULE, outer, [1]),
    timer:sleep(200),
    {current_stacktrace, Stack} = erlang:process_info(Spinner, current_stacktrace),
    [io:format("frame ~s:~s/~b~n", [M, F, A]) || {M, F, A, _} <- Stack],
    io:format("ready~n"),
    receive after infinity -> ok end.
