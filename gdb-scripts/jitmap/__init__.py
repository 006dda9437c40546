"""jitmap's Python side for GDB.

gdb_reader: loads jitmap-reader.so (GDB's JIT reader plugin) and keeps its entries fresh.
"""
