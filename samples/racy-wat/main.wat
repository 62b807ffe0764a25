;; Two threads append to a shared log with plain loads and stores: each
;; reads the length at address 0, writes its entry after it and stores the
;; new length, with no lock. The main thread waits for both (a done count at
;; address 4, with wait/notify) before it reads the log.
(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (memory (export "memory") 1 1 shared)

  (func $append (param $value i32) (local $len i32)
    (local.set $len (i32.load (i32.const 0)))
    (i32.store (i32.add (i32.const 16) (i32.shl (local.get $len) (i32.const 2)))
      (local.get $value))
    (i32.store (i32.const 0) (i32.add (local.get $len) (i32.const 1))))

  (func (export "wasi_thread_start") (param $tid i32) (param $arg i32)
    (call $append (local.get $arg))
    (drop (i32.atomic.rmw.add (i32.const 4) (i32.const 1)))
    (drop (memory.atomic.notify (i32.const 4) (i32.const 1))))

  (func (export "_start") (local $done i32)
    (drop (call $spawn (i32.const 10)))
    (drop (call $spawn (i32.const 20)))
    (block $joined
      (loop $wait
        (local.set $done (i32.atomic.load (i32.const 4)))
        (br_if $joined (i32.eq (local.get $done) (i32.const 2)))
        (drop (memory.atomic.wait32 (i32.const 4) (local.get $done) (i64.const -1)))
        (br $wait)))
    ;; Read after both finished: ordered by the done count, no race.
    (drop (i32.load (i32.const 0)))))
