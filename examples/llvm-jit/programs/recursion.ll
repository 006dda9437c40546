; recursion.ll: a deep stack of JIT frames, each stopped at a stackmap, for
; jitmap-demo-jit --program recursion [--depth N].
;
; Entry: i64 @recursion_main(i64 %depth). @recurse(n, acc) calls itself with (n - 1, acc + n)
; until n reaches 0, then calls the safepoint. When the safepoint runs, the stack holds
; depth + 1 frames of @recurse: the innermost stopped at id=401, every other one at id=400,
; the stackmap after its recursive call. The runtime checks the result,
; sum(1..depth) + sum(k*k for k in 1..depth), against C.
;
; Truth lines, printed on the way down (one per frame, outermost first; n identifies the
; frame: the frame k levels above the innermost has n = k), locations in order:
;   id=400  n acc tag slot     n and acc live across the recursive call, tag = n xor 0x5a5a
;                              computed before it, slot = this frame's alloca (holds n*n)
;   id=401  n acc slot         the innermost frame (n = 0), at the safepoint

declare void @jitmap_demo_safepoint(i64)
declare i32 @printf(i8*, ...)
declare void @llvm.experimental.stackmap(i64, i32, ...)

@fmt400 = private unnamed_addr constant [64 x i8] c"jitmap-demo: recursion id=400 n=%ld acc=%ld tag=%ld slot=0x%lx\0A\00"
@fmt401 = private unnamed_addr constant [56 x i8] c"jitmap-demo: recursion id=401 n=%ld acc=%ld slot=0x%lx\0A\00"

define i64 @recursion_main(i64 %depth) noinline {
entry:
  %r = call i64 @recurse(i64 %depth, i64 0)
  ret i64 %r
}

define i64 @recurse(i64 %n, i64 %acc) noinline {
entry:
  %slot = alloca i64, align 8
  %sq = mul i64 %n, %n
  store volatile i64 %sq, i64* %slot
  %slotaddr = ptrtoint i64* %slot to i64
  %bottom = icmp eq i64 %n, 0
  br i1 %bottom, label %base, label %step

base:
  %f401 = getelementptr [56 x i8], [56 x i8]* @fmt401, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f401, i64 %n, i64 %acc, i64 %slotaddr)
  call void @jitmap_demo_safepoint(i64 401)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 401, i32 0,
      i64 %n, i64 %acc, i64* %slot)
  ret i64 %acc

step:
  %tag = xor i64 %n, 23130
  %f400 = getelementptr [64 x i8], [64 x i8]* @fmt400, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f400, i64 %n, i64 %acc, i64 %tag, i64 %slotaddr)
  %n1 = sub i64 %n, 1
  %acc1 = add i64 %acc, %n
  %r = call i64 @recurse(i64 %n1, i64 %acc1)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 400, i32 0,
      i64 %n, i64 %acc, i64 %tag, i64* %slot)
  %v = load volatile i64, i64* %slot
  %t = add i64 %r, %v
  ; tag is used again so that it must be kept across the call, not just recorded.
  %chk = xor i64 %tag, 23130
  %same = icmp eq i64 %chk, %n
  %bad = select i1 %same, i64 0, i64 1000000000
  %res = add i64 %t, %bad
  ret i64 %res
}
