; between_records.ll: for tests/consistency (lli-14, held in getppid by pause.c). `work`'s frame
; stands between two records and at neither:
;
;   callq labs            ; %a kept in r14 across it, %x = labs(%a) comes back in rax
;   movq %rax, %rbx
; record 21:              ; %a in r14, %x in rbx
;   leaq 7(%rax), %r14    ; %a is dead: r14 now holds %y = %x + 7
;   callq getppid         ; (movabs $getppid, %rax; callq *%rax in JIT code)
;   ...                   ; <- the frame's return address
; record 22:              ; after the instructions that use the call's result
;
; (llc-14 -O2, x86-64.) The code from record 21 to the return address is not a patchpoint's call
; sequence: it writes r14, where record 21 says %a (4660) is. A front end that shows record 21
; at this frame shows r14's 4667 as %a: a wrong number. Every front end must say that no
; record describes the frame, with the same nearest records (21 before, 22 after).
declare i32 @getppid()
declare i64 @labs(i64)
declare void @llvm.experimental.stackmap(i64, i32, ...)

define i64 @work(i64 %a) noinline {
entry:
  %x = call i64 @labs(i64 %a)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 21, i32 0, i64 %a, i64 %x)
  %y = add i64 %x, 7
  %p = call i32 @getppid()
  %p64 = sext i32 %p to i64
  %b = add i64 %y, %p64
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 22, i32 0, i64 %b, i64 %y)
  ret i64 %b
}

define i32 @main() {
  %r = call i64 @work(i64 4660)
  ret i32 0
}
