; Fuzz seed: plain stackmaps. Every location kind: registers, spill slots (Indirect), frame
; objects (Direct), small constants, pool constants (one shared by two records), and a
; dynamic frame (stack size UINT64_MAX). Target-neutral: the triple comes from llc.

declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @ext(i64)

define i64 @seed_kinds(i64 %a, i32 %b, double %d) {
entry:
  %slot = alloca i64, align 8
  %pair = alloca [2 x i64], align 8
  store i64 %a, i64* %slot
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 10, i32 0,
      i64 %a, i32 %b, double %d, i64 7, i64 -3, i64 81985529216486895,
      i64* %slot, [2 x i64]* %pair)
  call void @ext(i64 %a)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 11, i32 4,
      i64 %a, i64 81985529216486895, i64 -4294967296)
  %v = load i64, i64* %slot
  ret i64 %v
}

define i64 @seed_spills(i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f) {
entry:
  call void @ext(i64 0)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 12, i32 0,
      i64 %a, i64 %b, i64 %c, i64 %d, i64 %e, i64 %f)
  call void @ext(i64 %a)
  %s = add i64 %a, %f
  ret i64 %s
}

define void @seed_dynamic(i64 %n) {
entry:
  %buf = alloca i8, i64 %n, align 16
  call void @ext(i64 %n)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 13, i32 0, i64 %n, i8* %buf)
  ret void
}

define void @seed_empty() {
entry:
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 -1, i32 0)
  ret void
}
