; unwind_fixture.ll: the x86-64 code test_unwind.c runs and unwinds (compiled by
; tests/CMakeLists.txt with llc-14 -O2 and linked into the non-PIE test executable, so that
; .eh_frame and .llvm_stackmaps hold final addresses, as after RuntimeDyld relocates them).
;
; The test sets a breakpoint on every stackmap record's PC and on some instructions of the
; prologues and epilogues, runs uw_entry, and checks each unwinding method against the machine
; state and against the others. The functions cover the frame shapes LLVM emits:
;   uw_leaf          leaf, no calls: may use the red zone, stack size 0 or small
;   uw_saves         frameless, callee-saved pushes (rbx, rbp as a plain register, r12-r15),
;                    a fixed-size frame, records after calls
;   uw_fp            frame-pointer="all": push %rbp; mov %rsp,%rbp; callee-saved pushes
;   uw_recurse       recursion (a dozen frames of the same function), a statepoint at the
;                    bottom whose record sits on the call's return address
;   uw_patch         a patchpoint with no call target, after the last call (llc-14 crashes
;                    computing the live-outs of a patchpoint followed by a call): 16 bytes of
;                    nops, the record at their start; patchpoints force a frame pointer
;   uw_dynamic       a dynamic alloca: stack size UINT64_MAX in the stackmap
;   uw_realigned     an over-aligned alloca: stack size UINT64_MAX as well
;   uw_manyargs      a call with stack-passed arguments, then a record (LLVM puts the record
;                    after the add that pops the arguments)
;   uw_sp_plain      statepoints do not force a frame pointer: a frameless function whose
;                    record sits on the call's return address
;   uw_sp_pushed     frameless, a statepoint whose call passes arguments on the stack: LLVM
;                    pushes them, so at the record (the return address) SP is 32 bytes below
;                    the one the stack size describes
; No opaque pointers: typed-pointer IR as llc-14 reads it.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare token @llvm.experimental.gc.statepoint.p0f_i64i64i64i64i64i64i64i64i64i64f(i64, i32,
    i64 (i64, i64, i64, i64, i64, i64, i64, i64, i64)*, i32, i32, ...)
declare i64 @llvm.experimental.gc.result.i64(token)

; Defined in test_unwind.c: they return their argument plus one (the values only keep the
; compiler from folding things away).
declare i64 @uw_cb(i64)
declare void @uw_cb_void()
declare i64 @uw_cb_many(i64, i64, i64, i64, i64, i64, i64, i64, i64)

define i64 @uw_leaf(i64 %a, i64 %b) noinline {
entry:
  %buf = alloca [6 x i64], align 16
  %p0 = getelementptr [6 x i64], [6 x i64]* %buf, i64 0, i64 0
  %p5 = getelementptr [6 x i64], [6 x i64]* %buf, i64 0, i64 5
  store volatile i64 %a, i64* %p0
  store volatile i64 %b, i64* %p5
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 100, i32 0, i64 %a,
      [6 x i64]* %buf)
  %x = load volatile i64, i64* %p0
  %y = load volatile i64, i64* %p5
  %s = add i64 %x, %y
  ret i64 %s
}

define i64 @uw_saves(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f) noinline {
entry:
  %buf = alloca [5 x i64], align 8
  %p = getelementptr [5 x i64], [5 x i64]* %buf, i64 0, i64 2
  store volatile i64 %c, i64* %p
  %r1 = call i64 @uw_cb(i64 %a)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 200, i32 0, i64 %a, i64 %b,
      i64 %c, i64 %d, i64 %e, i64 %f, i64 %r1)
  %r2 = call i64 @uw_cb(i64 %b)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 201, i32 0, i64 %a, i64 %b,
      i64 %c, i64 %d, i64 %e, i64 %f, i64 %r1, i64 %r2)
  %l = call i64 @uw_leaf(i64 %r1, i64 %r2)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 202, i32 0, i64 %l, i64 %a,
      i64 %f)
  %v = load volatile i64, i64* %p
  %s1 = add i64 %a, %b
  %s2 = add i64 %c, %d
  %s3 = add i64 %e, %f
  %s4 = add i64 %r1, %r2
  %s5 = add i64 %s1, %s2
  %s6 = add i64 %s3, %s4
  %s7 = add i64 %s5, %s6
  %s8 = add i64 %s7, %l
  %s9 = add i64 %s8, %v
  ret i64 %s9
}

define i64 @uw_fp(i64 %a, i64 %b) noinline "frame-pointer"="all" {
entry:
  %buf = alloca [3 x i64], align 8
  %p = getelementptr [3 x i64], [3 x i64]* %buf, i64 0, i64 1
  store volatile i64 %a, i64* %p
  %r1 = call i64 @uw_cb(i64 %a)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 300, i32 0, i64 %a, i64 %b,
      i64 %r1, i64* %p)
  %r2 = call i64 @uw_saves(i64 %a, i64 %b, i64 %r1, i64 4, i64 5, i64 6)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 301, i32 0, i64 %a, i64 %b,
      i64 %r1, i64 %r2)
  %v = load volatile i64, i64* %p
  %s1 = add i64 %a, %b
  %s2 = add i64 %r1, %r2
  %s3 = add i64 %s1, %s2
  %s4 = add i64 %s3, %v
  ret i64 %s4
}

