;; WAT version of lost-update: two threads increment a counter at address 0
;; with a separate atomic load and store; the main thread waits for both
;; (a done count at address 4, with wait/notify) and checks the total.
(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write"
    (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1 1 shared)
  ;; an iovec for the message at 32 (ptr 64, len 15)
  (data (i32.const 32) "\40\00\00\00\0f\00\00\00")
  (data (i32.const 64) "lost an update\0a")

  (func $increment_ten_times (local $i i32)
    (loop $again
      (i32.atomic.store (i32.const 0)
        (i32.add (i32.atomic.load (i32.const 0)) (i32.const 1)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $i) (i32.const 10))))
    (drop (i32.atomic.rmw.add (i32.const 4) (i32.const 1)))
    (drop (memory.atomic.notify (i32.const 4) (i32.const 1))))

  (func (export "wasi_thread_start") (param $tid i32) (param $arg i32)
    (call $increment_ten_times))

  (func (export "_start") (local $done i32)
    (drop (call $spawn (i32.const 0)))
    (drop (call $spawn (i32.const 0)))
    (block $joined
      (loop $wait
        (local.set $done (i32.atomic.load (i32.const 4)))
        (br_if $joined (i32.eq (local.get $done) (i32.const 2)))
        (drop (memory.atomic.wait32 (i32.const 4) (local.get $done) (i64.const -1)))
        (br $wait)))
    (if (i32.ne (i32.atomic.load (i32.const 0)) (i32.const 20))
      (then
        (drop (call $fd_write (i32.const 2) (i32.const 32) (i32.const 1) (i32.const 48)))
        unreachable))))
