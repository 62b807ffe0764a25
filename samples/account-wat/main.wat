;; WAT version of AssetFuzzer's Account. Memory layout:
;;   0  lock word (0 free, 1 held), taken with cmpxchg and released with xchg
;;   8  checking balance (i64)    16  savings balance (i64)
;;   24 threads done (for the main thread's wait)   40 the `correct` flag
;;   64 names
;; Thread argument 0 copies the account with two critical sections (one per
;; balance); argument 1 credits 10% interest to both under one critical
;; section: access pattern 9 on the atomic set [8, 24). With the argument
;; `correct` (any argument), the copy takes the lock once.
(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "args_sizes_get"
    (func $args_sizes_get (param i32 i32) (result i32)))
  (import "weft" "atomic_set" (func $atomic_set (param i32 i32 i32 i32)))
  (import "weft" "unit_begin" (func $unit_begin (param i32 i32)))
  (import "weft" "unit_end" (func $unit_end))
  (memory (export "memory") 1 1 shared)
  (data (i32.const 64) "account")           ;; 7 bytes
  (data (i32.const 80) "copy")              ;; 4
  (data (i32.const 96) "credit_interest")   ;; 15
  (data (i32.const 8) "\e8\03\00\00\00\00\00\00\d0\07\00\00\00\00\00\00")

  ;; (globals are per thread: the flag lives in memory, at 40)
  (global $copy_checking (mut i64) (i64.const 0))
  (global $copy_savings (mut i64) (i64.const 0))

  (func $lock
    (loop $retry
      (if (i32.atomic.rmw.cmpxchg (i32.const 0) (i32.const 0) (i32.const 1))
        (then
          (drop (memory.atomic.wait32 (i32.const 0) (i32.const 1) (i64.const -1)))
          (br $retry)))))

  (func $unlock
    (drop (i32.atomic.rmw.xchg (i32.const 0) (i32.const 0)))
    (drop (memory.atomic.notify (i32.const 0) (i32.const 1))))

  (func $copy
    (call $unit_begin (i32.const 80) (i32.const 4))
    (if (i32.load (i32.const 40))
      (then
        (call $lock)
        (global.set $copy_checking (i64.load (i32.const 8)))
        (global.set $copy_savings (i64.load (i32.const 16)))
        (call $unlock))
      (else
        (call $lock)
        (global.set $copy_checking (i64.load (i32.const 8)))
        (call $unlock)
        (call $lock)
        (global.set $copy_savings (i64.load (i32.const 16)))
        (call $unlock)))
    (call $unit_end))

  (func $credit_interest
    (call $unit_begin (i32.const 96) (i32.const 15))
    (call $lock)
    (i64.store (i32.const 8)
      (i64.add (i64.load (i32.const 8)) (i64.div_s (i64.load (i32.const 8)) (i64.const 10))))
    (i64.store (i32.const 16)
      (i64.add (i64.load (i32.const 16)) (i64.div_s (i64.load (i32.const 16)) (i64.const 10))))
    (call $unlock)
    (call $unit_end))

  (func (export "wasi_thread_start") (param $tid i32) (param $arg i32)
    (if (local.get $arg) (then (call $credit_interest)) (else (call $copy)))
    (drop (i32.atomic.rmw.add (i32.const 24) (i32.const 1)))
    (drop (memory.atomic.notify (i32.const 24) (i32.const 1))))

  (func (export "_start") (local $done i32)
    ;; any argument besides the program name selects the correct copy
    (drop (call $args_sizes_get (i32.const 32) (i32.const 36)))
    (i32.store (i32.const 40) (i32.gt_u (i32.load (i32.const 32)) (i32.const 1)))
    (call $atomic_set (i32.const 64) (i32.const 7) (i32.const 8) (i32.const 16))
    (drop (call $spawn (i32.const 0)))
    (drop (call $spawn (i32.const 1)))
    (block $joined
      (loop $wait
        (local.set $done (i32.atomic.load (i32.const 24)))
        (br_if $joined (i32.eq (local.get $done) (i32.const 2)))
        (drop (memory.atomic.wait32 (i32.const 24) (local.get $done) (i64.const -1)))
        (br $wait)))))
