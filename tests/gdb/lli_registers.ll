; lli_registers.ll: JIT code for LLVM's own lli (-jit-kind=mcjit), written for
; tests/gdb/test_gdb_registers.py. Two stops in usleep, each under three JIT frames:
;
;   main -> outer -> inner -> usleep(1)          every function keeps a frame pointer
;   main -> outer2 -> leaf -> usleep(2)          leaf keeps none
;
; main, outer and outer2 hold known values in rbx and r12-r15 across their calls (the asm
; constraints put them there; they are callee-saved, so each callee pushes and restores the
; ones it uses): main 0x1b1b1b1b, 0x1c1c1c1c, 0x1d1d1d1d, 0x1e1e1e1e, 0x1f1f1f1f; outer
; 0x0b0b0b0b ... 0x0f0f0f0f; outer2 0x2b2b2b2b ... 0x2f2f2f2f. GDB alone reads them back in
; every outer frame from the object's .eh_frame. lli also writes a jitdump of the same
; objects (LLVM's perf listener), which jitmap reads as it reads any runtime's.

declare i32 @usleep(i32)

define i64 @inner(i64 %a) noinline "frame-pointer"="all" {
  %r = call i32 @usleep(i32 1)
  %x = sext i32 %r to i64
  %y = add i64 %a, %x
  ret i64 %y
}

define i64 @leaf(i64 %a) noinline "frame-pointer"="none" {
  %r = call i32 @usleep(i32 2)
  %x = sext i32 %r to i64
  %y = add i64 %a, %x
  ret i64 %y
}

define i64 @outer(i64 %a) noinline "frame-pointer"="all" {
  %b = call i64 asm sideeffect "mov $$0x0b0b0b0b, $0", "=r"()
  %c = call i64 asm sideeffect "mov $$0x0c0c0c0c, $0", "=r"()
  %d = call i64 asm sideeffect "mov $$0x0d0d0d0d, $0", "=r"()
  %e = call i64 asm sideeffect "mov $$0x0e0e0e0e, $0", "=r"()
  %f = call i64 asm sideeffect "mov $$0x0f0f0f0f, $0", "=r"()
  %r = call i64 @inner(i64 %a)
  call void asm sideeffect "", "{rbx},{r12},{r13},{r14},{r15}"(i64 %b, i64 %c, i64 %d, i64 %e,
                                                             i64 %f)
  ret i64 %r
}

define i64 @outer2(i64 %a) noinline "frame-pointer"="all" {
  %b = call i64 asm sideeffect "mov $$0x2b2b2b2b, $0", "=r"()
  %c = call i64 asm sideeffect "mov $$0x2c2c2c2c, $0", "=r"()
  %d = call i64 asm sideeffect "mov $$0x2d2d2d2d, $0", "=r"()
  %e = call i64 asm sideeffect "mov $$0x2e2e2e2e, $0", "=r"()
  %f = call i64 asm sideeffect "mov $$0x2f2f2f2f, $0", "=r"()
  %r = call i64 @leaf(i64 %a)
  call void asm sideeffect "", "{rbx},{r12},{r13},{r14},{r15}"(i64 %b, i64 %c, i64 %d, i64 %e,
                                                             i64 %f)
  ret i64 %r
}

define i32 @main() "frame-pointer"="all" {
  %b = call i64 asm sideeffect "mov $$0x1b1b1b1b, $0", "=r"()
  %c = call i64 asm sideeffect "mov $$0x1c1c1c1c, $0", "=r"()
  %d = call i64 asm sideeffect "mov $$0x1d1d1d1d, $0", "=r"()
  %e = call i64 asm sideeffect "mov $$0x1e1e1e1e, $0", "=r"()
  %f = call i64 asm sideeffect "mov $$0x1f1f1f1f, $0", "=r"()
  %m = call i64 @outer(i64 5)
  %n = call i64 @outer2(i64 7)
  call void asm sideeffect "", "{rbx},{r12},{r13},{r14},{r15}"(i64 %b, i64 %c, i64 %d, i64 %e,
                                                             i64 %f)
  %s = add i64 %m, %n
  %t = trunc i64 %s to i32
  ret i32 %t
}
