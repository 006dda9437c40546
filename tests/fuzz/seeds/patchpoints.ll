; Fuzz seed: patchpoints, so records carry live-out registers, and anyregcc operands.
; Target-neutral; 40-byte shadows hold a 64-bit call sequence everywhere.

declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)
declare i64 @llvm.experimental.patchpoint.i64(i64, i32, i8*, i32, ...)

define i64 @seed_pp(i64 %a, i64 %b, i64 %c, i64 %d) {
entry:
  %t = inttoptr i64 -559038737 to i8*
  %r = call i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(
      i64 20, i32 40, i8* %t, i32 2, i64 %a, i64 %b, i64 %c, i64 %d)
  %s1 = add i64 %r, %c
  %s2 = add i64 %s1, %d
  ret i64 %s2
}

define i64 @seed_pp_void(i64 %a, i64 %b, i64 %c) {
entry:
  call void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(
      i64 21, i32 20, i8* null, i32 0, i64 %a, i64 1099511627776)
  %s1 = add i64 %a, %b
  %s2 = add i64 %s1, %c
  ret i64 %s2
}

define i64 @seed_anyreg(i64 %a, i64 %b, i64 %c) {
entry:
  %t = inttoptr i64 -281474976710654 to i8*
  %r = call anyregcc i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(
      i64 22, i32 40, i8* %t, i32 2, i64 %a, i64 %b, i64 %c)
  %s = add i64 %r, %a
  ret i64 %s
}
