/*
 * Declarations wasi-libc's <pthread.h> leaves out because wasi-libc has no
 * definition; guest-sdk/c/weft_pthread.c has them. `weft build` includes
 * this header first in every C and C++ file.
 */
#ifndef WEFT_PTHREAD_H
#define WEFT_PTHREAD_H
#pragma GCC system_header
#ifdef __cplusplus
extern "C" [[noreturn]] void pthread_exit(void *value);
#else
_Noreturn void pthread_exit(void *value);
#endif

#endif
