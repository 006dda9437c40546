; aot.ll: ahead-of-time compiled code with a stackmap, linked into an ordinary executable
; (gdb-commands-aot), so that jitmap's commands are tested on a loaded file's
; .llvm_stackmaps, found without any JIT registration and moved by the PIE's load bias.
;
; aot_work(a) prints the truth line, calls aot_stop(700) (where the test breaks), and has
; stackmap 700 at the call's return address. Locations in order:
;   a        the argument
;   b        a * 3
;   slot     the address of an alloca holding a (Direct)

declare void @aot_stop(i64)
declare i32 @printf(i8*, ...)
declare void @llvm.experimental.stackmap(i64, i32, ...)

@fmt = private unnamed_addr constant [52 x i8] c"jitmap-aot: stackmap id=700 a=%ld b=%ld slot=0x%lx\0A\00"

define i64 @aot_work(i64 %a) noinline {
entry:
  %slot = alloca i64, align 8
  store volatile i64 %a, i64* %slot
  %b = mul i64 %a, 3
  %slotaddr = ptrtoint i64* %slot to i64
  %f = getelementptr [52 x i8], [52 x i8]* @fmt, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f, i64 %a, i64 %b, i64 %slotaddr)
  call void @aot_stop(i64 700)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 700, i32 0,
      i64 %a, i64 %b, i64* %slot)
  %v = load volatile i64, i64* %slot
  %r = add i64 %v, %b
  ret i64 %r
}
