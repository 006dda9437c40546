; stackmaps.ll: plain llvm.experimental.stackmap records, for jitmap-demo-jit --program stackmaps.
;
; Entry: i64 @stackmaps_main(i64 %a, i32 %b); the runtime passes a=15, b=-3 and checks the
; result against the same arithmetic done in C.
;
; Every stackmap directly follows a call, so its instruction offset is that call's return
; address: a debugger stopped in jitmap_demo_safepoint finds the record from the caller's PC.
; Before each call the program prints a truth line whose key=value pairs are the record's
; locations, in order (pointers in hex, integers in decimal):
;
;   id=100 (stackmaps_main, at the safepoint)
;     a b k42 kminus1 kpool slot     args, small constants, a constant needing the pool, an alloca
;                                    (then slotval, not a location: what the alloca holds)
;   id=101 (stackmaps_inner, at the safepoint; frame below id=102)
;     s neg flag w kneg kzero        i64 arg, i32, i8, i16, negative pool constant, zero
;   id=102 (stackmaps_main, after the call to stackmaps_inner: live across a JIT->JIT call)
;     sum prod slot a
;
; The pool constants are 4294967296 (kpool) and -4294967296 (kneg), in that order.

declare void @jitmap_demo_safepoint(i64)
declare i32 @printf(i8*, ...)
declare void @llvm.experimental.stackmap(i64, i32, ...)

@fmt100 = private unnamed_addr constant [99 x i8] c"jitmap-demo: stackmap id=100 a=%ld b=%d k42=42 kminus1=-1 kpool=4294967296 slot=0x%lx slotval=%ld\0A\00"
@fmt101 = private unnamed_addr constant [81 x i8] c"jitmap-demo: stackmap id=101 s=%ld neg=%d flag=%d w=%d kneg=-4294967296 kzero=0\0A\00"
@fmt102 = private unnamed_addr constant [64 x i8] c"jitmap-demo: stackmap id=102 sum=%ld prod=%ld slot=0x%lx a=%ld\0A\00"

define i64 @stackmaps_main(i64 %a, i32 %b) noinline {
entry:
  ; The alloca's address is recorded as a Direct location (frame register + offset).
  %slot = alloca i64, align 8
  %seed = mul i64 %a, 7
  store volatile i64 %seed, i64* %slot
  %slotaddr = ptrtoint i64* %slot to i64
  %f100 = getelementptr [99 x i8], [99 x i8]* @fmt100, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f100, i64 %a, i32 %b, i64 %slotaddr, i64 %seed)
  call void @jitmap_demo_safepoint(i64 100)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 100, i32 0,
      i64 %a, i32 %b, i64 42, i64 -1, i64 4294967296, i64* %slot)

  ; Values computed here must survive the call into stackmaps_inner: they end up in
  ; callee-saved registers or stack slots, which a debugger must unwind to read.
  %bext = sext i32 %b to i64
  %sum = add i64 %a, %bext
  %prod = mul i64 %a, 200000000000
  %f102 = getelementptr [64 x i8], [64 x i8]* @fmt102, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f102, i64 %sum, i64 %prod, i64 %slotaddr, i64 %a)
  %r = call i64 @stackmaps_inner(i64 %sum, i32 %b)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 102, i32 0,
      i64 %sum, i64 %prod, i64* %slot, i64 %a)

  %v = load volatile i64, i64* %slot
  %t1 = add i64 %r, %prod
  %t2 = add i64 %t1, %v
  %t3 = add i64 %t2, %sum
  ret i64 %t3
}

define i64 @stackmaps_inner(i64 %s, i32 %b) noinline {
entry:
  %neg = sub i32 0, %b
  %big = icmp sgt i64 %s, 10
  %flag = zext i1 %big to i8
  %flag32 = zext i8 %flag to i32
  ; No floating-point value here: x86-64 has no callee-saved XMM register, so a double live
  ; across the call is reloaded *between* the call and the stackmap; the record then names
  ; xmm0 at a PC past the return address, where xmm0 does not hold it yet.
  %s16 = trunc i64 %s to i16
  %w = mul i16 %s16, -100
  %w32 = sext i16 %w to i32
  %f101 = getelementptr [81 x i8], [81 x i8]* @fmt101, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f101, i64 %s, i32 %neg, i32 %flag32, i32 %w32)
  call void @jitmap_demo_safepoint(i64 101)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 101, i32 0,
      i64 %s, i32 %neg, i8 %flag, i16 %w, i64 -4294967296, i64 0)
  %n64 = sext i32 %neg to i64
  %d2 = sext i16 %w to i64
  %r1 = add i64 %s, %n64
  %r2 = add i64 %r1, %d2
  ret i64 %r2
}
