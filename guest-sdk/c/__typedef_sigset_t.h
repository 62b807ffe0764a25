/*
 * The signal set weft's signals need (guest-sdk/c/signal.h): wasi-libc
 * types `sigset_t` as one byte, since WASI has no signals; POSIX sets hold
 * every signal up to 64. Found before wasi-libc's header of the same name
 * (the same guard keeps that one out); wasi-libc's compiled code takes
 * sets only by pointer, so its size is the program's to choose.
 */
#ifndef __wasilibc___typedef_sigset_t_h
#define __wasilibc___typedef_sigset_t_h

typedef struct __sigset_t {
    unsigned long __bits[128 / sizeof(long)];
} sigset_t;

#endif
