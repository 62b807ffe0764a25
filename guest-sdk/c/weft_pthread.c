/*
 * What wasi-libc's threads lack: `pthread_exit` and cleanup handlers (a
 * thread cannot leave its stack without unwinding, which wasm has not).
 * `weft build` links this file into every C program; every definition is
 * weak, so a program's own definitions win. See guest-sdk/ABI.md.
 */
#include <pthread.h>
#include <stdlib.h>

#define WEFT_WEAK __attribute__((weak))

/* `weft.thread_exit`: a spawned thread does not come back (weft ends it
 * as if its start routine had returned `value`); the main thread comes
 * back once every other thread has ended. */
__attribute__((import_module("weft"), import_name("thread_exit")))
void weft_abi_thread_exit(void *value);

/* wasi-libc's destructors of the calling thread's thread-specific data. */
void __pthread_tsd_run_dtors(void);

/* The calling thread's cleanup handlers, innermost first. */
static _Thread_local struct __ptcb *weft_cleanup_top;

WEFT_WEAK void _pthread_cleanup_push(struct __ptcb *cb, void (*f)(void *), void *x) {
    cb->__f = f;
    cb->__x = x;
    cb->__next = weft_cleanup_top;
    weft_cleanup_top = cb;
}

WEFT_WEAK void _pthread_cleanup_pop(struct __ptcb *cb, int run) {
    weft_cleanup_top = cb->__next;
    if (run)
        cb->__f(cb->__x);
}

WEFT_WEAK _Noreturn void pthread_exit(void *value) {
    while (weft_cleanup_top) {
        struct __ptcb *cb = weft_cleanup_top;
        weft_cleanup_top = cb->__next;
        cb->__f(cb->__x);
    }
    /* A spawned thread's thread-specific data is destroyed by wasi-libc
     * when it ends the thread. */
    weft_abi_thread_exit(value);
    /* The main thread: every other thread has ended, so the process does. */
    __pthread_tsd_run_dtors();
    exit(0);
}
