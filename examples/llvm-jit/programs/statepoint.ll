; statepoint.ll: GC statepoints with "deopt" and "gc-live" operand bundles, for
; jitmap-demo-jit --program statepoint. Typed pointers: LLVM 14 needs them for statepoints.
;
; Entry: i64 @statepoint_main(i8 addrspace(1)* %obj, i8 addrspace(1)* %obj2, i64 %d).
; The runtime allocates both objects on the C heap (64 bytes each; the i64 at offset 16 holds
; 1111 in obj and 2222 in obj2), passes d=-77 and checks the result against the same
; arithmetic done in C. Its "GC" never moves anything, so each gc.relocate yields its input.
;
; Each statepoint calls jitmap_demo_safepoint(id) itself; its record offset is the return
; address of that call. Record layout: cc, flags, deopt count, the deopt values, then
; (base, derived) location pairs. The truth lines give cc, flags, the deopt values in order,
; and every gc.relocate the IR makes, as <name>.base=0x... <name>.derived=0x...
; Which pairs the record holds, and in what order, is up to the emitter: LLVM 14 drops
; relocates whose result is unused and adds a (base, base) pair for the base of each derived
; pointer, so match pairs by value, not by position.
;   id=300  ndeopt=3: d0 is %d, d1 is i32 7, d2 is 9000000000 (a pool constant);
;           relocates obj, derived (= obj + 16), obj2
;   id=301  ndeopt=0; relocates obj2, derived2 (= obj2 + 16), nullp (null: recorded as two
;           constants 0), derived (again, after its first relocation)

declare void @jitmap_demo_safepoint(i64)
declare i32 @printf(i8*, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidi64f(i64, i32, void (i64)*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)

@fmt300 = private unnamed_addr constant [189 x i8] c"jitmap-demo: statepoint id=300 cc=0 flags=0 ndeopt=3 d0=%ld d1=7 d2=9000000000 obj.base=0x%lx obj.derived=0x%lx derived.base=0x%lx derived.derived=0x%lx obj2.base=0x%lx obj2.derived=0x%lx\0A\00"
@fmt301 = private unnamed_addr constant [206 x i8] c"jitmap-demo: statepoint id=301 cc=0 flags=0 ndeopt=0 obj2.base=0x%lx obj2.derived=0x%lx derived2.base=0x%lx derived2.derived=0x%lx nullp.base=0x0 nullp.derived=0x0 derived.base=0x%lx derived.derived=0x%lx\0A\00"

define i64 @statepoint_main(i8 addrspace(1)* %obj, i8 addrspace(1)* %obj2, i64 %d) noinline gc "statepoint-example" {
entry:
  ; base + 16, computed through i64* so that CodeGenPrepare does not see a constant GEP off
  ; the base: it would rewrite the derived relocate as "relocated base + 16" and the record
  ; would hold no (base, derived) pair with base != derived.
  %obj.w = bitcast i8 addrspace(1)* %obj to i64 addrspace(1)*
  %derived.w = getelementptr i64, i64 addrspace(1)* %obj.w, i64 2
  %derived = bitcast i64 addrspace(1)* %derived.w to i8 addrspace(1)*
  %obj.i = ptrtoint i8 addrspace(1)* %obj to i64
  %derived.i = ptrtoint i8 addrspace(1)* %derived to i64
  %obj2.i = ptrtoint i8 addrspace(1)* %obj2 to i64
  %f300 = getelementptr [189 x i8], [189 x i8]* @fmt300, i64 0, i64 0
  call i32 (i8*, ...) @printf(i8* %f300, i64 %d, i64 %obj.i, i64 %obj.i, i64 %obj.i,
      i64 %derived.i, i64 %obj2.i, i64 %obj2.i)
  %tok = call token (i64, i32, void (i64)*, i32, i32, ...)
      @llvm.experimental.gc.statepoint.p0f_isVoidi64f(i64 300, i32 0,
          void (i64)* elementtype(void (i64)) @jitmap_demo_safepoint, i32 1, i32 0, i64 300,
          i32 0, i32 0)
      [ "deopt"(i64 %d, i32 7, i64 9000000000),
        "gc-live"(i8 addrspace(1)* %obj, i8 addrspace(1)* %derived, i8 addrspace(1)* %obj2) ]
  %obj.r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %derived.r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 1)
  %obj2.r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 2, i32 2)

  ; Only relocated pointers may be used after a statepoint.
  %obj2.w = bitcast i8 addrspace(1)* %obj2.r to i64 addrspace(1)*
  %derived2.w = getelementptr i64, i64 addrspace(1)* %obj2.w, i64 2
  %derived2 = bitcast i64 addrspace(1)* %derived2.w to i8 addrspace(1)*
  %obj2r.i = ptrtoint i8 addrspace(1)* %obj2.r to i64
  %derived2.i = ptrtoint i8 addrspace(1)* %derived2 to i64
  %f301 = getelementptr [206 x i8], [206 x i8]* @fmt301, i64 0, i64 0
  %objr.i = ptrtoint i8 addrspace(1)* %obj.r to i64
  %derivedr.i = ptrtoint i8 addrspace(1)* %derived.r to i64
  call i32 (i8*, ...) @printf(i8* %f301, i64 %obj2r.i, i64 %obj2r.i, i64 %obj2r.i, i64 %derived2.i,
      i64 %objr.i, i64 %derivedr.i)
  %tok2 = call token (i64, i32, void (i64)*, i32, i32, ...)
      @llvm.experimental.gc.statepoint.p0f_isVoidi64f(i64 301, i32 0,
          void (i64)* elementtype(void (i64)) @jitmap_demo_safepoint, i32 1, i32 0, i64 301,
          i32 0, i32 0)
      [ "gc-live"(i8 addrspace(1)* %obj2.r, i8 addrspace(1)* %derived2, i8 addrspace(1)* null,
                  i8 addrspace(1)* %derived.r, i8 addrspace(1)* %obj.r) ]
  %obj2.r2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok2, i32 0, i32 0)
  %derived2.r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok2, i32 0, i32 1)
  %null.r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok2, i32 2, i32 2)
  %derived.r2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok2, i32 4, i32 3)

  ; Read the fields through the relocated derived pointers: 1111 + 2222, plus d.
  %p1 = bitcast i8 addrspace(1)* %derived.r2 to i64 addrspace(1)*
  %p2 = bitcast i8 addrspace(1)* %derived2.r to i64 addrspace(1)*
  %v1 = load i64, i64 addrspace(1)* %p1
  %v2 = load i64, i64 addrspace(1)* %p2
  %isnull = icmp eq i8 addrspace(1)* %null.r, null
  %nz = zext i1 %isnull to i64
  %s1 = add i64 %v1, %v2
  %s2 = add i64 %s1, %d
  %s3 = add i64 %s2, %nz
  ret i64 %s3
}
