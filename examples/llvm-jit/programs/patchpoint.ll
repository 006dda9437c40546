; patchpoint.ll: llvm.experimental.patchpoint call sites whose target is the runtime's
; safepoint, for jitmap-demo-jit --program patchpoint.
;
; Entry: i64 @patchpoint_main(i64 %x, i64 %y, i32 %z); the runtime passes x=1000, y=-22,
; z=7 and checks the result against the same arithmetic done in C.
;
; A patchpoint's record offset is the *start* of its patchable region, and the call it emits
; (movabs target, %r11; call *%r11) is 13 bytes long, so the safepoint's return address is
; record PC + 13. The target is an i8* constant holding the safepoint's real address (the JIT
; resolves the symbol and relocates the movabs).
;
; Truth lines list the record's locations in order:
;   id=200  C calling convention, one call argument (the id, passed in rdi and not recorded):
;     x y z kminus7                          live values only
;   id=201  anyregcc: the two call arguments are recorded first, in whatever registers the
;           register allocator chose, and the callee must preserve every register. Its target
;           is jitmap_demo_safepoint_anyreg, a runtime trampoline that saves all registers (with
;           CFI for each) and calls jitmap_demo_safepoint with the id read from
;           @jitmap_demo_anyreg_id. Values may stay in caller-saved registers across it.
;     x s y z t u v                          args x, s; live y, z, t, u, v. t, u and v are
;                                            computed after the printf, and with seven values
;                                            live some must sit in caller-saved registers
;
; Each patchpoint sits in its own function with no call after it: on x86-64, llc 14 (and 19)
; crash in StackMaps::createLiveOutReg when an ordinary call follows a patchpoint in the same
; function, because the call's implicit use of the shadow-stack pointer (SSP, which has no
; DWARF number) makes it a live-out (llvm/llvm-project#53828).

declare void @jitmap_demo_safepoint(i64)
declare void @jitmap_demo_safepoint_anyreg()
@jitmap_demo_anyreg_id = external global i64
declare i32 @printf(i8*, ...)
declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)

@fmt200 = private unnamed_addr constant [65 x i8] c"jitmap-demo: patchpoint id=200 cc=c x=%ld y=%ld z=%d kminus7=-7\0A\00"
@fmt201 = private unnamed_addr constant [83 x i8] c"jitmap-demo: patchpoint id=201 cc=anyreg x=%ld s=%ld y=%ld z=%d t=%ld u=%ld v=%ld\0A\00"

define i64 @patchpoint_main(i64 %x, i64 %y, i32 %z) noinline {
entry:
  %a = call i64 @patchpoint_c(i64 %x, i64 %y, i32 %z)
  %b = call i64 @patchpoint_anyreg(i64 %x, i64 %y, i32 %z)
  %r = add i64 %a, %b
  ret i64 %r
}

define i64 @patchpoint_c(i64 %x, i64 %y, i32 %z) noinline {
entry:
  %f200 = getelementptr [65 x i8], [65 x i8]* @fmt200, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f200, i64 %x, i64 %y, i32 %z)
  call void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 200, i32 13,
      i8* bitcast (void (i64)* @jitmap_demo_safepoint to i8*), i32 1, i64 200,
      i64 %x, i64 %y, i32 %z, i64 -7)
  %z64 = sext i32 %z to i64
  %x2 = shl i64 %x, 1
  %r1 = add i64 %x2, %y
  %r2 = add i64 %r1, %z64
  ret i64 %r2
}

define i64 @patchpoint_anyreg(i64 %x, i64 %y, i32 %z) noinline {
entry:
  %s = add i64 %x, %y
  store volatile i64 201, i64* @jitmap_demo_anyreg_id
  %f201 = getelementptr [83 x i8], [83 x i8]* @fmt201, i64 0, i64 0
  %k = load volatile i64, i64* @jitmap_demo_anyreg_id
  %t0 = add i64 %s, %k
  %u0 = mul i64 %x, %k
  %v0 = xor i64 %y, %k
  call i32 (i8*, ...) @printf(i8* %f201, i64 %x, i64 %s, i64 %y, i32 %z, i64 %t0, i64 %u0, i64 %v0)
  ; Computed again from a fresh load, after the printf: not pinned to callee-saved registers.
  %k2 = load volatile i64, i64* @jitmap_demo_anyreg_id
  %t = add i64 %s, %k2
  %u = mul i64 %x, %k2
  %v = xor i64 %y, %k2
  ; 16 bytes: the 13-byte call plus 3 bytes of nops after it.
  call anyregcc void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 201, i32 16,
      i8* bitcast (void ()* @jitmap_demo_safepoint_anyreg to i8*), i32 2,
      i64 %x, i64 %s, i64 %y, i32 %z, i64 %t, i64 %u, i64 %v)
  %z64 = sext i32 %z to i64
  %r1 = mul i64 %s, %z64
  %r2 = add i64 %r1, %y
  %r3 = add i64 %r2, %t
  %r4 = add i64 %r3, %u
  %r5 = add i64 %r4, %v
  ret i64 %r5
}
