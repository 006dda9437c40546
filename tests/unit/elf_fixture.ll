; elf_fixture.ll: the object test_elf.c reads (compiled by tests/CMakeLists.txt with llc-14).
; Two functions in one .text section, so the second one's relocated address is > 0; a
; constant that does not fit i32 goes to the constant pool. No pointers: the IR reads the
; same under typed (llc-14) and opaque (later llc) pointers.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @ext(i64)

define i64 @fixture_first(i64 %a, i64 %b) {
entry:
  call void @ext(i64 %a)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 1, i32 0, i64 %a, i64 %b, i64 42)
  %s = add i64 %a, %b
  ret i64 %s
}

define i64 @fixture_second(i64 %x) {
entry:
  call void @ext(i64 %x)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 2, i32 0, i64 %x, i64 9000000000)
  call void @ext(i64 %x)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 3, i32 0, i64 %x)
  ret i64 %x
}
