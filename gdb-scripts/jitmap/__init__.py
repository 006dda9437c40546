"""jitmap's Python side, for GDB and LLDB.

gdb_reader: loads jitmap-reader.so (GDB's JIT reader plugin) and keeps its entries fresh.
commands: every command once (names in GDB and LLDB, options, help, body) over a Debugger
protocol; the adapters below implement it. The bodies: commands_frames, commands_files,
commands_state; what they keep between commands and stops: session.
gdb_adapter, lldb_adapter: each debugger's Debugger (frames, registers, memory, symbols,
breakpoints), at the bottom of its side: the commands, the frame filter, the unwinders and
the frame provider import it; it imports none of them.
gdb_commands: the GDB commands (info stackmap, info stackmaps, info gc-roots, jitmap ...);
docs/commands.md. With them gdb_frames (the frame filter) and gdb_perf (the unwinders).
lldb_commands: the LLDB commands (stackmap info, list, gc-roots, verify ...), loaded by
share/jitmap/lldb/jitmap.py; docs/lldb.md. With them lldb_frames (the frame provider). Below
lldb_adapter, its alone: lldb_code (where code can be, which steps are guesses) and
lldb_images (the JIT images of load-images).

Debugger-neutral (no `import gdb`), shared with the LLDB front end:
native (the ctypes binding to libjitmap), discovery (JIT entries and loaded files ->
stackmaps), stackmaps, model (records evaluated in a frame -> the contract's JSON objects),
format (text and JSON), report (what the list, gc-roots, verify and status commands compute
and print), names (naming API for runtimes).
"""
