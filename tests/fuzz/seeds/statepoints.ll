; Fuzz seed: statepoints (typed pointers: llc-14 crashes on opaque-pointer statepoints).
; Deopt values (one for the constant pool), gc pointers including a vector, and a gc alloca.
; Only x86-64 and AArch64 lower statepoints.

declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)
declare <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token, i32, i32)
declare void @safepoint()

define i8 addrspace(1)* @seed_sp(i8 addrspace(1)* %obj, i8 addrspace(1)* %inner, i64 %d,
                                  <2 x i8 addrspace(1)*> %vec) gc "statepoint-example" {
entry:
  %tok = call token (i64, i32, void ()*, i32, i32, ...)
      @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 30, i32 0,
          void ()* elementtype(void ()) @safepoint, i32 0, i32 0, i32 0, i32 0)
      [ "deopt"(i64 %d, i32 5, i64 12345678901),
        "gc-live"(i8 addrspace(1)* %obj, i8 addrspace(1)* %inner,
                  <2 x i8 addrspace(1)*> %vec) ]
  %o = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 0)
  %i = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %tok, i32 0, i32 1)
  %v = call <2 x i8 addrspace(1)*> @llvm.experimental.gc.relocate.v2p1i8(token %tok, i32 2, i32 2)
  %e = extractelement <2 x i8 addrspace(1)*> %v, i32 0
  %z = icmp eq i8 addrspace(1)* %e, null
  %r = select i1 %z, i8 addrspace(1)* %i, i8 addrspace(1)* %o
  ret i8 addrspace(1)* %r
}

define void @seed_sp_alloca() gc "statepoint-example" {
entry:
  %root = alloca i8 addrspace(1)*, align 8
  store i8 addrspace(1)* null, i8 addrspace(1)** %root
  %tok = call token (i64, i32, void ()*, i32, i32, ...)
      @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 31, i32 0,
          void ()* elementtype(void ()) @safepoint, i32 0, i32 0, i32 0, i32 0)
      [ "gc-live"(i8 addrspace(1)** %root) ]
  ret void
}