define i64 @uw_recurse(i64 %n, i64 %acc) noinline gc "statepoint-example" {
entry:
  %done = icmp eq i64 %n, 0
  br i1 %done, label %bottom, label %more

bottom:
  %tok = call token (i64, i32, void ()*, i32, i32, ...)
      @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 400, i32 0,
          void ()* elementtype(void ()) @uw_cb_void, i32 0, i32 0, i32 0, i32 0)
      [ "deopt"(i64 %acc, i64 %n) ]
  ret i64 %acc

more:
  %m = sub i64 %n, 1
  %acc2 = add i64 %acc, %n
  %r = call i64 @uw_recurse(i64 %m, i64 %acc2)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 401, i32 0, i64 %n, i64 %acc,
      i64 %r)
  %s = add i64 %r, %n
  ret i64 %s
}

define i64 @uw_patch(i64 %a) noinline {
entry:
  %r = call i64 @uw_cb(i64 %a)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 501, i32 0, i64 %a, i64 %r)
  call void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 500, i32 16,
      i8* null, i32 0, i64 %a, i64 %r)
  %s = add i64 %a, %r
  ret i64 %s
}

define i64 @uw_dynamic(i64 %n) noinline {
entry:
  %buf = alloca i64, i64 %n, align 16
  store volatile i64 %n, i64* %buf
  %r = call i64 @uw_cb(i64 %n)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 600, i32 0, i64 %n, i64* %buf,
      i64 %r)
  %v = load volatile i64, i64* %buf
  %s = add i64 %v, %r
  ret i64 %s
}

define i64 @uw_realigned(i64 %n) noinline {
entry:
  %big = alloca <8 x i64>, align 64
  %p = bitcast <8 x i64>* %big to i64*
  store volatile i64 %n, i64* %p
  %r = call i64 @uw_cb(i64 %n)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 700, i32 0, i64 %n,
      <8 x i64>* %big, i64 %r)
  %v = load volatile i64, i64* %p
  %s = add i64 %v, %r
  ret i64 %s
}

define i64 @uw_manyargs(i64 %a) noinline minsize optsize {
entry:
  %r = call i64 @uw_cb_many(i64 %a, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8, i64 9)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 800, i32 0, i64 %a, i64 %r)
  %s = add i64 %a, %r
  ret i64 %s
}

define i64 @uw_sp_plain(i64 %a, i64 %b) noinline gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...)
      @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 900, i32 0,
          void ()* elementtype(void ()) @uw_cb_void, i32 0, i32 0, i32 0, i32 0)
      [ "deopt"(i64 %a, i64 %b) ]
  %s = add i64 %a, %b
  ret i64 %s
}

define i64 @uw_sp_pushed(i64 %a) noinline gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, i64 (i64, i64, i64, i64, i64, i64, i64, i64, i64)*, i32, i32, ...)
      @llvm.experimental.gc.statepoint.p0f_i64i64i64i64i64i64i64i64i64i64f(i64 901, i32 0,
          i64 (i64, i64, i64, i64, i64, i64, i64, i64, i64)*
              elementtype(i64 (i64, i64, i64, i64, i64, i64, i64, i64, i64)) @uw_cb_many,
          i32 9, i32 0, i64 %a, i64 2, i64 3, i64 4, i64 5, i64 6, i64 7, i64 8, i64 9,
          i32 0, i32 0)
      [ "deopt"(i64 %a) ]
  %r = call i64 @llvm.experimental.gc.result.i64(token %tok)
  %s = add i64 %a, %r
  ret i64 %s
}

; The entry point: calls every function once (uw_fp reaches uw_saves and uw_leaf).
define i64 @uw_entry(i64 %n) noinline {
entry:
  %a = call i64 @uw_fp(i64 %n, i64 2)
  %b = call i64 @uw_recurse(i64 12, i64 %a)
  %c = call i64 @uw_patch(i64 %b)
  %d = call i64 @uw_dynamic(i64 3)
  %e = call i64 @uw_realigned(i64 %c)
  %f = call i64 @uw_manyargs(i64 %d)
  %g = call i64 @uw_sp_plain(i64 %e, i64 %f)
  %h = call i64 @uw_sp_pushed(i64 %g)
  %s1 = add i64 %a, %h
  %s2 = add i64 %c, %d
  %s3 = add i64 %e, %f
  %s4 = add i64 %s1, %s2
  %s5 = add i64 %s4, %s3
  ret i64 %s5
}
