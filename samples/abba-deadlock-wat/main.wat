;; WAT version of abba-deadlock: futex-style locks (compare-and-exchange, and
;; wait/notify when contended) at addresses 0 and 4. The spawned thread takes
;; lock 0 then lock 4; the main thread takes lock 4 then lock 0.
(module
  (import "wasi" "thread-spawn" (func $spawn (param i32) (result i32)))
  (memory (export "memory") 1 1 shared)

  (func $lock (param $addr i32)
    (loop $retry
      (if (i32.atomic.rmw.cmpxchg (local.get $addr) (i32.const 0) (i32.const 1))
        (then
          (drop (memory.atomic.wait32 (local.get $addr) (i32.const 1) (i64.const -1)))
          (br $retry)))))

  (func $unlock (param $addr i32)
    (i32.atomic.store (local.get $addr) (i32.const 0))
    (drop (memory.atomic.notify (local.get $addr) (i32.const 1))))

  (func $transfer (param $first i32) (param $second i32)
    (call $lock (local.get $first))
    (call $lock (local.get $second))
    ;; move a unit between the balances at 16 and 20
    (i32.store (i32.const 16) (i32.sub (i32.load (i32.const 16)) (i32.const 1)))
    (i32.store (i32.const 20) (i32.add (i32.load (i32.const 20)) (i32.const 1)))
    (call $unlock (local.get $second))
    (call $unlock (local.get $first)))

  (func (export "wasi_thread_start") (param $tid i32) (param $arg i32)
    (call $transfer (i32.const 0) (i32.const 4))
    (i32.atomic.store (i32.const 8) (i32.const 1))
    (drop (memory.atomic.notify (i32.const 8) (i32.const 1))))

  (func (export "_start")
    (drop (call $spawn (i32.const 0)))
    (call $transfer (i32.const 4) (i32.const 0))
    (loop $join
      (if (i32.eqz (i32.atomic.load (i32.const 8)))
        (then
          (drop (memory.atomic.wait32 (i32.const 8) (i32.const 0) (i64.const -1)))
          (br $join))))))
