; The lli program of the runtime matrix (rt_lli.py): four functions, each printing
; "enter NAME" as it starts, the innermost then "ready" and asleep for SECONDS (its argument
; count stands in: lli passes the program's arguments to the entry function).
;
;   lli-14 -entry-function=jm_main lli_prog.ll
;
; The truth is what the program printed: the functions entered and not yet left, innermost
; last. Each call's result is used after it, so that no call is a tail call.
@enter_main = private constant [14 x i8] c"enter jm_main\00"
@enter_outer = private constant [15 x i8] c"enter jm_outer\00"
@enter_middle = private constant [16 x i8] c"enter jm_middle\00"
@enter_inner = private constant [15 x i8] c"enter jm_inner\00"
@ready = private constant [6 x i8] c"ready\00"

declare i32 @puts(i8*)
declare i32 @fflush(i8*)
declare i32 @sleep(i32)

define i32 @jm_inner(i32 %n) noinline {
  %m = getelementptr [15 x i8], [15 x i8]* @enter_inner, i64 0, i64 0
  call i32 @puts(i8* %m)
  %r = getelementptr [6 x i8], [6 x i8]* @ready, i64 0, i64 0
  call i32 @puts(i8* %r)
  call i32 @fflush(i8* null)
  %s = call i32 @sleep(i32 120)
  %t = add i32 %s, %n
  ret i32 %t
}

define i32 @jm_middle(i32 %n) noinline {
  %m = getelementptr [16 x i8], [16 x i8]* @enter_middle, i64 0, i64 0
  call i32 @puts(i8* %m)
  %a = add i32 %n, 1
  %r = call i32 @jm_inner(i32 %a)
  %t = mul i32 %r, 3
  ret i32 %t
}

define i32 @jm_outer(i32 %n) noinline {
  %m = getelementptr [15 x i8], [15 x i8]* @enter_outer, i64 0, i64 0
  call i32 @puts(i8* %m)
  %a = add i32 %n, 2
  %r = call i32 @jm_middle(i32 %a)
  %t = xor i32 %r, 5
  ret i32 %t
}

define i32 @jm_main(i32 %argc, i8** %argv) {
  %m = getelementptr [14 x i8], [14 x i8]* @enter_main, i64 0, i64 0
  call i32 @puts(i8* %m)
  %r = call i32 @jm_outer(i32 %argc)
  %t = and i32 %r, 0
  ret i32 %t
}
